"""issue 53 case 3, end to end: `make ack NOTE='…'` on a copy of the shipped warehouse stores the note
byte for byte (backticks, $(…), $5, quotes, a newline: text, never a command), in the Delta table
alert_state and in liger.duckdb's alerts; an unknown alert is bad input (exit 2, one line)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from pipeline.regress.alert_state import by_id, read_state

REPO = Path(__file__).resolve().parents[2]
LIGER_BENCH = Path(sys.executable).parent / "liger-bench"
NOTE = 'regressed by `touch pwned1`, cost went up by $5; $(touch pwned2) "it\'s"\n  second line $$ # \\'


def test_make_ack_stores_a_hostile_note_verbatim_and_runs_nothing(shipped_warehouse, tmp_path):
    wh = tmp_path / "warehouse"
    shutil.copytree(shipped_warehouse, wh)
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        alert_id = con.execute("select alert_id from alerts order by alert_id limit 1").fetchone()[0]
    env = {**os.environ, "LIGER_WAREHOUSE": str(wh), "LIGER_GIT_REPO": "", "LIGER_ALERT_WEBHOOK": ""}
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "ack", f"ALERT={alert_id}", f"NOTE={NOTE}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not [p for p in (*tmp_path.iterdir(), *REPO.iterdir()) if p.name.startswith("pwned")]
    assert by_id(read_state(str(wh)))[alert_id]["ack_note"] == NOTE
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        stored = con.execute("select status, note from alerts where alert_id = $a", {"a": alert_id}).fetchone()
    assert stored == ("acknowledged", NOTE)

    proc = subprocess.run([str(LIGER_BENCH), "ack", "no-such-alert", "why"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no alert 'no-such-alert'" in proc.stderr
