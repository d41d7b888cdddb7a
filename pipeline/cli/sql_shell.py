"""`make sql`: a SQL prompt over warehouse/liger.duckdb, opened read-only.

The `duckdb` CLI on PyPI (duckdb-cli) lags the `duckdb` package this project pins, and a CLI older
than the writer may not open its file; this shell uses the same library that wrote it.

    make sql                                   # prompt; end a statement with ';', quit with Ctrl-D
    make sql Q="select count(*) from measurements"
    echo "select 1;" | make sql                # statements from stdin (no prompt)

Read-only means no statement writes anything anywhere: only queries (SELECT, EXPLAIN) run; the connection
reads no file but the Parquet files its views list (`enable_external_access = false`, `allowed_paths`), and
its configuration is locked (no `profile_output`, no `SET`). COPY, EXPORT, ATTACH, INSTALL/LOAD, CREATE SECRET
and every other statement are refused by their type before DuckDB runs them.

A statement that fails prints its error on stderr and makes the exit status 1 (with -c and with
piped statements; at the prompt the session goes on). Dot commands at the prompt:

    .tables              what there is to query (schema main; the build's own objects are in `internal`)
    .mode box | line     a table (default), or one `column = value` line per column (wide text whole)
    .maxwidth N          widest column in box mode (default 80 characters; 0 = no limit)
    .help
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from dataclasses import dataclass

import duckdb

from pipeline.common import duck
from pipeline.config import duckdb_path, warehouse_uri

MAX_ROWS = 40
DEFAULT_COL_WIDTH = 80
# What a reader runs. `allowed_paths` permits writing as well as reading (a COPY with use_tmp_file false
# overwrote a listed Parquet file), so the statement's type is the first gate, DuckDB's switches the second.
READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})
# DuckDB keeps a view's `read_parquet(['a', 'b'])` as `read_parquet(list_value('a', 'b'))`
_READ_PARQUET = re.compile(r"read_parquet\((?:list_value\(|\[)((?:\s*'(?:[^']|'')*'\s*,?)*)", re.I)
_LITERAL = re.compile(r"'((?:[^']|'')*)'")


class RefusedStatement(duckdb.Error):
    """A statement that is not a query: `make sql` never runs it."""


def read_files(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every file the database's views read: the Delta snapshot's Parquet files listed, as literals, in
    `delta_*` and `warehouse_run` (serve/duckdb_build.py writes them so; a path may hold a quote)."""
    texts = [r[0] or "" for r in con.execute("select sql from duckdb_views() where not internal").fetchall()]
    return sorted(
        {m.replace("''", "'") for t in texts for listed in _READ_PARQUET.findall(t) for m in _LITERAL.findall(listed)}
    )


def lock_down(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The connection reads the warehouse's Parquet files and nothing else, writes nothing, and can no
    longer change that (`lock_configuration`: no SET, RESET or PRAGMA of a setting)."""
    con.execute("set allowed_paths = $paths", {"paths": read_files(con)})
    con.execute("set enable_external_access = false")
    con.execute("set autoinstall_known_extensions = false")
    con.execute("set autoload_known_extensions = false")
    con.execute("set lock_configuration = true")
    return con


def refuse_writes(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    for statement in con.extract_statements(sql):
        if statement.type not in READ_STATEMENTS:
            text = statement.query.strip()[:80]
            raise RefusedStatement(f"`make sql` is read-only: a {statement.type.name} statement is not run ({text!r})")


@dataclass
class Display:
    mode: str = "box"
    max_col_width: int = DEFAULT_COL_WIDTH

    def show(self, relation: duckdb.DuckDBPyRelation, out=None) -> None:
        out = out or sys.stdout
        if self.mode == "line":
            cols = relation.columns
            pad = max((len(c) for c in cols), default=0)
            rows = relation.limit(MAX_ROWS + 1).fetchall()
            for i, row in enumerate(rows[:MAX_ROWS]):
                if i:
                    print(file=out)
                for c, v in zip(cols, row, strict=True):
                    print(f"{c.rjust(pad)} = {'NULL' if v is None else v}", file=out)
            if len(rows) > MAX_ROWS:
                print(f"\n(first {MAX_ROWS} rows)", file=out)
            return
        width = max(shutil.get_terminal_size((200, 40)).columns, 80)
        relation.show(max_rows=MAX_ROWS, max_width=width, max_col_width=self.max_col_width or None)


def run(con, sql: str, display: Display | None = None) -> bool:
    """Run one or more statements; False when one failed (its error on stderr)."""
    display = display or Display()
    try:
        refuse_writes(con, sql)
        relation = con.sql(sql)
        if relation is not None:
            display.show(relation)
    except duckdb.Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return False
    return True


def dot_command(con, line: str, display: Display) -> bool:
    words = line.split()
    cmd, args = words[0].lower(), words[1:]
    if cmd == ".tables":
        return run(
            con,
            "select table_name as name, lower(table_type) as kind from information_schema.tables "
            "where table_schema = 'main' order by 1",
            display,
        )
    if cmd == ".mode" and args and args[0] in ("box", "line"):
        display.mode = args[0]
        return True
    if cmd == ".maxwidth" and len(args) == 1 and args[0].isdigit():
        display.max_col_width = int(args[0])
        return True
    if cmd == ".help":
        print(__doc__.split("Dot commands at the prompt:")[1].strip("\n"))
        return True
    print(f"error: unknown or malformed command {line.strip()!r} (.help lists them)", file=sys.stderr)
    return False


def statements(stream, interactive: bool):
    """Complete statements (ending with ';') or dot commands, read line by line; a statement left
    without ';' at the end of the input still runs."""
    buffer: list[str] = []
    while True:
        try:
            line = input("sql> " if not buffer else "...> ") if interactive else stream.readline()
        except EOFError:
            print()
            line = ""
            interactive = False
        if not interactive and line == "":
            if "".join(buffer).strip():
                yield "\n".join(buffer)
            return
        line = line.rstrip("\n")
        if not buffer and line.strip().startswith("."):
            yield line.strip()
            continue
        buffer.append(line)
        if line.rstrip().endswith(";"):
            yield "\n".join(buffer)
            buffer = []


def main(argv: list[str] | None = None) -> int:
    from pipeline.cli.parser import parse

    return run_shell(parse(["sql", *(sys.argv[1:] if argv is None else argv)]))


def run_shell(args: argparse.Namespace) -> int:
    """`liger-bench sql` (the arguments of pipeline/cli/parser.py)."""
    args.db = args.db or str(duckdb_path())
    args.maxwidth = DEFAULT_COL_WIDTH if args.maxwidth is None else args.maxwidth
    display = Display(args.mode, args.maxwidth)
    # the tables may live on S3: the connection carries the filesystem that reads them
    try:
        con = lock_down(duck.connect(args.db, read_only=True, remote_root=warehouse_uri()))
    except duckdb.Error as exc:
        print(f"error: {exc} (run `make run` first?)", file=sys.stderr)
        return 2  # no warehouse to query: bad input, not a failed statement
    if args.query:
        return 0 if run(con, args.query, display) else 1
    interactive = sys.stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401 -- line editing and history for input()
        except ImportError:
            pass
        print(f"{args.db} (read-only). End a statement with ';'. Ctrl-D quits. .help lists the dot commands.")
    ok = True
    for text in statements(sys.stdin, interactive):
        done = dot_command(con, text, display) if text.startswith(".") else run(con, text, display)
        ok = ok and done
    # at the prompt an error was already shown and the session went on; piped input reports it
    return 0 if ok or interactive else 1


if __name__ == "__main__":
    raise SystemExit(main())
