"""The bisect queue: a plan per alert in ``<warehouse>/bisect/queue/``, run one GPU job at a time.

When a warehouse run opens a regression alert, the sensor (pipeline/defs/bisect_queue.py) writes one
entry, ``<alert id>.json``, holding the plan for the alert's worst flagged sweep with CONFIRM on (both
ends re-run, then the bisect). Exactly one per alert: the entry is linked into place only if none
exists, whatever its state, so a second run or a retried tick queues nothing.

An entry's life: ``queued`` -> ``running`` -> ``done`` (the result, delivered once on the alert's
channel) or, after a failed try and one retry, ``failed`` with its reason. ``drain`` (`make
bisect-queue`, on a GPU host) and the autorun job (``LIGER_BISECT_AUTORUN=1``) both take the GPU lock
``queue/.gpu.lock`` first, so never more than one harness runs at a time. Rules: docs/bisect.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pipeline.bisect.plan import RUNNER, BisectOptions, PlanError, make_plan, write_plan
from pipeline.common.files import write_atomic
from pipeline.config import Settings, child_env, load
from pipeline.outputs.alerts.messages import slack_text
from pipeline.outputs.alerts.webhook import Deadline, post

QUEUE_FORMAT = "liger-bisect-queue/1"
LOCK_NAME = ".gpu.lock"
MAX_ATTEMPTS = 2  # a plan that fails is tried once more, then marked failed with its reason
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


def queue_dir(local: Path) -> Path:
    return Path(local) / "bisect" / "queue"


def entry_path(local: Path, alert_id: str) -> Path:
    return queue_dir(local) / (re.sub(r"[^A-Za-z0-9._-]+", "_", alert_id) + ".json")


def stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_entry(path: Path) -> dict | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("format") == QUEUE_FORMAT else None


def write_entry(path: Path, entry: dict) -> None:
    write_atomic(path, (json.dumps(entry, indent=2, default=str) + "\n").encode())


def entries(local: Path) -> list[tuple[Path, dict]]:
    """Every readable entry, oldest queued first."""
    found = [(p, e) for p in sorted(queue_dir(local).glob("*.json")) if (e := read_entry(p)) is not None]
    return sorted(found, key=lambda pe: (pe[1].get("queued_at") or "", pe[0].name))


def enqueue(local: Path, alert: dict, plan: dict) -> Path | None:
    """The alert's entry, unless it has one already (then None): written aside, then hard-linked into
    place, which fails when the name exists, so two sensors at once still queue it once."""
    path = entry_path(local, alert["alert_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return None
    entry = {
        "format": QUEUE_FORMAT,
        "alert_id": alert["alert_id"],
        "alert_line": alert.get("line"),
        "state": QUEUED,
        "queued_at": stamp(),
        "attempts": 0,
        "reason": None,
        "plan": plan,
        "result": None,
        "delivered_at": None,
        "delivery_error": None,
    }
    aside = path.with_suffix(f".{os.getpid()}.tmp")
    aside.write_text(json.dumps(entry, indent=2, default=str) + "\n", encoding="utf-8")
    try:
        os.link(aside, path)
    except FileExistsError:
        return None
    finally:
        aside.unlink(missing_ok=True)
    return path


OPEN_SQL = """
select alert_id, line, opened_run from alerts
where status = 'open' and direction = 'regression' and opened_run > ?
order by opened_run, alert_id
"""


def queue_alerts(
    local: Path, duckdb_path: Path, repo: Path | None, after_run: int, root_uri: str | None = None
) -> tuple[list[str], dict]:
    """A plan for each open regression alert opened by a run after ``after_run`` that has no entry yet:
    (alert ids queued, alert id -> why not)."""
    from pipeline.common.duck import open_readonly

    with open_readonly(duckdb_path, root_uri) as con:
        cur = con.execute(OPEN_SQL, [after_run])
        names = [d[0] for d in cur.description]
        alerts = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    queued, skipped = [], {}
    for alert in alerts:
        if entry_path(local, alert["alert_id"]).exists():
            continue
        if repo is None:
            skipped[alert["alert_id"]] = "no clone (LIGER_GIT_REPO): the range's commits are not known"
            continue
        try:
            plan = make_plan(repo, BisectOptions(alert=alert["alert_id"], confirm=True), duckdb_path)
        except PlanError as exc:
            skipped[alert["alert_id"]] = str(exc)
            continue
        if enqueue(local, alert, plan) is not None:
            queued.append(alert["alert_id"])
    return queued, skipped


def refresh_pages(local: Path, duckdb_path: Path, root_uri: str, alert_ids: list[str]) -> None:
    """Rewrite ``<warehouse>/alerts/<id>.md`` of the alerts just queued (or answered): the run wrote
    them before the sensor queued anything; now they name their bisect (pipeline/outputs/alerts)."""
    if not alert_ids:
        return
    from pipeline.common.duck import open_readonly
    from pipeline.outputs.alerts.messages import markdown_messages
    from pipeline.regress.alert_state import alerts_folder

    shown = {i: read_entry(entry_path(local, i)) for i in alert_ids}
    with open_readonly(duckdb_path, root_uri) as con:
        cur = con.execute("select * from alerts where list_contains($ids, alert_id)", {"ids": alert_ids})
        names = [d[0] for d in cur.description]
        alerts = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        pages = markdown_messages(con, alerts, bisects=shown)
    folder = alerts_folder(local)
    folder.mkdir(parents=True, exist_ok=True)
    for alert_id, page in pages.items():
        write_atomic(folder / f"{alert_id}.md", page.encode())


@contextmanager
def gpu_lock(local: Path, timeout_s: float) -> Iterator[None]:
    """One GPU job at a time on this host: an exclusive flock on ``queue/.gpu.lock`` (released by the
    kernel when its holder dies), waited for up to ``timeout_s``."""
    path = queue_dir(local) / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another bisect held {path.name} for {timeout_s:g} s") from None
                time.sleep(1.0)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _try_once(settings: Settings, plan: dict, repo: Path) -> tuple[dict | None, str | None]:
    """One run of the plan by the standard-library runner: (result, None) or (None, why it failed)."""
    out = settings.local / "bisect" / plan["id"]
    path = write_plan(plan, out / "plan.json")
    cmd = [sys.executable, "-I", str(RUNNER), str(path), str(out), "--repo", str(repo)]
    proc = subprocess.run(
        [*cmd, "--python", settings.harness_python], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        return None, f"the runner exited with {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-500:]}"
    result = json.loads((out / "result.json").read_text())
    if result["outcome"] == "harness_failed":
        return None, "harness_failed: " + "; ".join(result.get("notes") or [])[-500:]
    return result | {"_folder": str(out)}, None


def run_entry(path: Path, settings: Settings) -> bool:
    """Run one queued entry (the caller holds the GPU lock): tried, retried once on failure, then done
    or failed with its reason. True when it ended done."""
    entry = read_entry(path)
    if entry is None or entry["state"] not in (QUEUED, RUNNING):  # RUNNING under our lock: a dead holder's
        return entry is not None and entry["state"] == DONE
    repo = settings.git_repo_dir or Path(entry["plan"].get("repo") or ".")
    while entry["attempts"] < MAX_ATTEMPTS:
        entry |= {"state": RUNNING, "attempts": entry["attempts"] + 1, "started_at": stamp()}
        write_entry(path, entry)
        plan = dict(entry["plan"], id=f"{entry['plan']['id']}-try{entry['attempts']}")
        try:
            result, why = _try_once(settings, plan, repo)
        except (OSError, ValueError, KeyError) as exc:
            result, why = None, f"{type(exc).__name__}: {exc}"
        if result is not None:
            entry |= {"state": DONE, "reason": None, "result": _summary(result), "finished_at": stamp()}
            write_entry(path, entry)
            return True
        entry |= {"state": QUEUED if entry["attempts"] < MAX_ATTEMPTS else FAILED, "reason": why}
        write_entry(path, entry)
    return False


def _summary(result: dict) -> dict:
    keep = ("outcome", "culprit", "culprit_subject", "gpu", "harness_runs", "ratio", "kernel", "pass", "metric")
    return {k: result.get(k) for k in keep} | {
        "folder": Path(result["_folder"]).name,
        "gpu": result.get("gpu") or (result.get("environment") or {}).get("gpu"),
    }


def result_text(entry: dict) -> str:
    """The result in one line, as the alert's channel gets it."""
    r = entry["result"] or {}
    gpu = r.get("gpu") or "this host"
    ratio = (r.get("ratio") or {}).get("to_over_from")
    size = f" (×{ratio:.3f})" if isinstance(ratio, int | float) else ""
    if r.get("outcome") == "culprit":
        what = f"confirmed on {gpu}{size}, culprit {str(r['culprit'])[:7]} {r.get('culprit_subject') or ''}".rstrip()
    elif r.get("outcome") == "reproduced":
        what = f"confirmed on {gpu}{size}, no single commit isolated"
    elif r.get("outcome") == "not_reproduced":
        what = f"not reproduced on {gpu}{size}: the environment moved"
    else:
        what = f"{r.get('outcome')} on {gpu}{size} after {r.get('harness_runs')} harness run(s)"
    return f"Liger alert {entry['alert_id']} [bisect]: {what}"


def deliver(path: Path, settings: Settings) -> bool:
    """The result on the alert's channel (the webhook), once: an entry already delivered sends nothing."""
    entry = read_entry(path)
    if entry is None or entry["state"] != DONE or entry.get("delivered_at"):
        return False
    url, text = settings.alert_webhook, result_text(entry)
    # the webhook's rules (pipeline/outputs/alerts/webhook.py): a deadline, no redirect; Slack's text escaped
    error = post(url, slack_text(text), settings.alert_timeout_s, Deadline(settings.alert_deadline_s)) if url else None
    entry |= {"delivered_at": stamp(), "delivery_error": None} if error is None else {"delivery_error": error}
    write_entry(path, entry)
    return error is None


def ingest(settings: Settings) -> bool:
    """One warehouse run over the bisect folder, in a process of its own (it takes the run lock),
    forced past 'nothing new' as `make bisect-ingest` is."""
    env = child_env(LIGER_REHASH="1", LIGER_WAREHOUSE=settings.warehouse, LIGER_DATA_RAW=str(settings.data_raw),
                    LIGER_GIT_REPO=settings.git_repo)  # fmt: skip
    return subprocess.run([sys.executable, "-m", "pipeline.cli.run"], env=env, stdin=subprocess.DEVNULL).returncode == 0


def process(path: Path, settings: Settings) -> bool:
    """One entry, whole: under the GPU lock, run (retry once), then ingest and deliver."""
    with gpu_lock(settings.local, settings.bisect_lock_timeout_s):
        done = run_entry(path, settings)
    if done:
        entry = read_entry(path) or {}
        if not entry.get("ingested_at"):
            if not ingest(settings):
                print(f"bisect queue: {path.name}: the ingest failed; `make bisect-ingest` retries", file=sys.stderr)
            else:
                write_entry(path, entry | {"ingested_at": stamp()})
        deliver(path, settings)
    entry = read_entry(path) or {}
    duckdb_path = settings.local / "liger.duckdb"
    if duckdb_path.is_file():
        refresh_pages(settings.local, duckdb_path, settings.warehouse, [entry.get("alert_id") or ""])
    return done


def drain(settings: Settings | None = None) -> int:
    """`make bisect-queue`: every queued entry, oldest first, one at a time; entries done but not yet
    delivered are delivered. Exit code 0 when nothing failed, 1 when an entry ended failed, 3 when
    another bisect held the GPU lock past LIGER_BISECT_LOCK_TIMEOUT_S."""
    settings = settings or load()
    failed = 0
    todo = [(p, e) for p, e in entries(settings.local) if e["state"] in (QUEUED, RUNNING)]
    for path, entry in todo:
        print(f"bisect queue: {entry['alert_id']}: running {entry['plan']['id']}")
        try:
            ok = process(path, settings)
        except TimeoutError as exc:  # the GPU lock: another bisect runs; the entry stays queued
            print(f"bisect queue: {exc}; {entry['alert_id']} stays queued", file=sys.stderr)
            return 3
        if not ok:
            failed += 1
            print(f"bisect queue: {entry['alert_id']}: failed: {(read_entry(path) or {}).get('reason')}")
    for path, entry in entries(settings.local):
        if entry["state"] == DONE and not entry.get("delivered_at"):
            deliver(path, settings)
    left = sum(1 for _, e in entries(settings.local) if e["state"] == QUEUED)
    print(f"bisect queue: {len(todo)} run, {failed} failed, {left} still queued")
    return 1 if failed else 0
