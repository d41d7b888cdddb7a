"""issue 53 case 3: what a person passes to `make` (a branch name, a note, a config) is a value, never shell
text. Each target runs with every variable it takes set to shell and make syntax; `LB` (the
liger-bench the Makefile calls) is a recorder of its argv, so the test sees exactly what arrived.
tests/e2e/test_gate.py and test_make_ack.py do the same through the real commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# backticks, $(…), ;, both quotes, a newline, make's own $(…) and $$, a comment sign, a leading dash
HOSTILE = "`touch pwned1` $(touch pwned2); touch pwned3 \" ' \n $(shell touch pwned4) ${HOME} $$5 $5 # \\ -x"
LEADING_DASH = "--warn-only"

TARGETS = {
    "gate": (
        {"RUN": HOSTILE, "BASE": LEADING_DASH, "GPU": HOSTILE, "OUT": HOSTILE, "HEAD": HOSTILE, "WARN_ONLY": "1",
         "RECORD": "1"},
        ["gate", f"--base={LEADING_DASH}", f"--gpu={HOSTILE}", f"--out={HOSTILE}", f"--head={HOSTILE}",
         "--warn-only", "--record", "--", HOSTILE],
    ),
    "ack": ({"ALERT": LEADING_DASH, "NOTE": HOSTILE}, ["ack", "--", LEADING_DASH, HOSTILE]),
    "compare": ({"FROM": HOSTILE, "TO": LEADING_DASH, "GPU": HOSTILE, "ALL": "1"},
                ["compare", f"--gpu={HOSTILE}", "--all", "--", HOSTILE, LEADING_DASH]),
    "sql": ({"Q": HOSTILE}, ["sql", f"--command={HOSTILE}"]),
    "export-kernelindex": ({"DEST": HOSTILE}, ["export-kernelindex", "--", HOSTILE]),
}  # fmt: skip
BISECT = {
    "KERNEL": "--kernel",
    "FROM": "--from-rev",
    "TO": "--to-rev",
    "ALERT": "--alert",
    "PASS": "--pass",
    "METRIC": "--metric",
    "CONFIG": "--config",
    "PROVIDERS": "--providers",
    "RUNS": "--runs",
    "MAX_RUNS": "--max-runs",
    "CONFIRM": "--confirm",
    "MIN_EFFECT": "--min-effect",
    "NARROW": "--narrow",
}
TARGETS["bisect"] = (
    {**dict.fromkeys(BISECT, HOSTILE), "NO_INGEST": "1"},
    ["bisect", "run", *(f"{flag}={HOSTILE}" for flag in BISECT.values()), "--no-ingest"],
)
TARGETS["bisect-plan"] = (
    {**dict.fromkeys(BISECT, HOSTILE), "PLAN_OUT": HOSTILE},
    ["bisect", "plan", *(f"{flag}={HOSTILE}" for flag in BISECT.values()), f"--plan-out={HOSTILE}"],
)


@pytest.fixture
def recorder(tmp_path) -> Path:
    script = tmp_path / "liger-bench"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "with open(os.environ['RECORDED'], 'a') as fh:\n    fh.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(0o755)
    return script


def _make(target: str, values: dict[str, str], recorder: Path, cwd: Path, *, from_env: bool) -> list[list[str]]:
    recorded = cwd / "recorded.jsonl"
    env = {**os.environ, "RECORDED": str(recorded)}
    args = ["make", "-s", "-C", str(REPO), target, f"LB={recorder}"]
    if from_env:  # CI often sets them as environment variables: the same rule holds
        env |= values
    else:
        args += [f"{k}={v}" for k, v in values.items()]
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in recorded.read_text().splitlines()]


@pytest.mark.parametrize("from_env", [False, True], ids=["command line", "environment"])
@pytest.mark.parametrize("target", list(TARGETS))
def test_every_variable_arrives_byte_exact_and_runs_nothing(target, from_env, recorder, tmp_path):
    values, expected = TARGETS[target]
    assert _make(target, values, recorder, tmp_path, from_env=from_env) == [expected]
    ran = [p for p in (*tmp_path.iterdir(), *REPO.iterdir()) if p.name.startswith("pwned")]
    assert not ran


def test_a_missing_variable_is_a_usage_line_and_no_command(recorder, tmp_path):
    for target, values in (("gate", {"RUN": HOSTILE}), ("ack", {"NOTE": HOSTILE}), ("export-kernelindex", {})):
        proc = subprocess.run(["make", "-s", "-C", str(REPO), target, f"LB={recorder}",
                               *(f"{k}={v}" for k, v in values.items())],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 2 and "usage: make " + target in proc.stdout
        assert not (tmp_path / "recorded.jsonl").exists()
