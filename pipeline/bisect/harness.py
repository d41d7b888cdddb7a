"""Run upstream's harness at one commit (standard library only: it runs on the GPU host).

A commit's ``src/`` and ``benchmark/`` come out of ``git archive`` into a throw-away folder (never a
checkout: a clone missing a large blob cannot check out, and the user's work tree is never touched).
``importlib.metadata`` finds ``src/liger_kernel-<version>.dist-info/METADATA`` written beside the
package. The harness runs with that ``src`` first on PYTHONPATH and its cwd at ``benchmark/``, as
upstream runs it, through ``harness_shim.py`` (which can narrow the sweep to the judged pass,
metric, config and providers); it writes ``benchmark/data/all_benchmark_data.csv``, emptied first so
the file holds this run's rows only.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from .harness_shim import same_config
else:  # imported by runner.py as a script: its folder is on sys.path
    from harness_shim import same_config

NOT_RECORDED = "not recorded"
CSV_NAME = "all_benchmark_data.csv"
SHIM = Path(__file__).resolve().parent / "harness_shim.py"
_VERSION = re.compile(r"""^\s*version\s*=\s*["']([^"']+)["']""", re.M)
_SETUP_VERSION = re.compile(r"""version\s*=\s*["']([^"']+)["']""")


class GitError(RuntimeError):
    pass


def _git_env() -> dict[str, str]:
    drop = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


def git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, env=_git_env(), stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def open_git_dir(repo: Path, scratch: Path) -> Path:
    """The git dir to read. git refuses a bare clone copied without its empty ``refs/`` folder (the
    shared clone is one); such a clone is read through a shim in ``scratch`` (empty refs/, a link to
    its objects/, copies of HEAD, packed-refs and config). pipeline/history/git.py does the same for the
    warehouse; this copy exists because the GPU side may import nothing but the standard library."""
    repo = Path(repo).resolve()
    # first: `git -C` on a refs-less copy inside another work tree would answer with THAT repository
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir() and not (repo / "refs").exists():
        shim = scratch / "git-shim"
        (shim / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (shim / "refs" / "tags").mkdir(exist_ok=True)
        if not (shim / "objects").exists():
            (shim / "objects").symlink_to(repo / "objects", target_is_directory=True)
        for name in ("HEAD", "packed-refs", "config", "shallow"):
            if (repo / name).is_file():
                shutil.copyfile(repo / name, shim / name)
        return shim
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():
        return repo  # a bare clone: never resolved through an enclosing work tree
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        env=_git_env(),
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode == 0:
        return Path(proc.stdout.decode().strip())
    raise GitError(f"{repo} is not a git repository: {proc.stderr.decode(errors='replace').strip()}")


def package_version(git_dir: Path, sha: str) -> str:
    """The commit's version from pyproject.toml ([project] version), else setup.py, else 0.0.0+unknown."""
    for path, pattern in (("pyproject.toml", _VERSION), ("setup.py", _SETUP_VERSION)):
        try:
            text = git(git_dir, "show", f"{sha}:{path}").decode(errors="replace")
        except GitError:
            continue
        if found := pattern.search(text):
            return found.group(1)
    return "0.0.0+unknown"


def export_commit(git_dir: Path, sha: str, dest: Path) -> str:
    """``git archive <sha> -- src benchmark`` unpacked into ``dest``, with the dist-info METADATA;
    returns the version written. Upstream's committed CSVs under benchmark/data are removed."""
    data = git(git_dir, "archive", "--format=tar", sha, "--", "src", "benchmark")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python < 3.12 without the backport: git archive writes no links out of the tree
            tar.extractall(dest)
    version = package_version(git_dir, sha)
    info = dest / "src" / f"liger_kernel-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: liger_kernel\nVersion: {version}\n")
    shutil.rmtree(dest / "benchmark" / "data", ignore_errors=True)
    return version


@dataclass(frozen=True)
class HarnessRun:
    ok: bool
    csv_path: Path | None
    reason: str | None  # why it failed
    log_tail: str


def run_harness(
    export: Path, kernel: str, python: str, narrow: dict[str, str], timeout_s: float, log: Path
) -> HarnessRun:
    """One harness run in ``export``; its CSV (this run's rows only) or why it failed."""
    bench = export / "benchmark"
    script = bench / "scripts" / f"benchmark_{kernel}.py"
    out_csv = bench / "data" / CSV_NAME
    out_csv.unlink(missing_ok=True)
    if not script.is_file():
        return HarnessRun(False, None, f"no benchmark/scripts/benchmark_{kernel}.py at this commit", "")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(export / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTHONHOME", None)
    env.update({f"LIGER_BISECT_ONLY_{k.upper()}": v for k, v in narrow.items() if v})
    offered = log.with_name("offered.tsv")
    offered.unlink(missing_ok=True)
    env["LIGER_BISECT_OFFERED"] = str(offered)
    cmd = [python, str(SHIM), str(script), "--overwrite"]
    try:
        with log.open("wb") as fh:
            proc = subprocess.run(
                cmd,
                cwd=bench,
                env=env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=timeout_s,
            )
        code: int | str = proc.returncode
    except subprocess.TimeoutExpired:
        code = f"timed out after {timeout_s:g} s"
    except OSError as exc:
        return HarnessRun(False, None, f"cannot start {python}: {exc.strerror}", "")
    tail = log.read_bytes()[-4000:].decode(errors="replace")
    if code != 0:
        last = next((line for line in reversed(tail.splitlines()) if line.strip()), "")[:300]
        return HarnessRun(False, None, f"harness exited with {code}: {last}", tail)
    if not out_csv.is_file():
        return HarnessRun(False, None, f"harness wrote no benchmark/data/{CSV_NAME}{_offered(offered, narrow)}", tail)
    return HarnessRun(True, out_csv, None, tail)


def _offered(path: Path, narrow: dict[str, str]) -> str:
    """What a harness narrowed to nothing offered: its (metric, pass) pairs, named."""
    try:
        pairs = dict.fromkeys(tuple(line.split("\t", 1)) for line in path.read_text().splitlines() if "\t" in line)
    except OSError:
        return ""
    by_metric: dict[str, list[str]] = {}
    for metric, mode in pairs:
        by_metric.setdefault(metric, []).append(mode)
    listed = "; ".join(f"{metric}: {', '.join(modes)}" for metric, modes in by_metric.items())
    asked = f" / {narrow.get('pass') or 'any pass'} / {narrow.get('metric') or 'any metric'}"
    return f" (narrowed to{asked}): it offers the passes {listed}" if listed else ""


def sweep_value(csv_path: Path, sweep: dict[str, str | None]) -> tuple[float | None, list[dict], str | None]:
    """(geometric mean of the judged sweep's p50 over its points, those rows, GPU name) of one run's CSV."""
    rows = _rows(csv_path)
    keep = []
    for row in rows:
        if row.get("kernel_name") != sweep["kernel"] or row.get("kernel_provider") != sweep["provider"]:
            continue
        if row.get("metric_name") != sweep["metric"] or row.get("kernel_operation_mode") != sweep["pass"]:
            continue
        if sweep.get("config") and not same_config(sweep["config"], row.get("extra_benchmark_config_str")):
            continue
        try:
            p50 = float(row.get("y_value_50") or "nan")
        except ValueError:
            continue
        if p50 > 0 and math.isfinite(p50):
            keep.append(row)
    if not keep:
        return None, [], None
    logs = [math.log(float(r["y_value_50"])) for r in keep]
    return math.exp(sum(logs) / len(logs)), keep, keep[0].get("gpu_name")


# Without PASS: the pass upstream's visualizer draws by default (benchmark/benchmarks_visualizer.py,
# VisualizationsConfig.kernel_operation_mode = "full"), else the first pass the CSV lists (the order
# its `unique()` walks). Without METRIC: speed, the dashboard's first metric, else the first written.
DEFAULT_PASS = "full"
DEFAULT_METRIC = "speed"


def _rows(csv_path: Path) -> list[dict]:
    with csv_path.open(newline="", encoding="utf-8", errors="replace") as fh:
        return list(csv.DictReader(fh))


def written(csv_path: Path, sweep: dict[str, str | None]) -> dict[str, list[str]]:
    """The passes of the judged kernel and provider the run wrote, per metric, in the CSV's order."""
    out: dict[str, list[str]] = {}
    for row in _rows(csv_path):
        if row.get("kernel_name") != sweep["kernel"] or row.get("kernel_provider") != sweep["provider"]:
            continue
        modes = out.setdefault(row.get("metric_name") or "", [])
        if (mode := row.get("kernel_operation_mode") or "") not in modes:
            modes.append(mode)
    return out


def default_sweep(csv_path: Path, sweep: dict[str, str | None]) -> tuple[str | None, str | None]:
    """(metric, pass) for a plan that named neither, from what one run wrote (docs/bisect.md, *Defaults*)."""
    by_metric = written(csv_path, sweep)
    metric = sweep.get("metric") or (DEFAULT_METRIC if DEFAULT_METRIC in by_metric else next(iter(by_metric), None))
    modes = by_metric.get(metric or "", [])
    mode = sweep.get("pass") or (DEFAULT_PASS if DEFAULT_PASS in modes else next(iter(modes), None))
    return metric, mode


def describe_missing(csv_path: Path, sweep: dict[str, str | None]) -> str:
    """Why a run's rows are not the judged sweep, naming the passes it did write."""
    want = f"({sweep['kernel']} / {sweep['provider']} / {sweep.get('pass')} / {sweep.get('metric')})"
    got = written(csv_path, sweep)
    if not got:
        return f"{want}: it wrote no {sweep['kernel']} row of provider {sweep['provider']}"
    listed = "; ".join(f"{metric}: {', '.join(modes)}" for metric, modes in got.items())
    return f"{want}: it wrote the passes {listed} (give PASS= / METRIC=, or leave them out to take these)"


_ENV_PROBE = """
import json, platform, sys
out = {"python": platform.python_version()}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda or "not recorded"
    if torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
except Exception:
    pass
try:
    import triton
    out["triton"] = triton.__version__
except Exception:
    pass
print(json.dumps(out))
"""


def environment(python: str) -> dict[str, str]:
    """GPU, driver, CUDA, torch, Triton, Python (of the harness interpreter) and host; what cannot
    be found is "not recorded". Asked of torch and nvidia-smi in subprocesses: this module imports neither."""
    env = dict.fromkeys(("gpu", "driver", "cuda", "torch", "triton", "python"), NOT_RECORDED)
    env["host"] = socket.gethostname() or NOT_RECORDED
    env["os"] = platform.platform()
    try:
        proc = subprocess.run([python, "-c", _ENV_PROBE], capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        if proc.returncode == 0:
            env.update({k: str(v) for k, v in json.loads(proc.stdout.decode().strip().splitlines()[-1]).items()})
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            proc = subprocess.run(
                [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                capture_output=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            first = proc.stdout.decode(errors="replace").strip().splitlines()
            if proc.returncode == 0 and first:
                name, _, driver = first[0].partition(",")
                env["driver"] = driver.strip() or NOT_RECORDED
                if env["gpu"] == NOT_RECORDED and name.strip():
                    env["gpu"] = name.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return env


def scratch_dir(parent: Path | None = None) -> Path:
    return Path(tempfile.mkdtemp(prefix="liger-bisect-", dir=parent))
