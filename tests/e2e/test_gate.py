"""The pull-request gate end to end (docs/gate.md): `liger-bench gate`, the console script CI calls (and
`make gate`, `python -m pipeline.cli.gate`) as subprocesses against a real warehouse of the shipped data
(the session's, built once by Dagster), on the shipped gh-pages snapshots. gate.md is rendered by a
Markdown renderer (markdown-it-py) and read back as HTML. Nothing here is mocked or timed."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from statistics import median

import pytest
from markdown_it import MarkdownIt

from pipeline.contracts.digests import canonical_json
from pipeline.outputs.gate.comment import LIMIT, render
from tests.fixtures.shared_data import shared_data

REPO = Path(__file__).resolve().parents[2]
LIGER_BENCH = Path(sys.executable).parent / "liger-bench"  # pyproject.toml [project.scripts], installed by uv
SNAPSHOTS = REPO / "data_raw" / "liger_gh_pages" / "benchmarks"
RERUN = SNAPSHOTS / "0a62700" / "benchmark.csv"  # 0a62700 benchmarked twice: this run and 0a62700-v0.6.4
SWEEP = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "x_name",
    "extra_benchmark_config_str",
)


def gate_env(warehouse: Path, **env: str) -> dict[str, str]:
    full_env = {**os.environ, "LIGER_WAREHOUSE": str(warehouse), "PYTHONPATH": str(REPO), "LIGER_GIT_REPO": "",
                "DAGSTER_DISABLE_TELEMETRY": "1", **env}  # fmt: skip
    if "GITHUB_STEP_SUMMARY" not in env:  # the test's own CI must not receive the gate's comment
        full_env.pop("GITHUB_STEP_SUMMARY", None)
    return full_env


def gate(warehouse: Path, out: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, dict | None, str]:
    """`liger-bench gate ARGS --out OUT` on ``warehouse``: (process, gate.json, gate.md)."""
    proc = subprocess.run([str(LIGER_BENCH), "gate", *args, "--out", str(out)],
                          cwd=REPO, env=gate_env(warehouse, **env), capture_output=True, text=True)  # fmt: skip
    doc = json.loads((out / "gate.json").read_text()) if (out / "gate.json").exists() else None
    md = (out / "gate.md").read_text() if (out / "gate.md").exists() else ""
    return proc, doc, md


def html_of(md: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(md)


def plant(src: Path, dest: Path, factor: float = 1.5, min_ms: float = 1.0) -> set[tuple]:
    """A copy of ``src`` with every liger-family speed sweep of median p50 >= ``min_ms`` slower by ``factor``
    (p20, p50, p80; the reference providers untouched); the sweeps planted."""
    with src.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    p50s = defaultdict(list)
    for r in rows:
        p50s[tuple(r[k] for k in SWEEP)].append(float(r["y_value_50"]))
    planted = set()
    for r in rows:
        key = tuple(r[k] for k in SWEEP)
        if r["kernel_provider"].startswith("liger") and r["metric_name"] == "speed" and median(p50s[key]) >= min_ms:
            for col in ("y_value_20", "y_value_50", "y_value_80"):
                r[col] = repr(float(r[col]) * factor)
            planted.add(key)
    with dest.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return planted


def _key(result: dict) -> tuple:
    return (result["kernel"], result["provider"], result["pass"], result["metric"], result["x_name"], result["config"])


def _tree(path: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def planted(shipped_warehouse, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gate_planted")
    sweeps = plant(RERUN, tmp / "all_benchmark_data.csv")
    proc, doc, md = gate(shipped_warehouse, tmp / "out", str(tmp / "all_benchmark_data.csv"), "--base", "0a62700")
    return sweeps, proc, doc, md


def test_the_same_commit_benchmarked_twice_passes(shipped_warehouse, tmp_path):
    before = _tree(shipped_warehouse)
    summary = tmp_path / "summary.md"
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(RERUN), "--base", "0a62700-v0.6.4",
                         GITHUB_STEP_SUMMARY=str(summary))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert doc["status"] == "pass" and doc["gpu"] == "NVIDIA H100 80GB HBM3"
    assert doc["base"]["kind"] == "snapshot" and doc["base"]["runs"] == 1
    judged = [r for r in doc["results"] if r["verdict"] != "insufficient"]
    assert len(judged) >= 150
    assert sum(r["verdict"] == "regression" for r in judged) <= 0.02 * len(judged)
    for r in judged:  # one entry per sweep: verdict, ratio, threshold and its source, runs per side
        assert r["threshold"] > 0 and r["threshold_source"] and r["base_runs"] == r["candidate_runs"] == 1
    assert len({_key(r) for r in doc["results"]}) == len(doc["results"])
    assert summary.read_text() == md + "\n"  # appended to $GITHUB_STEP_SUMMARY
    assert _tree(shipped_warehouse) == before  # the gate wrote nothing into the warehouse


def test_a_commit_as_base_takes_its_other_runs_never_the_candidate_itself(shipped_warehouse, tmp_path):
    proc, doc, _ = gate(shipped_warehouse, tmp_path / "out", str(RERUN), "--base", "0a62700")
    assert proc.returncode == 0, proc.stderr
    # the warehouse holds both runs of 0a62700; the candidate is one of them, so the base is the other
    assert doc["base"]["kind"] == "commit" and doc["base"]["runs"] == 1
    assert doc["base"]["snapshots"][0].startswith("0a62700-v0.6.4@")


def test_a_planted_slowdown_fails_and_names_the_kernels(planted):
    sweeps, proc, doc, md = planted
    assert proc.returncode == 1, proc.stderr
    assert doc["status"] == "fail" and doc["exit_code"] == 1
    by_key = {_key(r): r for r in doc["results"]}
    regressions = {k for k, r in by_key.items() if r["verdict"] == "regression"}
    planted_judged = {k for k in ((*s[:5], canonical_json(json.loads(s[5]))) for s in sweeps) if k in by_key}
    assert len(planted_judged) >= 40
    assert regressions <= planted_judged  # nothing else is called
    assert len(regressions) >= 0.9 * len(planted_judged)
    for k in regressions:
        assert by_key[k]["ratio"] > 1.3 and by_key[k]["base_runs"] == 2 and by_key[k]["candidate_runs"] == 1
    # the comment names them: each regressed kernel is a row of the regressions table, worst first
    html = html_of(md)
    tables = html.split("<table>")
    assert len(tables) == 3  # regressions, and the rest inside <details>
    for kernel in {k[0] for k in regressions}:
        assert f"<td>{kernel}</td>" in tables[1]
    ratios = [r["ratio"] for r in doc["results"] if r["verdict"] == "regression"]
    assert ratios == sorted(ratios, reverse=True)
    assert md.splitlines()[1].startswith("**Liger benchmark gate: fail** — ")
    assert f"{len(regressions)} regression" in md.splitlines()[1]


def test_warn_only_always_exits_zero(shipped_warehouse, tmp_path):
    planted_csv = tmp_path / "planted.csv"
    plant(RERUN, planted_csv)
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(planted_csv), "--base", "0a62700", "--warn-only")
    assert proc.returncode == 0 and doc["status"] == "fail" and "Warn-only" in md


def test_a_malformed_csv_exits_2_and_names_the_file(shipped_warehouse, tmp_path):
    bad = tmp_path / "all_benchmark_data.csv"
    bad.write_text("kernel_name,kernel_provider,y_value_50\nrms_norm,liger,1.0\n")
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(bad), "--base", "0a62700")
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "missing" in proc.stderr and "metric_name" in proc.stderr
    assert doc["status"] == "error" and str(bad) in doc["error"]
    assert "error" in md.splitlines()[1]
    # a bad row beside good ones: the line is named, not silently dropped
    rows = RERUN.read_text().splitlines()
    bad.write_text("\n".join([*rows[:50], rows[50].replace(rows[50].split(",")[0], "x", 1) + ",,,,extra", *rows[51:]]))
    proc, _, _ = gate(shipped_warehouse, tmp_path / "out2", str(bad), "--base", "0a62700")
    assert proc.returncode == 2 and "rejected" in proc.stderr and str(bad) in proc.stderr
    proc, _, _ = gate(shipped_warehouse, tmp_path / "out3", str(tmp_path / "missing.csv"), "--base", "0a62700")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_an_unknown_base_exits_2_and_says_what_the_warehouse_has(shipped_warehouse, tmp_path):
    proc, doc, _ = gate(shipped_warehouse, tmp_path / "out", str(RERUN), "--base", "deadbeef")
    assert proc.returncode == 2
    assert "unknown base" in proc.stderr and "'deadbeef'" in proc.stderr and "0.6.5" in proc.stderr
    assert doc["status"] == "error"


def test_no_base_run_on_the_candidates_gpu_lists_the_base_gpus(shipped_warehouse, tmp_path):
    other = tmp_path / "b200.csv"
    other.write_text(RERUN.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA B200"))
    proc, _, _ = gate(shipped_warehouse, tmp_path / "out", str(other), "--base", "0a62700")
    assert proc.returncode == 2
    assert "no run on NVIDIA B200" in proc.stderr and "NVIDIA H100 80GB HBM3" in proc.stderr


def test_gate_md_renders_and_data_names_stay_text(planted):
    _, _, doc, _ = planted
    hostile = json.loads(json.dumps(doc))
    reg = next(r for r in hostile["results"] if r["verdict"] == "regression")
    reg["kernel"] = "<script>alert(1)</script>"
    reg["config"] = "[x](https://example.com) *em* | `code` <b>b</b> &amp;"
    reg["suspects"] = [{"sha": "0" * 40, "subject": "<img src=x onerror=alert(1)> **bold**", "committed_at": ""}]
    rest = next(r for r in hostile["results"] if r["verdict"] != "regression")
    rest["provider"] = "liger|evil\n# heading"
    html = html_of(render(hostile))
    for markup in ("<script", "<a ", "<em>", "<b>", "<img", "<h1>"):
        assert markup not in html
    assert re.findall(r"<code>(.*?)</code>", html) == ["0000000"]  # only the suspect's short sha
    assert html.count("<strong>") == 1  # the lead line's status, our own word
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "[x](https:\u2060//example.com) *em*" in html
    assert "&lt;img src=x onerror=alert(1)&gt; **bold**" in html
    assert "liger|evil # heading" in html
    # every row keeps its cells: the pipe in a name does not split a cell
    body = html.split("<tbody>")
    assert all(row.count("<td") == 9 for row in body[1].split("</tbody>")[0].split("<tr>")[1:])
    assert all(row.count("<td") == 8 for row in body[2].split("</tbody>")[0].split("<tr>")[1:])
    assert "<details>" in html and "<summary>" in html


def _largest_run_and_its_base(shipped_warehouse) -> tuple[Path, str]:
    import duckdb

    largest = max(SNAPSHOTS.glob("*/benchmark.csv"), key=lambda p: p.stat().st_size)
    folder = largest.parent.name
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        base = con.execute(
            """select benchmarked_commit from measurements where gpu_name = 'NVIDIA H100 80GB HBM3'
               and commit_order < (select max(commit_order) from measurements where split_part(snapshot, '@', 1) = $f)
               group by 1 order by max(commit_order) desc limit 1""",
            {"f": folder},
        ).fetchall()
    return largest, base[0][0]


def test_the_comment_fits_github_on_the_largest_run(shipped_warehouse, tmp_path):
    largest, base = _largest_run_and_its_base(shipped_warehouse)
    planted_csv = tmp_path / "largest.csv"
    plant(largest, planted_csv, factor=1.5, min_ms=0.0)  # every sweep a regression row: the longest comment
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(planted_csv), "--base", base)
    assert proc.returncode in (0, 1), proc.stderr
    assert len(doc["results"]) >= 150 and len(md) <= LIMIT
    # shortened: a limit the whole comment does not fit in cuts rows and says how many
    short = render(doc, limit=6000)
    assert len(short) <= 6000 and "more (all in gate.json)" in short
    html = html_of(short)
    assert html.count("<table>") == html.count("</table>") >= 1 and "…" in html


def test_make_gate(shipped_warehouse, tmp_path):
    env = {**os.environ, "LIGER_WAREHOUSE": str(shipped_warehouse), "LIGER_GIT_REPO": ""}
    out = tmp_path / "out"
    proc = subprocess.run(["make", "-s", "gate", f"RUN={RERUN}", "BASE=0a62700-v0.6.4", f"OUT={out}"],
                          cwd=REPO, env=env, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "gate: pass" in proc.stdout and json.loads((out / "gate.json").read_text())["status"] == "pass"


def test_with_the_clone_suspects_are_the_commits_touching_each_flagged_kernel(shipped_warehouse, tmp_path):
    data = shared_data()
    if data is None or not (data / "liger_git").is_dir():
        pytest.skip("the shared Liger clone (liger_git) is not beside the repo")
    planted_csv = tmp_path / "planted.csv"
    plant(RERUN, planted_csv)
    proc, doc, md = gate(shipped_warehouse, tmp_path / "out", str(planted_csv), "--base", "0a62700",
                         "--head", "4444fdf", LIGER_GIT_REPO=str(data / "liger_git"))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert doc["candidate"]["commit"].startswith("4444fdf") and len(doc["candidate"]["commit"]) == 40
    assert doc["suspects"]["base"].startswith("0a62700") and doc["suspects"]["commits"] > 0
    geglu = [r for r in doc["results"] if r["kernel"] == "geglu" and r["verdict"] == "regression"]
    assert geglu and "Fix geglu" in {s["subject"].split(" (#")[0] for s in geglu[0]["suspects"]}
    assert "`57848d5`" in md
    assert len(doc["base"]["commit"]) == 40  # the warehouse's short sha, resolved by the clone
    # BASE=auto: the newest commit benchmarked on the GPU that HEAD descends from
    proc, doc, _ = gate(shipped_warehouse, tmp_path / "auto", str(SNAPSHOTS / "4444fdf" / "benchmark.csv"),
                        "--base", "auto", "--head", "4444fdf~1", LIGER_GIT_REPO=str(data / "liger_git"))  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert doc["base"]["label"] == "3b79375" and doc["base"]["commit"].startswith("3b79375")


def test_record_lands_the_candidate_as_a_run_of_its_commit(tmp_path):
    """--record: the run lands as our own runs do (a commit run, origin 'gate'), through one warehouse run;
    without it the warehouse is untouched (the other tests)."""
    from tests.fixtures.runs import run_env

    raw = tmp_path / "data_raw" / "liger_gh_pages" / "benchmarks" / "0a62700-v0.6.4"
    raw.mkdir(parents=True)
    (raw / "benchmark.csv").write_bytes((SNAPSHOTS / "0a62700-v0.6.4" / "benchmark.csv").read_bytes())
    wh = tmp_path / "warehouse"
    env = run_env(tmp_path / "data_raw", wh, tmp_path / "dagster_home", LIGER_GIT_REPO="")
    built = subprocess.run([sys.executable, "-m", "pipeline.cli.run"], cwd=REPO, env=env, capture_output=True)
    assert built.returncode == 0, built.stderr
    full = "0a62700752e8592c0bf16916d1e4dbf598cee8c1"
    proc, doc, _ = gate(wh, tmp_path / "out", str(RERUN), "--base", "0a62700-v0.6.4", "--head", full, "--record",
                        DAGSTER_HOME=env["DAGSTER_HOME"], LIGER_DATA_RAW=env["LIGER_DATA_RAW"])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # one run of the base only: no re-runs measured noise here, so the documented defaults judge it
    assert doc["status"] in ("pass", "neutral") and "recorded" in proc.stderr
    import duckdb

    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        runs = con.execute("select commit, origin from benchmark_snapshot order by origin").fetchall()
        rows = con.execute("select count(*) from measurements where benchmarked_commit = ?", [full]).fetchone()[0]
    assert sorted(runs) == [("0a62700", "gh_pages"), (full, "gate")]
    assert rows == doc["candidate"]["rows"]


def test_python_m_pipeline_cli_gate_is_the_same_command(shipped_warehouse, tmp_path):
    """The module entry older workflows call goes through liger-bench's one parser."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli.gate", str(RERUN), "--base", "0a62700-v0.6.4",
                           "--out", str(out)], cwd=REPO, env=gate_env(shipped_warehouse), capture_output=True,
                          text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "gate.json").read_text())["status"] == "pass"
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli.gate", str(RERUN)], cwd=REPO,
                          env=gate_env(shipped_warehouse), capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--base" in proc.stderr


@pytest.mark.parametrize("how", ["stdin", "process substitution"])
def test_a_candidate_from_a_pipe_is_read_once_and_judged_as_the_file_is(shipped_warehouse, tmp_path, how):
    _, from_file, _ = gate(shipped_warehouse, tmp_path / "file", str(RERUN), "--base", "0a62700-v0.6.4")
    out = tmp_path / "pipe"
    if how == "stdin":
        proc = subprocess.run([str(LIGER_BENCH), "gate", "/dev/stdin", "--base", "0a62700-v0.6.4", "--out", str(out)],
                              input=RERUN.read_bytes(), cwd=REPO, env=gate_env(shipped_warehouse),
                              capture_output=True)  # fmt: skip
    else:
        script = 'exec "$0" gate <(cat "$1") --base 0a62700-v0.6.4 --out "$2"'
        proc = subprocess.run(["bash", "-c", script, str(LIGER_BENCH), str(RERUN), str(out)], cwd=REPO,
                              env=gate_env(shipped_warehouse), capture_output=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads((out / "gate.json").read_text())
    assert doc["status"] == "pass" and doc["candidate"]["rows"] == from_file["candidate"]["rows"] > 0
    assert doc["results"] == from_file["results"]


HOSTILE = "`touch pwned1` $(touch pwned2); touch pwned3 \" ' $$4 #"


def test_make_gate_passes_a_hostile_base_as_a_value(shipped_warehouse, tmp_path):
    """issue 53 case 3: a branch name with shell syntax reaches the gate as text, and runs nothing."""
    env = {**gate_env(shipped_warehouse), "PWD": str(tmp_path)}
    out = tmp_path / "out"
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "gate", f"RUN={RERUN}", f"BASE={HOSTILE}", f"OUT={out}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert not list(tmp_path.glob("pwned*")) and not list(REPO.glob("pwned*"))
    doc = json.loads((out / "gate.json").read_text())
    assert doc["status"] == "error" and repr(HOSTILE) in doc["error"]
