"""Issue 20 case 9: text from the data (kernel, provider, GPU, x values, versions) reaches matplotlib
as plain text. A `$...$` in a kernel name used to make mathtext raise, and no report was written."""

from __future__ import annotations

from pipeline.outputs.report.plot import plot_sweep

HOSTILE = r"evil_$\frac{1}{$_kernel $x^$ \undefinedcommand"


def _point(provider: str, version: str, rank: int, x: float, p50: float, is_liger: bool) -> dict:
    return {
        "kernel_provider": provider,
        "liger_version": version,
        "version_rank": rank,
        "x_value": f"{x:g}$",
        "x_numeric": x,
        "p20": p50 * 0.9,
        "p50": p50,
        "p80": p50 * 1.1,
        "is_liger": is_liger,
    }


def test_plot_with_a_hostile_kernel_name_is_written():
    points = [
        _point(prov, ver, rank, x, p50 * (1 + 0.1 * rank), liger)
        for prov, liger in ((HOSTILE, True), ("$torch$", False))
        for rank, ver in enumerate(("0.1.$0", "0.2.$1"))
        for x, p50 in ((1024, 1.0), (2048, 2.0), (4096, 4.0))
    ]
    sweep = {
        "kernel_name": HOSTILE,
        "kernel_operation_mode": "$forward",
        "kernel_provider": HOSTILE,
        "metric_name": "speed$",
        "metric_unit": "$ms",
        "gpu_name": "NVIDIA $A100$ \\",
        "x_name": "$V",
        "from_version": "0.1.$0",
        "to_version": "0.2.$1",
        "verdict": "regression",
        "threshold": 0.05,
    }
    png = plot_sweep(points, sweep)
    assert png.startswith(b"\x89PNG")


def test_commit_trend_with_hostile_names_and_two_gpus_is_written():
    from pipeline.outputs.report.trend_plot import plot_commit_trend

    lines = [
        {"gpu_name": gpu, "kernel_provider": prov, "is_liger": liger, "step_rank": step, "level": level * (1 + step)}
        for gpu, level in (("NVIDIA $A100$ \\", 1.0), ("$H100$", 40.0))  # a y range wide enough for a log axis
        for prov, liger in ((HOSTILE, True), ("$torch$", False))
        for step in range(4)
    ]
    ticks = [{"commit_order": i, "short_commit": f"abc{i}$", "release": "0.$1" if i == 2 else None} for i in range(4)]
    marks = [{"from_commit_order": 1, "to_commit_order": 2, "verdict": "regression"}]
    group = {
        "kernel_name": HOSTILE,
        "kernel_provider": HOSTILE,
        "kernel_operation_mode": "$forward",
        "metric_name": "speed$",
        "metric_unit": "$ms",
        "x_name": "$V",
    }
    assert plot_commit_trend(lines, group, ticks, marks).startswith(b"\x89PNG")


def test_the_grey_history_is_one_legend_row_per_provider():
    """Versions outside the judged pair are drawn alike in grey, so the legend names them once per
    provider (with their count); a provider with a single grey version keeps its version's name."""
    from matplotlib.figure import Figure

    from pipeline.outputs.report.plot import _draw_panel

    versions = ("0.1", "0.2", "0.3", "0.4", "0.5")
    points = [
        _point(prov, ver, rank, x, 1.0 + rank, False)
        for prov, kept in (("torch", versions), ("triton", versions[2:]))
        for rank, ver in enumerate(versions)
        if ver in kept
        for x in (1024, 2048)
    ]
    sweep = {"from_version": "0.4", "to_version": "0.5"}
    ax = Figure().subplots()
    _draw_panel(ax, points, sweep, lambda p: p["x_numeric"], with_provider=True)
    labels = ax.get_legend_handles_labels()[1]
    assert labels == [
        "torch other versions (3)",
        "triton 0.3",
        "torch 0.4",
        "torch 0.5",
        "triton 0.4",
        "triton 0.5",
    ]
