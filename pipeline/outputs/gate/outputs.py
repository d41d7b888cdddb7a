"""Where the gate's answer goes: OUT/gate.json, OUT/gate.md, and $GITHUB_STEP_SUMMARY when it is set
(appended: a job's steps share that file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pipeline.common.files import write_atomic
from pipeline.outputs.gate.comment import render, render_error

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def _write(out: Path, doc: dict, markdown: str) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "gate.json", out / "gate.md"
    write_atomic(json_path, (json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n").encode())
    write_atomic(md_path, markdown.encode())
    summary = os.environ.get(STEP_SUMMARY_ENV)
    if summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    return json_path, md_path


def write_outputs(out: Path, doc: dict) -> tuple[Path, Path]:
    return _write(out, doc, render(doc))


def write_error(out: Path, message: str) -> tuple[Path, Path]:
    return _write(out, {"format": "liger-gate/1", "status": "error", "exit_code": 2, "error": message},
                  render_error(message))  # fmt: skip
