"""Wall time and peak RSS of one benchmark case, and the results table.

Peak RSS is only meaningful per process, so every case runs in a fresh process:

* :func:`measure_subprocess` -- a command; the parent reaps it with ``os.wait4`` and reads
  that child's own ``ru_maxrss`` (Linux: kB; includes descendants it waited for).
* :func:`measure_callable` -- an importable module-level function, run the same way in a
  fresh interpreter (``python -m bench.measure _call``; not a fork, whose child would
  inherit the parent's resident pages); the child also reports the wall time of the call.

:func:`write_table` writes markdown + CSV with the columns
case, size, rows, wall_s, rows_per_s, peak_rss_mb, ratio.
"""

from __future__ import annotations

import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]

COLUMNS = ["case", "size", "rows", "wall_s", "rows_per_s", "peak_rss_mb", "ratio"]


def _maxrss_mb(ru_maxrss: int) -> float:
    # Linux reports kilobytes, macOS bytes
    return ru_maxrss / (1024 * 1024) if sys.platform == "darwin" else ru_maxrss / 1024


def measure_subprocess(
    cmd: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: dict | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> dict:
    """Run cmd; return {wall_s, peak_rss_mb, returncode, stdout, stderr} (output captured via temp files)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(map(str, cmd)), cwd=cwd, env=env, stdout=out, stderr=err)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # we reaped it; tell Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{stderr[-4000:]}")
    return {
        "wall_s": wall,
        "peak_rss_mb": _maxrss_mb(usage.ru_maxrss),
        "returncode": proc.returncode,
        "stdout": stdout,
        "stderr": stderr,
    }


def python_module(module: str, *args: Any) -> list[str]:
    """[sys.executable, "-m", module, *args] -- the same interpreter/venv as the caller."""
    return [sys.executable, "-m", module, *map(str, args)]


def _call_entry(in_path: str, out_path: str) -> None:
    """Child side of measure_callable: import, call, pickle (status, result, wall) back."""
    import importlib
    import pickle

    with open(in_path, "rb") as fh:
        module, qualname, args, kwargs = pickle.load(fh)
    try:
        fn = importlib.import_module(module)
        for part in qualname.split("."):
            fn = getattr(fn, part)
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        payload = ("ok", result, time.perf_counter() - t0)
    except BaseException:  # noqa: BLE001 - report anything to the parent
        payload = ("error", traceback.format_exc(), 0.0)
    with open(out_path, "wb") as fh:
        pickle.dump(payload, fh)


def measure_callable(
    fn: Callable, *args: Any, cwd: str | Path | None = None, env: dict | None = None, **kwargs: Any
) -> dict:
    """Run fn(*args, **kwargs) in a fresh interpreter (``python -m bench.measure``), reaped with wait4.

    Returns {wall_s (the call itself), total_wall_s (incl. interpreter start + imports),
    peak_rss_mb (of that interpreter, imports included), result}.  fn must be importable by
    module + qualified name (not defined in ``__main__``); arguments and result must pickle.
    """
    import pickle

    module, qualname = fn.__module__, fn.__qualname__
    if module == "__main__" or "<locals>" in qualname:
        raise ValueError(f"{qualname} must be a module-level function of an importable module")
    with tempfile.TemporaryDirectory() as tmp:
        in_path, out_path = os.path.join(tmp, "in.pkl"), os.path.join(tmp, "out.pkl")
        with open(in_path, "wb") as fh:
            pickle.dump((module, qualname, args, kwargs), fh)
        # the child inherits our cwd (relative paths keep meaning); make sure `bench` imports
        env = dict(os.environ if env is None else env)
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        m = measure_subprocess(
            python_module("bench.measure", "_call", in_path, out_path), cwd=cwd, env=env, check=False
        )
        if not os.path.exists(out_path):
            raise RuntimeError(f"{qualname} died (exit code {m['returncode']}):\n{m['stderr'][-4000:]}")
        with open(out_path, "rb") as fh:
            status, result, wall = pickle.load(fh)
    if status != "ok":
        raise RuntimeError(f"{qualname} failed in child:\n{result}")
    return {"wall_s": wall, "total_wall_s": m["wall_s"], "peak_rss_mb": m["peak_rss_mb"], "result": result}


def measure_inline(fn: Callable, *args: Any, **kwargs: Any) -> dict:
    """Run fn in this process. peak_rss_mb is this process's lifetime high-water mark (an upper bound)."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    wall = time.perf_counter() - t0
    rss = _maxrss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return {"wall_s": wall, "peak_rss_mb": rss, "result": result}


# ----------------------------------------------------------------------------- table


def result_row(
    case: str, size: Any, rows: int, wall_s: float, peak_rss_mb: float | None = None, ratio: float | None = None
) -> dict:
    return {
        "case": case,
        "size": size,
        "rows": int(rows),
        "wall_s": float(wall_s),
        "rows_per_s": (rows / wall_s) if wall_s > 0 else None,
        "peak_rss_mb": peak_rss_mb,
        "ratio": ratio,
    }


def add_ratios(results: list[dict], reference_case: str) -> list[dict]:
    """ratio = wall_s / wall_s of reference_case at the same size (rows without one keep their ratio)."""
    ref = {r["size"]: r["wall_s"] for r in results if r["case"] == reference_case}
    for r in results:
        base = ref.get(r["size"])
        if r.get("ratio") is None and base:
            r["ratio"] = r["wall_s"] / base
    return results


def _fmt(col: str, v: Any) -> str:
    if v is None:
        return ""
    if col == "wall_s":
        return f"{v:.3f}"
    if col == "rows_per_s":
        return f"{v:,.0f}"
    if col == "peak_rss_mb":
        return f"{v:.0f}"
    if col == "ratio":
        return f"{v:.2f}"
    if col == "rows" and isinstance(v, int):
        return f"{v:,}"
    return str(v)


def markdown_table(results: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" if c == "case" else "---:" for c in COLUMNS) + "|"]
    for r in results:
        lines.append("| " + " | ".join(_fmt(c, r.get(c)) for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def write_table(
    results: list[dict],
    md_path: str | Path | None = None,
    csv_path: str | Path | None = None,
    reference_case: str | None = None,
) -> str:
    """Write results as markdown and/or CSV (raw numbers); returns the markdown text."""
    if reference_case:
        add_ratios(results, reference_case)
    md = markdown_table(results)
    if md_path:
        Path(md_path).parent.mkdir(parents=True, exist_ok=True)
        Path(md_path).write_text(md)
    if csv_path:
        Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
        with open(csv_path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in results:
                w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in COLUMNS})
    return md


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "_call":
        _call_entry(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: python -m bench.measure _call IN.pkl OUT.pkl  (internal)")


def pipeline_env(data: Path, warehouse: Path, home: Path) -> dict:
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT / "config" / "dagster.yaml", home / "dagster.yaml")
    return {
        **os.environ,
        "LIGER_DATA_RAW": str(data),
        "LIGER_WAREHOUSE": str(warehouse),
        "DAGSTER_HOME": str(home),
        "DAGSTER_DISABLE_TELEMETRY": "1",
        "PYTHONPATH": str(PROJECT),
    }
