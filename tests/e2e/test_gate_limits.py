"""The gate when its outputs cannot be written or its input is oversized (issue 53), as a subprocess
against the session's warehouse of the shipped data (tests/e2e/test_gate.py's `gate`).

* OUT an existing file, OUT read-only, $GITHUB_STEP_SUMMARY unwritable: the exit code is the verdict's
  (0 pass, 1 regression, 2 bad input, 0 with --warn-only), stderr names what was not written, no traceback;
* gate.md stays under GitHub's 65,536 characters: 400 header-only CSVs with long names beside a real run
  (the table rows are kept, the file list is cut), a 70,000-character BASE (the error comment is cut).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from pipeline.outputs.gate.comment import LIMIT
from tests.e2e.test_gate import RERUN, gate, plant

VERDICTS = {"pass": 0, "regression": 1, "bad input": 2, "warn-only": 0}


def _read_only(folder: Path) -> bool:
    """``folder`` made unwritable, even for root (chattr +i); False when this machine cannot."""
    folder.mkdir()
    folder.chmod(0o555)
    probe = folder / "probe"
    try:
        probe.touch()
    except OSError:
        return True
    probe.unlink()
    return subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def planted_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gate_limits") / "all_benchmark_data.csv"
    plant(RERUN, path)
    return path


@pytest.mark.parametrize("output", ["OUT is a file", "OUT is read-only", "step summary unwritable"])
@pytest.mark.parametrize("verdict", list(VERDICTS))
def test_an_output_the_gate_cannot_write_changes_no_exit_code(shipped_warehouse, planted_csv, tmp_path, output,
                                                              verdict):  # fmt: skip
    out, env = tmp_path / "out", {}
    if output == "OUT is a file":
        out.write_text("not a folder")
    elif output == "OUT is read-only":
        if not _read_only(out):
            pytest.skip("no way to make a folder read-only for this user here")
    else:
        env["GITHUB_STEP_SUMMARY"] = str(tmp_path)  # a folder: appending to it fails
    args = {
        "pass": [str(RERUN), "--base", "0a62700-v0.6.4"],
        "regression": [str(planted_csv), "--base", "0a62700"],
        "bad input": [str(tmp_path / "missing.csv"), "--base", "0a62700"],
        "warn-only": [str(planted_csv), "--base", "0a62700", "--warn-only"],
    }[verdict]
    try:
        proc, _, _ = gate(shipped_warehouse, out, *args, **env)
    finally:
        subprocess.run(["chattr", "-i", str(out)], capture_output=True)
    assert proc.returncode == VERDICTS[verdict], proc.stderr
    assert "Traceback" not in proc.stderr
    assert "gate: could not write" in proc.stderr and "the verdict and exit code stand" in proc.stderr
    if output == "step summary unwritable":  # the other outputs are still written
        assert (out / "gate.json").is_file() and (out / "gate.md").is_file()


def test_gate_md_fits_github_with_400_header_only_files_of_long_names(shipped_warehouse, tmp_path):
    folder = tmp_path / "candidate"
    folder.mkdir()
    shutil.copyfile(RERUN, folder / "all_benchmark_data.csv")
    header = RERUN.read_text().splitlines()[0] + "\n"
    for i in range(400):
        (folder / f"{i:03d}_{'very_long_name_' * 13}.csv").write_text(header)
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(folder), "--base", "0a62700-v0.6.4")
    assert proc.returncode == 0, proc.stderr
    assert len(doc["candidate"]["files"]) == 401 and len(md) <= LIMIT
    assert "more file(s) (all in gate.json)" in md
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<tr>") >= 100  # the sweeps' rows are there, not crowded out by the file list


def test_an_error_comment_fits_github_with_a_70000_character_base(shipped_warehouse, tmp_path):
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(RERUN), "--base", "x" * 70_000)
    assert proc.returncode == 2 and doc["status"] == "error"
    assert len(md) <= LIMIT and "more characters" in md
