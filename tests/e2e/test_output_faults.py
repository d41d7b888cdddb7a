"""Issue 46, the output side, on real runs (Dagster, Delta tables, liger.duckdb) of a few shipped CSVs
plus one CSV made here:

* a finite value at the edge of the double range (near the maximum, a subnormal, a pair whose ratio
  overflows or underflows) lands, or is quarantined with its reason, and every later run still writes
  ``site/`` and the report: no rounding turns it into infinity, no JSON carries a non-finite number;
* names from the data are text in ``regressions.md`` (rendered by a CommonMark parser) and in the
  Plotly legends of ``index.html`` and ``alerts.html`` (read from the rendered SVG in Chromium);
* two clean runs of the same input, in two fresh warehouse folders, give byte-identical ``verdicts``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline.outputs.markdown import md_text
from tests.conftest import DATA_RAW, copy_data_raw, materialize
from tests.e2e.test_site_browser import Watched, browser  # noqa: F401 - the Chromium fixture
from tests.fixtures.runs import HEADER

GPU = "NVIDIA A100-SXM4-80GB"
# markup of every kind a name could smuggle: HTML, a Markdown link and emphasis, a table cell break, TeX
HOSTILE = 'a"b<c>&d <script>alert(1)</script> [x](javascript:y) **b** |p| $t$'
HOSTILE_X = 'x"<i>&amp;'
DOUBLE_MAX = 1.7976931348623157e308


def _made_csv(kernel: str, x_name: str, liger_from: float, liger_to: float) -> str:
    """One sweep of ``kernel`` at two versions, liger beside torch over three x points: torch flat,
    liger 1.5x slower, unless ``liger_from`` / ``liger_to`` are given to its every point."""
    lines = [HEADER]
    quoted = '"' + kernel.replace('"', '""') + '"'
    x_quoted = '"' + x_name.replace('"', '""') + '"'
    for version, ts, factor, extreme in (
        ("0.2.1", "2024-09-03 15:31:39", 1.0, liger_from),
        ("0.3.0", "2024-09-20 15:31:39", 1.5, liger_to),
    ):
        for provider in ("liger", "torch"):
            for x in (1024, 2048, 4096):
                p50 = 0.5 * x / 1024 * (factor if provider == "liger" else 1.0)
                quantiles = (p50, 0.99 * p50, 1.01 * p50)
                if provider == "liger" and extreme is not None:
                    quantiles = (extreme, extreme, extreme)
                p50s, p20s, p80s = (repr(q) for q in quantiles)
                lines.append(
                    f'{quoted},{provider},forward,speed,ms,{x_quoted},vocab,{x},{p50s},{p20s},{p80s},"{{""B"": 8}}",'
                    f"{GPU},{ts},{version}"
                )
    return "\r\n".join(lines) + "\r\n"


def _data_raw(dest: Path, liger_from=None, liger_to=None, kernel: str = "edge", x_name: str = "V") -> Path:
    data = copy_data_raw(dest, csv_glob="2024-09-03*.csv")
    (data / "liger_csv" / "2024-09-20_made_here.csv").write_text(_made_csv(kernel, x_name, liger_from, liger_to))
    return data


def _strict_json(text: str):
    """JSON as the standard has it: NaN and Infinity are no numbers."""

    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _embedded_json(page: Path, element_id: str):
    text = page.read_text()
    match = re.search(rf"<script type='application/json' id='{element_id}'>(.*?)</script>", text, re.S)
    assert match, (page.name, element_id)
    return _strict_json(match.group(1))


def _outputs_written(result, wh: Path) -> None:
    assert result.success, [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert result.asset_materializations_for_node("dashboard")[0].metadata["rebuilt"].value is True
    for page, element in (("index.html", "site-data"), ("alerts.html", "alert-data")):
        _embedded_json(wh / "site" / page, element)
    assert (wh / "reports" / "regressions.md").stat().st_size > 0


# (p50 of every liger point at 0.2.1, at 0.3.0; whether the row lands)
EXTREMES = {
    "double_max": (None, DOUBLE_MAX, True),  # rounded to 4 digits: 1.798e308, which is infinity
    "rounds_to_infinity": (None, 1.79765e308, True),
    "negative_double_max": (None, -DOUBLE_MAX, False),  # non_positive_value
    "subnormal_over_one": (1e-320, 1.0, True),  # the ratio overflows
    "ratio_overflows": (1e-300, 1e300, True),
    "ratio_underflows": (1e300, 1e-300, True),
    "max_over_subnormal": (5e-324, DOUBLE_MAX, True),
}


@pytest.fixture(scope="module")
def extremes_landed(tmp_path_factory) -> dict[str, tuple[int, bool]]:
    """Every extreme in one warehouse, each its own kernel (``edge_<case>``), so one set of runs serves
    them all: per case (liger rows landed with the extreme p50, whether its rows were quarantined as
    non-positive) after the first run. Every run, the first and two later ones with new files beside
    it, writes ``site/`` and the report."""
    root = tmp_path_factory.mktemp("extremes")
    data = copy_data_raw(root / "data_raw", csv_glob="2024-09-03*.csv")
    made = [_made_csv(f"edge_{case}", "V", a, b).split("\r\n", 1)[1] for case, (a, b, _) in EXTREMES.items()]
    (data / "liger_csv" / "2024-09-20_made_here.csv").write_text(HEADER + "\r\n" + "".join(made))
    wh = root / "warehouse"
    _outputs_written(materialize(data, wh, raise_on_error=False), wh)
    found = {}
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        for case, (_, liger_to, _) in EXTREMES.items():
            kernel = f"edge_{case}"
            landed = con.execute(
                "select count(*) from fact_measurement where kernel_name = $k and kernel_provider = 'liger' "
                "and p50 = $v",
                {"k": kernel, "v": liger_to},
            ).fetchone()[0]
            quarantined = con.execute(
                "select count(*) from quarantine where reason = 'non_positive_value' and starts_with(raw, $k)",
                {"k": f"{kernel},"},
            ).fetchone()[0]
            found[case] = (landed, quarantined > 0)
    # every later run: one with a new file beside it, then one more with another
    for later in ("2024-09-04*.csv", "2024-10-01*.csv"):
        for f in (DATA_RAW / "liger_csv").glob(later):
            shutil.copy(f, data / "liger_csv" / f.name)
        _outputs_written(materialize(data, wh, raise_on_error=False), wh)
    return found


@pytest.mark.parametrize("case", list(EXTREMES))
def test_an_extreme_value_never_stops_the_site_or_the_report(extremes_landed, case):
    lands = EXTREMES[case][2]
    assert extremes_landed[case] == ((3, False) if lands else (0, True))


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    """One run whose made-up sweep (a regression, so it is flagged, plotted and alerted) has a kernel
    and an x name full of markup."""
    root = tmp_path_factory.mktemp("hostile")
    data = _data_raw(root / "data_raw", kernel=HOSTILE, x_name=HOSTILE_X)
    wh = root / "warehouse"
    assert materialize(data, wh).success
    return wh


def test_the_report_shows_names_as_text(hostile_run):
    from markdown_it import MarkdownIt

    md = (hostile_run / "reports" / "regressions.md").read_text()
    assert HOSTILE not in md and "<script>" not in md and "](javascript:" not in md
    assert md_text(HOSTILE) in md  # in the flagged table, the point table, the plot's title and alt text
    assert md.count(md_text(HOSTILE)) >= 3
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    # rendered as Markdown: the name is text (escaped once for HTML), never an element, link or emphasis
    shown = HOSTILE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert shown in rendered
    assert "<script" not in rendered and "javascript:" not in rendered.replace(shown, "")
    assert "<strong>b</strong>" not in rendered and "<em>t</em>" not in rendered
    flagged = [row for row in re.findall(r"<tr>(.*?)</tr>", rendered, re.S) if shown in row]
    assert flagged, "the made-up sweep is in a table row"
    # the pipes in the name did not split its cell: every row of that table has as many cells as its head
    table = rendered[rendered.rindex("<table>", 0, rendered.index(flagged[0])) :]
    table = table[: table.index("</table>")]
    heads = len(re.findall(r"<th[ >]", table))
    assert [len(re.findall(r"<td[ >]", row)) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]] == [heads]


LEGEND_TEXTS = "(sel) => [...document.querySelectorAll(sel + ' .legendtext')].map(t => t.textContent)"


def test_plotly_legends_show_names_as_they_are(hostile_run, browser):  # noqa: F811 - the fixture
    w = Watched(browser)
    page = w.page
    w.open(hostile_run / "site" / "index.html")
    page.select_option("#f-kernel", label=HOSTILE)
    page.wait_for_function("k => document.querySelector('#sweep-title').textContent.startsWith(k)", arg=HOSTILE)
    legends = page.evaluate(LEGEND_TEXTS, "#plot")
    # exactly the names: no entity shown (`&quot;`), no tag eaten, no TeX
    assert f"{HOSTILE_X}=1024" in legends and f"{HOSTILE_X}=4096" in legends, legends
    assert not any("&quot;" in t or "&#" in t for t in legends), legends
    w.assert_clean()

    page.goto((hostile_run / "site" / "alerts.html").as_uri(), wait_until="load")  # no data-ready: no app
    page.wait_for_selector(".alert-plot .legendtext")
    alert_legends = page.evaluate(LEGEND_TEXTS, ".alert-plot")
    assert f"{HOSTILE} forward speed" in alert_legends, alert_legends
    assert page.evaluate("document.querySelectorAll('.alert-plot script, .alert-plot i').length") == 0
    w.assert_clean()
    page.close()


def _verdicts_bytes(wh: Path, out: Path) -> bytes:
    """The verdicts table exported in one total order (every column; a double as the shortest text that
    reads back as the same double), as a Parquet file's bytes would not be: its row groups follow the threads."""
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        con.execute(f"copy (select * from verdicts order by all) to '{out}' (header)")
    return out.read_bytes()


def test_two_clean_runs_of_the_same_input_give_byte_identical_verdicts(shipped_warehouse, tmp_path):
    """Every shipped input, twice, each in a fresh warehouse folder (the first is the session's shipped
    run, which no test writes to). The sweep geomeans and the reference ratios were sums of doubles in
    the threads' order: 17 of 36,532 rows differed in the last digit of a ratio."""
    second = tmp_path / "second"
    assert materialize(DATA_RAW, second).success
    exports = [_verdicts_bytes(wh, tmp_path / f"{n}.csv") for n, wh in enumerate((shipped_warehouse, second))]
    assert exports[0].count(b"\n") > 10_000
    assert hashlib.sha256(exports[0]).hexdigest() == hashlib.sha256(exports[1]).hexdigest()
