"""Issue 20 case 9: text from the data (kernel, provider, GPU, x values, versions) reaches matplotlib
as plain text. A `$...$` in a kernel name used to make mathtext raise, and no report was written."""

from __future__ import annotations

from pipeline.analyze.report.plot import plot_sweep

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
