"""Every model's docs in its folder's `_models.yml` (dbt's shape) name real columns, document every
column of the model, and their data tests (audits returning the offending rows) hold on the shipped
warehouse; so does each header's `grain`."""

from __future__ import annotations

import duckdb
import pytest

from pipeline.engine import ModelError, read_model
from pipeline.engine.catalog import regress_models, serve_models
from pipeline.engine.docs import audit_sql, docs_path, grain_audit_sql, read_docs

MODELS = [*serve_models(), *regress_models()]
DOCUMENTED = [m for m in MODELS if read_docs(m) is not None]


@pytest.fixture(scope="module")
def con(shipped_warehouse):
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as c:
        yield c


def _columns(con, name: str) -> list[str]:
    return [r[0] for r in con.execute(f'describe "{name}"').fetchall()]


def test_the_readers_main_views_are_documented():
    assert {"noise_floor"} <= {m.name for m in DOCUMENTED}


@pytest.mark.parametrize("model", DOCUMENTED, ids=lambda m: m.name)
def test_docs_name_exactly_the_model_s_columns(con, model):
    doc = read_docs(model)
    documented = [c.name for c in doc.columns]
    assert len(documented) == len(set(documented)), f"{model.name}: a column documented twice"
    assert documented == _columns(con, model.name), f"{docs_path(model).name} lists other columns than the model"


@pytest.mark.parametrize("model", DOCUMENTED, ids=lambda m: m.name)
def test_data_tests_return_no_rows(con, model):
    failing = {}
    for column in read_docs(model).columns:
        for test in column.data_tests:
            rows = con.execute(f"select count(*) from ({audit_sql(model.name, column.name, test)})").fetchone()[0]
            if rows:
                failing[f"{column.name}: {test}"] = rows
    assert not failing, failing


@pytest.mark.parametrize("model", [m for m in MODELS if m.header.grain], ids=lambda m: m.name)
def test_grain_names_one_row(con, model):
    assert con.execute(f"select count(*) from ({grain_audit_sql(model.name, model.header.grain)})").fetchone()[0] == 0


def test_an_audit_finds_what_breaks_it():
    c = duckdb.connect()
    c.execute("create table t as select * from (values (1, 'a'), (1, null), (2, 'z')) v(k, s)")
    assert c.execute(audit_sql("t", "s", "not_null")).fetchall() == [(1, None)]
    assert c.execute(audit_sql("t", "k", "unique")).fetchall() == [(1, 2)]
    assert c.execute(audit_sql("t", "s", {"accepted_values": {"values": ["a"]}})).fetchall() == [(2, "z")]
    assert c.execute(grain_audit_sql("t", ("k",))).fetchall() == [(1, 2)]


def test_bad_docs_are_refused(tmp_path):
    (tmp_path / "m.sql").write_text("/* MODEL\nname: m\nkind: VIEW\ngrain: [a]\n*/\nselect 1 as a\n")
    model = read_model(tmp_path / "m.sql")
    for text, reason in (
        ("models: [{name: other, description: x}]", "documents \\['other'\\]"),
        ("models: [{name: m, description: x, columns: [{name: a, description: y, data_tests: [odd]}]}]", "unknown"),
        ("models: [{name: m}]", "bad docs"),
    ):
        (tmp_path / "_models.yml").write_text(text)
        with pytest.raises(ModelError, match=reason):
            read_docs(model)
