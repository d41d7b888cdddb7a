"""`liger-bench gate RUN --base <commit | release | snapshot | auto> [--gpu …] [--out dir] [--head rev]
[--warn-only] [--record]`: did this run make anything slower than its base? (docs/gate.md)

Exit 0: no regression (pass, neutral or skipped); 1: at least one `regression`; 2: bad input (an
unreadable or malformed CSV, an unknown base, no base run on the candidate's GPU). --warn-only
always exits 0 (bad input included: the comment says what was wrong). `make gate` wraps it for a
person; `make` turns any failing command into its own status 2, so CI calls `liger-bench gate`.
"""

from __future__ import annotations

import argparse
import shutil
import stat
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from pipeline.config import load
from pipeline.contracts.sources import file_sha256
from pipeline.ingest.commit_runs import COMMIT_RUNS_DIR, CSV_NAME, GATE_DIR, is_full_sha
from pipeline.outputs.gate import GateInputError, GateOptions, run_gate
from pipeline.outputs.gate.outputs import write_error, write_outputs


def record(files: list[str], head: str | None) -> list[Path]:
    """The candidate as our own run of its commit (pipeline/ingest/commit_runs.py), under the
    warehouse's bisect/gate/ folder; the warehouse run that ingests it follows."""
    if not head or not is_full_sha(head):
        raise GateInputError("--record needs the candidate's commit as a full sha: HEAD= with LIGER_GIT_REPO")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    written = []
    for f in files:
        run_id = f"gate-{stamp}-{file_sha256(Path(f))[:12]}"
        dest = load().local / "bisect" / GATE_DIR / COMMIT_RUNS_DIR / head / run_id / CSV_NAME
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
        written.append(dest)
    return written


def _judge(ns: argparse.Namespace) -> dict:
    from pipeline.serve.connect import connect

    try:
        con = connect()
    except LookupError as exc:
        raise GateInputError(f"no warehouse to compare with: {exc}") from exc
    opts = GateOptions(run=Path(ns.run), base=ns.base, gpu=ns.gpu or None, head=ns.head or None,
                       repo=load().git_repo_dir, warn_only=ns.warn_only)  # fmt: skip
    try:
        return run_gate(opts, con)
    finally:
        con.close()


def _readable_twice(run: Path, scratch: Path) -> Path:
    """The candidate as a path that can be read more than once: a pipe (``/dev/stdin``, ``<(cat …)``)
    is copied to a scratch file first, as hashing it would consume what the reader then needs."""
    try:
        mode = run.stat().st_mode
    except OSError:
        return run  # the gate says what is wrong with it
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return run
    copy = scratch / (run.name or "candidate")
    with run.open("rb") as src, copy.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return copy


def main(argv: list[str] | None = None) -> int:
    from pipeline.cli.parser import parse

    return run(parse(["gate", *(sys.argv[1:] if argv is None else argv)]))


def run(ns: argparse.Namespace) -> int:
    """`liger-bench gate RUN --base BASE [--gpu] [--head] [--out] [--warn-only] [--record]`."""
    with tempfile.TemporaryDirectory(prefix="liger-gate-input-") as scratch:
        ns.run = str(_readable_twice(Path(ns.run), Path(scratch)))
        return _gate(ns)


def _gate(ns: argparse.Namespace) -> int:
    out = Path(ns.out)
    try:
        doc = _judge(ns)
        if ns.record:
            for path in record(doc["candidate"]["files"], doc["candidate"]["commit"]):
                print(f"gate: recorded {path}", file=sys.stderr)
    except GateInputError as exc:
        write_error(out, str(exc))
        print(f"gate: bad input: {exc}", file=sys.stderr)
        return 0 if ns.warn_only else 2
    json_path, md_path = write_outputs(out, doc)
    counts = ", ".join(f"{n} {v}" for v, n in doc["counts"].items()) or "no sweep judged"
    print(f"gate: {doc['status']}: {counts} ({doc['gpu']}, base {doc['base']['label']})")
    print(f"gate: {json_path}\ngate: {md_path}")
    if ns.record:
        from pipeline.cli.bisect import ingest

        if ingest() != 0:
            print("gate: the warehouse run that records the candidate failed", file=sys.stderr)
            return 2
    return doc["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
