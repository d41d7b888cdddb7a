"""Every SQL and Python example in README.md and docs/sql.md runs against the shipped data and returns rows.

```sql blocks: each statement through pipeline.connect() (liger.duckdb, read-only) must give at least
one row. ```python blocks: executed as written, in a folder whose `warehouse/` is the shipped
warehouse; every DuckDB relation and polars frame they leave behind must hold rows."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest

from tests.conftest import PROJECT

# The README keeps the one "what regressed?" query; the other examples live in docs/sql.md.
README = "\n".join((PROJECT / name).read_text() for name in ("README.md", "docs/sql.md"))
BLOCK = re.compile(r"^```(sql|python)\n(.*?)^```", re.S | re.M)
SQL_BLOCKS = [b for lang, b in BLOCK.findall(README) if lang == "sql"]
PYTHON_BLOCKS = [b for lang, b in BLOCK.findall(README) if lang == "python"]


def _statements(block: str) -> list[str]:
    lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


SQL_STATEMENTS = [s for b in SQL_BLOCKS for s in _statements(b)]


@pytest.fixture()
def shipped_env(shipped_warehouse, tmp_path, monkeypatch):
    """The README's relative paths (`warehouse/...`) and pipeline.connect() name the shipped warehouse."""
    (tmp_path / "warehouse").symlink_to(shipped_warehouse, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LIGER_WAREHOUSE", str(shipped_warehouse))
    monkeypatch.delenv("LIGER_LOCAL_DIR", raising=False)
    return shipped_warehouse


def test_the_readme_has_examples():
    assert len(SQL_STATEMENTS) >= 7 and PYTHON_BLOCKS


@pytest.mark.parametrize("sql", SQL_STATEMENTS, ids=lambda s: " ".join(s.split())[:60])
def test_sql_example_returns_rows(shipped_env, sql):
    import pipeline

    with pipeline.connect() as con:
        rows = con.execute(sql).fetchmany(5)
    assert rows, f"no rows on the shipped data: {sql}"


@pytest.mark.parametrize("code", PYTHON_BLOCKS, ids=lambda c: c.splitlines()[0][:40])
def test_python_example_runs_and_returns_rows(shipped_env, code, capsys):
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 -- the README's own example
    results = {k: v for k, v in namespace.items() if isinstance(v, duckdb.DuckDBPyRelation | pl.DataFrame)}
    assert results, "the example leaves no result to check"
    for name, value in results.items():
        n = len(value) if isinstance(value, pl.DataFrame) else len(value.fetchall())
        assert n > 0, f"{name} is empty"
