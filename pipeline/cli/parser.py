"""`liger-bench`: the warehouse's one command line, as one argparse parser (docs/cli.md).

Every subcommand's arguments are declared here and nowhere else; `python -m pipeline.cli.<x>` and the
`make` targets go through this same parser. This module imports nothing heavy, so `--help` answers at
once; each subcommand's code is imported when it runs (pipeline/cli/main.py).
"""

from __future__ import annotations

import argparse
import json

PROG = "liger-bench"

# One table for every subcommand (docs/cli.md repeats it): a CI job tells a finding from a broken input.
EXIT_CODES = (
    (0, "ok: nothing to report (gate: no regression; run: the job succeeded)"),
    (1, "a finding: a regression (gate), a failed run or check (run), a SQL statement that failed (sql)"),
    (2, "bad input or usage: a malformed CSV, an unknown base or alert, a bad option or setting"),
    (3, "busy (bisect queue): another bisect held the GPU past LIGER_BISECT_LOCK_TIMEOUT_S; try again"),
)
EXIT_TABLE = "exit codes:\n" + "\n".join(f"  {code}  {text}" for code, text in EXIT_CODES)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are one line and exit 2 (no usage block, no traceback)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see: {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _json_object(text: str) -> str:
    """CONFIG is upstream's extra_benchmark_config_str: a JSON object, checked before any work."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text[:200]!r}")
    return text


def _sub(subs, name: str, summary: str, example: str) -> Parser:
    return subs.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=f"example:\n  {example}\n\n{EXIT_TABLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _gate(subs) -> None:
    ap = _sub(subs, "gate", "did a run make anything slower than its base? (docs/gate.md)",
              f"{PROG} gate benchmark/data/all_benchmark_data.csv --base auto --head HEAD --out gate")  # fmt: skip
    ap.add_argument("run", metavar="RUN", help="the candidate: upstream's all_benchmark_data.csv, or a folder of CSVs")
    ap.add_argument("--base", required=True, help="commit (full or short sha), release, snapshot, or 'auto'")
    ap.add_argument("--gpu", default=None, help="the candidate's GPU to judge (only when it has several)")
    ap.add_argument("--head", default=None, help="the candidate's commit (a revision of LIGER_GIT_REPO)")
    ap.add_argument("--out", default="gate", help="folder for gate.json and gate.md (default: gate/)")
    ap.add_argument("--warn-only", action="store_true", help="always exit 0")
    ap.add_argument("--record", action="store_true", help="also land the run in the warehouse, as a run of HEAD")


def _bisect_options(ap: Parser) -> None:
    ap.add_argument("--kernel", default=None, help="the benchmark's kernel_name")
    ap.add_argument("--from-rev", dest="from_rev", default=None, help="the good end (any git revision)")
    ap.add_argument("--to-rev", dest="to_rev", default=None, help="the bad end (any git revision)")
    ap.add_argument("--alert", default=None, help="an alert id: its range and worst flagged sweep")
    ap.add_argument("--pass", dest="pass_", default=None, help="kernel_operation_mode of the judged sweep")
    ap.add_argument("--metric", default=None, help="speed or memory")
    ap.add_argument("--config", type=_json_object, default=None, help="extra_benchmark_config_str (a JSON object)")
    ap.add_argument("--providers", default=None, help="run only these providers, comma-separated")
    ap.add_argument("--runs", type=_positive_int, default=None, help="runs per side and per step (default 3)")
    ap.add_argument("--max-runs", dest="max_runs", type=_positive_int, default=None, help="cap on runs per side")
    ap.add_argument("--confirm", default=None, help="1: re-run both ends even without a candidate")
    ap.add_argument(
        "--min-effect",
        dest="min_effect",
        type=_number,
        default=None,
        help="the smallest change called a change (default: LIGER_BISECT_MIN_EFFECT_*)",
    )
    ap.add_argument("--narrow", default=None, help="0: run the whole harness, not only the judged sweep")


def _bisect(subs) -> None:
    top = _sub(subs, "bisect", "confirm a range on a GPU and bisect it to a commit (docs/bisect.md)",
               f"{PROG} bisect run --kernel softmax --from-rev v0.6.4 --to-rev v0.6.5")  # fmt: skip
    steps = top.add_subparsers(dest="step", metavar="STEP", required=True, parser_class=Parser)
    example = f"{PROG} bisect plan --kernel softmax --from-rev v0.6.4 --to-rev v0.6.5 --plan-out plan.json"
    plan = _sub(steps, "plan", "the plan JSON only, for a GPU host to run later", example)
    _bisect_options(plan)
    plan.add_argument("--plan-out", dest="plan_out", default=None, help="where to write the plan")
    run = _sub(steps, "run", "plan, run the standard-library runner here, then ingest what it measured",
               f"{PROG} bisect run --kernel softmax --from-rev v0.6.4 --to-rev v0.6.5 --runs 5")  # fmt: skip
    _bisect_options(run)
    run.add_argument("--no-ingest", action="store_true", help="leave the results for a later `bisect ingest`")
    _sub(steps, "ingest", "one warehouse run over the bisect folder (results copied back from a GPU host)",
         f"{PROG} bisect ingest")  # fmt: skip
    _sub(steps, "queue", "run the plans the alert sensor queued, one GPU job at a time (on a GPU host)",
         f"{PROG} bisect queue")  # fmt: skip


def _run_sql_compare(subs) -> None:
    _sub(subs, "run", "materialize every asset headless on data_raw/ and print a summary", f"{PROG} run")
    sql = _sub(subs, "sql", "SQL over liger.duckdb, read-only: a prompt, -c QUERY, or statements on stdin",
               f"{PROG} sql -c 'select kernel_name, count(*) from measurements group by 1'")  # fmt: skip
    sql.add_argument("-c", "--command", dest="query", help="run this SQL and exit (status 1 if it fails)")
    sql.add_argument("--db", default=None, help="the liger.duckdb to open (default: the warehouse's)")
    sql.add_argument("--mode", choices=("box", "line"), default="box")
    sql.add_argument("--maxwidth", type=int, default=None, help="widest column in box mode (0: none)")
    cmp = _sub(subs, "compare", "the sweeps that moved between two releases, versions or commits",
               f"{PROG} compare 0.6.5 0.7.0 --gpu 'NVIDIA H100 80GB HBM3'")  # fmt: skip
    cmp.add_argument("from_", metavar="FROM", help="release, Liger version or commit (full or short sha)")
    cmp.add_argument("to", metavar="TO")
    cmp.add_argument("--gpu", default=None, help="one GPU (default: every GPU)")
    cmp.add_argument("--all", action="store_true", help="also list the sweeps that did not move")


def _ack(subs) -> None:
    ack = _sub(subs, "ack", "acknowledge an alert (kept in alert_state; a new step reopens it)",
               f"{PROG} ack 3f2a9c1e 'known: upstream PR 812 trades speed for memory'")  # fmt: skip
    ack.add_argument("alert_id", metavar="ALERT")
    ack.add_argument("note", metavar="NOTE", help="why (stored verbatim)")


def _outputs(subs) -> None:
    site = _sub(subs, "site", "the static dashboard of liger.duckdb -> warehouse/site/index.html", f"{PROG} site")
    site.add_argument("--db", default=None, help="the published liger.duckdb")
    site.add_argument("--out", default=None, help="output folder (default warehouse/site)")
    exp = _sub(subs, "export-kernelindex", "facts with KernelIndex's identity, as KernelIndex records",
               f"{PROG} export-kernelindex /tmp/ki-export")  # fmt: skip
    exp.add_argument("dest", metavar="DEST", help="folder for kernelindex/runs.ndjson and objects.ndjson")
    _sub(subs, "bench", "every benchmark of `make bench`, results under bench/results/", f"{PROG} bench")


def build() -> Parser:
    ap = Parser(
        prog=PROG,
        description="The Liger benchmark warehouse from the command line (docs/cli.md).",
        epilog=f"example:\n  {PROG} gate all_benchmark_data.csv --base auto\n\n{EXIT_TABLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subs = ap.add_subparsers(dest="subcommand", metavar="COMMAND", required=True, parser_class=Parser)
    for add in (_run_sql_compare, _gate, _ack, _bisect, _outputs):  # the order `--help` lists them in
        add(subs)
    return ap


def parse(argv: list[str] | None) -> argparse.Namespace:
    return build().parse_args(argv)
