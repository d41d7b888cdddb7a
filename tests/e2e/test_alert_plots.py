"""The alert pages' plots on the commit axis, in commit order (issue 53): on the shipped data every
commit-axis alert's figure names its categories in `commit_order` (main's first-parent order), each
line runs through them in that order, and no release-only label sits among the commits."""

from __future__ import annotations

import json
import re

from pipeline.common.duck import open_readonly
from pipeline.outputs.site import render_site


def _figures(page: str) -> dict:
    found = re.search(r"<script type='application/json' id='alert-data'>(.*?)</script>", page, re.S)
    return json.loads(found.group(1))


def test_every_commit_alert_plot_is_in_commit_order(shipped_warehouse):
    page = render_site(shipped_warehouse / "liger.duckdb")["alerts.html"].decode()
    figures = _figures(page)
    with open_readonly(shipped_warehouse / "liger.duckdb") as con:
        order = {
            sha[:8]: o
            for sha, o in con.execute(
                "select benchmarked_commit, min(commit_order) from sweep_points "
                "where benchmarked_commit is not null group by 1"
            ).fetchall()
        }
        axes = dict(con.execute("select alert_id, axis from alerts").fetchall())
    plotted = [i for i in figures if axes[i] == "commit"]
    assert len(plotted) >= 5
    for alert_id in plotted:
        fig = figures[alert_id]
        keys = [order.get(label.split(" ")[0]) for label in fig["order"]]
        assert None not in keys, (alert_id, fig["order"])  # commits only: no release-only label
        assert keys == sorted(keys) and len(set(keys)) == len(keys), (alert_id, fig["order"])
        for trace in fig["traces"]:
            at = [fig["order"].index(label) for label in trace["x"]]
            assert at == sorted(at), (alert_id, trace["name"], trace["x"])
        if fig["range"]:
            assert fig["order"].index(fig["range"][0]) < fig["order"].index(fig["range"][1])
    assert "categoryarray: fig.order" in page
