"""notebooks/version_trend.ipynb runs headless (`jupyter nbconvert --execute`, the `notebook` dependency
group) against the warehouse of the shipped data, and `make notebook` starts as root too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT

NOTEBOOK = PROJECT / "notebooks" / "version_trend.ipynb"
JUPYTER = Path(sys.executable).parent / "jupyter"


@pytest.fixture(scope="module")
def executed(shipped_warehouse, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("notebook")
    env = {
        **os.environ,
        "LIGER_DUCKDB": str(shipped_warehouse / "liger.duckdb"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    done = subprocess.run(
        [
            str(JUPYTER),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--output-dir",
            str(out),
            "--ExecutePreprocessor.timeout=300",
            str(NOTEBOOK),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=out,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / NOTEBOOK.name).read_text())


def _outputs(nb: dict) -> list[dict]:
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def _text(nb: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in _outputs(nb))


def test_runs_headless_without_errors_and_draws(executed):
    assert not [o for o in _outputs(executed) if o["output_type"] == "error"]
    assert any("image/png" in o.get("data", {}) for o in _outputs(executed)), "no plot drawn"


def test_default_is_the_newest_flagged_sweep(executed, shipped_warehouse):
    import duckdb

    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        newest = con.execute(
            "select max(to_version_rank) from sweep_regressions "
            "where verdict in ('regression', 'unstable', 'drift', 'improvement')"
        ).fetchall()[0][0]
        version = con.execute(
            "select liger_version from liger_version_order where version_rank = ?", [newest]
        ).fetchall()
    text = _text(executed)
    assert "newest flagged sweep: " in text
    assert f"-> {version[0][0]}:" in text.split("newest flagged sweep: ")[1].splitlines()[0]
    assert "1 panel(s)" in text or "panel(s) with a series" in text


def test_versions_in_pep440_order_and_labels_readable():
    source = "".join(line for c in json.loads(NOTEBOOK.read_text())["cells"] for line in c["source"])
    assert "version_rank" in source and 'sort("gpu_name", "liger_version")' not in source
    assert "FONT_PT = 10" in source
    assert "fontsize=6" not in source and "fontsize=7" not in source


def test_make_notebook_allows_root_and_checkpoints_are_ignored():
    makefile = (PROJECT / "Makefile").read_text()
    assert '$$([ "$$(id -u)" = 0 ] && echo --allow-root)' in makefile
    assert ".ipynb_checkpoints/" in (PROJECT / ".gitignore").read_text().splitlines()
