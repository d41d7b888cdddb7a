"""The toolchain in the identity (issue 54): a commit run's environment.json fills its derived
ExecutionEnvironment's `spec.software` with KernelIndex's field names, so two runs of one commit under
another torch or Triton have two environment digests; an upstream CSV row records none and keeps
`software: {}`. Real Dagster runs on a tmp data_raw."""

from __future__ import annotations

import json

import duckdb

from pipeline.cli import export as ki_export
from pipeline.contracts.digests import object_digest
from tests.conftest import SAMPLE_RECORD, materialize
from tests.fixtures.gh_pages_repo import SUSPECT_GPU, build_harness_repo, git
from tests.fixtures.runs import HEADER, row

SHA = "a" * 40
OLD = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "cuda": "13.0", "torch": "2.10.0", "triton": "3.5.0"}
NEW = OLD | {"torch": "2.11.0+cu130", "triton": "3.6.0", "python": "3.12.3", "host": "another"}
GPU = "NVIDIA H100 80GB HBM3"


def _commit_run(root, run: str, p50: str, env: dict | None) -> None:
    folder = root / "runs" / "commit_runs" / SHA / run
    folder.mkdir(parents=True)
    rows = [row(x=str(x), p50=p50, gpu=GPU, ts="2026-05-01 10:00:00") for x in (1, 2)]
    (folder / "all_benchmark_data.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    if env is not None:
        (folder / "environment.json").write_text(json.dumps(env))


def _environments(warehouse) -> dict[str, dict]:
    """p50 -> the ExecutionEnvironment of its facts (one per p50), checked against its digest."""
    with duckdb.connect(str(warehouse / "liger.duckdb"), read_only=True) as con:
        rows = con.sql(
            """select distinct f.p50, f.environment_digest, d.object_json
               from fact_measurement f join dim_environment d using (environment_digest)"""
        ).fetchall()
    out: dict[str, dict] = {}
    for p50, digest, obj in rows:
        obj = json.loads(obj)
        assert digest == object_digest(obj)
        assert str(p50) not in out, "one environment per run"
        out[str(p50)] = obj
    return out


def _data_raw(root, with_record: bool):
    _commit_run(root, "r1", "0.51", OLD)
    _commit_run(root, "r2", "0.52", NEW)
    _commit_run(root, "r3", "0.53", None)  # a run without environment.json: nothing is guessed
    (root / "liger_csv").mkdir(parents=True)
    (root / "liger_csv" / "upstream.csv").write_text(f"{HEADER}\n{row(p50='0.45', gpu=GPU)}\n")
    if with_record:  # a KernelIndex record on the same GPU: the environment learned for it
        (root / "kernelindex").mkdir()
        (root / "kernelindex" / SAMPLE_RECORD.name).write_bytes(SAMPLE_RECORD.read_bytes())


def test_commit_runs_under_other_toolchains_get_other_environment_digests(tmp_path):
    _data_raw(tmp_path / "data_raw", with_record=False)
    assert materialize(tmp_path / "data_raw", tmp_path / "wh").success
    env = _environments(tmp_path / "wh")
    assert env["0.51"]["spec"]["software"] == {
        "driver": "580.159.04",
        "cudaToolkit": "13.0",
        "framework": {"name": "torch", "version": "2.10.0"},
        "libraries": {"triton": "3.5.0"},
    }
    assert env["0.52"]["spec"]["software"]["framework"] == {"name": "torch", "version": "2.11.0+cu130"}
    assert env["0.52"]["spec"]["software"]["libraries"] == {"triton": "3.6.0"}
    assert env["0.53"]["spec"]["software"] == env["0.45"]["spec"]["software"] == {}
    digests = {p50: object_digest(o) for p50, o in env.items()}
    assert digests["0.51"] != digests["0.52"]
    assert digests["0.53"] == digests["0.45"] not in (digests["0.51"], digests["0.52"])
    # the hardware is the same object: only the toolchain tells the runs apart
    assert env["0.51"]["spec"]["hardware"] == env["0.52"]["spec"]["hardware"] == env["0.45"]["spec"]["hardware"]


def test_a_recorded_toolchain_is_not_replaced_by_the_learned_environment(tmp_path):
    """A KernelIndex record teaches its GPU's environment to derived rows that record none; a commit run
    that recorded its toolchain keeps its own."""
    _data_raw(tmp_path / "data_raw", with_record=True)
    assert materialize(tmp_path / "data_raw", tmp_path / "wh").success
    env = _environments(tmp_path / "wh")
    learned = json.loads(SAMPLE_RECORD.read_text())["environment"]
    assert env["0.53"]["spec"] == env["0.45"]["spec"] == learned["spec"]
    assert env["0.51"]["spec"]["software"]["framework"]["version"] == "2.10.0"
    assert env["0.52"]["spec"]["software"]["framework"]["version"] == "2.11.0+cu130"


TOOLCHAIN = {
    "driver": "580.159.04",
    "cudaToolkit": "13.0",
    "compiler": "nvcc 13.0.48",
    "framework": {"name": "torch", "version": "2.11.0+cu130"},
    "libraries": {"triton": "3.6.0"},
}
SETTINGS = {"clocksLocked": True, "powerLimitWatts": 700, "eccEnabled": True}
KI_COLUMNS = "external_id, run_digest, workload_digest, implementation_digest, protocol_digest, environment_digest"


def _record_with_toolchain(dest) -> dict:
    """The sample KernelIndex record, its environment carrying a toolchain and settings (digests redone)."""
    bundle = json.loads(SAMPLE_RECORD.read_text())
    bundle["environment"]["spec"]["software"] = TOOLCHAIN
    bundle["environment"]["spec"]["settings"] = SETTINGS
    bundle["run"]["spec"]["environmentDigest"] = object_digest(bundle["environment"])
    (dest / "kernelindex").mkdir(parents=True)
    (dest / "kernelindex" / "toolchain.json").write_text(json.dumps(bundle))
    return bundle


def _q(warehouse, sql: str):
    with duckdb.connect(str(warehouse / "liger.duckdb"), read_only=True) as con:
        return con.sql(sql).fetchall()


def test_the_export_round_trip_keeps_the_toolchain_and_the_digests(tmp_path):
    bundle = _record_with_toolchain(tmp_path / "data_raw")
    env_digest = bundle["run"]["spec"]["environmentDigest"]
    assert materialize(tmp_path / "data_raw", tmp_path / "wh").success
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        counts = ki_export.export(con, tmp_path / "export")
    assert counts["runs"] == 1 and counts["skipped"] == counts["run_digest_differs"] == 0
    exported = json.loads((tmp_path / "export" / ki_export.RUNS_FILE).read_text())
    assert exported["environment"]["spec"]["software"] == TOOLCHAIN
    assert exported["environment"]["spec"]["settings"] == SETTINGS
    assert exported["run"]["spec"]["environmentDigest"] == env_digest == object_digest(exported["environment"])
    assert materialize(tmp_path / "export", tmp_path / "again").success
    sql = f"select {KI_COLUMNS} from measurements where identity = 'kernelindex' order by all"
    assert _q(tmp_path / "again", sql) == _q(tmp_path / "wh", sql)
    assert _q(tmp_path / "again", sql)[0][-1] == env_digest
    stored = _q(
        tmp_path / "again", f"select object_json from dim_environment where environment_digest = '{env_digest}'"
    )
    spec = json.loads(stored[0][0])["spec"]
    assert (spec["software"], spec["settings"]) == (TOOLCHAIN, SETTINGS)


def harness_runs_with_toolchains(tmp_path):
    """The harness clone (tests/fixtures/gh_pages_repo.py) and a data_raw holding our own runs at h1 and
    h3: the bytes of their gh-pages snapshots, with an environment.json each (torch and Triton differ)."""
    clone = build_harness_repo(tmp_path / "repo")
    root = tmp_path / "data_raw"
    for name, env in (("h1", OLD), ("h3", NEW)):
        folder = root / "runs" / "commit_runs" / clone.commits[name] / "r1"
        folder.mkdir(parents=True)
        csv = git(clone.path, "show", f"gh-pages:benchmarks/{clone.short(name)}/benchmark.csv")
        (folder / "all_benchmark_data.csv").write_text(csv + "\n")
        (folder / "environment.json").write_text(json.dumps(env | {"gpu": SUSPECT_GPU}))
    return clone, root


def test_an_alert_whose_sides_differ_in_toolchain_says_so_first(tmp_path):
    """Our own runs at h1 and h3 of the harness clone (the gh-pages snapshots' bytes, with an
    environment.json each): the h1..h3 alert leads its cause with the torch and Triton change; alerts
    whose sides did not both record a toolchain say it was not recorded, as before."""
    clone, root = harness_runs_with_toolchains(tmp_path)
    assert materialize(root, tmp_path / "wh", git_repo=clone.path).success
    lines = {
        tuple(k): line for k, line in _q(tmp_path / "wh", "select kernel_names, line from alerts where axis = 'commit'")
    }
    h1h3 = lines[("geglu", "swiglu")]
    assert " — toolchain torch 2.10.0 → 2.11.0+cu130, Triton 3.5.0 → 3.6.0; mixed: " in h1h3, h1h3
    assert "not recorded" not in h1h3
    assert "toolchain (driver, CUDA, torch, Triton) not recorded" in lines[("layer_norm",)]
    assert all("→" not in line for k, line in lines.items() if k != ("geglu", "swiglu"))
