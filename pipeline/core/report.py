"""Regression report: markdown + self-contained HTML with one plot per flagged sweep.

``write_report(db_path, out_dir)`` opens the warehouse read-only, reads the
regression views and writes ``regressions.html`` (PNG plots embedded as
base64), ``regressions.md`` (plots referenced from ``plots/``) into
``out_dir``. Every file is written aside and renamed into place. Returns
summary numbers for Dagster metadata. Pure: no Dagster imports.

Flagged sweeps are those whose verdict is ``regression``, ``improvement`` or
``drift``; each gets a plot: p50 over x with the p20-p80 band for every version
of the liger provider, and beside it the reference providers (torch,
huggingface, ...) measured at the same versions.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import os
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from . import duck

__all__ = ["write_report", "plot_sweep", "FLAGGED_VERDICTS"]

FLAGGED_VERDICTS = ("regression", "improvement", "drift")
_VERDICT_ORDER = {"regression": 0, "drift": 1, "improvement": 2, "insufficient": 3, "unchanged": 4}

_SWEEP_KEYS = (
    "kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name",
    "gpu_name", "x_name", "extra_config",
)


def _records(con, sql: str, params: Iterable | None = None) -> list[dict]:
    cur = con.execute(sql, list(params or []))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _slug(sweep: dict) -> str:
    text = "|".join(str(sweep.get(k)) for k in (*_SWEEP_KEYS, "from_version", "to_version"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() else "_" for c in f"{sweep['kernel_name']}_{sweep['kernel_operation_mode']}_{sweep['metric_name']}")
    return f"{safe}_{sweep['to_version']}_{digest}".replace(".", "-")


def _sweep_points(con, sweep: dict) -> list[dict]:
    """All versions of the sweep's provider and of the reference providers beside it."""
    return _records(
        con,
        """
        select kernel_provider, is_liger, liger_version, version_rank, x_value, x_numeric,
               p20, p50, p80
        from series_versions
        where kernel_name = ? and kernel_operation_mode = ? and metric_name = ?
          and gpu_name = ? and x_name is not distinct from ?
          and extra_config is not distinct from ?
          and (kernel_provider = ? or not is_liger)
          and version_rank in (
              select version_rank from series_versions
              where kernel_name = ? and kernel_provider = ? and kernel_operation_mode = ?
                and metric_name = ? and gpu_name = ? and x_name is not distinct from ?
                and extra_config is not distinct from ?
          )
        order by kernel_provider, version_rank, x_numeric nulls last, x_value
        """,
        [
            sweep["kernel_name"], sweep["kernel_operation_mode"], sweep["metric_name"],
            sweep["gpu_name"], sweep["x_name"], sweep["extra_config"], sweep["kernel_provider"],
            sweep["kernel_name"], sweep["kernel_provider"], sweep["kernel_operation_mode"],
            sweep["metric_name"], sweep["gpu_name"], sweep["x_name"], sweep["extra_config"],
        ],
    )


def plot_sweep(points: list[dict], sweep: dict) -> bytes:
    """PNG bytes: liger provider (left) and reference providers (right), p50 + p20-p80 band per version."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    numeric = all(p["x_numeric"] is not None for p in points)
    categories = sorted({p["x_value"] for p in points}, key=str) if not numeric else []

    def xpos(p):
        return p["x_numeric"] if numeric else categories.index(p["x_value"])

    liger = [p for p in points if p["is_liger"]]
    refs = [p for p in points if not p["is_liger"]]
    fig = Figure(figsize=(11, 4.2), dpi=90)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    versions = sorted({(p["version_rank"], p["liger_version"]) for p in points})
    cmap = matplotlib.colormaps["viridis"]
    colors = {v: cmap(i / max(1, len(versions) - 1)) for i, (_, v) in enumerate(versions)}
    highlight = {sweep.get("from_version"), sweep.get("to_version")}

    for ax, subset, title in (
        (axes[0], liger, f"{sweep['kernel_provider']}"),
        (axes[1], refs, "reference providers"),
    ):
        groups: dict[tuple, list[dict]] = {}
        for p in subset:
            groups.setdefault((p["kernel_provider"], p["version_rank"], p["liger_version"]), []).append(p)
        styles = ["-", "--", ":", "-."]
        providers = sorted({k[0] for k in groups})
        for (provider, _, version), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            rows = sorted(rows, key=xpos)
            xs = [xpos(r) for r in rows]
            style = styles[providers.index(provider) % len(styles)]
            lw = 2.2 if version in highlight else 1.0
            label = f"{version}" if ax is axes[0] else f"{provider} {version}"
            ax.plot(xs, [r["p50"] for r in rows], style, marker="o", ms=3, lw=lw,
                    color=colors[version], label=label)
            ax.fill_between(xs, [r["p20"] for r in rows], [r["p80"] for r in rows],
                            color=colors[version], alpha=0.18 if version in highlight else 0.08)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(sweep.get("x_name") or "x")
        if numeric and subset:
            xs_all = [p["x_numeric"] for p in subset]
            if min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 8:
                ax.set_xscale("log", base=2)
        elif categories:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories, rotation=30, fontsize=7)
        if not subset:
            ax.text(0.5, 0.5, "no reference measured", ha="center", va="center",
                    transform=ax.transAxes, color="grey")
        else:
            ax.legend(fontsize=7, loc="best")
        ax.grid(alpha=0.3)
    positive = [v for p in points for v in (p["p20"], p["p50"], p["p80"]) if v is not None]
    if positive and min(positive) > 0 and max(positive) / min(positive) >= 20:
        axes[0].set_yscale("log")
    axes[0].set_ylabel(f"{sweep['metric_name']} ({sweep.get('metric_unit') or ''}), p50 with p20-p80")
    fig.suptitle(
        f"{sweep['kernel_name']} / {sweep['kernel_operation_mode']} / {sweep['metric_name']} / "
        f"{sweep['gpu_name']}: {sweep['from_version']} -> {sweep['to_version']} = {sweep['verdict']}",
        fontsize=10,
    )
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)


_TABLE_COLUMNS = (
    ("kernel_name", "kernel"), ("kernel_provider", "provider"), ("kernel_operation_mode", "mode"),
    ("metric_name", "metric"), ("gpu_name", "GPU"), ("from_version", "from"), ("to_version", "to"),
    ("shared_points", "points"), ("geomean_ratio", "ratio"),
    ("geomean_reference_ratio", "reference ratio"), ("geomean_normalized_ratio", "normalized"),
    ("points_regressed", "pts regressed"), ("points_improved", "pts improved"),
    ("verdict", "verdict"), ("reason", "reason"),
)


def _md_table(rows: list[dict], columns=_TABLE_COLUMNS) -> str:
    if not rows:
        return "_none_\n"
    head = "| " + " | ".join(label for _, label in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = [
        "| " + " | ".join(_fmt(r.get(k)).replace("|", "\\|") for k, _ in columns) + " |"
        for r in rows
    ]
    return "\n".join([head, sep, *body]) + "\n"


def _html_table(rows: list[dict], columns=_TABLE_COLUMNS) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in columns)
    body = "".join(
        "<tr>" + "".join(
            f"<td class='{html.escape(str(r.get('verdict', '')))}'>{html.escape(_fmt(r.get(k)))}</td>"
            if k == "verdict" else f"<td>{html.escape(_fmt(r.get(k)))}</td>"
            for k, _ in columns
        ) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}
table{border-collapse:collapse;font-size:12px;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.regression{background:#fdd;font-weight:bold}td.improvement{background:#dfd}
td.drift{background:#ffe9c4}
img{max-width:100%;border:1px solid #eee}
code{background:#f6f6f6;padding:1px 3px}
"""


def write_report(db_path: str | os.PathLike, out_dir: str | os.PathLike, remote_root: str | None = None) -> dict:
    """Write ``regressions.html`` and ``regressions.md`` (+ ``plots/*.png``) into ``out_dir``."""
    db_path = Path(db_path)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with duck.connect(db_path, read_only=True, remote_root=remote_root) as con:
        sweeps = _records(con, "select * from sweep_regressions")
        newest = con.execute(
            "select liger_version from liger_versions where is_newest limit 1"
        ).fetchall()
        newest_version = newest[0][0] if newest else None
        noise = _records(
            con,
            "select * from noise_floor order by case scope when 'overall' then 0 "
            "when 'metric' then 1 else 2 end, threshold desc",
        )
        change_points = _records(
            con, "select * from change_points order by kernel_name, kernel_provider, version_rank"
        )
        newest_points = _records(
            con,
            "select * from regressions where verdict = 'regression' and to_version = ? "
            "order by ratio desc",
            [newest_version],
        )
        settings = _records(con, "select * from regression_settings")[0]
        sweeps.sort(key=lambda s: (_VERDICT_ORDER.get(s["verdict"], 9), -(s["geomean_ratio"] or 0)))
        flagged = [s for s in sweeps if s["verdict"] in FLAGGED_VERDICTS]
        plots: list[tuple[dict, str, bytes]] = []
        for sweep in flagged:
            png = plot_sweep(_sweep_points(con, sweep), sweep)
            plots.append((sweep, _slug(sweep) + ".png", png))

    counts = {v: sum(s["verdict"] == v for s in sweeps) for v in _VERDICT_ORDER}
    regressions = [s for s in sweeps if s["verdict"] == "regression"]
    newest_regressions = [s for s in regressions if s["to_version"] == newest_version]
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

    plot_dir = out_dir / "plots"
    written = set()
    for _, name, png in plots:
        _atomic_write(plot_dir / name, png)
        written.add(name)
    if plot_dir.exists():
        for stale in plot_dir.glob("*.png"):
            if stale.name not in written:
                stale.unlink(missing_ok=True)

    settings_line = ", ".join(f"{k}={v}" for k, v in settings.items())
    noise_cols = (
        ("scope", "scope"), ("kernel_name", "kernel"), ("kernel_provider", "provider"),
        ("kernel_operation_mode", "mode"), ("metric_name", "metric"), ("gpu_name", "GPU"),
        ("rerun_points", "re-run points"), ("median_rel_spread", "median spread"),
        ("noise_rel_spread", "noise"), ("threshold", "threshold"),
    )
    cp_cols = (
        ("kernel_name", "kernel"), ("kernel_provider", "provider"), ("kernel_operation_mode", "mode"),
        ("metric_name", "metric"), ("gpu_name", "GPU"), ("previous_version", "from"),
        ("version", "introduced in"), ("direction", "direction"), ("shift_ratio", "shift"),
        ("basis", "basis"), ("pair_verdict", "pair verdict"),
    )
    point_cols = (
        ("kernel_name", "kernel"), ("kernel_provider", "provider"), ("kernel_operation_mode", "mode"),
        ("metric_name", "metric"), ("gpu_name", "GPU"), ("x_name", "x"), ("x_value", "x value"),
        ("from_version", "from"), ("to_version", "to"), ("ratio", "ratio"),
        ("normalized_ratio", "normalized"), ("reason", "reason"),
    )

    md = [
        "# Liger regression report\n",
        f"Generated {generated} from `{db_path.name}`. Newest version: **{newest_version}**.\n",
        "Verdicts judge liger-family providers per sweep and consecutive version pair "
        "(PEP 440 order); reference providers normalize away machine changes. "
        f"Settings: {settings_line}.\n",
        "| verdict | sweeps |\n|---|---:|\n"
        + "".join(f"| {v} | {n} |\n" for v, n in counts.items()),
        f"\n## Regressions in the newest version ({newest_version})\n",
        _md_table(newest_regressions),
        "\n## Headline regressions (all versions)\n",
        _md_table(regressions),
        f"\n## Point-level regressions in {newest_version}\n",
        _md_table(newest_points, point_cols),
        "\n## Flagged sweeps\n",
    ]
    html_parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Liger regression report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Liger regression report</h1>",
        f"<p>Generated {html.escape(generated)} from <code>{html.escape(db_path.name)}</code>. "
        f"Newest version: <b>{html.escape(str(newest_version))}</b>.</p>",
        f"<p>Settings: <code>{html.escape(settings_line)}</code></p>",
        "<table><tr><th>verdict</th><th>sweeps</th></tr>"
        + "".join(f"<tr><td class='{v}'>{v}</td><td>{n}</td></tr>" for v, n in counts.items())
        + "</table>",
        f"<h2>Regressions in the newest version ({html.escape(str(newest_version))})</h2>",
        _html_table(newest_regressions),
        "<h2>Headline regressions (all versions)</h2>",
        _html_table(regressions),
        f"<h2>Point-level regressions in {html.escape(str(newest_version))}</h2>",
        _html_table(newest_points, point_cols),
        "<h2>Flagged sweeps</h2>",
    ]
    if not plots:
        md.append("_none_\n")
        html_parts.append("<p><em>none</em></p>")
    for sweep, name, png in plots:
        title = (
            f"{sweep['verdict']}: {sweep['kernel_name']} / {sweep['kernel_provider']} / "
            f"{sweep['kernel_operation_mode']} / {sweep['metric_name']} / {sweep['gpu_name']} "
            f"{sweep['from_version']} -> {sweep['to_version']}"
        )
        md.append(f"\n### {title}\n\n{sweep['reason']}\n\n`extra_config`: `{sweep['extra_config']}`\n\n"
                  f"![{title}](plots/{name})\n")
        b64 = base64.b64encode(png).decode()
        html_parts.append(
            f"<h3>{html.escape(title)}</h3><p>{html.escape(sweep['reason'] or '')}</p>"
            f"<p><code>{html.escape(str(sweep['extra_config']))}</code></p>"
            f"<img alt='{html.escape(title)}' src='data:image/png;base64,{b64}'>"
        )
    md += ["\n## Change points\n", _md_table(change_points, cp_cols),
           "\n## Noise floor\n", _md_table(noise, noise_cols)]
    html_parts += ["<h2>Change points</h2>", _html_table(change_points, cp_cols),
                   "<h2>Noise floor</h2>", _html_table(noise, noise_cols), "</body></html>"]

    md_path = out_dir / "regressions.md"
    html_path = out_dir / "regressions.html"
    _atomic_write(md_path, "\n".join(md).encode())
    _atomic_write(html_path, "\n".join(html_parts).encode())
    return {
        "newest_version": newest_version,
        "sweeps_judged": len(sweeps),
        "regressions": counts["regression"],
        "improvements": counts["improvement"],
        "drift": counts["drift"],
        "unchanged": counts["unchanged"],
        "insufficient": counts["insufficient"],
        "newest_version_regressions": len(newest_regressions),
        "change_points": len(change_points),
        "plots": len(plots),
        "html_path": str(html_path),
        "md_path": str(md_path),
    }
