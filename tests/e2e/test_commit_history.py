"""Commit history end to end: a small synthetic clone whose gh-pages branch benchmarks commits out of
commit order, overwrites a folder and benchmarks one commit twice (tests/fixtures/gh_pages_repo.py),
ingested by a real Dagster run; the order, releases and the commits between come out of the
warehouse. A second clone carries verdicts (build_suspects_repo): a lasting step, a step across a
snapshot that skips the kernel, a one-week excursion; its regressions, their suspect commits, the
closing summary and the report are read back."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipeline.cli.summary import regression_lines
from tests.conftest import materialize
from tests.fixtures.gh_pages_repo import SUSPECT_GPU, GhPagesRepo, build_gh_pages_repo, build_suspects_repo


def _build(data_raw, warehouse, git_repo="") -> duckdb.DuckDBPyConnection:
    assert materialize(data_raw, warehouse, git_repo=git_repo).success
    return duckdb.connect(str(warehouse / "liger.duckdb"), read_only=True)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return build_gh_pages_repo(tmp_path_factory.mktemp("clone") / "repo")


def test_the_commit_graph_orders_snapshots_and_names_commits(clone, tmp_path):
    raw = tmp_path / "data_raw"
    raw.mkdir()
    con = _build(raw, tmp_path / "wh", clone.path)
    order = con.execute(
        "select short_commit, release, order_source, run_started_at from benchmark_snapshot order by commit_order"
    ).fetchall()
    shorts = [o[0] for o in order]
    c = clone.short
    # c6 ran after c7 (2025-01-11 vs 2025-01-10) but comes before it in commit order; f1 (merged by
    # m5) sorts before the merge, so before c6; the commit the clone lacks goes by its run time.
    assert shorts.index(c("c1")) < shorts.index(c("c2")) < shorts.index(c("f1")) < shorts.index(c("c6"))
    assert shorts.index(c("c6")) < shorts.index(c("c7"))
    assert {o[2] for o in order if o[0] != "deadbee"} == {"git"}
    # one commit benchmarked twice: two runs of one commit, the release from the folder and the tag
    c6 = con.execute("select runs, release from benchmark_commit where commit = ?", [clone.commits["c6"]]).fetchone()
    assert c6 == (2, "0.2.0")
    # the folder of c2 was overwritten by a later gh-pages commit: both runs are kept
    assert con.execute("select runs from benchmark_commit where short_commit = ?", [c("c2")]).fetchone() == (2,)
    facts = con.execute(
        "select benchmarked_commit, commit_status, count(*) from measurements group by all order by all"
    ).fetchall()
    assert (clone.commits["c6"], "resolved", 4) in facts  # 2 runs x 2 rows
    assert ("deadbee", "short", 2) in facts


def test_commits_between_and_which_kernel_they_touch(clone, tmp_path):
    raw = tmp_path / "data_raw"
    raw.mkdir()
    con = _build(raw, tmp_path / "wh", clone.path)
    rows = con.execute(
        "select commit, subject, touches_kernel_of from commit_change where to_commit = ? order by committed_at",
        [clone.commits["c7"]],
    ).fetchall()
    assert [r[0] for r in rows] == [clone.commits["c7"]]
    assert rows[0][2] == ["swiglu"]  # transformers/swiglu.py is swiglu's source, not rms_norm's
    readme_only = con.execute(
        "select kernel_changed from benchmark_snapshot where short_commit = ? order by run_started_at",
        [clone.short("c2")],
    ).fetchall()
    assert readme_only[0] == (False,)  # c1..c2 changes only the README: a re-run for the kernels


def test_without_a_clone_commits_txt_orders_a_folder_laid_out_like_upstreams(clone, tmp_path):
    raw = tmp_path / "data_raw"
    clone.export_pages(raw / "liger_gh_pages")
    con = _build(raw, tmp_path / "wh")
    order = con.execute(
        "select folder, commit_status, order_source from benchmark_snapshot order by commit_order"
    ).fetchall()
    assert {o[1] for o in order} == {"short"} and {o[2] for o in order} == {"commits.txt"}
    folders = [o[0] for o in order]
    # commits.txt is the order the folders were written: c7's run before c6's release run
    assert folders.index(clone.short("c7")) < folders.index(f"{clone.short('c6')}-v0.2.0")
    unknown = con.execute("select count(*) from measurements where commit_status = 'unknown'").fetchone()
    assert unknown == (0,)


# -- regressions per commit, their suspects, the summary and the report ----------------------------------
@pytest.fixture(scope="module")
def suspects(tmp_path_factory) -> tuple[GhPagesRepo, Path]:
    root = tmp_path_factory.mktemp("suspects")
    clone = build_suspects_repo(root / "repo")
    raw = root / "data_raw"
    raw.mkdir()
    _build(raw, root / "wh", clone.path).close()
    return clone, root / "wh"


def _open(wh: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(wh / "liger.duckdb"), read_only=True)


def _pairs(con, kernel: str) -> list[tuple[str, str, str]]:
    return con.execute(
        "select from_commit, to_commit, verdict from commit_regressions where kernel_name = ? order by to_commit_order",
        [kernel],
    ).fetchall()


def test_commit_order_is_mains_first_parent_order_not_the_gh_pages_order(suspects):
    clone, wh = suspects
    c = clone.commits
    with _open(wh) as con:
        by_commit = [r[0] for r in con.execute("select commit from benchmark_commit order by commit_order").fetchall()]
        by_run = [r[0] for r in con.execute("select commit from benchmark_snapshot order by run_started_at").fetchall()]
    assert by_commit == [c[n] for n in ("a1", "a5", "a6", "a8", "a9", "a10")]
    assert by_run.index(c["a8"]) < by_run.index(c["a6"])  # a6 was benchmarked after a8, a newer commit


def test_a_lasting_step_is_a_regression_and_its_suspects_are_exactly_the_commits_of_its_range(suspects):
    clone, wh = suspects
    c = clone.commits
    with _open(wh) as con:
        rms = _pairs(con, "rms_norm")
        geglu = _pairs(con, "geglu")
        rows = con.execute(
            """select s.kernel_name, s."commit", s.touches_kernel, s.subject
               from commit_suspects as s
               join commit_regressions as r using (kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                   gpu_name, x_name, extra_config, from_commit, to_commit)
               where r.verdict = 'regression'"""
        ).fetchall()
        unjoined = con.execute("select count(*) from commit_suspects").fetchone()[0]
    assert rms[0] == (c["a1"], c["a5"], "regression") and {v for *_, v in rms[1:]} == {"unchanged"}
    # a5's snapshot does not measure geglu: its step is judged a1 -> a6, across two commit ranges
    assert geglu[0] == (c["a1"], c["a6"], "regression") and {v for *_, v in geglu[1:]} == {"unchanged"}
    assert len(rows) == unjoined  # every suspect names its regression by the sweep key
    suspects_of = {
        k: {commit: touches for kernel, commit, touches, _ in rows if kernel == k} for k in ("rms_norm", "geglu")
    }
    # git range semantics: after from, up to and including to; only the commit that changed the
    # kernel's own file touches it (a5 changed a benchmark script, a6 swiglu.py)
    assert suspects_of["rms_norm"] == {c["a2"]: False, c["a3"]: False, c["a4"]: True, c["a5"]: False}
    assert suspects_of["geglu"] == {c["a2"]: False, c["a3"]: True, c["a4"]: False, c["a5"]: False, c["a6"]: False}


def test_a_one_week_excursion_the_next_commit_takes_back_is_transient(suspects):
    clone, wh = suspects
    c = clone.commits
    with _open(wh) as con:
        swiglu = _pairs(con, "swiglu")
        listed = con.execute("select count(*) from commit_suspects where kernel_name = 'swiglu'").fetchone()[0]
    assert swiglu[-2:] == [(c["a8"], c["a9"], "transient"), (c["a9"], c["a10"], "transient")]
    assert {v for *_, v in swiglu[:-2]} == {"unchanged"}
    assert listed == 0  # suspects are listed for regressions only


def test_the_closing_summary_names_each_regression_newest_first(suspects):
    clone, wh = suspects
    with _open(wh) as con:
        lines = regression_lines(con)
    by_commit = lines[lines.index("regressions by commit: 2 (newest first; commit_regressions)") + 1 :][:2]
    # kernel, pass, metric, GPU, commit range, ratio; geglu's step ends at a6, newer than rms_norm's a5
    assert by_commit == [
        f"  geglu forward speed on {SUSPECT_GPU}: {clone.short('a1')}..{clone.short('a6')} ×1.600",
        f"  rms_norm forward speed on {SUSPECT_GPU}: {clone.short('a1')}..{clone.short('a5')} ×1.500",
    ]
    assert "regressions by version: none (sweep_regressions)" in lines


def test_the_report_leads_with_alerts_then_the_commit_trends_then_the_suspect_commits(suspects):
    clone, wh = suspects
    html = (wh / "reports" / "regressions.html").read_text()
    headings = re.findall(r"<h2[^>]*>(.*?)</h2>", html)
    assert re.fullmatch(r"Alerts \(\d+, \d+ open; newest first\)", headings[0])
    assert headings[1:4] == [
        "Per-commit trend of flagged sweeps",
        "Suspect commits of the commit regressions",
        "Newest version",
    ]
    trends = re.findall(r"<figure id='trend-(\d+)'><h3>(.*?)</h3><ul>(.*?)</ul>.*?<img [^>]*src='data:image/png", html)
    assert [(n, h.split(" / ")[0]) for n, h, _ in trends] == [
        ("1", "#1 geglu"),
        ("2", "#2 rms_norm"),
        ("3", "#3 swiglu"),
    ]
    swiglu_pairs = trends[2][2]
    assert f"transient on {SUSPECT_GPU}: {clone.short('a9')}..{clone.short('a10')} (v0.6.5) ×0.526" in swiglu_pairs
    table = re.search(r'<table id="suspect-commits">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    rows = [r.replace("<wbr>", "") for r in re.findall(r"<tr>(.*?)</tr>", table, re.S)]
    assert len(rows) == 9  # 5 commits of geglu's range, 4 of rms_norm's
    culprit = next(r for r in rows if f"<code>{clone.short('a4')}</code>" in r and "<td>rms_norm</td>" in r)
    assert 'class="touches-true">yes</td>' in culprit and "2025-02-05" in culprit
    # a commit subject is data: escaped, never markup
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    md = (wh / "reports" / "regressions.md").read_text()
    assert md.index("## Per-commit trend") < md.index("## Suspect commits") < md.index("## Newest version")
