"""Bisect results beside their alert on the dashboard's alerts page.

`make bisect` writes ``<warehouse>/bisect/<id>/result.json`` (docs/bisect.md). A result belongs to an
alert when its plan came from ``ALERT=<id>``, or when it ran the alert's range (its FROM and TO are
the alert's ends) for one of the alert's kernels. Only the local warehouse holds bisect folders; a
remote one shows none. Every string from a result is escaped where it is shown.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

RESULT = "result.json"


def read_results(folder: Path | None) -> list[dict]:
    """Every readable ``result.json`` under ``folder`` (newest plan id first); an unreadable one is
    skipped, as it is a run still writing or one broken by hand, not data."""
    if folder is None or not folder.is_dir():
        return []
    results = []
    for path in sorted(folder.glob(f"*/{RESULT}"), reverse=True):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(result, dict) and result.get("outcome"):
            result["_folder"] = path.parent.name
            results.append(result)
    return results


def _same_commit(full: object, label: object) -> bool:
    return isinstance(full, str) and isinstance(label, str) and len(label) >= 7 and full.startswith(label)


def results_of(alert: dict, kernels: set[str], results: list[dict]) -> list[dict]:
    """The results that answer ``alert``: planned from it, or run over its range for one of its kernels."""
    mine = []
    for r in results:
        named = (r.get("alert") or {}).get("alert_id") == alert["alert_id"]
        ranged = (
            alert.get("axis") == "commit"
            and r.get("kernel") in kernels
            and _same_commit(r.get("from_commit"), alert.get("from_label"))
            and _same_commit(r.get("to_commit"), alert.get("to_label"))
        )
        if named or ranged:
            mine.append(r)
    return mine


def result_line(r: dict) -> str:
    """One result as HTML: outcome, culprit, ratio, runs, a link to its result.md."""
    e = lambda v: escape("" if v is None else str(v), quote=True)  # noqa: E731
    ratio = (r.get("ratio") or {}).get("to_over_from")
    parts = [f"<strong>{e(r['outcome'])}</strong>", e(f"{r.get('kernel')} {r.get('pass')} {r.get('metric')}")]
    if r.get("culprit"):
        parts.append(f"culprit <code>{e(str(r['culprit'])[:12])}</code> {e(r.get('culprit_subject'))}")
    if isinstance(ratio, int | float):
        parts.append(f"×{ratio:.3f}")
    parts.append(f"{e(r.get('harness_runs'))} harness run(s) on {e(r.get('gpu') or 'no GPU recorded')}")
    link = f"../bisect/{e(r['_folder'])}/result.md"
    return f"<li>bisect: {' · '.join(parts)} (<a href='{link}'>result.md</a>)</li>"


QUEUE = "queue"


def read_queue(folder: Path | None) -> dict[str, dict]:
    """The bisect queue's entries (``<warehouse>/bisect/queue/<alert id>.json``, pipeline/bisect/queue.py)
    by alert id; unreadable ones are skipped, as a result being written is."""
    if folder is None or not (folder / QUEUE).is_dir():
        return {}
    found = {}
    for path in sorted((folder / QUEUE).glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("alert_id"), str):
            found[entry["alert_id"]] = entry
    return found


def queue_line(entry: dict) -> str:
    """An alert's queued bisect as HTML: its state, sweep and range, how it runs, its reason when failed."""
    e = lambda v: escape("" if v is None else str(v), quote=True)  # noqa: E731
    plan = entry.get("plan") if isinstance(entry.get("plan"), dict) else {}
    sweep = " ".join(str(plan.get(k) or "auto") for k in ("kernel", "pass", "metric"))
    ends = [str((plan.get(k) or {}).get("sha") or "")[:7] for k in ("from", "to")]
    state = entry.get("state")
    how = {
        "queued": " · waits for <code>make bisect-queue</code> on a GPU host",
        "failed": f": {e(entry.get('reason'))}",
    }
    return (
        f"<li>bisect plan <strong>{e(state)}</strong> · {e(sweep)} · {e(ends[0])}..{e(ends[1])} "
        f"(<code>{e(plan.get('id'))}</code>){how.get(state, '')}</li>"
    )
