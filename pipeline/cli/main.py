"""`liger-bench`, the console script (pyproject.toml `[project.scripts]`): the one parser
(pipeline/cli/parser.py), then the subcommand's own module, imported only when it runs.

Exit codes are the table of docs/cli.md: 0 ok, 1 a finding, 2 bad input or usage; a bad setting
(`LIGER_*`) is bad input, said in one line before any work.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

from pipeline.cli.parser import parse
from pipeline.config import SettingsError

BENCHMARKS = ("bench.shipped", "bench.run", "bench.deep", "bench.regression_detection")


def _bench(ns: argparse.Namespace) -> int:
    """`make bench`'s four benchmarks, in its order, each in a process of its own as before (a benchmark
    measures its own process); the first that fails ends it with its status."""
    if importlib.util.find_spec("bench") is None:  # an installed wheel carries pipeline/ only
        print("liger-bench bench: the benchmarks need the project's checkout (bench/)", file=sys.stderr)
        return 2
    for module in BENCHMARKS:
        code = subprocess.call([sys.executable, "-m", module])
        if code:
            return code
    return 0


def _dispatch(ns: argparse.Namespace) -> int:
    command = ns.subcommand
    if command == "run":
        from pipeline.cli import run

        return run.main()
    if command == "sql":
        from pipeline.cli import sql_shell

        return sql_shell.run_shell(ns)
    if command == "compare":
        from pipeline.cli import compare

        return compare.run(ns)
    if command == "gate":
        from pipeline.cli import gate

        return gate.run(ns)
    if command == "ack":
        from pipeline.cli import ack

        return ack.run(ns)
    if command == "bisect":
        from pipeline.cli import bisect

        return bisect.run(ns)
    if command == "site":
        from pipeline.outputs.site import publish_site

        return publish_site(ns.db, ns.out)
    if command == "export-kernelindex":
        from pipeline.cli import export

        return export.run(ns)
    if command == "bench":
        return _bench(ns)
    raise AssertionError(f"no handler for {command!r}")  # the parser accepts only the commands above


def main(argv: list[str] | None = None) -> int:
    ns = parse(argv)
    try:
        return _dispatch(ns)
    except SettingsError as exc:
        print(f"liger-bench {ns.subcommand}: {exc}", file=sys.stderr)
        return 2


def entry() -> None:
    """The console script. `run` ends as `make run` does, without the interpreter's teardown."""
    code = main()
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        from pipeline.cli.run import exit_without_teardown

        exit_without_teardown(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
