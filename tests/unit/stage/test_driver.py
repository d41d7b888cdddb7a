"""The stage driver: one set of steps for both readers; a staged file has its reader's columns
whether parsed, empty or refused."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq

from pipeline.stage import csv_reader, driver, kernelindex_reader
from tests.fixtures.runs import HEADER, row


def _schema(path):
    return pq.read_schema(path).remove_metadata()


def test_parsed_files_have_the_declared_schema(tmp_path):
    src = tmp_path / "f.csv"
    src.write_text(HEADER + "\n" + row() + "\n")
    csv_reader.stage_csv_file(src, tmp_path / "f.parquet")
    assert _schema(tmp_path / "f.parquet").equals(csv_reader.STAGED_SCHEMA)
    for name in ("b.ndjson", "b.json"):
        blank = tmp_path / name
        blank.write_text("\n")
        kernelindex_reader.stage_kernelindex_file(blank, tmp_path / f"{name}.parquet")
        assert _schema(tmp_path / f"{name}.parquet").equals(kernelindex_reader.STAGED_SCHEMA)


def test_a_failed_file_is_one_quarantine_row_with_its_readers_columns(tmp_path, monkeypatch):
    src = tmp_path / "b.ndjson"
    src.write_text("{}\n")

    def broken(job):  # a verdict on the file; a reader failure (memory, I/O) is test_reader_failures.py's
        raise duckdb.InvalidInputException("state machine reached an invalid state")

    reader = kernelindex_reader.READER
    monkeypatch.setattr(driver, "_parse_and_publish", lambda *a: broken(None))
    db = driver.reader_connection(tmp_path / "x", None, reader.register)
    try:
        driver.stage_or_quarantine(reader, src, tmp_path / "b.parquet", db)
    finally:
        db.close()
    assert _schema(tmp_path / "b.parquet").equals(kernelindex_reader.STAGED_SCHEMA)
    rows = pq.read_table(tmp_path / "b.parquet").to_pylist()
    assert [(r["location"], r["reason"], r["raw"]) for r in rows] == [
        ("file", "unreadable_file", "InvalidInputException: state machine reached an invalid state")
    ]


def test_readers_do_not_import_each_other():
    import ast
    import inspect

    for module, other in ((csv_reader, "kernelindex_reader"), (kernelindex_reader, "csv_reader")):
        tree = ast.parse(inspect.getsource(module))
        names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
            a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names
        ]
        assert not any(other in n for n in names), module.__name__
