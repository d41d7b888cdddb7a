"""The dashboard's payload builder and pages on a tiny hand-made DuckDB file (tests/fixtures/site.py)."""

from __future__ import annotations

import html
import json
import math
import re

import pytest

from pipeline.common.duck import open_readonly
from pipeline.outputs.site import build_payload, payload_json, write_site
from pipeline.outputs.site.pages import release_file_name
from pipeline.outputs.site.payload import sig4
from tests.fixtures.site import HOSTILE_KERNEL, HOSTILE_REASON, VERSIONS, build_site_db

EXTERNAL_LOAD = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def _payload(tmp_path, **kwargs) -> dict:
    db = build_site_db(tmp_path / "site.duckdb", **kwargs)
    with open_readonly(db) as con:
        return build_payload(con).payload


def _sweep(p: dict, kernel: str, provider: str) -> int:
    s = p["s"]
    return next(i for i, r in enumerate(p["sweeps"]) if s["kernel"][r[0]] == kernel and s["provider"][r[1]] == provider)


_FIELDS = ("kernel", "provider", "mode", "metric", "gpu", "xname", "config")


def _points(p: dict, sid: int) -> list[tuple]:
    """Sweep ``sid``'s points on the window as the page assembles them from the blocks (dashboard.js,
    assemblePoints): (x value, axis label, p20, p50, p80) in x order (numeric, none last, then text),
    then axis order."""
    s, first = p["s"], p["axis"]["first"]
    key = [s[f][code] for f, code in zip(_FIELDS, p["sweeps"][sid], strict=False)]
    found = []
    for block in map(json.loads, p["blocks"]):
        if key not in block["k"]:
            continue
        flat = block["p"][block["k"].index(key)]
        for i in range(0, len(flat), 5):
            (x, numeric), at = block["x"][flat[i]], flat[i + 1]
            if at >= first:
                found.append(((numeric is None, numeric or 0, x), at, x, *flat[i + 2 : i + 5]))
    return [(x, p["axis"]["label"][at - first], *values) for _, at, x, *values in sorted(found)]


def test_sig4():
    assert sig4(0.0012345678) == 0.001235
    assert sig4(1234.5678) == 1235
    assert sig4(12345678.9) == 12350000
    assert sig4(None) is None and sig4(float("nan")) is None and sig4(float("inf")) is None
    assert sig4(2.0) == 2 and isinstance(sig4(2.0), int)


@pytest.mark.parametrize("value", [1.7976931348623157e308, 1.79765e308, 1.7975e308, -1.7976931348623157e308])
def test_sig4_never_rounds_a_finite_value_to_infinity(value):
    """4 digits of the double maximum are 1.798e308, which is no double: the value is cut to the largest
    4-digit double of its sign instead, in Python and in SQL alike (issue 46, case 4)."""
    import duckdb

    from pipeline.outputs.site.payload import SIG4_MAX, sig4_sql

    assert sig4(value) == math.copysign(SIG4_MAX, value)
    assert duckdb.connect().execute(f"select {sig4_sql('$v')}", {"v": value}).fetchone()[0] == sig4(value)
    assert sig4(5e-324) == 5e-324 and sig4(1e-320) == 1e-320  # subnormals round within range


def test_payload_json_writes_no_non_finite_number():
    """A ratio of two finite values may overflow: JSON gets null (a gap), never NaN or Infinity."""
    text = payload_json({"a": [1.5, float("inf"), {"b": float("-inf"), "c": (float("nan"), 2)}], "s": "<x>"})
    assert json.loads(text) == {"a": [1.5, None, {"b": None, "c": [None, 2]}], "s": "<x>"}


def test_payload_by_version(tmp_path):
    p = _payload(tmp_path)
    assert p["axis"]["mode"] == "version"
    assert p["axis"]["label"] == list(VERSIONS) == p["versions"]  # PEP 440, not text order
    s = p["s"]
    # dictionary-encoded: each string once, sweeps hold indexes
    assert s["kernel"].count(HOSTILE_KERNEL) == 1 and len(p["sweeps"]) == 4
    liger = _sweep(p, HOSTILE_KERNEL, "liger")
    torch = _sweep(p, HOSTILE_KERNEL, "torch")
    assert p["sweeps"][liger][-1] == 1 and p["sweeps"][torch][-1] == 0
    pts = _points(p, liger)
    # x points numerically (256 before 1024), versions in order; p20/p50/p80 rounded to 4 digits
    assert [x for x, *_ in pts] == ["256"] * 3 + ["1024"] * 3
    assert [v for _, v, *_ in pts[:3]] == list(VERSIONS)
    assert pts[0][2:] == (0.2844, 0.316, 0.3477)
    # 0.10.0 had two liger runs: median p50, envelope band, runs counted at the newest point
    assert pts[2][2:] == (
        sig4(0.9 * 1.5 * 0.0012345678 * 256),
        sig4(1.55 * 0.0012345678 * 256),
        sig4(1.1 * 1.6 * 0.0012345678 * 256),
    )
    assert p["runs"][liger] == 2
    plain = _sweep(p, "plain", "liger")
    assert p["runs"][plain] == 2
    # verdicts with their evidence, newest first
    cmp = [c for c in p["cmp"] if c[0] == liger]
    assert [s["verdict"][c[3]] for c in cmp] == ["regression", "unchanged"]
    newest = cmp[0]
    assert (newest[1], newest[2]) == (1, 2)
    assert newest[4] == 1.235 and newest[7] == 0.0689
    assert s["reason"][newest[13]] == HOSTILE_REASON and s["refs"][newest[12]] == "torch"
    assert p["suspects"] is None


def test_payload_json_is_safe_in_a_script_element(tmp_path):
    p = _payload(tmp_path)
    text = payload_json(p)
    assert "<" not in text and ">" not in text and "&" not in text
    # the blocks of points are spliced in as the JSON they are
    assert json.loads(text) == p | {"blocks": [json.loads(b) for b in p["blocks"]]}
    assert text.startswith('{"v":2,"generated":')  # compact separators


def test_payload_by_commit_when_measurements_have_commits(tmp_path):
    p = _payload(tmp_path, commits=True)
    assert p["axis"]["mode"] == "commit"
    # versions without a commit are their version's point; commits in commit_order within their version
    assert p["axis"]["label"] == ["0.1.0", "0.2.0", "aaaaaaaa (v0.10.0)", "bbbbbbbb (v0.10.0)"]
    assert p["axis"]["ver"] == [0, 1, 2, 2]
    pts = _points(p, _sweep(p, HOSTILE_KERNEL, "liger"))
    assert [v for x, v, *_ in pts if x == "256"] == p["axis"]["label"]
    # one run per commit: no median across the two commits of 0.10.0
    assert pts[2][3] == sig4(1.5 * 0.0012345678 * 256) and pts[3][3] == sig4(1.6 * 0.0012345678 * 256)
    # the verdicts stay per version pair
    assert {(c[1], c[2]) for c in p["cmp"]} == {(0, 1), (1, 2)}


def test_suspects_hook(tmp_path):
    p = _payload(tmp_path, commits=True, suspects=True)
    sus = p["suspects"]
    assert sus["keys"] == ["kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "gpu_name"]
    assert sus["cols"] == ["commit", "score", "why"]
    liger = _sweep(p, HOSTILE_KERNEL, "liger")
    assert sus["by_sweep"] == {str(liger): [0]}
    assert sus["rows"][0][5:] == ["bbbbbbbbbbbb2", 0.8765, "touched <rms_norm.py>"]


@pytest.mark.parametrize("commits", [False, True])
def test_write_site_escapes_and_loads_nothing_external(tmp_path, commits):
    db = build_site_db(tmp_path / "site.duckdb", commits=commits, suspects=True)
    index = write_site(db, tmp_path / "site")
    out = index.parent
    from plotly.offline import get_plotlyjs

    # the script plotly.py itself gives (read here without importing plotly)
    assert (out / "plotly.min.js").read_bytes() == get_plotlyjs().encode()
    assert sorted(f.name for f in out.glob("release-*.html")) == sorted(release_file_name(v) for v in VERSIONS)
    for page in out.glob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "<b>beyond" not in text and "<bf16>" not in text, page.name
        assert not EXTERNAL_LOAD.search(text), page.name
        assert "http" not in text, page.name
    index_text = index.read_text()
    assert index_text.count("<script src='plotly.min.js'></script>") == 1
    release = (out / release_file_name("0.10.0")).read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in release
    assert "regression" in release and "index.html#s=" in release
    # the rows are written column by column (polars): each cell as the per-value Python rules write it
    with open_readonly(db) as con:
        ratio, threshold, reason, runs = con.execute(
            "select geomean_ratio, threshold, reason, to_runs from sweep_regressions where verdict = 'regression'"
        ).fetchone()
    assert f"<td>×{ratio:.3f}</td>" in release and f"<td>±{100 * threshold:.1f}%</td>" in release
    assert f"<td class='reason'>{html.escape(reason, quote=True)}</td>" in release and f"/ {runs}</td>" in release
    assert "<span class='badge' style='background:#d62728'>regression</span>" in release
    assert "first version of the series" in (out / release_file_name("0.1.0")).read_text()
    # a second build replaces the files; a release gone from the warehouse loses its page
    (out / "release-9.9.9.html").write_text("stale")
    write_site(db, out)
    assert not (out / "release-9.9.9.html").exists()


def test_release_file_names_are_safe_and_distinct():
    assert release_file_name("0.8.5") == "release-0.8.5.html"
    odd = [release_file_name(v) for v in ("1.0+a/b", "1.0+a_b", "../x")]
    assert len(set(odd)) == 3 and all(re.fullmatch(r"release-[A-Za-z0-9._-]+\.html", n) for n in odd)
    assert all("/" not in n for n in odd)


def test_sig4_sql_gives_sig4s_doubles():
    """The points are rounded in SQL (sig4_sql), everything else in Python (sig4): the same rule, the
    same doubles, on awkward values and on a spread of random ones."""
    import random

    import duckdb

    from pipeline.outputs.site.payload import sig4_sql

    rng = random.Random(4)
    values = [0.0012345678, 1234.5678, 12345678.9, 2.0, 0.5, 1e-9, 9.9995, 99995.0, 0.00012345, -3.14159, 1.2345e300]
    values += [rng.uniform(0, 10) * 10 ** rng.randint(-8, 9) for _ in range(20_000)]
    values += [rng.randint(1, 10**9) / 8 for _ in range(2_000)]  # ties in binary: x.125, x.5, x.875
    con = duckdb.connect()
    con.execute("create table v (i bigint, x double)")
    con.executemany("insert into v values (?, ?)", list(enumerate(values)))
    con.execute("insert into v values (-1, 'nan'::double), (-2, 'inf'::double), (-3, null)")
    got = dict(con.execute(f"select i, {sig4_sql('x')} from v").fetchall())
    assert got[-1] is None and got[-2] is None and got[-3] is None
    wrong = [(v, got[i], sig4(v)) for i, v in enumerate(values) if got[i] != sig4(v)]
    assert wrong == []


@pytest.mark.parametrize("commits", [False, True])
def test_a_warehouse_without_points_is_an_empty_dashboard(tmp_path, commits):
    """No measurement plotted yet (every row filtered out, or none): no sweep, no point, no error."""
    import duckdb

    db = build_site_db(tmp_path / "site.duckdb", commits=commits)
    with duckdb.connect(str(db)) as con:
        for table in ("series_versions", "sweep_points", "sweep_regressions", "version_coverage"):
            if con.execute("select count(*) from duckdb_tables() where table_name = ?", [table]).fetchone()[0]:
                con.execute(f"delete from {table}")
    with open_readonly(db) as con:
        p = build_payload(con).payload
    assert p["sweeps"] == [] and p["blocks"] == [] and p["runs"] == [] and p["cmp"] == []
    assert write_site(db, tmp_path / "site").exists()


@pytest.mark.parametrize("commits", [False, True])
def test_a_deep_history_shows_the_newest_axis_points(tmp_path, commits):
    """A history deeper than the page's window (issue 47): the newest points of the axis, the versions they
    hold re-indexed, the pairs judged at those versions; nothing of the older points on the page."""
    db = build_site_db(tmp_path / "site.duckdb", commits=commits)
    with open_readonly(db) as con:
        whole = build_payload(con).payload
        data = build_payload(con, axis_points=2)
    p = data.payload
    assert p["axis"]["label"] == whole["axis"]["label"][-2:] and p["axis"]["of"] == len(whole["axis"]["label"])
    assert data.window.cut and (data.window.shown, data.window.of) == (2, len(whole["axis"]["label"]))
    kept = sorted({whole["versions"][v] for v in whole["axis"]["ver"][-2:]}, key=VERSIONS.index)
    assert p["versions"] == kept == [p["versions"][v] for v in sorted(set(p["axis"]["ver"]))]
    liger = _sweep(p, HOSTILE_KERNEL, "liger")
    assert _points(p, liger) == [pt for pt in _points(whole, _sweep(whole, HOSTILE_KERNEL, "liger"))
                                 if pt[1] in p["axis"]["label"]]  # fmt: skip
    assert {p["versions"][c[2]] for c in p["cmp"]} <= set(kept)
    assert set(data.comparisons["to_version"]) <= set(kept)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIGER_DASHBOARD_AXIS_POINTS", "2")
        index = write_site(db, tmp_path / "site")
    assert sorted(f.name for f in index.parent.glob("release-*.html")) == sorted(map(release_file_name, kept))
    assert f"the newest 2 of {len(whole['axis']['label'])}" in index.read_text()


@pytest.mark.parametrize("commits", [False, True])
def test_blocks_of_points_are_encoded_once(tmp_path, monkeypatch, commits):
    """A block of axis points is encoded once and read back while its rows stay (issue 57): a second
    build encodes nothing; a point moved at one axis point re-encodes that block alone, and the page
    shows the moved value."""
    import duckdb

    from pipeline.outputs.site import points

    monkeypatch.setattr(points, "POINT_BLOCK", 1)  # a block per axis point, so one can change alone
    db = build_site_db(tmp_path / "site.duckdb", commits=commits)
    cache = tmp_path / "cache"
    with open_readonly(db) as con:
        first = build_payload(con, cache=cache).payload
    kept = {f.name: f.stat().st_mtime_ns for f in cache.glob("*.json")}
    assert len(kept) == len(first["axis"]["label"]) == len(first["blocks"])
    with open_readonly(db) as con:
        again = build_payload(con, cache=cache).payload
    assert again["blocks"] == first["blocks"]
    assert {f.name: f.stat().st_mtime_ns for f in cache.glob("*.json")} == kept

    table, axis = ("sweep_points", "axis_key") if commits else ("series_versions", "version_rank")
    with duckdb.connect(str(db)) as con:
        newest = con.execute(f"select max({axis}) from {table} where kernel_name = 'plain'").fetchone()[0]
        con.execute(f"update {table} set p50 = 7.5 where kernel_name = 'plain' and {axis} = ?", [newest])
    with open_readonly(db) as con:
        moved = build_payload(con, cache=cache).payload
    now = {f.name for f in cache.glob("*.json")}
    assert len(now - set(kept)) == 1 and len(set(kept) - now) == 1  # one block re-encoded, its old one gone
    plain = _sweep(moved, "plain", "liger")
    assert [pt[3] for pt in _points(moved, plain) if pt[1] == moved["axis"]["label"][-1]] == [7.5] * len(
        [pt for pt in _points(first, plain) if pt[1] == first["axis"]["label"][-1]]
    )
    with open_readonly(db) as con:
        fresh = build_payload(con).payload  # no cache: every block encoded
    assert fresh["blocks"] == moved["blocks"]


def test_unchanged_pages_are_not_written_again(tmp_path):
    """A page whose bytes are the same is left as it is (a deep history's release pages, run after run);
    one that differs on disk is written again."""
    db = build_site_db(tmp_path / "site.duckdb")
    index = write_site(db, tmp_path / "site")
    pages = sorted(index.parent.glob("release-*.html"))
    assert pages
    before = {p.name: p.stat().st_mtime_ns for p in pages}
    pages[0].write_text("tampered")
    tampered = pages[0].stat().st_mtime_ns
    write_site(db, tmp_path / "site")
    after = {p.name: p.stat().st_mtime_ns for p in sorted(index.parent.glob("release-*.html"))}
    assert after.keys() == before.keys()
    assert all(after[n] == before[n] for n in before if n != pages[0].name)
    assert after[pages[0].name] != tampered and "tampered" not in pages[0].read_text()
