"""One PNG per flagged commit sweep: its level at every benchmarked commit, one line per GPU.

x is commit order on main (ticks: the short commit, and the release under it when the commit was
benchmarked as one); y is the sweep's geomean p50 over its x points (``commits.LINES_SQL`` says how
an x point missing at one commit is kept from moving the line). The judged liger-family provider
is a solid line, each reference provider measured beside it a dashed line in the same GPU's
colour, so a machine change (both move) and a Liger change (only liger moves) look different at
a glance. Flagged pairs are shaded between their two commits, in their verdict's colour.
"""

from __future__ import annotations

import io

from pipeline.outputs.report.plot import PNG, plain_log_labels, plain_text

__all__ = ["plot_commit_trend", "GPU_COLORS", "VERDICT_COLORS", "release_label"]

# Okabe-Ito: distinct on white and for colour-blind readers
GPU_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
VERDICT_COLORS = {
    "regression": "#D55E00",
    "inconclusive": "#E69F00",
    "transient": "#8C8C8C",
    "unstable": "#CC79A7",
    "drift": "#F0E442",
    "improvement": "#009E73",
}
_REFERENCE_MARKERS = ("s", "^", "D", "v", "P")
# beyond this many benchmarked commits only every n-th tick is labelled (releases and the flagged
# pairs' commits always are)
_MAX_TICK_LABELS = 40


def release_label(release: str | None) -> str:
    """``0.6.4`` -> ``v0.6.4`` (a tag may already carry its v)."""
    if not release:
        return ""
    return release if release.lower().startswith("v") else f"v{release}"


def _tick_labels(ticks: list[dict], keep: set[int]) -> tuple[list[int], list[str]]:
    """Positions and labels; past _MAX_TICK_LABELS commits, every n-th plus releases and ``keep``."""
    step = max(1, -(-len(ticks) // _MAX_TICK_LABELS))
    positions, labels = [], []
    for i, t in enumerate(ticks):
        if i % step and not t["release"] and t["commit_order"] not in keep:
            continue
        release = release_label(t["release"])
        positions.append(t["commit_order"])
        labels.append(f"{t['short_commit']}\n{release}" if release else str(t["short_commit"]))
    return positions, labels


def _draw_lines(ax, lines: list[dict]) -> None:
    gpus = sorted({r["gpu_name"] for r in lines})
    references = sorted({r["kernel_provider"] for r in lines if not r["is_liger"]})
    series: dict[tuple, list[dict]] = {}
    for r in lines:
        series.setdefault((r["gpu_name"], not r["is_liger"], r["kernel_provider"]), []).append(r)
    for (gpu, is_reference, provider), rows in sorted(series.items()):
        rows.sort(key=lambda r: r["step_rank"])
        color = GPU_COLORS[gpus.index(gpu) % len(GPU_COLORS)]
        marker = _REFERENCE_MARKERS[references.index(provider) % len(_REFERENCE_MARKERS)] if is_reference else "o"
        ax.plot(
            [r["step_rank"] for r in rows],
            [r["level"] for r in rows],
            linestyle="--" if is_reference else "-",
            lw=1.0 if is_reference else 1.8,
            marker=marker,
            ms=3.5 if is_reference else 4.5,
            color=color,
            alpha=0.75 if is_reference else 1.0,
            label=f"{provider} · {gpu}",
        )


def _draw_marks(ax, marks: list[dict]) -> None:
    shown: set[str] = set()
    for m in marks:
        color = VERDICT_COLORS.get(m["verdict"], "#8C8C8C")
        label = None if m["verdict"] in shown else f"{m['verdict']} (flagged pair)"
        shown.add(m["verdict"])
        ax.axvspan(m["from_commit_order"], m["to_commit_order"], color=color, alpha=0.15, lw=0, label=label)


def plot_commit_trend(lines: list[dict], group: dict, ticks: list[dict], marks: list[dict]) -> bytes:
    """PNG bytes. ``lines``: (gpu_name, kernel_provider, is_liger, step_rank, level) rows;
    ``ticks``: (commit_order, short_commit, release) of the commits plotted; ``marks``: the flagged
    pairs (from_commit_order, to_commit_order, verdict)."""
    with plain_text():
        return _plot(lines, group, ticks, marks)


def _plot(lines: list[dict], group: dict, ticks: list[dict], marks: list[dict]) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, NullLocator

    fig = Figure(figsize=(14, 4.6), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    _draw_marks(ax, marks)
    _draw_lines(ax, lines)
    keep = {m[k] for m in marks for k in ("from_commit_order", "to_commit_order")}
    positions, labels = _tick_labels(ticks, keep)
    ax.xaxis.set_major_locator(FixedLocator(positions))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(labels, rotation=60, fontsize=7, ha="right")
    levels = [r["level"] for r in lines if r["level"]]
    if levels and min(levels) > 0 and max(levels) / min(levels) >= 20:
        ax.set_yscale("log")
        plain_log_labels(ax.yaxis)
    ax.set_xlabel("benchmarked commit, in commit order on main")
    ax.set_ylabel(f"{group['metric_name']} ({group.get('metric_unit') or ''}), geomean p50 over x")
    ax.grid(alpha=0.3)
    if lines:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.text(0.5, 0.5, "no commit measured", ha="center", va="center", transform=ax.transAxes, color="#555555")
    fig.suptitle(
        f"{group['kernel_name']} / {group['kernel_provider']} / {group['kernel_operation_mode']} / "
        f"{group['metric_name']} / {group.get('x_name') or ''} by commit",
        fontsize=10,
    )
    # fixed margins: tight_layout measures every tick label and costs as much as drawing the figure
    fig.subplots_adjust(left=0.07, right=0.78, bottom=0.27, top=0.9)
    buf = io.BytesIO()
    fig.savefig(buf, **PNG)
    return buf.getvalue()
