"""`make site`: a static, interactive dashboard of the published warehouse (no server needed).

    from pipeline.outputs.site import write_site
    index = write_site("warehouse/liger.duckdb", "warehouse/site")   # -> warehouse/site/index.html

Writes into ``out_dir``:

* ``index.html`` -- the explorer (kernel, pass, metric, GPU, provider, x/config and reference
  selects; each change rebuilds one Plotly figure with ``Plotly.react`` from the embedded payload):
  a sweep's p50 per x point over benchmarked commits (``sweep_points``; over versions from
  ``series_versions`` in a file without it) with its p20-p80 band, the reference provider dashed,
  the sweep's verdicts from ``sweep_regressions`` with their evidence, suspects from
  ``commit_suspects`` when that view exists;
  a per-GPU overview of every liger-family sweep (latest change, verdict, runs); the releases;
* ``release-<version>.html`` -- per release: coverage, what moved (flagged verdicts with evidence),
  what was compared and unchanged, what was not compared and why;
* ``alerts.html`` -- every alert, one line each, its sweeps plotted on one figure
  (``alerts_page.py``); ``index.html`` leads with the newest of them;
* ``plotly.min.js`` -- Plotly for offline use, written once beside the pages;
* ``.points/`` -- the blocks of the explorer's points, each kept while its rows stay (``points.py``).

Pure Python, no Dagster. Opens ``liger.duckdb`` read-only; every file is written aside and renamed.

"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

from pipeline.common.duck import open_readonly
from pipeline.common.files import write_atomic
from pipeline.config import duckdb_path, load, warehouse_dir
from pipeline.outputs.report.queries import coverage_by_version

from .alerts_page import ALERTS_PAGE, alerts_html, index_lead_html
from .bisect_results import read_queue, read_results
from .pages import PLOTLY_FILE, _head, index_html, release_file_name, release_html, release_rows
from .payload import SiteData, build_payload, payload_json

__all__ = ["POINTS_CACHE", "SiteData", "build_payload", "payload_json", "render_site", "write_site"]

INDEX = "index.html"
# the blocks of the explorer's points, kept beside the pages from run to run (points.py)
POINTS_CACHE = ".points"


def plotly_js() -> bytes:
    """The plotly.min.js plotly.py bundles (`plotly.offline.get_plotlyjs()`'s text, as bytes), read from
    the installed package without importing it: the run needs the file, not plotly.offline's imports."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("plotly is not installed")
    return (Path(spec.origin).parent / "package_data" / "plotly.min.js").read_bytes()


def _write_changed(target: Path, data: bytes) -> None:
    """``data`` into ``target`` unless it holds them already: most release pages of a deep history are
    the same from run to run, and reading one back costs less than writing it."""
    if not target.exists() or target.stat().st_size != len(data) or target.read_bytes() != data:
        write_atomic(target, data)


def _write_plotly(out_dir: Path) -> None:
    _write_changed(out_dir / PLOTLY_FILE, plotly_js())


def render_site(
    duckdb_path: str | os.PathLike, remote_root: str | None = None, cache: Path | None = None
) -> dict[str, bytes]:
    """Every page of the dashboard by file name (the release pages, then ``index.html``), rendered
    from the published ``liger.duckdb``; writes nothing but the blocks of points it encodes into
    ``cache`` (`points.py`; None: every block is encoded)."""
    with open_readonly(duckdb_path, remote_root) as con:
        data = build_payload(con, load().dashboard_axis_points, cache)
        shown = set(data.versions)
        coverage = [c for c in coverage_by_version(con) if c.version is None or c.version in shown]
        # alerts lead: a page of their own and the first lines of index.html
        # the pipeline passes the warehouse's URI, a plain path when local: only object storage has no folder
        folder = None if remote_root and "://" in remote_root else Path(duckdb_path).parent / "bisect"
        bisects, queued = read_results(folder), read_queue(folder)
        alerts_page = alerts_html(con, data, _head("Liger-Kernel alerts"), PLOTLY_FILE, bisects, queued)
        alerts_lead = index_lead_html(con)
    by_version = {c.version: c for c in coverage}
    newest = next((c for c in coverage if c.version is not None), None)
    headline = newest.regressions_line() if newest else "No Liger version measured yet."
    rows = release_rows(data)
    pages = {
        release_file_name(version): release_html(data, version, by_version.get(version), rows[version]).encode()
        for version in data.versions
    }
    pages[ALERTS_PAGE] = alerts_page.encode()
    pages[INDEX] = index_html(data, coverage, headline, Path(duckdb_path).name, alerts_lead).encode()
    return pages


def write_site(
    duckdb_path: str | os.PathLike, out_dir: str | os.PathLike, pages: dict[str, bytes] | None = None
) -> Path:
    """Build the dashboard from the published ``liger.duckdb``, or write ``pages`` (`render_site` of
    it); returns the path of ``index.html``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = pages if pages is not None else render_site(duckdb_path, cache=out_dir / POINTS_CACHE)
    _write_plotly(out_dir)
    for name, body in pages.items():
        _write_changed(out_dir / name, body)
    for stale in out_dir.glob("release-*.html"):
        if stale.name not in pages:
            stale.unlink(missing_ok=True)
    return out_dir / INDEX


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m pipeline.outputs.site",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--db", default=str(duckdb_path()), help="the published liger.duckdb")
    ap.add_argument("--out", default=str(warehouse_dir() / "site"), help="output folder (default warehouse/site)")
    args = ap.parse_args(argv)
    return publish_site(args.db, args.out)


def publish_site(db: str | None = None, out: str | None = None) -> int:
    """Write the dashboard and say where (`liger-bench site`, `make site`); 2 when there is no warehouse."""
    db, out = db or str(duckdb_path()), out or str(warehouse_dir() / "site")
    if not Path(db).exists():
        print(f"site: {db} does not exist: run `make run` first", file=sys.stderr)
        return 2
    started = time.perf_counter()
    index = write_site(db, out)
    seconds = time.perf_counter() - started
    pages = sorted(index.parent.glob("*.html"))
    total = sum(p.stat().st_size for p in pages)
    plotly_size = (index.parent / PLOTLY_FILE).stat().st_size
    print(
        f"site:   {index}  ({index.stat().st_size / 1024:,.0f} KiB; {len(pages) - 1} release pages, "
        f"{total / 1024:,.0f} KiB of HTML in all; {PLOTLY_FILE} {plotly_size / 1024:,.0f} KiB) in {seconds:.1f} s"
    )
    return 0
