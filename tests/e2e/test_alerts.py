"""Alerts end to end: real Dagster runs into real Delta tables and DuckDB files, a real git clone,
a real webhook receiver on 127.0.0.1.

* every flagged commit regression belongs to exactly one alert (shipped data; the shared clone);
* cause by the touches_kernel rule: fused_linear_cross_entropy at 2845fe8 is `code` with 2845fe83
  its only suspect (shared clone); a synthetic clone's step is `code`, its excursion `environment`;
* a synthetic clone of the v0.7.0 era (full gh-pages history): a step whose range holds only an NPU
  backend commit is `environment` and recovered; an excursion taken back at a commit the clone does not
  hold is judged on its own range: `code`, its commit the only suspect;
* alert ids survive a rebuild; the lifecycle (open -> recovered when a new snapshot takes the step
  back) sends one message per state change, none when nothing is new, and retries a failed delivery;
* an acknowledgement survives a full rebuild of liger.duckdb.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipeline.bisect.plan import BisectOptions, PlanError, make_plan
from pipeline.cli.ack import acknowledge
from pipeline.outputs.site import render_site
from pipeline.regress.alert_state import read_state
from pipeline.store.warehouse import Warehouse
from tests.conftest import materialize
from tests.fixtures.gh_pages_repo import ERA_UNKNOWN, build_era_repo, build_suspects_repo
from tests.fixtures.shared_data import require_shared_data
from tests.fixtures.webhook import Receiver

REPO = Path(__file__).resolve().parents[2]
GH_PAGES = REPO / "data_raw" / "liger_gh_pages" / "benchmarks"
FLAGGED = "('regression', 'improvement', 'transient')"
H100 = "NVIDIA H100 80GB HBM3"


def _build(data_raw: Path, warehouse: Path, git_repo: str | Path = "") -> dg.ExecuteInProcessResult:
    result = materialize(data_raw, warehouse, git_repo=git_repo)
    assert result.success
    return result


def _open(wh: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(wh / "liger.duckdb"), read_only=True)


def assert_each_flagged_pair_in_one_alert(con) -> int:
    flagged = con.execute(f"select count(*) from commit_regressions where verdict in {FLAGGED}").fetchone()[0]
    orphans = con.execute(
        f"select count(*) from commit_regressions where verdict in {FLAGGED} and alert_id is null"
    ).fetchone()[0]
    # one member row per flagged pair (a pair in two alerts would be two rows)
    members = con.execute("select count(*) from alert_members where axis = 'commit'").fetchone()[0]
    unknown = con.execute(
        "select count(*) from commit_regressions r anti join alerts a using (alert_id) where r.alert_id is not null"
    ).fetchone()[0]
    unflagged = con.execute(
        f"select count(*) from commit_regressions where verdict not in {FLAGGED} and alert_id is not null"
    ).fetchone()[0]
    assert flagged > 0 and orphans == 0 and members == flagged and unknown == 0 and unflagged == 0
    versions = con.execute(
        f"select count(*) from sweep_regressions r anti join alerts a using (alert_id) "
        f"where r.alert_id is not null or (r.verdict in {FLAGGED} and r.alert_id is not null)"
    ).fetchone()[0]
    assert versions == 0
    assert_no_two_alerts_share_a_range(con)
    return flagged


def assert_no_two_alerts_share_a_range(con) -> None:
    """One alert per axis, GPU, direction and overlapping range (issue 54): excursions and steps of one
    range are one alert, each member with its own status."""
    overlapping = con.execute(
        "select count(*) from alert_groups a join alert_groups b on a.alert_id < b.alert_id "
        "and a.axis = b.axis and a.gpu_name = b.gpu_name and a.direction = b.direction "
        "and a.from_order < b.to_order and b.from_order < a.to_order"
    ).fetchone()[0]
    statuses = con.execute("select count(*), count(member_status) from alert_member_status").fetchone()
    assert overlapping == 0 and statuses[0] == statuses[1] > 0


def test_shipped_data_every_flagged_commit_pair_is_in_exactly_one_alert(shipped_warehouse):
    with _open(shipped_warehouse) as con:
        assert_each_flagged_pair_in_one_alert(con)
        # the 4444fdf excursion of the launch-bound forward kernels and fused_neighborhood_attention's
        # lasting step into 4444fdf share a range: one alert, recovered at 7656bcb, each member its own status
        rows = con.execute(
            "select kind, status, sweeps, kernels, recovered_at, cause, launch_bound_sweeps, line, alert_id "
            "from alerts where gpu_name = $g and from_label = '3b79375' and to_label = '4444fdf' "
            "and direction = 'regression'",
            {"g": H100},
        ).fetchall()
        members = dict(
            con.execute(
                "select member_status, count(*) from alert_member_status where alert_id = $a group by 1",
                {"a": rows[0][8]},
            ).fetchall()
        )
        no_clone = con.execute("select count(*) from alerts where axis = 'commit' and cause <> 'unknown'").fetchone()
    [alert] = rows
    assert alert[:2] == ("step", "recovered") and alert[2] >= 20 and alert[3] >= 8
    assert alert[4] == "7656bcb" and alert[6] > 0
    assert alert[7].startswith("3b79375..4444fdf on H100 80GB HBM3: ") and "slower, worst ×5." in alert[7]
    assert members["transient"] >= 40 and members["taken back"] == 1 and set(members) == {"transient", "taken back"}
    assert no_clone == (0,)  # no clone: no commit is known, so no cause is claimed


def test_alert_ids_are_the_same_after_a_full_rebuild(shipped_warehouse, tmp_path):
    from pipeline.serve.duckdb_build import build_duckdb

    with _open(shipped_warehouse) as con:
        before = con.execute("select alert_id, line from alerts order by 1").fetchall()
    local = tmp_path / "local"
    local.mkdir()
    wh = Warehouse(str(shipped_warehouse), local)
    assert build_duckdb(wh, wh.published())["mode"] == "full"  # a new local dir: built from nothing
    with duckdb.connect(str(local / "liger.duckdb"), read_only=True) as con:
        after = con.execute("select alert_id, line from alerts order by 1").fetchall()
    assert before and after == before


@pytest.fixture(scope="module")
def suspects_wh(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("alerts_suspects")
    clone = build_suspects_repo(root / "repo")
    (root / "data_raw").mkdir()
    _build(root / "data_raw", root / "wh", clone.path)
    return clone, root / "wh"


def test_a_step_whose_kernels_changed_is_code_and_an_excursion_on_unchanged_code_is_environment(suspects_wh):
    clone, wh = suspects_wh
    c = clone.commits
    with _open(wh) as con:
        assert_each_flagged_pair_in_one_alert(con)
        step = con.execute(
            "select alert_id, kernel_names, cause, suspects, status, from_commit, to_commit from alerts "
            "where kind = 'step'"
        ).fetchall()
        excursion = con.execute(
            "select kernel_names, cause, status, suspects, cause_evidence from alerts where kind = 'transient'"
        ).fetchall()
        per_kernel = dict(
            con.execute(
                "select kernel_name, kernel_changed from alert_kernels where alert_id = $a", {"a": step[0][0]}
            ).fetchall()
        )
    # rms_norm a1..a5 and geglu a1..a6 overlap: one alert; a4 and a3 touch their sources, a2/a5/a6 do not
    assert len(step) == 1
    _, kernels, cause, suspects, status, frm, to = step[0]
    assert kernels == ["geglu", "rms_norm"] and cause == "code" and status == "open"
    assert sorted(suspects) == sorted([c["a3"], c["a4"]]) and (frm, to) == (c["a1"], c["a6"])
    assert per_kernel == {"geglu": True, "rms_norm": True}
    # swiglu's one-week excursion a8 -> a9 -> a10: only rope and layer_norm changed in between
    assert len(excursion) == 1
    kernels, cause, status, suspects, evidence = excursion[0]
    assert (kernels, cause, status, suspects) == (["swiglu"], "environment", "transient", [])
    assert evidence.startswith("environment: no commit in range touches these kernels")


def test_v070_era_npu_only_step_is_environment_and_an_excursion_taken_back_at_an_unknown_commit_is_code(
    tmp_path,
):
    clone = build_era_repo(tmp_path / "repo")
    c = clone.commits
    (tmp_path / "data_raw").mkdir()
    _build(tmp_path / "data_raw", tmp_path / "wh", clone.path)
    with _open(tmp_path / "wh") as con:
        assert_each_flagged_pair_in_one_alert(con)
        rows = con.execute(
            "select kernel_names, kind, cause, suspects, status, recovered_at, from_commit, to_commit, line "
            "from alerts where direction = 'regression' and kernel_names <> ['geglu'] order by to_order"
        ).fetchall()
        flips = con.execute(
            "select status, to_label, pairs from alerts where kernel_names = ['geglu'] order by to_order"
        ).fetchall()
        faster = con.execute(
            "select kernel_names, cause, suspects, status from alerts where direction = 'improvement' "
            "and kind = 'transient'"
        ).fetchall()
    # softmax x6 at e1..e2: the range's one kernel-side commit is an Ascend NPU backend (ops/backends/)
    kernels, kind, cause, suspects, status, recovered_at, frm, to, line = rows[0]
    assert (kernels, kind, cause, suspects) == (["softmax"], "step", "environment", [])
    assert (frm, to, status, recovered_at) == (c["e1"], c["e2"], "recovered", clone.short("e5"))
    assert "environment: no commit in range touches these kernels" in line
    # flce x2.2 at e3..e4, taken back at ERA_UNKNOWN (not in the clone): judged on e3..e4 alone
    kernels, kind, cause, suspects, status, _, frm, to, line = rows[1]
    assert (kernels, kind, cause, suspects, status) == (
        ["fused_linear_cross_entropy"],
        "transient",
        "code",
        [c["e4"]],
        "transient",
    )
    assert (frm, to) == (c["e3"], c["e4"]) and f"taken back at {ERA_UNKNOWN}" in line
    assert len(rows) == 2
    # swiglu's faster week: its take-back range is unknown too, its own range touches nothing of it
    assert faster == [(["swiglu"], "environment", [], "transient")]
    # geglu up at e3, back at e4, up at ERA_UNKNOWN, back at e5: two excursions, each pair in one of them
    assert flips == [("transient", clone.short("e3"), 2), ("transient", ERA_UNKNOWN, 2)]


@pytest.fixture(scope="module")
def shared_clone_wh(tmp_path_factory) -> Path:
    """data_raw and the shared clone (liger_git: main and 28 gh-pages snapshots), built once."""
    shared = require_shared_data()
    root = tmp_path_factory.mktemp("shared_clone")
    raw = root / "data_raw"
    shutil.copytree(REPO / "data_raw", raw)
    _build(raw, root / "wh", shared / "liger_git")
    return root / "wh"


def test_shared_clone_every_flagged_pair_in_one_alert_and_2845fe8_is_code(shared_clone_wh):
    with _open(shared_clone_wh) as con:
        assert_each_flagged_pair_in_one_alert(con)
        rows = con.execute(
            "select a.cause, a.suspects, a.kernel_names, a.cause_evidence from alerts a "
            "where a.alert_id in (select alert_id from commit_regressions where kernel_name = "
            "'fused_linear_cross_entropy' and to_short_commit = '2845fe8' and verdict = 'regression')"
        ).fetchall()
        changed = con.execute(
            "select k.kernel_changed from alert_kernels k join alerts a using (alert_id) "
            "where a.to_label = '2845fe8' and k.kernel_name = 'fused_linear_cross_entropy' and a.kind = 'step'"
        ).fetchall()
        causes = {r[0] for r in con.execute("select cause from alerts where axis = 'commit'").fetchall()}
    assert len(rows) == 1
    cause, suspects, kernels, evidence = rows[0]
    # fused_linear_cpo_loss's excursion in that same range joins the alert (one alert per range): mixed,
    # 2845fe8 the only suspect, for fused_linear_cross_entropy
    assert cause == "mixed" and kernels == ["fused_linear_cpo_loss", "fused_linear_cross_entropy"]
    assert len(suspects) == 1 and suspects[0].startswith("2845fe83")
    assert evidence.startswith("mixed: code for fused_linear_cross_entropy (suspects 2845fe8); environment for ")
    assert changed == [(True,)]
    assert "environment" in causes and "unknown" not in causes  # the clone knows every range here


def test_shared_clone_a_benchmark_script_change_is_harness_not_environment(shared_clone_wh):
    """1ea9175 "fix(benchmark): move chunked loss module init out of measurements" (#643) rewrote only the
    chunked losses' benchmark scripts: the v0.6.1 memory step of dpo_loss, cpo and simpo is `harness`."""
    with _open(shared_clone_wh) as con:
        step = con.execute(
            "select cause, kernel_names, harness_suspects, suspects, line from alerts where gpu_name = $g "
            "and from_label = '5e8f12b' and to_label = '7705dcc' and direction = 'regression'",
            {"g": H100},
        ).fetchall()
        flagged = con.execute(
            "select kernel_name, harness_changed, kernel_changed from commit_regressions "
            "where to_short_commit = '7705dcc' and alert_id = $a order by 1",
            {
                "a": con.execute("select alert_id from alerts where line like '5e8f12b..7705dcc%hungrier%'").fetchone()[
                    0
                ]
            },
        ).fetchall()
        mixed = con.execute(
            "select cause_evidence from alerts where from_label = '5e8f12b' and to_label = '7705dcc' "
            "and direction = 'improvement'"
        ).fetchone()
        flce = con.execute(
            "select cause_evidence from alerts where to_label = '2845fe8' and direction = 'regression'"
        ).fetchone()
    [(cause, kernels, harness, suspects, line)] = step
    assert cause == "harness" and suspects == [] and [h[:7] for h in harness] == ["1ea9175"]
    assert kernels == ["dpo_loss", "fused_linear_cpo_loss", "fused_linear_simpo_loss"]
    assert "harness: 1ea9175 (benchmark_cpo_loss.py; benchmark_dpo_loss.py; benchmark_simpo_loss.py)" in line
    assert flagged and all(h is True and k is False for _, h, k in flagged)
    # the same range's improvements: layer_norm's source changed, the losses' harness did
    assert mixed[0].startswith("mixed: code for layer_norm (suspects ") and "; harness for dpo_loss" in mixed[0]
    # 2845fe8 changed the kernel and its script: code for it, and the line says the harness changed too
    assert "harness changed too: 2845fe8 (benchmark_fused_linear_cross_entropy.py)" in flce[0]


def _gh_pages_upto(dest: Path, last: str) -> Path:
    """data_raw with the shipped gh-pages runs up to ``last`` (commits.txt order) and nothing else."""
    folders = (GH_PAGES / "commits.txt").read_text().split()
    kept = folders[: folders.index(last) + 1]
    bench = dest / "liger_gh_pages" / "benchmarks"
    bench.mkdir(parents=True, exist_ok=True)
    for folder in kept:
        if not (bench / folder).exists():
            shutil.copytree(GH_PAGES / folder, bench / folder)
    (bench / "commits.txt").write_text("\n".join(kept) + "\n")
    return dest


def _alert(con, frm: str, to: str, kind: str = "step") -> tuple:
    return con.execute(
        "select alert_id, status, recovered_at, kernel_names from alerts where gpu_name = $g "
        "and from_label = $f and to_label = $t and direction = 'regression' and kind = $k",
        {"g": H100, "f": frm, "t": to, "k": kind},
    ).fetchone()


def test_lifecycle_messages_once_per_state_change_retry_and_ack_survives_rebuild(tmp_path, monkeypatch):
    raw, wh = _gh_pages_upto(tmp_path / "data_raw", "4444fdf"), tmp_path / "wh"
    with Receiver() as hook:
        monkeypatch.setenv("LIGER_ALERT_WEBHOOK", hook.url)
        _build(raw, wh)
        with _open(wh) as con:
            opened = _alert(con, "3b79375", "4444fdf")
            alerts = con.execute("select alert_id, status from alerts").fetchall()
        assert opened is not None and opened[1] == "open" and "fused_neighborhood_attention" in opened[3]
        first = hook.take()
        assert len(first) == len(alerts) and any(opened[0] in t and "[open]" in t for t in first)
        page = (wh / "alerts" / f"{opened[0]}.md").read_text()
        assert page.startswith("# [open] 3b79375..4444fdf on H100 80GB HBM3") and "| fused" in page

        _build(raw, wh)  # the whole job again, nothing new
        assert hook.take() == []

        # new snapshots take the step back (rope is measured again only at 81f932a): recovered, one message
        _gh_pages_upto(raw, "81f932a-v0.6.5")
        hook.status = 500  # ... but the receiver is down: the run still succeeds
        _build(raw, wh)
        state = {r["alert_id"]: r for r in read_state(str(wh)).to_pylist()}
        assert state[opened[0]]["status"] == "recovered" and state[opened[0]]["notified_status"] == "open"
        assert "HTTP 500" in state[opened[0]]["delivery_error"]
        hook.status = 200
        _build(raw, wh)  # the next run delivers what failed, once
        with _open(wh) as con:
            recovered = _alert(con, "3b79375", "4444fdf")
            changed = dict(con.execute("select alert_id, status from alerts").fetchall())
        assert recovered[:3] == (opened[0], "recovered", "7656bcb")
        texts = hook.take()
        about = [t for t in texts if opened[0] in t]
        assert len(about) == 1 and "[recovered]" in about[0] and "recovered at 7656bcb" in about[0]
        old = dict(alerts)
        # every other message is an alert that is new or changed status since the first run
        assert all(any(f"{a} [{s}]" in t for a, s in changed.items() if old.get(a) != s) for t in texts)
        _build(raw, wh)
        assert hook.take() == []

        # acknowledged by a person: one message, and it survives a full rebuild of liger.duckdb
        acknowledge(Warehouse(str(wh)), opened[0], "bench host swapped <b>GPU</b>; see #42")
        with _open(wh) as con:
            assert con.execute("select status, note from alerts where alert_id = $a", {"a": opened[0]}).fetchone() == (
                "acknowledged",
                "bench host swapped <b>GPU</b>; see #42",
            )
        (wh / "liger.duckdb").unlink()
        (wh / "liger.duckdb.state.json").unlink()
        _build(raw, wh)
        with _open(wh) as con:
            status = con.execute("select status, note from alerts where alert_id = $a", {"a": opened[0]}).fetchone()
        assert status == ("acknowledged", "bench host swapped <b>GPU</b>; see #42")
        acked = hook.take()
        assert len([t for t in acked if opened[0] in t]) == 1 and "[acknowledged]" in acked[0]
        md = (wh / "alerts" / f"{opened[0]}.md").read_text()
        assert "\\<b\\>GPU\\</b\\>" in md and "<b>" not in md  # a note is text, never markup
    assert json.loads(json.dumps(state[opened[0]]["status"])) == "recovered"


def test_a_bisect_planned_from_an_alert_takes_its_range_worst_sweep_and_suspects(suspects_wh):
    """`make bisect ALERT=<id>`: the plan's ends are the alert's, its sweep the alert's worst flagged one
    (or KERNEL's), and its candidates the alert's suspects for that kernel (one touches_kernel rule)."""
    clone, wh = suspects_wh
    with _open(wh) as con:
        alert_id, frm, to = con.execute(
            "select alert_id, from_commit, to_commit from alerts where kind = 'step'"
        ).fetchone()
        worst = con.execute(
            "select kernel_name, kernel_operation_mode, metric_name from commit_regressions where alert_id = $a "
            "order by abs(ln(ratio)) desc limit 1",
            {"a": alert_id},
        ).fetchone()
    plan = make_plan(clone.path, BisectOptions(alert=alert_id), wh / "liger.duckdb")
    assert plan["from"]["sha"].startswith(frm) and plan["to"]["sha"].startswith(to)
    assert (plan["kernel"], plan["pass"], plan["metric"]) == worst
    assert plan["alert"]["alert_id"] == alert_id
    c = clone.commits
    by_kernel = {"rms_norm": [c["a4"]], "geglu": [c["a3"]]}
    for kernel, suspects in by_kernel.items():
        planned = make_plan(clone.path, BisectOptions(alert=alert_id, kernel=kernel), wh / "liger.duckdb")
        assert planned["kernel"] == kernel
        assert [x["sha"] for x in planned["candidates"]] == suspects
    with pytest.raises(PlanError, match="no such alert"):
        make_plan(clone.path, BisectOptions(alert="A-000000000000"), wh / "liger.duckdb")


def test_the_alerts_page_shows_a_bisect_result_beside_its_alert_as_text(suspects_wh, tmp_path):
    """A result planned from an alert, and one run over its range for one of its kernels, sit in that
    alert's section of alerts.html; a subject holding markup shows as text."""
    clone, wh = suspects_wh
    local = tmp_path / "wh"
    shutil.copytree(wh, local)
    with _open(local) as con:
        alert_id, frm, to = con.execute(
            "select alert_id, from_commit, to_commit from alerts where kind = 'step'"
        ).fetchone()
    c = clone.commits
    results = {
        "20260101T000000Z-a": {"alert": {"alert_id": alert_id}, "culprit": c["a4"], "culprit_subject": "<b>tiling</b>"},
        "20260101T000000Z-b": {"alert": None, "culprit": None, "culprit_subject": None},
    }
    for folder, extra in results.items():
        (local / "bisect" / folder).mkdir(parents=True)
        body = {"outcome": "culprit" if extra["culprit"] else "not_reproduced", "kernel": "rms_norm",
                "pass": "full", "metric": "speed", "from_commit": c["a1"], "to_commit": c["a6"],
                "harness_runs": 9, "gpu": "NVIDIA H200", "ratio": {"to_over_from": 1.5}, **extra}  # fmt: skip
        (local / "bisect" / folder / "result.json").write_text(json.dumps(body))
    (local / "bisect" / "broken").mkdir()
    (local / "bisect" / "broken" / "result.json").write_text("{not json")
    page = render_site(local / "liger.duckdb")["alerts.html"].decode()
    section = page[page.index(f"id='{alert_id}'") :]
    section = section[: section.index("</section>")]
    assert section.count("<li>bisect:") == 2 and "../bisect/20260101T000000Z-a/result.md" in section
    assert f"culprit <code>{c['a4'][:12]}</code> &lt;b&gt;tiling&lt;/b&gt;" in section and "<b>tiling" not in page


def test_commit_regressions_kernel_changed_is_per_kernel(suspects_wh):
    """swiglu's excursion range holds commits that change rope and layer_norm only: the repository's
    source changed there, swiglu's did not; rms_norm's step range holds a4, which changes it."""
    clone, wh = suspects_wh
    c = clone.commits
    with _open(wh) as con:
        rows = con.execute(
            "select kernel_name, source_changed, kernel_changed from commit_regressions "
            "where verdict in ('regression', 'improvement', 'transient') and kernel_name in ('swiglu', 'rms_norm') "
            "and to_commit in ($a5, $a9) group by all order by 1",
            {"a5": c["a5"], "a9": c["a9"]},
        ).fetchall()
    assert rows == [("rms_norm", True, True), ("swiglu", True, False)]
