"""`make sql`: a SQL prompt over warehouse/liger.duckdb, opened read-only.

The `duckdb` CLI on PyPI (duckdb-cli) lags the `duckdb` package this project pins, and a CLI older
than the writer may not open its file; this shell uses the same library that wrote it.

    make sql                                   # prompt; end a statement with ';', quit with Ctrl-D
    make sql Q="select count(*) from measurements"
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from pipeline.common import duck
from pipeline.config import duckdb_path, warehouse_uri


def run(con, sql: str) -> None:
    try:
        relation = con.sql(sql)
    except duckdb.Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return
    if relation is not None:
        relation.show(max_rows=40, max_width=200)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-c", "--command", help="run this SQL and exit")
    ap.add_argument("--db", default=str(duckdb_path()))
    args = ap.parse_args(argv)
    # the tables may live on S3: the connection carries the filesystem that reads them
    con = duck.connect(args.db, read_only=True, remote_root=warehouse_uri())
    if args.command:
        run(con, args.command)
        return 0
    try:
        import readline  # noqa: F401 -- line editing and history for input()
    except ImportError:
        pass
    print(f"{args.db} (read-only). End a statement with ';'. Ctrl-D quits.")
    buffer: list[str] = []
    while True:
        try:
            line = input("sql> " if not buffer else "...> ")
        except EOFError:
            print()
            return 0
        buffer.append(line)
        if line.rstrip().endswith(";"):
            run(con, "\n".join(buffer))
            buffer = []


if __name__ == "__main__":
    raise SystemExit(main())
