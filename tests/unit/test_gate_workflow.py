"""deploy/github/liger-benchmark-gate.yml is a valid GitHub Actions workflow without findings of a workflow
linter from PyPI (zizmor: the workflow schema, then its security audits, pedantic), and it runs what
docs/gate.md says: the touched kernels, the harness, the gh-pages warehouse, the gate, one comment."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "deploy" / "github" / "liger-benchmark-gate.yml"
ZIZMOR = Path(sys.executable).parent / "zizmor"


def test_the_workflow_passes_the_linter():
    exe = str(ZIZMOR) if ZIZMOR.exists() else shutil.which("zizmor")
    assert exe, "zizmor (dev group) is not installed: make lint"
    proc = subprocess.run([exe, "--offline", "--pedantic", "--strict-collection", "--no-progress", str(WORKFLOW)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_linter_fails_a_broken_workflow(tmp_path):
    """The check above could fail: a workflow with a job that has no runner is refused."""
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("    runs-on: ubuntu-latest\n", ""))
    exe = str(ZIZMOR) if ZIZMOR.exists() else shutil.which("zizmor")
    proc = subprocess.run([exe, "--offline", "--strict-collection", "--no-progress", str(broken)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode != 0


def test_the_workflow_runs_the_gate_steps():
    text = WORKFLOW.read_text()
    steps = ("pull_request:", "pipeline.cli.gate_kernels", "benchmark/scripts/benchmark_", "gh-pages:gh-pages")
    steps += ("make run", "liger-bench gate ", "--base auto", "<!-- liger-benchmark-gate -->", "PATCH")
    for step in steps:
        assert step in text, step
