"""Hostile data: paths that escape data_raw, values that look like SQL, a Dagster UI bound to
localhost, and inputs sized to exhaust memory (each must end as a quarantine reason)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.core.reasons import Reason
from pipeline.core.sources import discover
from tests import robustness_support as rs
from tests.robustness_support import HEADER, row

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


def test_sql_looking_values_and_paths_flow_through_as_data(tmp_path):
    """A quote-laden data_raw path, warehouse path and field values: stored verbatim, nothing executed."""
    from tests.conftest import materialize

    evil = "x'); drop table fact_measurement; --"
    raw = tmp_path / "raw ' ; drop"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "liger_csv" / "it's; --.csv").write_text(
        HEADER + "\n" + row("1", kernel=evil, gpu='GPU"; select 1; --') + "\n" + row("2") + "\n")
    wh = tmp_path / "wh ' quote"
    assert materialize(raw, wh).success
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from fact_measurement where kernel_name = ?", [evil]).fetchone()[0] == 1
        assert con.execute("select count(*) from fact_measurement where gpu_name = ?", ['GPU"; select 1; --']).fetchone()[0] == 1
        assert con.execute("select source_path from source").fetchone()[0] == "liger_csv/it's; --.csv"
    # Outputs are named by content hash: nothing was written outside the warehouse directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([raw.name, wh.name])
    for staged in (wh / "staging").rglob("*.parquet"):
        assert re.fullmatch(r"(_empty_\w+|[0-9a-f]{64})\.parquet", staged.name)


def test_dagster_ui_binds_localhost():
    make = (REPO / "Makefile").read_text()
    dev = re.search(r"^dev:.*?(?=^\S|\Z)", make, re.S | re.M).group(0)
    assert "--host 127.0.0.1" in dev
    assert "0.0.0.0" not in make and "0.0.0.0" not in (REPO / "config" / "dagster.yaml").read_text()


def test_readers_paste_no_data_values_into_sql():
    """The readers are where raw data meets SQL: values reach it only as bind parameters or registered
    Arrow tables. Their f-string SQL may interpolate only code constants, quoted header identifiers
    and our own escaped temp paths; this lists every interpolation allowed."""
    allowed = re.compile(
        r"\{(Reason\.\w+|RAW_PREVIEW_CHARS|QUANTILE_TOLERANCE|digest|digest_expr|empty|raw_expr|x_label|loc_prefix|"
        r"cols|sql|target|table|path|gpu_slug|env_slug|_sql_path\(tmp\)|str\(tmp\)\.replace\(\"'\", \"''\"\)|"
        r"int\(threads\)|p|c|alias|parts|[A-Z_]+)\}")
    offenders = []
    for path in [REPO / "pipeline" / "core" / n for n in ("csv_reader.py", "kernelindex_reader.py", "staging.py")]:
        for m in re.finditer(r'execute\(\s*f("""|")(.*?)\1', path.read_text(), re.S):
            for field in re.findall(r"\{[^{}]*\}", m.group(2)):
                if not allowed.fullmatch(field):
                    offenders.append((path.name, field))
    assert not offenders, offenders


# -- sizes meant to exhaust memory: staged in a subprocess whose peak RSS we read ----------------------
STAGE_AND_MEASURE = """
import json, resource, sys
from pathlib import Path
import pyarrow.parquet as pq
from pipeline.core.csv_reader import stage_csv_file
from pipeline.core.kernelindex_reader import stage_kernelindex_file
src, dest = Path(sys.argv[1]), Path(sys.argv[2])
(stage_csv_file if src.suffix == ".csv" else stage_kernelindex_file)(src, dest)
rows = pq.read_table(dest, columns=["location", "reason"]).to_pylist()
print(json.dumps({"rows": rows, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def stage_in_subprocess(src: Path) -> tuple[list[tuple[str, str | None]], float]:
    out = subprocess.run([sys.executable, "-c", STAGE_AND_MEASURE, str(src), str(src) + ".parquet"],
                         cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
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
    from pipeline.core import kernelindex_reader

    monkeypatch.setattr(kernelindex_reader, "MAX_JSON_FILE_BYTES", 1000)
    src = big_dir / "big.json"
    src.write_text("[" + ",".join(["{}"] * 1000) + "]")
    kernelindex_reader.stage_kernelindex_file(src, big_dir / "out.parquet")
    assert [r["reason"] for r in pq.read_table(big_dir / "out.parquet").to_pylist()] == [Reason.FILE_TOO_LARGE]
