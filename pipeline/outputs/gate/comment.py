"""gate.md: the gate as one pull-request comment. One lead line with the status and the count per
verdict; the regressions worst first (ratio, threshold and where it was measured, runs per side, the
suspect commits); every other sweep inside ``<details>``. GitHub refuses a comment over 65,536
characters: rows that do not fit are cut, each table saying "… N more". Names from the data (kernels,
configs, subjects, file names) are escaped text (``alerts.messages.md_text``), never markup."""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs.alerts.messages import md_text

MARKER = "<!-- liger-benchmark-gate -->"  # the workflow updates the comment that carries it
LIMIT = 65_536
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
    return "; ".join(f"`{s['sha'][:7]}` {md_text(s['subject'])}" for s in found)


def _reg_row(r: dict, why: str | None) -> str:
    cells = [md_text(r[k]) for k in ("kernel", "pass", "metric", "provider", "config")]
    threshold = f"{_threshold(r)} ({md_text(r['threshold_source'])})"
    cells += [_ratio(r["ratio"]), threshold, f"{r['base_runs']} / {r['candidate_runs']}", _suspects(r, why)]
    return "| " + " | ".join(cells) + " |"


def _rest_row(r: dict) -> str:
    cells = [r["verdict"], *(md_text(r[k]) for k in ("kernel", "pass", "metric", "provider", "config"))]
    return "| " + " | ".join([*cells, _ratio(r["ratio"]), _threshold(r)]) + " |"


def lead_line(doc: dict) -> str:
    counts = " · ".join(f"{n} {verdict}" for verdict, n in doc["counts"].items()) or "no sweep judged"
    return f"**Liger benchmark gate: {STATUS_WORD[doc['status']]}** — {counts}"


def _context(doc: dict) -> str:
    base, cand = doc["base"], doc["candidate"]
    files = ", ".join(md_text(Path(f).name) for f in cand["files"])
    head = f" at `{md_text(cand['commit'][:12])}`" if cand.get("commit") else ""
    release = f" (release {md_text(base['release'])})" if base.get("release") and base["kind"] != "version" else ""
    text = (f"Candidate {files}{head} against base {md_text(base['label'])}{release}, {base['runs']} run(s), "
            f"on {md_text(doc['gpu'])}: {doc['sweeps']} sweep(s) judged by the warehouse's verdict rule and "
            "measured noise.")  # fmt: skip
    if doc.get("not_compared"):
        text += f" {doc['not_compared']} sweep(s) of the candidate have no base sweep to compare with."
    why = (doc.get("suspects") or {}).get("why")
    if why:
        text += f" Suspects: {md_text(why)}."
    if doc.get("warn_only"):
        text += " Warn-only: this check never fails."
    return text


def _fit(rows: list[str], budget: int) -> tuple[list[str], int]:
    """The leading rows whose lines fit in ``budget`` characters, and how many were left out."""
    kept, used = [], 0
    for row in rows:
        if used + len(row) + 1 > budget:
            break
        kept.append(row)
        used += len(row) + 1
    return kept, len(rows) - len(kept)


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
    reg_rows, reg_cut = _fit([_reg_row(r, why) for r in regs], budget)
    budget -= sum(len(x) + 1 for x in reg_rows)
    rest_rows, rest_cut = _fit([_rest_row(r) for r in rest], budget)
    lines = head + reg_title + reg_rows + ([""] if reg_cut else []) + _more(reg_cut) + ([""] if regs else [])
    lines += rest_open + rest_rows + ([""] if rest_cut else []) + _more(rest_cut) + rest_close
    return "\n".join(lines).rstrip() + "\n"


def render_error(message: str) -> str:
    """The comment when the gate could not judge (exit 2): what was wrong, as text."""
    return f"{MARKER}\n**Liger benchmark gate: error** — the gate could not judge this run.\n\n{md_text(message)}\n"
