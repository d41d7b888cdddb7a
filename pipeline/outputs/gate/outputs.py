"""Where the gate's answer goes: OUT/gate.json, OUT/gate.md, and $GITHUB_STEP_SUMMARY when it is set
(appended: a job's steps share that file).

An output that cannot be written (OUT an existing file or read-only, the step summary unwritable)
changes no verdict: each is tried on its own, what failed is said on stderr (``gate: could not write
…``), and the exit code stays the one the verdict implies (docs/gate.md, "Exit codes"). A CI job
whose comment step then finds no gate.md fails there, with the gate's own answer in the log."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from pipeline.common.files import write_atomic
from pipeline.config import github_step_summary
from pipeline.outputs.gate.comment import render, render_error

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _try(what: str, write: Callable[[], None], failed: list[str]) -> None:
    try:
        write()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        failed.append(what)
        print(f"gate: could not write {what}: {reason} (the verdict and exit code stand)", file=sys.stderr)


def _write(out: Path, doc: dict, markdown: str) -> tuple[Path, Path]:
    json_path, md_path = out / "gate.json", out / "gate.md"
    failed: list[str] = []
    _try(f"{json_path} or {md_path}", lambda: out.mkdir(parents=True, exist_ok=True), failed)
    if not failed:
        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
        _try(str(json_path), lambda: write_atomic(json_path, text.encode()), failed)
        _try(str(md_path), lambda: write_atomic(md_path, markdown.encode()), failed)
    summary = github_step_summary()
    if summary:
        _try(f"{STEP_SUMMARY_ENV}={summary}", lambda: _append(summary, markdown + "\n"), failed)
    return json_path, md_path


def write_outputs(out: Path, doc: dict) -> tuple[Path, Path]:
    return _write(out, doc, render(doc))


def write_error(out: Path, message: str) -> tuple[Path, Path]:
    return _write(out, {"format": "liger-gate/1", "status": "error", "exit_code": 2, "error": message},
                  render_error(message))  # fmt: skip
