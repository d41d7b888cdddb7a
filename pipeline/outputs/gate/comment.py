"""gate.md: the gate as one pull-request comment. One lead line with the status and the count per
verdict; the regressions worst first (ratio, threshold and where it was measured, runs per side, the
suspect commits); every other sweep inside ``<details>``. GitHub refuses a comment over 65,536
characters: rows that do not fit are cut, each table saying "… N more", and so are the candidate's file
list and any long text (a 70,000-character BASE). Names from the data (kernels, configs, subjects, file
names) are escaped text (``analyze.markdown.md_text``: no markup, link or mention), never markup."""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs.markdown import GITHUB_LIMIT, fit_lines, md_clip, md_text

MARKER = "<!-- liger-benchmark-gate -->"  # the workflow updates the comment that carries it
LIMIT = GITHUB_LIMIT
_CELL = 300  # characters of one table cell or name
_FILES = 2_000  # characters of the candidate's file list
_MARGIN = 256  # room for what a workflow may append (a link to the run)
STATUS_WORD = {"pass": "pass", "fail": "fail", "neutral": "neutral (nothing failed; some sweeps need a look)",
               "skipped": "skipped (nothing to compare)"}  # fmt: skip
_REG_HEAD = ("| kernel | pass | metric | provider | config | ratio | threshold | runs base / candidate | suspects |",
             "|---|---|---|---|---|---:|---|---|---|")  # fmt: skip
_REST_HEAD = ("| verdict | kernel | pass | metric | provider | config | ratio | threshold |",
              "|---|---|---|---|---|---|---:|---:|")  # fmt: skip


def _ratio(value) -> str:
    return "" if value is None else f"×{value:.3f}"


def _threshold(r: dict) -> str:
    return "" if r["threshold"] is None else f"±{100 * r['threshold']:.1f} %"


def _suspects(r: dict, why: str | None) -> str:
    found = r.get("suspects")
    if found is None:
        return "not known" if why else ""
    if not found:
        return "none touches this kernel"
    return "; ".join(f"`{md_text(s['sha'][:7])}` {md_clip(s['subject'], _CELL)}" for s in found[:5]) + (
        f"; … {len(found) - 5} more" if len(found) > 5 else ""
    )


def _reg_row(r: dict, why: str | None) -> str:
    cells = [md_clip(r[k], _CELL) for k in ("kernel", "pass", "metric", "provider", "config")]
    threshold = f"{_threshold(r)} ({md_clip(r['threshold_source'], _CELL)})"
    cells += [_ratio(r["ratio"]), threshold, f"{r['base_runs']} / {r['candidate_runs']}", _suspects(r, why)]
    return "| " + " | ".join(cells) + " |"


def _rest_row(r: dict) -> str:
    cells = [r["verdict"], *(md_clip(r[k], _CELL) for k in ("kernel", "pass", "metric", "provider", "config"))]
    return "| " + " | ".join([*cells, _ratio(r["ratio"]), _threshold(r)]) + " |"


def lead_line(doc: dict) -> str:
    counts = " · ".join(f"{n} {verdict}" for verdict, n in doc["counts"].items()) or "no sweep judged"
    return f"**Liger benchmark gate: {STATUS_WORD[doc['status']]}** — {counts}"


def _context(doc: dict) -> str:
    base, cand = doc["base"], doc["candidate"]
    names, cut = fit_lines([md_clip(Path(f).name, _CELL) for f in cand["files"]], _FILES)
    files = ", ".join(names) + (f" and {cut:,} more file(s) (all in gate.json)" if cut else "")
    head = f" at `{md_text(cand['commit'][:12])}`" if cand.get("commit") else ""
    shown = base.get("release") and base["kind"] != "version"
    release = f" (release {md_clip(base['release'], _CELL)})" if shown else ""
    text = (f"Candidate {files}{head} against base {md_clip(base['label'], _CELL)}{release}, {base['runs']} run(s), "
            f"on {md_clip(doc['gpu'], _CELL)}: {doc['sweeps']} sweep(s) judged by the warehouse's verdict rule and "
            "measured noise.")  # fmt: skip
    if doc.get("not_compared"):
        text += f" {doc['not_compared']} sweep(s) of the candidate have no base sweep to compare with."
    why = (doc.get("suspects") or {}).get("why")
    if why:
        text += f" Suspects: {md_clip(why, 2_000)}."
    if doc.get("warn_only"):
        text += " Warn-only: this check never fails."
    return text


def _more(n: int) -> list[str]:
    return [f"… {n} more (all in gate.json)"] if n else []


def render(doc: dict, limit: int = LIMIT) -> str:
    results = doc["results"]
    regs = [r for r in results if r["verdict"] == "regression"]
    rest = [r for r in results if r["verdict"] != "regression"]
    why = (doc.get("suspects") or {}).get("why")
    head = [MARKER, lead_line(doc), "", _context(doc), ""]
    reg_title = ["#### Regressions, worst first", "", *_REG_HEAD] if regs else []
    rest_open = [f"<details><summary>The other {len(rest)} sweep(s)</summary>", "", *_REST_HEAD] if rest else []
    rest_close = ["", "</details>"] if rest else []
    # the fixed parts, plus room for both "… N more" lines
    fixed = sum(len(x) + 1 for x in head + reg_title + rest_open + rest_close) + 2 * 64 + 4
    budget = limit - _MARGIN - fixed
    reg_rows, reg_cut = fit_lines([_reg_row(r, why) for r in regs], budget)
    budget -= sum(len(x) + 1 for x in reg_rows)
    rest_rows, rest_cut = fit_lines([_rest_row(r) for r in rest], budget)
    lines = head + reg_title + reg_rows + ([""] if reg_cut else []) + _more(reg_cut) + ([""] if regs else [])
    lines += rest_open + rest_rows + ([""] if rest_cut else []) + _more(rest_cut) + rest_close
    return "\n".join(lines).rstrip() + "\n"


def render_error(message: str) -> str:
    """The comment when the gate could not judge (exit 2): what was wrong, as text."""
    text = md_clip(message, LIMIT - _MARGIN - 200)
    return f"{MARKER}\n**Liger benchmark gate: error** — the gate could not judge this run.\n\n{text}\n"
