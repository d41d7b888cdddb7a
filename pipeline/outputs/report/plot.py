"""One PNG per plotted sweep: p50 with its p20-p80 band per version over x.

Left: the judged liger-family provider; middle: the reference providers
measured beside it at the same versions; right: both versions of the judged
pair divided by the "from" p50 at each x, on a linear axis, where a p20-p80
band of a few percent is still visible next to the change it is judged against. The two versions of the
verdict are drawn in blue (from) and vermillion (to), colours from the
Okabe-Ito palette that stay distinct on white and for colour-blind readers;
every other version is a thin grey line, so the pair being judged stands out (the legend names
the grey lines once per provider).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = [
    "plot_sweep",
    "Plot",
    "PlotBatch",
    "plain_text",
    "plain_log_labels",
    "FROM_COLOR",
    "TO_COLOR",
    "OTHER_COLOR",
    "PNG",
]

FROM_COLOR = "#0072B2"
TO_COLOR = "#D55E00"
OTHER_COLOR = "#8C8C8C"
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v")
_MAX_TICK_LABELS = 16
# An explicit title height: without one matplotlib measures every tick label of the axes to lift
# the title over labels on top, which these axes never have (a tenth of a plot's drawing).
TITLE_Y = 1.0
# zlib level 1: a few per cent more bytes than the default 6, and a quarter of its encoding time
PNG = {"format": "png", "facecolor": "white", "pil_kwargs": {"compress_level": 1}}


def _x_axis(points: list[dict]):
    """Position of each point on x, and the tick (position, label) list."""
    if points and all(p["x_numeric"] is not None for p in points):
        values = sorted({p["x_numeric"] for p in points})
        labels = {p["x_numeric"]: p["x_value"] for p in points}
        return (lambda p: p["x_numeric"]), [(v, str(labels[v])) for v in values], values
    categories = sorted({str(p["x_value"]) for p in points})
    index = {c: i for i, c in enumerate(categories)}
    return (lambda p: index[str(p["x_value"])]), list(enumerate(categories)), None


def _style(version: str, sweep: dict) -> tuple[str, float, float]:
    """(colour, line width, band alpha): the judged pair strong, other versions faint."""
    if version == sweep.get("to_version"):
        return TO_COLOR, 1.6, 0.30
    if version == sweep.get("from_version"):
        return FROM_COLOR, 1.6, 0.30
    return OTHER_COLOR, 0.9, 0.0


def _draw_panel(ax, subset: list[dict], sweep: dict, xpos, with_provider: bool) -> None:
    groups: dict[tuple, list[dict]] = {}
    for p in subset:
        groups.setdefault((p["kernel_provider"], p["version_rank"], p["liger_version"]), []).append(p)
    providers = sorted({k[0] for k in groups})
    greys: dict[str, list[tuple]] = {}
    judged: list[tuple] = []
    for key in sorted(groups, key=lambda k: (k[0], k[1])):
        (judged if _style(key[2], sweep)[0] != OTHER_COLOR else greys.setdefault(key[0], [])).append(key)
    # the grey history first, one line per provider (its versions apart, broken at NaN): a line per
    # version made a plot's cost grow with the history, a few hundred artists deep (bench/HISTORY.md)
    for provider, keys in greys.items():
        xs: list[float] = []
        ys: list[float] = []
        for key in keys:
            rows = sorted(groups[key], key=xpos)
            xs += [xpos(r) for r in rows] + [math.nan]
            ys += [math.nan if r["p50"] is None else r["p50"] for r in rows] + [math.nan]
        count = f"other versions ({len(keys)})" if len(keys) > 1 else keys[0][2]
        label = f"{provider} {count}" if with_provider else count
        _line(ax, xs, ys, providers.index(provider), OTHER_COLOR, 0.9, label)
    # the judged pair last, so it sits on top of the grey history
    for key in judged:
        provider, _, version = key
        rows = sorted(groups[key], key=xpos)
        xs = [xpos(r) for r in rows]
        color, lw, band_alpha = _style(version, sweep)
        _line(ax, xs, [r["p50"] for r in rows], providers.index(provider), color, lw,
              f"{provider} {version}" if with_provider else version)  # fmt: skip
        lo, hi = [r["p20"] for r in rows], [r["p80"] for r in rows]
        ax.fill_between(xs, lo, hi, color=color, alpha=band_alpha, lw=0)
        # edges keep a band visible where it is thinner than the fill's antialiasing
        ax.plot(xs, lo, color=color, lw=0.7, alpha=0.9)
        ax.plot(xs, hi, color=color, lw=0.7, alpha=0.9)


def _line(ax, xs: list, ys: list, i: int, color: str, lw: float, label: str) -> None:
    ax.plot(
        xs,
        ys,
        linestyle=_LINESTYLES[i % len(_LINESTYLES)],
        marker=_MARKERS[i % len(_MARKERS)],
        ms=3.5,
        lw=lw,
        color=color,
        label=label,
    )


def _draw_relative(ax, points: list[dict], sweep: dict, xpos) -> None:
    """The judged pair over the from-version p50 at the same x: bands and the change on one linear scale."""
    own = [p for p in points if p["is_liger"]]
    base = {p["x_value"]: p["p50"] for p in own if p["liger_version"] == sweep.get("from_version") and p["p50"]}
    for version, color, label in (
        (sweep.get("from_version"), FROM_COLOR, "from"),
        (sweep.get("to_version"), TO_COLOR, "to"),
    ):
        rows = sorted((p for p in own if p["liger_version"] == version and p["x_value"] in base), key=xpos)
        if not rows:
            continue
        xs = [xpos(r) for r in rows]
        b = [base[r["x_value"]] for r in rows]
        ax.fill_between(
            xs,
            [r["p20"] / d for r, d in zip(rows, b, strict=False)],
            [r["p80"] / d for r, d in zip(rows, b, strict=False)],
            color=color,
            alpha=0.30,
            lw=0,
        )
        ax.plot(
            xs,
            [r["p50"] / d for r, d in zip(rows, b, strict=False)],
            marker="o",
            ms=3.5,
            lw=1.6,
            color=color,
            label=f"{label} {version} (p20-p80 band)",
        )
    threshold = sweep.get("threshold")
    if threshold:
        ax.axhspan(
            1 / (1 + threshold),
            1 + threshold,
            color="#000000",
            alpha=0.06,
            lw=0,
            label=f"noise threshold ±{100 * threshold:.1f} %",
        )
    ax.axhline(1.0, color="#555555", lw=0.8)
    ax.set_title(f"relative to {sweep.get('from_version')} p50 at each x", fontsize=10, y=TITLE_Y)
    if own:
        ax.legend(fontsize=7, loc="best")


# A helper is worth its fork from a couple of plots on (one plot is a tenth of a second or more).
MIN_PLOTS_PER_HELPER = 2

# A plot is named by what it shows and by the code that draws it, so a PNG already on disk under
# that name is exactly the one drawing would give: only plots whose data (or the drawing code, *plot.py) changed
# are drawn again, and drawing is most of a report's cost (a third of a second per plot).
_DRAWING_CODE = hashlib.sha256(
    b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*plot.py")))
).hexdigest()


# A plot is named by its values to this many significant digits: far finer than a pixel, and coarse
# enough that a sum DuckDB adds up in another order (a geomean level one ulp apart) names the same plot.
NAMED_DIGITS = 12


def _shown(content: object) -> object:
    if isinstance(content, float):
        return float(f"{content:.{NAMED_DIGITS}g}")
    if isinstance(content, dict):
        return {k: _shown(v) for k, v in content.items()}
    if isinstance(content, list | tuple):
        return [_shown(v) for v in content]
    return content


def _usable_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class Plot:
    """One plot of a report: its name, and its PNG once :meth:`PlotBatch.draw` ran."""

    name: str
    png: bytes = b""


@dataclass
class PlotBatch:
    """The plots of one report, drawn together: a PNG already in ``plot_dir`` under its name is read
    back, the rest are drawn side by side, in this process and in helper processes (one per further
    core; matplotlib holds the GIL, so threads would not help). Helpers are forked: they start at
    once with matplotlib already imported, and unlike spawned ones never re-import the caller's
    ``__main__`` (a script without a main guard). They only draw and return bytes, never touching
    the parent's other threads' state (DuckDB, Dagster). Where fork is missing, one process draws."""

    plot_dir: Path
    _todo: list[tuple[Plot, Callable[..., bytes], tuple]] = field(default_factory=list)

    def add(self, stem: str, content: object, draw: Callable[..., bytes], *args: object) -> Plot:
        """The plot of ``content``; ``draw(*args)`` (a module-level function, so a helper process
        can run it) gives its PNG when none is on disk."""
        text = json.dumps(_shown(content), sort_keys=True, default=str)
        digest = hashlib.sha256(f"{_DRAWING_CODE}\n{text}".encode()).hexdigest()[:16]
        plot = Plot(f"{stem}_{digest}.png")
        try:
            plot.png = (self.plot_dir / plot.name).read_bytes()
        except FileNotFoundError:
            self._todo.append((plot, draw, args))
        return plot

    def draw(self) -> None:
        todo, self._todo = self._todo, []
        helpers = min(_usable_cores() - 1, len(todo) // MIN_PLOTS_PER_HELPER)
        if helpers < 1 or "fork" not in multiprocessing.get_all_start_methods():
            for plot, draw, args in todo:
                plot.png = draw(*args)
            return
        import matplotlib.backends.backend_agg  # noqa: F401 -- imported once, before the helpers fork
        import matplotlib.figure  # noqa: F401

        try:
            with ProcessPoolExecutor(helpers, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = [pool.submit(draw, *args) for _, draw, args in todo]
                # this process takes, from the end, every plot no helper has started: cancel() fails once it has
                for (plot, draw, args), future in zip(reversed(todo), reversed(futures), strict=True):
                    if future.cancel():
                        plot.png = draw(*args)
                for (plot, _, _), future in zip(todo, futures, strict=True):
                    if not future.cancelled():
                        plot.png = future.result()
        except BrokenProcessPool:
            # a forked helper died (a native library's state copied mid-update): what it left is drawn below
            log.warning("a plot helper died; drawing the rest in this process")
        for plot, draw, args in todo:
            if not plot.png:
                plot.png = draw(*args)


@contextmanager
def plain_text() -> Iterator[None]:
    """Every text of a plot comes from the data (a kernel named `a$b$`), so matplotlib takes it as
    plain text: no mathtext, no TeX. matplotlib is imported when a plot is drawn: a run that draws
    none does not pay for it."""
    from matplotlib import rc_context

    with rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def plain_log_labels(axis) -> None:
    """Tick labels of a log ``axis`` (ax.xaxis / ax.yaxis) as plain numbers: matplotlib's default
    labels are mathtext (``10^{1}``), which plain_text() would show as their source."""
    from matplotlib.ticker import FuncFormatter

    def minor(value: float, _pos) -> str:
        low, high = sorted(axis.get_view_interval())
        # within two decades the 2s and 5s are labelled too, else the decades alone
        return f"{value:g}" if low > 0 and high / low <= 100 and f"{value:e}"[0] in "25" else ""

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def plot_sweep(points: list[dict], sweep: dict) -> bytes:
    """PNG bytes for one sweep; ``points`` are rows of ``series_versions`` (liger provider + references)."""
    with plain_text():
        return _plot_sweep(points, sweep)


def _plot_sweep(points: list[dict], sweep: dict) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    xpos, ticks, numeric_values = _x_axis(points)
    liger = [p for p in points if p["is_liger"]]
    refs = [p for p in points if not p["is_liger"]]
    fig = Figure(figsize=(15, 4.4), dpi=80)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3)
    axes[1].sharey(axes[0])
    for ax, subset, title, with_provider in (
        (axes[0], liger, str(sweep["kernel_provider"]), False),
        (axes[1], refs, "reference providers", True),
    ):
        _draw_panel(ax, subset, sweep, xpos, with_provider)
        ax.set_title(title, fontsize=10, y=TITLE_Y)
        if subset:
            ax.legend(fontsize=7, loc="best")
        else:
            ax.text(
                0.5, 0.5, "no reference measured", ha="center", va="center", transform=ax.transAxes, color="#555555"
            )
    _draw_relative(axes[2], points, sweep, xpos)
    for ax in axes:
        ax.set_xlabel(sweep.get("x_name") or "x")
        if numeric_values and min(numeric_values) > 0 and max(numeric_values) / min(numeric_values) >= 8:
            ax.set_xscale("log", base=2)
            plain_log_labels(ax.xaxis)
        if len(ticks) <= _MAX_TICK_LABELS:
            from matplotlib.ticker import FixedLocator, NullLocator

            ax.xaxis.set_major_locator(FixedLocator([t for t, _ in ticks]))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticklabels([label for _, label in ticks], rotation=30, fontsize=7)
        ax.grid(alpha=0.3)
    values = [v for p in points for v in (p["p20"], p["p50"], p["p80"]) if v is not None]
    if values and min(values) > 0 and max(values) / min(values) >= 20:
        axes[0].set_yscale("log")
        plain_log_labels(axes[0].yaxis)
    axes[0].set_ylabel(f"{sweep['metric_name']} ({sweep.get('metric_unit') or ''}), p50 and p20-p80 band")
    fig.suptitle(
        f"{sweep['kernel_name']} / {sweep['kernel_operation_mode']} / {sweep['metric_name']} / "
        f"{sweep['gpu_name']}: {sweep['from_version']} -> {sweep['to_version']} = {sweep['verdict']}",
        fontsize=10,
    )
    # fixed margins: tight_layout measures every tick label and costs as much as drawing the figure
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.2, top=0.87, wspace=0.12)
    buf = io.BytesIO()
    fig.savefig(buf, **PNG)
    return buf.getvalue()
