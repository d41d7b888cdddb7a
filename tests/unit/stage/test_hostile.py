"""Hostile data: paths that escape data_raw, values that look like SQL, and inputs sized to exhaust
memory (each must end as a quarantine reason). The loopback-only Dagster UI is tested in test_dagster_dev.py."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.contracts.reasons import Reason
from pipeline.ingest.discovery import discover
from tests.fixtures import runs as rs
from tests.fixtures.runs import HEADER, row

REPO = rs.REPO


def test_symlink_out_of_data_raw_is_refused_and_never_read(tmp_path):
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "secret.csv").write_text(HEADER + "\n" + row("666") + "\n")
    raw = tmp_path / "raw"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "liger_csv" / "ok.csv").write_text(HEADER + "\n" + row("1") + "\n")
    (raw / "liger_csv" / "evil.csv").symlink_to(outside / "secret.csv")
    (raw / "liger_csv" / "evil_dir").symlink_to(outside, target_is_directory=True)
    (raw / "kernelindex").mkdir()
    (raw / "kernelindex" / "evil.json").symlink_to("/etc/passwd")
    sources, problems = discover(raw)
    assert [s.source_path for s in sources] == ["liger_csv/ok.csv"]
    assert all(p[1] == Reason.UNREADABLE_FILE for p in problems) and len(problems) >= 2
    assert {p[0] for p in problems} >= {"liger_csv/evil.csv", "kernelindex/evil.json"}


def _plant_loops(raw: Path) -> set[str]:
    """Symlink loops of every shape among good files; returns the looping entries' paths."""
    csv_dir, ki_dir = raw / "liger_csv", raw / "kernelindex"
    (csv_dir / "self.csv").symlink_to("self.csv")
    (csv_dir / "a.csv").symlink_to("b.csv")  # a two-link cycle
    (csv_dir / "b.csv").symlink_to("a.csv")
    (csv_dir / "x.csv").symlink_to("y.csv")  # a three-link cycle
    (csv_dir / "y.csv").symlink_to("z.csv")
    (csv_dir / "z.csv").symlink_to("x.csv")
    (csv_dir / "p").symlink_to("q", target_is_directory=True)  # a directory cycle, and a file link through it
    (csv_dir / "q").symlink_to("p", target_is_directory=True)
    (csv_dir / "through.csv").symlink_to("p/ok.csv")
    (csv_dir / "sub").mkdir()
    (csv_dir / "sub" / "up").symlink_to("..", target_is_directory=True)  # a folder that contains itself
    (ki_dir / "loop.json").symlink_to("loop.json")
    (ki_dir / "loop.ndjson").symlink_to("../kernelindex/loop.ndjson")
    return {
        "liger_csv/self.csv",
        "liger_csv/a.csv",
        "liger_csv/b.csv",
        "liger_csv/x.csv",
        "liger_csv/y.csv",
        "liger_csv/z.csv",
        "liger_csv/through.csv",
        "kernelindex/loop.json",
        "kernelindex/loop.ndjson",
    }


def test_symlink_loops_are_unreadable_files_and_the_rest_is_found(tmp_path):
    """Issue 46 case 3: before, `Path.resolve` raised `RuntimeError: Symlink loop` out of discovery."""
    raw = tmp_path / "raw"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "kernelindex").mkdir()
    (raw / "liger_csv" / "ok.csv").write_text(HEADER + "\n" + row("1") + "\n")
    loops = _plant_loops(raw)
    sources, problems = discover(raw)
    assert [s.source_path for s in sources] == ["liger_csv/ok.csv"]
    assert {p[0] for p in problems} == loops
    assert all(p[1] == Reason.UNREADABLE_FILE and "symlink loop" in p[2] for p in problems)


def test_a_data_root_that_is_a_symlink_loop_is_refused_by_name(tmp_path):
    from pipeline.ingest.discovery import DataRootError

    (tmp_path / "raw").symlink_to("raw")
    with pytest.raises(DataRootError, match="symlink loop") as refused:
        discover(tmp_path / "raw")
    assert str(tmp_path / "raw") in str(refused.value)


def test_a_run_over_symlink_loops_lands_the_rest(tmp_path):
    """Through Dagster: the run succeeds, every loop is one `unreadable_file` entry, the good file lands."""
    from tests.unit.stage.test_faults import _build

    raw = tmp_path / "raw"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "kernelindex").mkdir()
    (raw / "liger_csv" / "ok.csv").write_text(HEADER + "\n" + row("1") + "\n" + row("2") + "\n")
    loops = _plant_loops(raw)
    _build(raw, tmp_path / "wh")
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from fact_measurement").fetchone()[0] == 2
        refused = con.execute("select source_file, reason from quarantine where location = 'file'").fetchall()
    assert sorted(refused) == sorted((p, Reason.UNREADABLE_FILE) for p in loops)


def test_sql_looking_values_and_paths_flow_through_as_data(tmp_path):
    """A quote-laden data_raw path, warehouse path and field values: stored verbatim, nothing executed."""
    from tests.conftest import materialize

    evil = "x'); drop table fact_measurement; --"
    raw = tmp_path / "raw ' ; drop"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "liger_csv" / "it's; --.csv").write_text(
        HEADER + "\n" + row("1", kernel=evil, gpu='GPU"; select 1; --') + "\n" + row("2") + "\n"
    )
    wh = tmp_path / "wh ' quote"
    assert materialize(raw, wh).success
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from fact_measurement where kernel_name = ?", [evil]).fetchone()[0] == 1
        assert (
            con.execute("select count(*) from fact_measurement where gpu_name = ?", ['GPU"; select 1; --']).fetchone()[
                0
            ]
            == 1
        )
        assert con.execute("select source_path from source").fetchone()[0] == "liger_csv/it's; --.csv"
    # Outputs are named by content hash: nothing was written outside the warehouse directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([raw.name, wh.name])
    for staged in (wh / "staging").rglob("*.parquet"):
        assert re.fullmatch(r"(_empty_\w+|[0-9a-f]{64})\.parquet", staged.name)


# -- SQL text: what code may paste into it ---------------------------------------------------------------
SQL_METHODS = {"execute", "executemany", "sql", "query"}

# Every expression pipeline code interpolates into SQL text (f-string, `+`, `%` or `.format`), per module.
# Each is code-made, never data: a constant, an int(), a column list or expression built from fixed or
# quoted identifiers, or our own path with its quotes doubled. Data reaches SQL only as bind
# parameters or registered Arrow tables. Reason.<member> (a fixed code) is allowed everywhere.
ALLOWED_INTERPOLATIONS = {
    "pipeline/serve/checks.py": {
        "where",  # run_seq > an int() of the published run
        "named",  # the checked facts' digests of one dimension (a DIMENSIONS name)
        "CHECKED_DIGESTS",
        "DIGEST_SAMPLE_LIMIT",
        "measurement_digest_sql()",
        "dim",
        "record_only",
        "observed_at_text",
        "QUANTILE_REASON_MACRO",
    },
    # scalar() and write_parquet() pass their caller's SQL through; calls to them are scanned like execute.
    "pipeline/common/duck.py": {"sql"},
    # `listed`: the Delta table's own part-file paths, each quoted with its quotes doubled (_literal).
    "pipeline/serve/duckdb_build.py": {
        "INTERNAL_SCHEMA",
        "name",
        "listed",
        "table",
        "cols",
        "STATE_TABLE",
        "int(published.seq)",
        "SNAPSHOTS_BUILT",
        "MOVED_SOURCE_SIGHTINGS if moved else ''",
    },
    # the model engine: model names and bodies are our own sql/ files; a keyed refresh's columns and
    # source view come from our own MODEL headers, the rest are the build's own temp table names
    # (`qualified`: a model's name, and the schema the caller names)
    "pipeline/engine/run.py": {"qualified", "sql", "model.name", "relation"},
    "pipeline/engine/incremental.py": {
        "table",
        "definition",
        "name",
        "source",
        "', '.join(key)",
        "quoted",
        "t.keys",
        "finer.keys",
        "self.keys",
        "_on(self.key, 'd')",
        "_on(self.key, quoted)",
        # a source's `fact_steps` (its columns and query) from its MODEL header
        "', '.join(self.fact_key)",
        "steps.sql",
        # the new facts and touched digests: run_seq as an int, the build's own temp tables
        "new",
        "NO_NEW_PROVENANCE",
        # a merged refresh: the key's columns from the MODEL header, the aggregates of its
        # `when_matched` (our own SQL in that header) over the model's own column names
        "_on(key, quoted)",
        "', '.join(grain + merged)",
        # pairs kept per step (a `chain` header): its steps model, the partition key and step columns,
        # the build's own temp tables of touched steps (`rows`, their hashes) and the joins on them
        "on",
        "rows",
        "dep",
        "cols",
        "found.keys",
        "wider.keys",
        "chain.steps",
        "' union all '.join(found)",
        "same",
        # which ways a chain's rows were searched: the module's own two column names
        "', '.join(ways)",
        # a versioned input (`keep_while`, `run_column`, `moved_by`): our own SQL in the MODEL header,
        # the published run's number as an int, the temp table of moved keys and the union of their queries
        "header.keep_while",
        "header.run_column",
        "int(self.seq)",
        "keys",
        "moved",
        "reached",
        "union",
        "', '.join(self.key)",
        "_on(key, 'k', 'n')",
        "_on(key, 'n', 'm')",
        "_on(key, 't', 'm')",
    },
    # the gate: the module's own column list and a base's predicate (one of two constants, value bound as $base)
    "pipeline/outputs/gate/base.py": {"base.where", "FACT_COLUMNS"},
    "pipeline/outputs/gate/candidate.py": {"FACT_COLUMNS"},
    # an alert's member table and ratio column: the module's own constants (_ALERT_MEMBERS)
    "pipeline/bisect/plan.py": {"table", "ratio"},
    # Report SQL is assembled from the module's own constants and column specs; values are bound.
    "pipeline/outputs/report/write.py": {
        "', '.join(SWEEP_KEY)",
        "FLAGGED_VERDICTS",
        "SEVERITY_SQL",
        "_SAME_SWEEP",
        "launch_hints_sql('report_flagged', _SAME_SWEEP)",
        "PLOT_VERSIONS",
    },
    # The report's lead (per-commit trends, suspects): the module's own key lists and the shared
    # verdict constants; values are bound.
    "pipeline/outputs/report/commits.py": {"FLAGGED_VERDICTS", "SEVERITY_SQL", "_KEY_LIST", "_SAME_GROUP"},
    # The dashboard's SQL: module constants
    "pipeline/outputs/site/payload.py": {
        "_SWEEP_COLS",
        "SEVERITY_SQL",
        "MAX_SUSPECT_ROWS",
        "numbers",  # the comparison numbers' columns and printf formats: constants of _COMPARISON_NUMBERS
    },
    # The dashboard's blocks of points: the sweep key's columns, the block size and the temp table's name
    # (constants); `axis.*` the relation and axis column payload.py names (two fixed pairs); `numbers` and
    # `keys` sig4_sql / the key over the module's own column names; `same`, `wanted` the key's columns.
    "pipeline/outputs/site/points.py": {
        "_COLS",
        "_KEY",
        "POINT_BLOCK",
        "_AXIS_TABLE",
        "axis.column",
        "axis.joined",
        "keys",
        "numbers",
        "same",
        "wanted",
    },
    "pipeline/outputs/report/launch.py": {
        "LAUNCH_MIN_POINTS",
        "LAUNCH_MAX_MEDIAN_MS",
        "LAUNCH_MAX_SPREAD",
    },
    "pipeline/outputs/report/queries.py": {"COVERAGE_SQL"},
    # `compare` re-runs our own models under their own names; the GPU is a bound parameter.
    "pipeline/regress/judge.py": {
        "SEVERITY_SQL",
        "where_gpu",
        "query",
        "table",
        "cols",
        "moved",
    },
    "pipeline/outputs/report/tables.py": {
        "cells_html",
        "cells_md",
        "limit_sql",
        "order_by",
        "source_sql",
        "sql",
    },
    # `make sql` runs what the user types, on a read-only connection: that is its purpose.
    "pipeline/cli/sql_shell.py": {"sql"},
    # `table`: the merge's own table names (the appends' keys, from the table registry); `known`: a fixed subquery
    "pipeline/store/merge.py": {"fold_key", "known", "t", "sql", "BATCH_ROWS['source']", "table"},
    # the build's fact-file view name, a constant
    "pipeline/cli/summary.py": {"FACT_FILES"},
    "pipeline/defs/serve.py": {"FACT_FILES"},
    "pipeline/stage/csv_reader.py": {
        "SOURCE_FILE",  # the module's own column name
        "sql",  # staged_rows_sql's query (header names each quoted by _q), wrapped to drop that column
    },
    "pipeline/cli/export.py": {"d"},  # a dimension name of the module's own tuple
    # the change-point source query: one SQL constant shared with the DuckDB build
    "pipeline/spark/change_points.py": {"SOURCE_SQL"},  # a dimension name of the module's own tuple
    # the sweep key and pair columns (the module's own tuples), its inputs table's name, queries of them
    # (`source`: SOURCE_SQL or it narrowed to the changed sweeps; `lists`, `same`, `wanted`: over those columns)
    "pipeline/regress/change_points.py": {
        "_INPUTS_SQL",
        "_KEY",
        "_S_KEY",
        "INPUTS_TABLE",
        "WINDOWS_TABLE",
        "_SAME_SWEEP",
        "source",
        "lists",
        "same",
        "wanted",
    },
    "pipeline/stage/kernelindex_reader.py": {
        "RAW_PREVIEW_CHARS",
        "loc_prefix",
        "_PARSED_SQL",
        "_PATTERNS_BROKEN_SQL",
        "quantiles",
        "observed_at_text",
        "future",
        "_DUPLICATE_KEYS_SQL",
        "_NON_FINITE_SQL",
        "nul",  # contracts/rules.py nul_character_clause over the module's own column names
        "bad_version",  # contracts/rules.py bad_version_clause over a fixed expression
    },
    # `table`: the reader's reject table name (a constant); `raw_text`: a fixed expression.
    "pipeline/stage/driver.py": {"table", "raw_text"},
    # `macro`: a rule of contracts/rules.py as a DuckDB macro (code-made text).
    # picked/digest: KERNELINDEX_OBJECTS, the module's own column lists
    "pipeline/model/run.py": {
        "', '.join(key_cols)",
        "name",
        "known_gpu",
        "known_record",
        "known_dim_digest",  # (with the two above) the merge's own queries of the published tables
        "macro",
        "picked",
        "digest",
        # csv_staged: the after_file_commit rule of contracts/rules.py on two column names, the staged
        # row's text over the module's own column names, the quarantine's raw-text cap
        "after_file_commit_clause('r.observed_at', 's.committed_at')",
        "_STAGED_ROW_TEXT",
        "RAW_PREVIEW_CHARS",
    },
    "pipeline/regress/settings.py": {"SETTINGS_TABLE", "columns", "placeholders", "FRESHNESS_TABLE"},
}


def _pieces(node: ast.expr, assigned: dict[str, list[ast.expr]], seen: frozenset = frozenset()):
    """The non-literal parts of a SQL text expression, following names assigned in the same function."""
    if isinstance(node, ast.Constant):
        return
    if isinstance(node, ast.JoinedStr):
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                yield v.value
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        for side in (node.left, node.right):
            yield from (
                _pieces(side, assigned, seen)
                if isinstance(side, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Name))
                else [side]
            )
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        yield from node.args
        yield from (k.value for k in node.keywords)
    elif isinstance(node, ast.Name) and node.id in assigned and node.id not in seen:
        for value in assigned[node.id]:
            yield from _pieces(value, assigned, seen | {node.id})
    elif isinstance(node, ast.Name):
        yield node


def _sql_arg(call: ast.Call, index: int, name: str | None) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def sql_interpolations(source: str) -> list[tuple[int, str]]:
    """(line, expression) for everything pasted into SQL text. A module-private function (``_name``, or a
    lambda bound to a local name) that pastes one of its own parameters into SQL is a SQL sink: its
    callers' arguments are checked instead."""
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    lambda_names = {
        id(n.value): n.targets[0].id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda) and isinstance(n.targets[0], ast.Name)
    }
    owner: dict[int, ast.AST] = {}  # each call -> its innermost enclosing function (ast.walk goes outside in)
    for fn in [tree, *functions]:
        for c in ast.walk(fn):
            if isinstance(c, ast.Call):
                owner[id(c)] = fn

    def assignments(node) -> dict[str, list[ast.expr]]:
        out: dict[str, list[ast.expr]] = {}
        for n in ast.walk(node):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        out.setdefault(t.id, []).append(n.value)
        return out

    module_names = {
        k: v
        for k, v in assignments(tree).items()
        if any(
            isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id == k for n in tree.body
        )
    }
    # callee name -> (SQL argument index, keyword); duck.scalar(con, sql) and duck.write_parquet(con, sql,
    # params, out) are the project's own sinks
    sinks = dict.fromkeys(SQL_METHODS, (0, "query")) | {"scalar": (1, "sql"), "write_parquet": (1, "sql")}
    found: list[tuple[int, str]] = []
    for _ in range(3):  # sinks found in one pass make more calls checkable in the next
        found = []
        for fn in [tree, *functions]:
            assigned = module_names if fn is tree else {**module_names, **assignments(fn)}
            params = [] if fn is tree else [a.arg for a in fn.args.posonlyargs + fn.args.args]
            name = lambda_names.get(id(fn)) if isinstance(fn, ast.Lambda) else getattr(fn, "name", None)
            private = isinstance(fn, ast.Lambda) or (name or "").startswith("_")
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call) or owner[id(call)] is not fn:
                    continue
                callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
                if callee not in sinks:
                    continue
                arg = _sql_arg(call, *sinks[callee])
                for piece in _pieces(arg, assigned) if arg is not None else ():
                    if isinstance(piece, ast.Name) and piece.id in params and private and name:
                        offset = 1 if params[:1] == ["self"] else 0
                        sinks.setdefault(name, (params.index(piece.id) - offset, piece.id))
                    else:
                        found.append((call.lineno, ast.unparse(piece)))
    return sorted(set(found))


def _offenders(module: str, found: list[tuple[int, str]]) -> list[tuple[str, int, str]]:
    allowed = ALLOWED_INTERPOLATIONS.get(module, set()) | {f"Reason.{m}" for m in Reason.__members__}
    return [(module, line, expr) for line, expr in found if expr not in allowed]


def test_sql_scanner_catches_pasted_values():
    snippet = """
def load(con, value, n):
    con.execute(f"select * from t where x = '{value}'")
    con.execute("select * from t where x = '" + value + "'")
    con.sql("select %s" % n)
    text = "select * from t where y = {}".format(value)
    con.execute(text)
    _helper(con, f"insert into t values ('{value}')")
    duck.write_parquet(con, f"select '{value}'", {}, "x.parquet")

def _helper(con, sql):
    con.execute(f"copy ({sql}) to 'x.parquet'")
"""
    found = sql_interpolations(snippet)
    assert found == [(3, "value"), (4, "value"), (5, "n"), (7, "value"), (8, "value"), (9, "value")]
    assert _offenders("pipeline/stage/csv_reader.py", found) == [("pipeline/stage/csv_reader.py", *f) for f in found]


def test_pipeline_pastes_no_data_values_into_sql():
    """Every pipeline module is scanned; each module's allow-list must match what it really pastes."""
    offenders, unused = [], []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        module = path.relative_to(REPO).as_posix()
        found = sql_interpolations(path.read_text())
        offenders += _offenders(module, found)
        unused += [(module, e) for e in ALLOWED_INTERPOLATIONS.get(module, set()) - {e for _, e in found}]
    assert not offenders, offenders
    assert not unused, f"allow-list entries that match nothing (remove them): {unused}"


# -- sizes meant to exhaust memory: staged in a subprocess whose peak RSS we read ----------------------
# Peak RSS of the staging process itself: VmHWM belongs to its own address space (ru_maxrss would
# carry the pytest worker's peak across fork and exec).
STAGE_AND_MEASURE = """
import json, re, sys
from pathlib import Path
import pyarrow.parquet as pq
from pipeline.stage.csv_reader import stage_csv_file
from pipeline.stage.kernelindex_reader import stage_kernelindex_file
src, dest = Path(sys.argv[1]), Path(sys.argv[2])
(stage_csv_file if src.suffix == ".csv" else stage_kernelindex_file)(src, dest)
rows = pq.read_table(dest, columns=["location", "reason"]).to_pylist()
hwm_kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"rows": rows, "rss_mb": hwm_kb / 1024}))
"""


def stage_in_subprocess(src: Path) -> tuple[list[tuple[str, str | None]], float]:
    out = subprocess.run(
        [sys.executable, "-c", STAGE_AND_MEASURE, str(src), str(src) + ".parquet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return sorted((r["location"], r["reason"]) for r in res["rows"]), res["rss_mb"]


def write_stream(path: Path, head: bytes, fill: bytes, size: int, tail: bytes) -> None:
    chunk = fill * ((1 << 20) // len(fill))
    with path.open("wb") as fh:
        fh.write(head)
        for _ in range(size // len(chunk)):
            fh.write(chunk)
        fh.write(tail)


RSS_LIMIT_MB = 600  # a 1 GB line must not be held in memory


@pytest.fixture()
def big_dir(tmp_path):
    yield tmp_path
    for p in tmp_path.iterdir():
        p.unlink()


def test_one_gb_csv_line_is_quarantined_in_bounded_memory(big_dir):
    src = big_dir / "big.csv"
    write_stream(src, f"{HEADER}\n{row('1')}\nce,liger,".encode(), b"x", 1 << 30, f"\n{row('2')}\n".encode())
    rows, rss = stage_in_subprocess(src)
    assert rows == [("line 3", Reason.LINE_TOO_LONG), ("record 1", None), ("record 2", None)]
    assert rss < RSS_LIMIT_MB, rss


def test_one_gb_ndjson_line_is_quarantined_in_bounded_memory(big_dir):
    good = json.dumps(json.loads((rs.KI_DIR / "a8e1599773300c7d.json").read_text())).encode()
    src = big_dir / "big.ndjson"
    write_stream(src, good + b'\n{"run": "', b"x", 1 << 30, b'"}\n' + good + b"\n")
    rows, rss = stage_in_subprocess(src)
    assert rows == [("line 1", None), ("line 2", Reason.LINE_TOO_LONG), ("line 3", None)]
    assert rss < RSS_LIMIT_MB, rss


def test_million_column_header_quarantines_file(big_dir):
    src = big_dir / "wide.csv"
    write_stream(src, HEADER.encode(), b",c", 2_000_000, f"\n{row('1')}\n".encode())
    rows, rss = stage_in_subprocess(src)
    assert rows == [("file", Reason.HEADER_TOO_WIDE)]
    assert rss < RSS_LIMIT_MB, rss


def test_million_field_row_is_quarantined_fast(big_dir):
    src = big_dir / "wide_row.csv"
    write_stream(src, f"{HEADER}\n{row('1')}\n".encode(), b"c,", 2_000_000, f"\n{row('2')}\n".encode())
    rows, rss = stage_in_subprocess(src)
    assert rows == [("line 3", Reason.LONG_ROW), ("record 1", None), ("record 2", None)]
    assert rss < RSS_LIMIT_MB, rss


@pytest.mark.parametrize("suffix", [".json", ".ndjson"])
def test_json_nested_1e5_deep(big_dir, suffix):
    src = big_dir / f"deep{suffix}"
    src.write_text('{"run":' * 100_000 + "1" + "}" * 100_000 + "\n")
    rows, rss = stage_in_subprocess(src)
    assert [r[1] for r in rows] == [Reason.JSON_TOO_DEEP]
    assert rss < RSS_LIMIT_MB, rss


def test_json_file_over_the_size_cap_is_not_read(big_dir, monkeypatch):
    from pipeline.stage import kernelindex_reader

    monkeypatch.setattr(kernelindex_reader, "MAX_JSON_FILE_BYTES", 1000)
    src = big_dir / "big.json"
    src.write_text("[" + ",".join(["{}"] * 1000) + "]")
    kernelindex_reader.stage_kernelindex_file(src, big_dir / "out.parquet")
    assert [r["reason"] for r in pq.read_table(big_dir / "out.parquet").to_pylist()] == [Reason.FILE_TOO_LARGE]
