"""issue 55, confirm by itself: a warehouse run that opens a regression alert gets one bisect plan in
<warehouse>/bisect/queue/ from the sensor; with autorun, a Dagster run confirms and bisects it on the
CPU harness (tests/fixtures/bisect_repo.py, values computed from the code with seeded noise),
ingests the runs and delivers the result once to a real webhook receiver on 127.0.0.1."""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
import duckdb

from pipeline.bisect import queue
from pipeline.config import load
from pipeline.defs.bisect_queue import bisect_queue_job, bisect_queue_sensor
from pipeline.defs.resources import WarehouseResource
from tests.conftest import materialize
from tests.fixtures import bisect_repo, bisect_warehouse
from tests.fixtures.runs import run_env
from tests.fixtures.webhook import Receiver


def _setup(tmp: Path, monkeypatch, **env: str) -> tuple[bisect_repo.BisectRepo, WarehouseResource]:
    """A repo with a x1.3 planted at one of six candidates, the warehouse's history of base and k5
    (x1.3 apart: a regression alert), the environment a warehouse process reads."""
    repo = bisect_repo.build(tmp / "repo", factor=1.3)
    (tmp / "raw").mkdir()
    bisect_warehouse.flagged_history(tmp / "raw", repo)
    for key, value in run_env(tmp / "raw", tmp / "wh", tmp / "dh", LIGER_GIT_REPO=str(repo.path), **env).items():
        monkeypatch.setenv(key, value)
    resource = WarehouseResource(data_raw=str(tmp / "raw"), warehouse=str(tmp / "wh"), git_repo=str(repo.path))
    assert materialize(tmp / "raw", tmp / "wh", git_repo=repo.path).success
    return repo, resource


def _tick(resource: WarehouseResource, instance: dg.DagsterInstance, cursor: str | None = None):
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"warehouse": resource})
    return bisect_queue_sensor(context)


def _entries(wh: Path) -> list[dict]:
    return [e for _, e in queue.entries(wh)]


def test_a_run_that_opens_an_alert_queues_one_plan_and_a_second_run_none(tmp_path, monkeypatch):
    repo, resource = _setup(tmp_path, monkeypatch)
    wh, instance = tmp_path / "wh", dg.DagsterInstance.ephemeral()
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        (alert_id,) = con.execute("select alert_id from alerts where status = 'open'").fetchone()
    first = _tick(resource, instance)
    (entry,) = _entries(wh)
    plan = entry["plan"]
    assert (entry["alert_id"], entry["state"], plan["alert"]["alert_id"]) == (alert_id, "queued", alert_id)
    assert (plan["from"]["sha"], plan["to"]["sha"]) == (repo.commits["base"], repo.commits["k5"])
    assert plan["kernel"] == "toyop" and plan["confirm"] and len(plan["candidates"]) == 6
    assert first.run_requests == []  # no GPU host configured: the queue waits
    page = (wh / "alerts" / f"{alert_id}.md").read_text()
    assert f"- bisect: **queued** plan `{plan['id'].replace('_', chr(92) + '_')}`" in page
    assert "`make bisect-queue` on a GPU host runs it" in page

    # the same tick again, and a second warehouse run (base measured again): nothing more is queued
    assert isinstance(_tick(resource, instance, first.cursor), dg.SkipReason)
    bisect_warehouse.write_run(tmp_path / "raw", repo.commits["base"], "again", bisect_warehouse.kernel_rows(1.0))
    assert materialize(tmp_path / "raw", wh, git_repo=repo.path).success
    second = _tick(resource, instance, first.cursor)
    assert [e["alert_id"] for e in _entries(wh)] == [alert_id], _entries(wh)
    assert second.run_requests == [] and "opened no alert" in second.skip_reason.skip_message
    assert isinstance(_tick(resource, instance, None), dg.SkipReason | dg.SensorResult)  # a new sensor: no cursor
    assert len(_entries(wh)) == 1
    # the dashboard built by that run shows the plan on the alert's page
    alerts_page = (wh / "site" / "alerts.html").read_text()
    assert "bisect plan <strong>queued</strong>" in alerts_page and "make bisect-queue" in alerts_page

    # `make bisect-queue` with a harness that cannot start: tried, retried once, then failed with its reason
    monkeypatch.setenv("LIGER_BENCH_PYTHON", str(tmp_path / "no-such-python"))
    assert queue.drain(load()) == 1
    (entry,) = _entries(wh)
    assert entry["state"] == "failed" and entry["attempts"] == 2
    assert "harness_failed" in entry["reason"] and "cannot start" in entry["reason"]
    assert "bisect: **failed**" in (wh / "alerts" / f"{alert_id}.md").read_text()
    assert queue.drain(load()) == 0  # nothing queued is left


def test_one_gpu_job_at_a_time(tmp_path, monkeypatch):
    repo, resource = _setup(tmp_path, monkeypatch, LIGER_BISECT_LOCK_TIMEOUT_S="1")
    _tick(resource, dg.DagsterInstance.ephemeral())
    with queue.gpu_lock(tmp_path / "wh", timeout_s=1):  # another bisect holds the GPU
        assert queue.drain(load()) == 3
    (entry,) = _entries(tmp_path / "wh")
    assert entry["state"] == "queued" and entry["attempts"] == 0


def test_autorun_confirms_bisects_ingests_and_delivers_once(tmp_path, monkeypatch):
    with Receiver() as hook:
        env = {"LIGER_BISECT_AUTORUN": "1", "LIGER_BENCH_PYTHON": sys.executable, "LIGER_ALERT_WEBHOOK": hook.url}
        repo, resource = _setup(tmp_path, monkeypatch, **env)
        wh, instance = tmp_path / "wh", dg.DagsterInstance.ephemeral()
        hook.take()  # the alert's own message
        (request,) = _tick(resource, instance).run_requests
        run = bisect_queue_job.execute_in_process(
            run_config=request.run_config, resources={"warehouse": resource}, instance=instance, tags=request.tags
        )
        assert run.success
        (entry,) = _entries(wh)
        result, planted = entry["result"], repo.commits["planted"]
        assert entry["state"] == "done" and entry["attempts"] == 1 and entry["delivered_at"] and entry["ingested_at"]
        assert (result["outcome"], result["culprit"]) == ("culprit", planted)
        (text,) = [t for t in hook.take() if "[bisect]" in t]
        assert text.startswith(f"Liger alert {entry['alert_id']} [bisect]: confirmed on CPU (test) (×1.3")
        assert f"culprit {planted[:7]} planted:" in text
        # ingested: every run the bisect made is a run of its commit in the warehouse
        with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
            runs = con.execute("select count(*) from benchmark_snapshot where origin = 'bisect'").fetchone()[0]
        written = list((wh / "bisect").rglob("all_benchmark_data.csv"))
        assert len(written) >= 8 and runs == 2 + len(written)  # the history's two, then each of the bisect's
        assert "culprit `" + planted[:12] in (wh / "alerts" / f"{entry['alert_id']}.md").read_text()
        # once: draining the queue, or the job again, sends nothing more
        assert queue.drain(load()) == 0
        assert bisect_queue_job.execute_in_process(
            run_config=request.run_config, resources={"warehouse": resource}, instance=instance
        ).success
        assert [t for t in hook.take() if "[bisect]" in t] == []
