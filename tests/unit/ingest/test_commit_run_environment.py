"""environment.json beside a commit run is untrusted input (issue 53): read with a size limit, never
through a symlink out of the data root, never from a FIFO or a device (no hang), never parsed by a
recursion that a deep file exhausts; a refused one is a problem with its reason code, the run itself
still a run of its commit. What is kept is canonical JSON (a nested value stays JSON, not a repr)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from pipeline.contracts.reasons import Reason
from pipeline.contracts.sources import CSV_KIND, SourceFile
from pipeline.ingest import commit_runs
from pipeline.ingest.commit_runs import ENV_MAX_BYTES, ENVIRONMENT_JSON, read_environment

SHA = "a" * 40


def _run(root: Path) -> Path:
    csv = root / "runs" / "commit_runs" / SHA / "r1" / "all_benchmark_data.csv"
    csv.parent.mkdir(parents=True)
    csv.write_text("kernel_name\n")
    return csv


def _read_with_a_watchdog(csv: Path, root: Path):
    """read_environment in a thread: a FIFO that blocked the reader would fail here, not hang the suite."""
    found: list = []
    reader = threading.Thread(target=lambda: found.append(read_environment(csv, root)), daemon=True)
    reader.start()
    reader.join(60)
    if reader.is_alive():  # unblock a reader waiting for a FIFO's writer, then fail
        fifo = csv.parent / ENVIRONMENT_JSON
        with open(fifo, "w") as fh:
            fh.write("{}")
        pytest.fail("reading environment.json blocked")
    return found[0]


def _outside(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "not yours"}')
    return secret


CASES = {
    "deep": (lambda p, t: p.write_text("[" * 20_000 + "]" * 20_000), Reason.JSON_TOO_DEEP),
    "deep object": (lambda p, t: p.write_text('{"a":' * 5_000 + "1" + "}" * 5_000), Reason.JSON_TOO_DEEP),
    "huge": (lambda p, t: p.write_text(json.dumps({"x": "y" * (ENV_MAX_BYTES * 4)})), Reason.FILE_TOO_LARGE),
    "fifo": (lambda p, t: os.mkfifo(p), Reason.UNREADABLE_FILE),
    "device": (lambda p, t: p.symlink_to("/dev/zero"), Reason.UNREADABLE_FILE),
    "symlink outside": (lambda p, t: p.symlink_to(_outside(t)), Reason.UNREADABLE_FILE),
    "folder": (lambda p, t: p.mkdir(), Reason.UNREADABLE_FILE),
    "not an object": (lambda p, t: p.write_text("[1, 2]"), Reason.NOT_AN_OBJECT),
    "not JSON": (lambda p, t: p.write_text("{gpu: H100"), Reason.TRUNCATED_JSON),
    "NaN": (lambda p, t: p.write_text('{"x": NaN}'), Reason.TRUNCATED_JSON),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_environment_is_refused_with_its_reason_and_the_run_stays_a_run(tmp_path, case):
    root = tmp_path / "data_raw"
    csv = _run(root)
    make, reason = CASES[case]
    make(csv.parent / ENVIRONMENT_JSON, tmp_path)
    env, refused = _read_with_a_watchdog(csv, root)
    assert env is None and refused is not None and refused[0] == reason, refused
    assert ENVIRONMENT_JSON in refused[1]
    src = SourceFile(path=csv, source_path=csv.relative_to(root).as_posix(), kind=CSV_KIND, size_bytes=11)
    problems: list = []
    assert commit_runs.mark(src, root, problems)  # still one run of its commit
    assert src.gh_pages_folder == SHA and src.environment is None
    assert problems == [(f"runs/commit_runs/{SHA}/r1/{ENVIRONMENT_JSON}", str(reason), refused[1])]


def test_a_symlink_inside_the_data_root_is_read_and_nested_values_stay_json(tmp_path):
    root = tmp_path / "data_raw"
    csv = _run(root)
    real = root / "shared_env.json"
    real.write_text('{"gpu": "H100", "versions": {"torch": "2.6", "list": [1, 2.5, "x"]}, "n": 3}')
    (csv.parent / ENVIRONMENT_JSON).symlink_to(real)
    env, refused = read_environment(csv, root)
    assert refused is None
    assert env == '{"gpu":"H100","n":3,"versions":{"list":[1,2.5,"x"],"torch":"2.6"}}'
    assert json.loads(env)["versions"] == {"torch": "2.6", "list": [1, 2.5, "x"]}


def test_no_environment_is_no_problem(tmp_path):
    assert read_environment(_run(tmp_path / "data_raw"), tmp_path / "data_raw") == (None, None)
