"""The flush of a copied DuckDB file beside its build (`BackgroundFlush`): the build's lock on the file
holds while the flush runs and after it, until the build closes the file."""

from __future__ import annotations

import subprocess
import sys

import duckdb

from pipeline.common.files import BackgroundFlush


def _opens_from_another_process(path) -> bool:
    code = "import duckdb, sys; duckdb.connect(sys.argv[1]).close()"
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True).returncode == 0


def test_the_build_s_lock_holds_through_the_flush(tmp_path):
    path = tmp_path / "copy.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("create table t as select range as i from range(100000)")
    con = duckdb.connect(str(path))
    # a build's flush runs on after the build opened the file (a copy's gigabytes take most of a second)
    flush = BackgroundFlush(path)
    con.execute("insert into t select range from range(10)")
    flush._thread.join()  # flushed, its descriptor still open
    # closing a descriptor of the file would drop this process's fcntl lock on it: the build's
    assert not _opens_from_another_process(path)
    con.close()
    flush.join()
    assert _opens_from_another_process(path)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select count(*) from t").fetchone()[0] == 100010
