"""A folder's column docs and data tests, in one YAML file beside its models (`_models.yml`, as
dagster-open-platform and jaffle-shop keep them), in dbt's shape:

    models:
      - name: verdicts
        description: THE verdict rule, for single points and whole sweeps, on both axes.
        columns:
          - name: verdict
            description: regression, improvement, unchanged, ...
            data_tests:
              - not_null
              - accepted_values: {values: [regression, improvement]}

A data test is an audit: a query that returns the offending rows (`audit_sql`), none when it holds.
A header's `grain` is audited the same way (no two rows share it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pipeline.engine.header import ModelError, SqlModel

COLUMN_TESTS = ("not_null", "unique", "accepted_values")


class ColumnDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = Field(min_length=1)
    data_tests: tuple[Any, ...] = ()

    @field_validator("data_tests")
    @classmethod
    def _known(cls, tests: tuple[Any, ...]) -> tuple[Any, ...]:
        for test in tests:
            name = test if isinstance(test, str) else next(iter(test), None)
            if name not in COLUMN_TESTS or (name == "accepted_values" and "values" not in test[name]):
                raise ValueError(f"unknown data test {test!r} (known: {', '.join(COLUMN_TESTS)})")
        return tests


class ModelDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = Field(min_length=1)
    columns: tuple[ColumnDoc, ...] = ()


DOCS_FILE = "_models.yml"


def docs_path(model: SqlModel) -> Path:
    return model.path.parent / DOCS_FILE


def read_docs(model: SqlModel) -> ModelDoc | None:
    """The model's entry in its folder's docs, or None when the folder has none for it."""
    path = docs_path(model)
    if not path.exists():
        return None
    try:
        docs = [ModelDoc.model_validate(m) for m in (yaml.safe_load(path.read_text()) or {})["models"]]
    except Exception as exc:
        raise ModelError(f"{path}: bad docs: {exc}") from exc
    unknown = {d.name for d in docs} - {p.stem for p in path.parent.glob("*.sql")}
    if unknown:
        raise ModelError(f"{path}: documents {sorted(unknown)}, which no model of its folder is")
    return next((d for d in docs if d.name == model.name), None)


def _literal(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def audit_sql(relation: str, column: str, test: Any) -> str:
    """The rows of ``relation`` that fail ``test`` on ``column``."""
    quoted = f'"{column}"'
    name = test if isinstance(test, str) else next(iter(test))
    if name == "not_null":
        return f"select * from {relation} where {quoted} is null"
    if name == "unique":
        return f"select {quoted}, count(*) as n from {relation} group by all having count(*) > 1"
    values = ", ".join(_literal(v) for v in test["accepted_values"]["values"])
    return f"select * from {relation} where {quoted} is not null and {quoted}::varchar not in ({values})"


def grain_audit_sql(relation: str, grain: tuple[str, ...]) -> str:
    """The grain values more than one row of ``relation`` shares (NULLs equal)."""
    cols = ", ".join(f'"{c}"' for c in grain)
    return f"select {cols}, count(*) as n from {relation} group by all having count(*) > 1"
