"""gh-pages snapshots on the real Liger-Kernel clone (the shared data's liger_git, or LIGER_REAL_GIT_REPO);
skipped when it is absent. Figures asserted are what the commit graph says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.history import commits as history
from pipeline.ingest import gh_pages as gp
from tests.fixtures.shared_data import shared_data

SHARED = shared_data()
REAL = Path(os.environ.get("LIGER_REAL_GIT_REPO") or (SHARED / "liger_git" if SHARED else "liger_git-not-found"))
DATA_RAW_PAGES = Path(__file__).resolve().parents[3] / "data_raw" / "liger_gh_pages"

pytestmark = pytest.mark.skipif(
    not (REAL / "objects").is_dir() and not (REAL / ".git").exists(), reason=f"no real Liger-Kernel clone at {REAL}"
)

# snapshot folders in commit order (main's first-parent chain), with first-parent commits from the previous one
EXPECTED = [
    ("b6ed735", None),
    ("c1bdc24", 3),
    ("0701bab", 3),
    ("d47751c", 2),
    ("08906d3", 4),
    ("02bac05", 8),
    ("5e8f12b", 3),
    ("7705dcc", 18),
    ("2845fe8", 4),
    ("77a4c1a", 9),
    ("1c07943", 22),
    ("c856fba", 7),
    ("33924d2", 2),
    ("d5648bf-v0.6.3", 4),
    ("a80f30b", 2),
    ("817436f", 7),
    ("4c32ab6", 1),
    ("0a62700-v0.6.4", 7),
    ("0a62700", 0),
    ("3d075fd", 3),
    ("49e6353", 3),
    ("6059dfb", 5),
    ("5101e3c", 11),
    ("3b79375", 18),
    ("4444fdf", 11),
    ("7656bcb", 5),
    ("81f932a-v0.6.5", 3),
    ("1fdb668", 2),
]


@pytest.fixture(scope="module")
def found() -> gp.Discovery:
    return gp.discover_git(REAL)


@pytest.fixture(scope="module")
def ordered(found) -> list[history.OrderedSnapshot]:
    return history.order_snapshots(found.snapshots, REAL, found.commits_txt)


@pytest.fixture(scope="module")
def ranges(ordered) -> list[history.CommitRange]:
    return history.commit_ranges(REAL, ordered)


def test_28_snapshots_on_gh_pages(found):
    assert len(found.snapshots) == 28 and found.problems == []
    assert len(found.commits_txt) == 28


def test_same_snapshots_as_data_raw(found):
    if not DATA_RAW_PAGES.is_dir():
        pytest.skip("data_raw/liger_gh_pages not shipped")
    local = gp.discover_folder(DATA_RAW_PAGES)
    assert {s.snapshot_id for s in local.snapshots} == {s.snapshot_id for s in found.snapshots}
    assert local.commits_txt == found.commits_txt


def test_commit_order_and_commits_between(ordered):
    assert [(r.folder, r.commits_between) for r in ordered] == EXPECTED
    assert {r.order_source for r in ordered} == {"git"}
    assert all(r.on_first_parent for r in ordered)
    assert all(len(r.commit) == 40 and r.commit.startswith(r.short_commit) for r in ordered)


def test_v062_release_benchmarked_after_a_newer_commit(ordered):
    by = {r.folder: r for r in ordered}
    old, new = by["77a4c1a"], by["1c07943"]
    assert old.order_index < new.order_index  # by the graph ...
    assert old.run_started_at > new.run_started_at  # ... though it ran four days later
    assert new.commits_between == 22
    assert (old.release, old.release_source) == ("0.6.2", "tag")


def test_0a62700_benchmarked_twice(ordered):
    runs = [r for r in ordered if r.short_commit == "0a62700"]
    assert [r.folder for r in runs] == ["0a62700-v0.6.4", "0a62700"]
    assert len({r.commit for r in runs}) == 1 and runs[1].commits_between == 0
    assert [(r.release, r.release_source) for r in runs] == [("0.6.4", "folder"), ("0.6.4", "tag")]


def test_releases(ordered):
    got = {r.folder: r.release for r in ordered if r.release}
    assert got == {
        "7705dcc": "0.6.1",
        "77a4c1a": "0.6.2",
        "d5648bf-v0.6.3": "0.6.3",
        "0a62700-v0.6.4": "0.6.4",
        "0a62700": "0.6.4",
        "81f932a-v0.6.5": "0.6.5",
    }


def test_ranges_and_reruns(ordered, ranges):
    folder = {r.snapshot_id: r.folder for r in ordered}
    assert len(ranges) == 27
    # on a linear history, the range holds exactly the first-parent commits counted
    assert [len(r.commits) for r in ranges] == [b for _, b in EXPECTED[1:]]
    reruns = [(folder[r.from_snapshot], folder[r.to_snapshot], len(r.commits)) for r in history.find_reruns(ranges)]
    assert reruns == [
        ("b6ed735", "c1bdc24", 3),
        ("0701bab", "d47751c", 2),
        ("02bac05", "5e8f12b", 3),
        ("0a62700-v0.6.4", "0a62700", 0),
    ]
    readme = next(r for r in ranges if folder[r.to_snapshot] == "5e8f12b")
    assert all(not c.kernel_paths for c in readme.commits)


def test_suspects_for_tiled_mlp(ordered, ranges):
    folder = {r.snapshot_id: r.folder for r in ordered}
    rng = next(r for r in ranges if folder[r.to_snapshot] == "4c32ab6")
    assert [c.subject for c in history.suspects(rng, "tiled_swiglu")] == ["Add TiledMLP Implementation (#935)"]
    assert history.suspects(rng, "tvd") == []
