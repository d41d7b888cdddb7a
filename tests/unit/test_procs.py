"""The session-end process check sees an orphaned grandchild (as a `dagster api grpc` code server left
by a dead `dagster dev` would be), and kill_tree ends a whole tree."""

from __future__ import annotations

import subprocess
import sys

import psutil

from tests.conftest import SESSION_TOKEN
from tests.fixtures import procs
from tests.fixtures.runs import wait_for


def test_an_orphaned_grandchild_is_found_and_a_tree_is_killed():
    # The child starts a grandchild in a session of its own, prints its PID and exits: an orphan.
    script = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
        "print(p.pid, flush=True)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    orphan = int(out.stdout.strip())
    try:
        assert orphan in {p.pid for p in procs.survivors(SESSION_TOKEN)}
    finally:
        procs.kill_tree(orphan, grace=5)
    assert wait_for(lambda: not psutil.pid_exists(orphan) or psutil.Process(orphan).status() == "zombie", 60, 0.1)
    assert orphan not in {p.pid for p in procs.survivors(SESSION_TOKEN)}

    tree = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(3600)']); time.sleep(3600)",
        ],
        start_new_session=True,
    )
    assert wait_for(lambda: len(psutil.Process(tree.pid).children()) == 1, 120, 0.1)
    child = psutil.Process(tree.pid).children()[0].pid
    procs.kill_tree(tree, grace=5)
    assert tree.poll() is not None
    assert wait_for(lambda: not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie", 60, 0.1)
