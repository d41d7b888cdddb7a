"""An out-of-memory anywhere in a build names the model (issue 57): a DuckDB error while the engine
makes a model is raised again with the model's name and kind, of the same class, with DuckDB's own
error as its cause. Real DuckDB under a real memory limit, nothing mocked."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline import engine
from pipeline.engine.header import read_model
from pipeline.engine.incremental import refresh_models

# a list per group cannot spill: at 16 MB DuckDB runs out of memory building it
HUNGRY = """/* MODEL
name: hungry_lists
kind: FULL
grain: [k]
depends_on: [wide]
*/
select k, list(payload) as payloads from wide group by k
"""


@pytest.fixture
def model(tmp_path: Path) -> engine.SqlModel:
    path = tmp_path / "hungry_lists.sql"
    path.write_text(HUNGRY)
    return read_model(path)


def _tight() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "create table wide as select i % 100003 as k, md5(i::varchar) || md5((i + 1)::varchar) as payload "
        "from range(2000000) t(i)"
    )
    con.execute("set threads = 1")
    con.execute("set memory_limit = '16MB'")
    return con


def test_run_models_names_the_model_that_ran_out_of_memory(model):
    con = _tight()
    with pytest.raises(duckdb.OutOfMemoryException) as caught:
        engine.run_models([model], engine.DuckTarget(con))
    assert str(caught.value).startswith("model hungry_lists (FULL): Out of Memory Error")
    assert isinstance(caught.value.__cause__, duckdb.OutOfMemoryException)
    assert "hungry_lists" not in str(caught.value.__cause__)  # DuckDB's own message named no model


def test_the_incremental_refresh_names_the_model_and_how_it_was_built(model):
    con = _tight()
    with pytest.raises(duckdb.OutOfMemoryException, match=r"^model hungry_lists \(FULL, full build\): Out of Memory"):
        refresh_models(con, [model], full=True)
    # a model made inside another's step keeps the innermost name
    inner = pytest.raises(duckdb.Error, match=r"^model inner \(VIEW\): .*no_such_table")
    with inner, engine.naming("outer", "PYTHON"), engine.naming("inner", "VIEW"):
        con.execute("select * from no_such_table")
