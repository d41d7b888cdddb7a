"""gh-pages snapshots on a synthetic clone (tests/fixtures/gh_pages_repo.py): discovery, commit/release
resolution, ordering and its fallbacks, commit ranges, touches_kernel, re-runs, bad folder names."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from pipeline.history import commits as history
from pipeline.history.paths import touches_kernel
from pipeline.ingest import gh_pages as gp
from tests.fixtures.gh_pages_repo import GhPagesRepo, build_gh_pages_repo


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> GhPagesRepo:
    return build_gh_pages_repo(tmp_path_factory.mktemp("gh_pages") / "repo")


@pytest.fixture(scope="module")
def found(clone) -> gp.Discovery:
    return gp.discover_git(clone.path)


@pytest.fixture(scope="module")
def ordered(clone, found) -> list[history.OrderedSnapshot]:
    return history.order_snapshots(found.snapshots, clone.path, found.commits_txt)


def _folders(rows) -> list[str]:
    return [r.folder for r in rows]


# --- folder names ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sha", "release"),
    [
        ("0a62700", "0a62700", None),
        ("0a62700-v0.6.4", "0a62700", "0.6.4"),
        ("81f932a-v0.6.5rc1", "81f932a", "0.6.5rc1"),
        ("0a62700752e8592c0bf16916d1e4dbf598cee8c1", "0a62700752e8592c0bf16916d1e4dbf598cee8c1", None),
    ],
)
def test_good_folder_names(name, sha, release):
    parsed, reason = gp.parse_folder_name(name)
    assert reason is None
    assert (parsed.short_sha, parsed.release, parsed.folder) == (sha, release, name)


@pytest.mark.parametrize(
    "name",
    [
        "latest",
        "abc123",
        "0A62700",
        "0a62700-0.6.4",
        "0a62700-v",
        "0a62700-vfoo",
        "0a62700-v0.6.4-extra",
        "g0a6270",
        "0" * 41,
        "",
        " 0a62700",
        "commits.txt",
    ],
)
def test_bad_folder_names_give_a_reason(name):
    parsed, reason = gp.parse_folder_name(name)
    assert parsed is None and reason


# --- discovery ------------------------------------------------------------------------------------------------


def test_every_blob_of_every_gh_pages_commit_once(clone, found):
    # 8 runs in 8 gh-pages commits; the c2 folder was overwritten, so it yields two snapshots
    assert len(found.snapshots) == 8
    assert len({s.snapshot_id for s in found.snapshots}) == 8
    c2 = [s for s in found.snapshots if s.folder == clone.short("c2")]
    assert [s.gh_pages_commit for s in c2] == [clone.gh_pages[1], clone.gh_pages[4]]
    assert [s.gh_pages_committed_at for s in c2] == [datetime(2025, 1, 4, 1), datetime(2025, 1, 12, 1)]
    assert len({s.blob for s in c2}) == 2
    assert all(s.source == "git" and s.path is None for s in found.snapshots)
    assert found.problems == [("latest", found.problems[0][1])]
    assert found.commits_txt[-1] == "deadbee" and len(found.commits_txt) == 8


def test_blob_cache_and_run_facts(clone, tmp_path):
    found = gp.discover_git(clone.path, blob_cache=tmp_path / "cache")
    s = next(s for s in found.snapshots if s.folder == clone.short("c1"))
    assert s.path == tmp_path / "cache" / f"{s.blob}.csv"
    assert gp.git_blob_sha(s.path.read_bytes()) == s.blob
    assert s.run_started_at == datetime(2025, 1, 3)  # the min timestamp, not the first row's
    assert s.gpu_names == ("NVIDIA H100 80GB HBM3",)


def test_folder_discovery_matches_the_branch_tip(clone, found, tmp_path):
    pages = clone.export_pages(tmp_path / "pages")
    local = gp.discover_folder(pages)
    assert gp.discover_folder(pages / "benchmarks").snapshots == local.snapshots
    tip_ids = {s.snapshot_id for s in found.snapshots if s.gh_pages_commit != clone.gh_pages[1]}
    assert {s.snapshot_id for s in local.snapshots} == tip_ids  # same ids: content-addressed
    assert local.commits_txt == found.commits_txt
    assert [p[0] for p in local.problems] == ["latest"]


def test_no_branch_no_snapshots(tmp_path):
    from tests.fixtures.gh_pages_repo import git

    git(tmp_path, "init", "-q", "-b", "main")
    assert gp.discover_git(tmp_path).snapshots == []
    with pytest.raises(gp.GitError):
        gp.discover_git(tmp_path / "nope")


# --- resolution -----------------------------------------------------------------------------------------------


def test_full_sha_resolution(clone, ordered):
    by = {r.folder: r for r in ordered}
    assert by[clone.short("c7")].commit == clone.commits["c7"]
    assert by[clone.short("c7")].short_commit == clone.short("c7")
    assert by["deadbee"].commit == "deadbee"  # not in the clone: the short sha stays
    assert by["deadbee"].committed_at is None and by["deadbee"].subject is None
    assert by[clone.short("c7")].subject == "swiglu: fix"
    assert by[clone.short("c7")].committed_at == datetime(2025, 1, 9, 12)


def test_release_from_suffix_then_tag(clone, ordered):
    rel = {(r.folder, r.blob): (r.release, r.release_source) for r in ordered}
    by = {r.folder: (r.release, r.release_source) for r in ordered}
    assert by[f"{clone.short('c6')}-v0.2.0"] == ("0.2.0", "folder")
    assert by[clone.short("c6")] == ("0.2.0", "tag")  # annotated tag, peeled
    assert by[clone.short("c1")] == ("0.1.0", "tag")  # lightweight tag
    assert by[clone.short("c7")] == (None, None)
    assert len(rel) == 8


# --- ordering -------------------------------------------------------------------------------------------------


def test_git_graph_beats_run_time(clone, ordered):
    s = clone.short
    assert _folders(ordered) == [s("c1"), s("c2"), s("c2"), s("f1"), f"{s('c6')}-v0.2.0", s("c6"), s("c7"), "deadbee"]
    assert [r.order_index for r in ordered] == list(range(8))
    assert [r.order_source for r in ordered] == ["git"] * 7 + ["timestamp"]
    # the two runs of c2 (overwritten folder) go by run time
    assert [r.run_started_at.day for r in ordered[1:3]] == [4, 12]
    # first-parent commits between consecutive snapshots; f1 counts at its merge m5 (chain index 5)
    assert [r.commits_between for r in ordered] == [None, 1, 0, 3, 1, 0, 1, None]
    assert [r.on_first_parent for r in ordered] == [True, True, True, False, True, True, True, None]


def test_commits_txt_fallback(found):
    rows = history.order_snapshots(found.snapshots, None, found.commits_txt)
    assert {r.order_source for r in rows} == {"commits.txt"}
    assert all(r.commits_between is None and r.commit == r.folder.split("-")[0] for r in rows)
    # commits.txt is the order written (run order): the c2 folder appears once in position 2, its runs by time
    assert [r.run_started_at.day for r in rows] == [3, 4, 12, 10, 11, 13, 14, 15]


def test_commits_txt_partial_inserts_by_run_time(found):
    txt = [f for f in found.commits_txt if f != "deadbee"]
    rows = history.order_snapshots(found.snapshots, None, txt)
    assert rows[-1].folder == "deadbee" and rows[-1].order_source == "timestamp"


def test_timestamp_fallback(found):
    rows = history.order_snapshots(found.snapshots)
    assert {r.order_source for r in rows} == {"timestamp"}
    assert [r.run_started_at.day for r in rows] == [3, 4, 10, 11, 12, 13, 14, 15]


def test_bare_clone_without_refs_folder_is_read_through_a_shim(clone, tmp_path):
    import shutil
    import subprocess

    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--mirror", str(clone.path), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "pack-refs", "--all"], check=True)
    shutil.rmtree(bare / "refs")
    found = gp.discover_git(bare)
    assert len(found.snapshots) == 8


# --- commit ranges, touches_kernel, re-runs ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ranges(clone, ordered) -> list[history.CommitRange]:
    return history.commit_ranges(clone.path, ordered)


def test_commit_ranges(clone, ranges):
    c = clone.commits
    got = [[h.sha for h in r.commits] for r in ranges]
    assert got == [
        [c["c2"]],  # c1..c2
        [],  # c2..c2 (folder overwritten: same commit)
        [c["f1"], c["c3"]],  # c2..f1: the branch commit and its base on main
        [c["c6"], c["m5"], c["c4"]],  # f1..c6
        [],  # c6-v0.2.0..c6
        [c["c7"]],  # c6..c7
    ]  # deadbee is not placed by the graph: no range
    f1 = ranges[2].commits[0]
    assert f1.kernel_paths == ("src/liger_kernel/ops/rms_norm.py",) and f1.first_parent is False
    assert ranges[3].commits[1].kernel_paths == ()  # a merge carries no files of its own
    assert ranges[0].commits[0].subject == "README typo"


def test_suspects_by_kernel(ranges):
    f1_range, c6_range, c7_range = ranges[2], ranges[3], ranges[5]
    assert [h.subject for h in history.suspects(f1_range, "rms_norm")] == ["rms_norm on a branch"]
    assert [h.subject for h in history.suspects(f1_range, "swiglu")] == ["swiglu: new kernel"]
    assert [h.subject for h in history.suspects(c6_range, "layer_norm")] == ["layer_norm fix"]
    assert history.suspects(c6_range, "rms_norm") == []
    assert [h.subject for h in history.suspects(c7_range, "swiglu")] == ["swiglu: fix"]  # transformers/swiglu.py
    assert history.suspects(c7_range, "geglu") == []


def test_reruns(clone, ordered, ranges):
    reruns = history.find_reruns(ranges)
    by_id = {r.snapshot_id: r.folder for r in ordered}
    pairs = [(by_id[r.from_snapshot], by_id[r.to_snapshot], len(r.commits)) for r in reruns]
    s = clone.short
    assert pairs == [(s("c1"), s("c2"), 1), (s("c2"), s("c2"), 0), (f"{s('c6')}-v0.2.0", s("c6"), 0)]


@pytest.mark.parametrize(
    ("paths", "kernel", "expected"),
    [
        (["src/liger_kernel/ops/rms_norm.py"], "rms_norm", True),
        (["src/liger_kernel/transformers/rms_norm.py"], "rms_norm", True),
        (["src/liger_kernel/ops/rms_norm.py"], "fused_add_rms_norm", True),
        (["src/liger_kernel/ops/rms_norm.py"], "layer_norm", False),
        (["src/liger_kernel/ops/utils.py"], "geglu", True),  # shared
        (["src/liger_kernel/utils.py"], "tvd", True),  # shared
        (["src/liger_kernel/ops/cross_entropy.py"], "fused_linear_cross_entropy", True),
        (["src/liger_kernel/ops/fused_linear_cross_entropy.py"], "cross_entropy", False),
        (["src/liger_kernel/ops/fused_linear_jsd.py"], "jsd", False),
        (["src/liger_kernel/chunked_loss/cpo_loss.py"], "fused_linear_cpo_loss", True),
        (["src/liger_kernel/chunked_loss/fused_linear_preference.py"], "dpo_loss", True),  # family base
        (["src/liger_kernel/chunked_loss/fused_linear_preference.py"], "swiglu", False),
        (["src/liger_kernel/ops/grpo_loss.py"], "fused_linear_grpo_loss_token", True),
        (["src/liger_kernel/ops/tiled_mlp.py"], "tiled_geglu", True),  # alias
        (["src/liger_kernel/chunked_loss/cosine_similarity_loss.py"], "distill_cosine_loss", True),  # alias
        (["src/liger_kernel/ops/dyt.py"], "dyt_beta=False", True),  # config suffix dropped
        (["src/liger_kernel/ops/multi_token_attention.py"], "sparse_multi_token_attention", True),
        (["src/liger_kernel/transformers/model/llama.py"], "rms_norm", False),
        (["src/liger_kernel/ops/backends/_ascend/ops/softmax.py"], "softmax", False),  # another device's
        (["src/liger_kernel/ops/backends/_ascend/ops/__init__.py"], "rms_norm", False),
        (["src/liger_kernel/ops/cutile/ops/jsd.py"], "jsd", True),  # a CUDA DSL beside the defaults
        (["src/liger_kernel/chunked_loss/README.md"], "dpo_loss", False),
        (["README.md", "test/transformers/test_rms_norm.py"], "rms_norm", False),  # outside src/liger_kernel/
        ([], "rms_norm", False),
        (["src/liger_kernel/ops/utils.py"], "", False),
    ],
)
def test_touches_kernel(paths, kernel, expected):
    assert touches_kernel(paths, kernel) is expected


def test_pure_module_has_no_dagster():
    src = Path(gp.__file__).read_text()
    assert "dagster" not in src.lower().replace("no dagster", "")
