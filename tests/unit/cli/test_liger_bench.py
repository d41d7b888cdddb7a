"""`liger-bench`, the console script of pyproject.toml: one parser whose `--help` lists every subcommand
(through `uv run`, as a user calls it), an example in each subcommand's help, the exit-code table, and
bad options said in one line with exit 2 before any work (issue 53 case 9)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.parser import EXIT_CODES, build

REPO = Path(__file__).resolve().parents[3]
LIGER_BENCH = Path(sys.executable).parent / "liger-bench"
UV = REPO / ".tools" / "bin" / "uv"
SUBCOMMANDS = ("run", "sql", "compare", "gate", "ack", "bisect", "site", "export-kernelindex", "bench")
BISECT_STEPS = ("plan", "run", "ingest", "queue")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "LIGER_GIT_REPO": "", **env}
    return subprocess.run([str(LIGER_BENCH), *args], cwd=REPO, env=full, capture_output=True, text=True, timeout=300)


def test_uv_run_liger_bench_help_lists_every_subcommand():
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(Path(sys.executable).parents[1]), "UV_NO_PROGRESS": "1"}
    proc = subprocess.run([str(UV), "run", "--frozen", "--offline", "liger-bench", "--help"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    listed = proc.stdout.split("options:")[0]
    for name in SUBCOMMANDS:
        assert f"\n    {name}" in listed, name
    for code, text in EXIT_CODES:
        assert f"  {code}  {text}" in proc.stdout
    assert set(_subparsers(build())) == set(SUBCOMMANDS)


def test_each_subcommand_help_shows_an_example(capsys):
    subs = _subparsers(build())
    helps = {name: sub.format_help() for name, sub in subs.items()}
    bisect_steps = _subparsers(subs["bisect"])
    assert set(bisect_steps) == set(BISECT_STEPS)
    helps |= {f"bisect {step}": sub.format_help() for step, sub in bisect_steps.items()}
    for name, text in helps.items():
        example = text.split("example:\n", 1)
        assert len(example) == 2, name
        assert example[1].lstrip().startswith(f"liger-bench {name.split()[0]}"), name
        assert "exit codes:" in text, name
    # and the installed script prints the same help
    proc = cli("bisect", "plan", "--help")
    assert proc.returncode == 0 and proc.stdout == bisect_steps["plan"].format_help()


def test_the_gate_keeps_the_flags_of_python_m_pipeline_cli_gate():
    ns = build().parse_args(["gate", "x.csv", "--base", "auto", "--gpu", "G", "--head", "h", "--out", "o",
                             "--warn-only", "--record"])  # fmt: skip
    assert (ns.run, ns.base, ns.gpu, ns.head, ns.out, ns.warn_only, ns.record) == ("x.csv", "auto", "G", "h", "o",
                                                                                  True, True)  # fmt: skip
    assert build().parse_args(["gate", "x.csv", "--base", "b"]).out == "gate"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--runs", "abc"), "--runs: not a whole number: 'abc'"),
        (("--runs", "0"), "--runs: must be at least 1, not 0"),
        (("--max-runs", "-3"), "--max-runs: must be at least 1"),
        (("--min-effect", "abc"), "--min-effect: not a number: 'abc'"),
        (("--config", "{name: it's}"), "--config: not JSON"),
        (("--config", "[1, 2]"), "--config: not a JSON object"),
        (("--runs", "500"), "--runs: Input should be less than or equal to 50"),
        ((), "set LIGER_GIT_REPO to a Liger-Kernel clone"),
        (("--config", '{"name": "it\'s"}'), "set LIGER_GIT_REPO"),  # a quote in a config is a value
    ],
)
def test_a_bad_bisect_option_is_one_line_and_exit_2(args, says):
    for step in ("plan", "run"):
        proc = cli("bisect", step, "--kernel", "softmax", "--from-rev", "v0.6.4", "--to-rev", "v0.6.5", *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert says in proc.stderr


def test_a_clone_that_is_not_there_is_one_line_and_exit_2(tmp_path):
    proc = cli("bisect", "plan", "--kernel", "softmax", "--from-rev", "a", "--to-rev", "b",
               LIGER_GIT_REPO=str(tmp_path / "missing"))  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "LIGER_GIT_REPO" in proc.stderr


def test_a_bad_setting_is_one_line_and_exit_2():
    proc = cli("compare", "0.6.5", "0.7.0", LIGER_LOCK_TIMEOUT_S="abc")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "LIGER_LOCK_TIMEOUT_S" in proc.stderr


def test_usage_errors_exit_2_in_one_line():
    for args in ((), ("nope",), ("gate", "x.csv"), ("bisect",), ("compare", "0.6.5")):
        proc = cli(*args)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (args, proc.stderr)
        assert proc.stderr.startswith("liger-bench") and "--help" in proc.stderr


def test_bisect_queue_drains_the_queue_of_the_warehouse_it_is_given(tmp_path):
    proc = cli("bisect", "queue", "--help")
    assert proc.returncode == 0 and "liger-bench bisect queue" in proc.stdout
    proc = cli("bisect", "queue", LIGER_WAREHOUSE=str(tmp_path / "wh"))  # nothing queued there: nothing to do
    assert proc.returncode == 0, proc.stderr


def test_each_subcommand_runs_its_own_code_and_no_warehouse_is_bad_input(tmp_path):
    """Without a warehouse each command says so in its own words, exit 2 (`sql -c` once ran `bench`:
    its -c/--command took the subcommand's place)."""
    says = {
        ("sql", "-c", "select 1"): "database does not exist",
        ("compare", "0.6.5", "0.7.0"): "compare: nothing published",
        ("ack", "some-alert", "why"): "ack: no warehouse at",
        ("site",): "site: ",
        ("export-kernelindex", str(tmp_path / "out")): "no warehouse at",
        ("gate", str(REPO / "data_raw" / "liger_gh_pages" / "benchmarks" / "0a62700" / "benchmark.csv"), "--base",
         "0a62700", "--out", str(tmp_path / "gate")): "gate: bad input: no warehouse",
    }  # fmt: skip
    for args, text in says.items():
        proc = cli(*args, LIGER_WAREHOUSE=str(tmp_path / "none"))
        assert proc.returncode == 2 and text in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "out").exists()
