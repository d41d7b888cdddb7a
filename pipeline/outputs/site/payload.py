"""The dashboard's data: a few bounded queries over ``liger.duckdb`` -> one compact JSON payload.

What the page receives, per sweep (kernel, provider, pass, metric, GPU, x name, config) and axis
point (a Liger version, or a commit when ``measurements`` has ``benchmarked_commit`` and ``commit_order``):
p20 / p50 / p80 of every x point, rounded to 4 significant digits, in blocks of axis points each
encoded once (``payload["blocks"]``, `points.py`), and the runs at the sweep's newest point. Every
other string is dictionary-encoded (``payload["s"][<field>]``); rows hold indexes.
Beside it the sweep verdicts of ``sweep_regressions`` with their evidence, and the rows of a
``commit_suspects`` view when the warehouse has one.

Axis:
* ``version``: one point per Liger version, in PEP 440 order (``version_rank`` of
  ``liger_version_order``; computed here with ``packaging`` when that table is missing); the
  values are ``series_versions`` (median p50 over the runs of a version, p20/p80 envelope).
* ``commit``: one point per commit, the same rule over the runs of a commit; ordered by
  ``version_rank``, then ``commit_order`` (a measurement without a commit is its version's first
  point); labelled with the short commit and ``release`` when that column exists.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipeline.outputs.report.queries import FLAGGED_VERDICTS
from pipeline.regress.judge import SEVERITY_SQL, SWEEP_KEY

from .points import AxisSource, RawJson, point_blocks, window_sweeps

__all__ = ["SWEEP_KEY", "AxisWindow", "SiteData", "build_payload", "payload_json", "sig4"]

PAYLOAD_VERSION = 2
_SWEEP_COLS = ", ".join(SWEEP_KEY)
# a commit_suspects view is read up to this many rows (the page stays bounded whatever it holds)
MAX_SUSPECT_ROWS = 5000
# string fields of a sweep, in the order of a row of payload["sweeps"]
SWEEP_FIELDS = ("kernel", "provider", "mode", "metric", "gpu", "xname", "config", "unit")
# the largest double of 4 significant digits: a finite value near the double maximum (1.7975e308 and up)
# rounds to 1.798e308, which is no double (infinity); such a value is cut to this one instead
SIG4_MAX = 1.797e308


def sig4(value) -> float | int | None:
    """``value`` rounded to 4 significant digits (an int when whole), None when not a finite number; a
    finite value never rounds to infinity (`SIG4_MAX`)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    rounded = float(f"{value:.4g}")
    if not math.isfinite(rounded):
        rounded = math.copysign(SIG4_MAX, value)
    return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded


class _Strings:
    """Dictionary encoder: each distinct string (or None) once, rows carry its index."""

    def __init__(self) -> None:
        self.values: list[str | None] = []
        self._index: dict[str | None, int] = {}

    def __call__(self, value) -> int:
        key = None if value is None else str(value)
        idx = self._index.get(key)
        if idx is None:
            idx = self._index[key] = len(self.values)
            self.values.append(key)
        return idx


@dataclass(frozen=True)
class AxisWindow:
    """The newest ``shown`` of the axis's ``of`` points (commits or versions) are on the page."""

    shown: int
    of: int

    @property
    def cut(self) -> bool:
        return self.shown < self.of


@dataclass
class SiteData:
    """The payload the page embeds, plus what the release pages render on the Python side."""

    payload: dict
    axis_mode: str
    versions: list[str]  # PEP 440 order
    sweeps: list[dict]  # id -> {kernel_name, ..., is_liger}
    # every judged version pair of a plotted sweep, one row each (`COMPARISON_COLUMNS`), newest first
    comparisons: Any = None  # polars.DataFrame
    # the rows of version_coverage no earlier version was compared with (`NOT_COMPARED_COLUMNS`)
    not_compared: Any = None  # polars.DataFrame
    axis_labels_by_version: dict[str, list[str]] = field(default_factory=dict)
    window: AxisWindow | None = None  # None: the whole axis
    source: AxisSource | None = None  # where the points on the window are (`points.py`)


def _relations(con) -> set[str]:
    return {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}


def _records(con, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _version_ranks(con) -> list[tuple[int, str]]:
    """(rank, label) of every orderable version, in order (`liger_version_order`, the one ordering rule);
    two spellings of one release share a rank."""
    return [
        (r, v)
        for r, v in con.execute(
            "select version_rank, max(liger_version) from liger_version_order where version_rank is not null "
            "group by version_rank order by version_rank"
        ).fetchall()
    ]


def _commit_axis(con) -> list[dict]:
    rows = _records(
        con,
        """
        select axis_key, max(benchmarked_commit) as commit, max(commit_order) as commit_order,
               max(release) as release, max(version_rank) as version_rank
        from sweep_points
        group by axis_key""",
    )
    rows.sort(
        key=lambda r: (
            r["version_rank"],
            r["commit"] is not None,
            r["commit_order"] is None,
            r["commit_order"] or 0,
            r["commit"] or "",
        )
    )
    return rows


def _axis(con, commit_mode: bool, ranks: list, versions: list[str], ver_of_rank: dict):
    """The plot's x axis (commits in commit order, else versions): labels, each point's version, the
    position of each axis key, and the relation of the points on it with its axis key column."""
    axis_labels: list[str] = []
    axis_ver: list[int] = []
    if commit_mode:
        axis_index = {}
        for r in _commit_axis(con):
            axis_index[r["axis_key"]] = len(axis_labels)
            if r["commit"] is None:
                label = versions[ver_of_rank[r["version_rank"]]]
            else:
                label = str(r["commit"])[:8] + (f" ({r['release']})" if r["release"] else "")
            axis_labels.append(label)
            axis_ver.append(ver_of_rank[r["version_rank"]])
        return axis_labels, axis_ver, axis_index, ("sweep_points", "axis_key")
    axis_index = {rank: i for i, (rank, _) in enumerate(ranks)}
    return list(versions), list(range(len(versions))), axis_index, ("series_versions", "version_rank")


# A comparison's numbers: as judged, as the pages write them (printf, Python's own rounding: ``×1.235``,
# ``±6.9%``; "" when none), and rounded for the payload (`sig4`).
_COMPARISON_NUMBERS = {
    "ratio": ("geomean_ratio", "'×%.3f'", 1),
    "reference_ratio": ("geomean_reference_ratio", "'×%.3f'", 1),
    "normalized_ratio": ("geomean_normalized_ratio", "'×%.3f'", 1),
    "threshold": ("threshold", "'±%.1f%%'", 100),
    "band_fraction": ("band_fraction", "'%.1f%%'", 100),
}
COMPARISON_COLUMNS = (
    "sweep", *SWEEP_KEY, "from_version", "to_version", "verdict", *_COMPARISON_NUMBERS,
    *(f"{n}_text" for n in _COMPARISON_NUMBERS), "points", "from_runs", "to_runs", "reference_providers", "reason",
)  # fmt: skip


def _encoded(frame, column: str, encode: _Strings):
    """``column``'s dictionary codes, each distinct value encoded in the order it first comes (as a
    pass over the rows would): Python once per distinct value."""
    import polars as pl

    values = frame[column].unique(maintain_order=True).to_list()
    codes = pl.DataFrame(
        {column: values, "code": [encode(v) for v in values]}, schema={column: frame.schema[column], "code": pl.Int64}
    )
    return frame.join(codes, on=column, how="left", nulls_equal=True, maintain_order="left")["code"]


def _ver_index(frame, column: str, ver_of_rank: dict):
    """Each row's version index on the axis for the rank ``column`` (null: not an orderable version)."""
    import polars as pl

    ranks = pl.DataFrame(
        {column: list(ver_of_rank), "ver": list(ver_of_rank.values())}, schema_overrides={"ver": pl.Int64}
    )
    ranks = ranks.cast({column: frame.schema[column]})
    return frame.join(ranks, on=column, how="left", maintain_order="left")["ver"]


def _comparisons(con, sweep_frame, ver_of_rank: dict, strings: dict):
    """Every judged version pair of a plotted sweep: the rows the pages show (`COMPARISON_COLUMNS`) and
    their encoded rows for the payload. One query, the sweep ids and codes joined in polars."""
    import polars as pl

    numbers = ", ".join(
        f"cast({src} as double) as {name}, {sig4_sql(f'cast({src} as double)')} as {name}_sig4, "
        f"coalesce(printf({template}, {scale} * cast({src} as double)), '') as {name}_text"
        for name, (src, template, scale) in _COMPARISON_NUMBERS.items()
    )
    sql = f"""
        select {_SWEEP_COLS}, from_version, to_version, from_version_rank, to_version_rank, verdict, {numbers},
               shared_points as points, from_runs, to_runs, reference_providers, reason
        from sweep_regressions
        where to_version_rank in (select unnest($ranks))
        order by to_version_rank desc, {SEVERITY_SQL}, {_SWEEP_COLS}"""
    frame = pl.from_arrow(con.sql(sql, params={"ranks": list(ver_of_rank)}).to_arrow_table())
    frame = frame.join(sweep_frame.select("sid", *SWEEP_KEY), on=list(SWEEP_KEY), how="inner", nulls_equal=True,
                       maintain_order="left").rename({"sid": "sweep"})  # fmt: skip
    frame = frame.with_columns(
        to_ver=_ver_index(frame, "to_version_rank", ver_of_rank),
        from_ver=_ver_index(frame, "from_version_rank", ver_of_rank).fill_null(-1),
    ).filter(pl.col("to_ver").is_not_null())
    frame = frame.with_columns(
        verdict_code=_encoded(frame, "verdict", strings["verdict"]),
        refs_code=_encoded(frame, "reference_providers", strings["refs"]),
        reason_code=_encoded(frame, "reason", strings["reason"]),
    )
    encoded = frame.select(
        "sweep", "from_ver", "to_ver", "verdict_code", *(f"{n}_sig4" for n in _COMPARISON_NUMBERS),
        "points", "from_runs", "to_runs", "refs_code", "reason_code",
    )  # fmt: skip
    return frame.select(COMPARISON_COLUMNS), [list(r) for r in encoded.rows()]


def sig4_sql(column: str) -> str:
    """:func:`sig4` in SQL, for whole columns: the same double (4 significant digits, correctly rounded,
    NULL when not finite); a whole number stays a double here, which JSON prints with ``.0``.
    tests/unit/outputs/test_site_payload.py holds the two to the same values."""
    rounded = f"cast(printf('%.4g', {column}) as double)"
    return (
        f"case when isfinite({column}) then "
        f"case when isfinite({rounded}) then {rounded} else sign({column}) * {SIG4_MAX!r} end end"
    )


def _sweeps(rows: list[tuple], is_liger: dict, strings: dict):
    """Each sweep on the window once (`window_sweeps`' rows): its id and key as a frame, as dicts, its
    encoded row, and the runs at its newest point."""
    import polars as pl

    sweeps, sweep_rows, runs = [], [], []
    width = len(SWEEP_KEY)
    for row in rows:
        sweep = dict(zip(SWEEP_KEY, row[:width], strict=True)) | {"metric_unit": row[width]}
        sweep["is_liger"] = bool(is_liger.get(sweep["kernel_provider"], False))
        sweeps.append(sweep)
        fields = (*row[:width], row[width])
        sweep_rows.append([strings[f](v) for f, v in zip(SWEEP_FIELDS, fields, strict=True)] + [int(sweep["is_liger"])])
        runs.append(int(row[width + 1]))
    frame = pl.DataFrame(
        {"sid": list(range(len(sweeps))), **{k: [s[k] for s in sweeps] for k in SWEEP_KEY}},
        schema={"sid": pl.Int64, **dict.fromkeys(SWEEP_KEY, pl.String)},
    )
    return frame, sweeps, sweep_rows, runs


def _newest_on_axis(axis: tuple, ranks: list, keep: int | None):
    """The axis (``_axis``'s labels, versions, key positions, relation) and the version ranks cut to the
    newest ``keep`` axis points, versions re-indexed to the versions those points hold; the points'
    source (`AxisSource`: every key from the first block the window touches on); and the window."""
    axis_labels, axis_ver, axis_index, (relation, column) = axis
    total = len(axis_labels)
    first = max(0, total - keep) if keep else 0
    kept_ver = sorted(set(axis_ver[first:]))
    new_ver = {old: new for new, old in enumerate(kept_ver)}
    cut_axis = (axis_labels[first:], [new_ver[v] for v in axis_ver[first:]])
    source = AxisSource.window(relation, column, axis_index, first)
    return cut_axis, source, [ranks[v] for v in kept_ver], AxisWindow(total - first, total)


def build_payload(con, axis_points: int | None = None, cache: Path | None = None) -> SiteData:
    """Read the published warehouse once (a handful of queries) and encode what the page shows:
    the newest ``axis_points`` points of the axis (None: all of it), the sweeps measured there and the
    version pairs judged there. A deep history stays in ``liger.duckdb``; the page stays bounded.
    ``cache``: a folder where the blocks of points (`points.py`) are kept from run to run."""
    relations = _relations(con)
    # the warehouse's file has sweep_points (sql/regress); a hand-made file without it is by version
    commit_mode = "sweep_points" in relations
    ranks = _version_ranks(con)
    all_versions = [label for _, label in ranks]
    full_axis = _axis(con, commit_mode, ranks, all_versions, {rank: i for i, (rank, _) in enumerate(ranks)})
    (axis_labels, axis_ver), source, ranks, window = _newest_on_axis(full_axis, ranks, axis_points)
    versions = [label for _, label in ranks]
    ver_of_rank = {rank: i for i, (rank, _) in enumerate(ranks)}
    strings = {name: _Strings() for name in (*SWEEP_FIELDS, "verdict", "reason", "refs")}

    # the Liger-family rule stays in the views: which provider is liger, as series_versions says
    is_liger = dict(con.execute("select distinct kernel_provider, is_liger from series_versions").fetchall())

    source.install(con)
    sweep_frame, sweeps, sweep_rows, runs = _sweeps(window_sweeps(con, source), is_liger, strings)
    blocks = point_blocks(con, source, sig4_sql, cache)
    comparisons, cmp_rows = _comparisons(con, sweep_frame, ver_of_rank, strings)
    not_compared = _not_compared(con, relations, ranks)

    labels_by_version: dict[str, list[str]] = {}
    for label, ver in zip(axis_labels, axis_ver, strict=True):
        labels_by_version.setdefault(versions[ver], []).append(label)

    payload = {
        "v": PAYLOAD_VERSION,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "axis": {
            "mode": "commit" if commit_mode else "version",
            "label": axis_labels,
            "ver": axis_ver,
            "of": window.of,
            "first": source.first,
        },
        "versions": versions,
        "flagged": list(FLAGGED_VERDICTS),
        "s": {name: enc.values for name, enc in strings.items()},
        "sweeps": sweep_rows,
        "runs": runs,
        "cmp": cmp_rows,
        "suspects": _suspects(con, relations, sweeps),
        "blocks": blocks,
    }
    return SiteData(
        payload=payload,
        axis_mode=payload["axis"]["mode"],
        versions=versions,
        sweeps=sweeps,
        comparisons=comparisons,
        not_compared=not_compared,
        axis_labels_by_version=labels_by_version,
        window=window,
        source=source,
    )


NOT_COMPARED_COLUMNS = (*SWEEP_KEY, "version", "reason", "to_runs")


def _not_compared(con, relations: set[str], ranks: list[tuple[int, str]]):
    """The sweeps of each version that no earlier version was compared with, and why (version_coverage);
    ``version`` is the version's label on the axis (its rank's)."""
    import polars as pl

    schema = dict.fromkeys(NOT_COMPARED_COLUMNS, pl.String) | {"to_runs": pl.Int64}
    if "version_coverage" not in relations:
        return pl.DataFrame(schema=schema)
    frame = pl.from_arrow(
        con.sql(
            f"""
            select {_SWEEP_COLS}, version_rank, reason, to_runs from version_coverage
            where compared_with is null and version_rank in (select unnest($ranks))
            order by version_rank, reason, {_SWEEP_COLS}""",
            params={"ranks": [r for r, _ in ranks]},
        ).to_arrow_table()
    )
    labels = pl.DataFrame({"version_rank": [r for r, _ in ranks], "version": [v for _, v in ranks]})
    labels = labels.cast({"version_rank": frame.schema["version_rank"]})
    return frame.join(labels, on="version_rank", how="inner", maintain_order="left").select(NOT_COMPARED_COLUMNS)


def _suspects(con, relations: set[str], sweeps: list[dict]) -> dict | None:
    """Hook for the coming ``commit_suspects`` view: its rows, attached to the sweeps they name.

    Whatever sweep-key columns the view has are matched (a row without x_name / extra_config names every
    sweep of its kernel, provider, pass, metric and GPU); the other columns are shown as they are.
    None when the view does not exist."""
    if "commit_suspects" not in relations:
        return None
    # whatever its columns, the same rows when there are more than the page shows
    cur = con.execute(f"select * from commit_suspects order by all limit {MAX_SUSPECT_ROWS}")
    cols = [d[0] for d in cur.description]
    keys = [k for k in SWEEP_KEY if k in cols]
    shown = [c for c in cols if c not in keys]
    by_key: dict[tuple, list[int]] = {}
    for sid, s in enumerate(sweeps):
        by_key.setdefault(tuple(s[k] for k in keys), []).append(sid)
    rows: list[list] = []
    by_sweep: dict[str, list[int]] = {}
    for raw in cur.fetchall():
        rec = dict(zip(cols, raw, strict=True))
        values = [_cell(rec[c]) for c in shown]
        idx = len(rows)
        rows.append([rec[k] for k in keys] + values)
        if keys:
            for sid in by_key.get(tuple(rec[k] for k in keys), []):
                by_sweep.setdefault(str(sid), []).append(idx)
    return {"keys": keys, "cols": shown, "rows": rows, "by_sweep": by_sweep}


def _cell(value):
    """A suspect-table value for JSON: numbers to 4 digits, ints and None as they are, the rest as text."""
    if isinstance(value, float | Decimal):
        return sig4(value)
    return value if value is None or isinstance(value, int | bool) else str(value)


def _finite(value):
    """``value`` with every float that JSON has no number for (NaN, ±infinity) as None, in lists and dicts."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def payload_json(payload: dict) -> str:
    """Compact JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&``
    survive unescaped, so no data string can close the script element or open a comment. A number
    JSON cannot write (NaN, ±infinity: a ratio of two finite values may overflow) is null, a gap,
    never an error that leaves the site unwritten. A top-level list of `RawJson` (the blocks of
    points) is spliced in as it is, each made as safe the same way."""
    raw = {k: v for k, v in payload.items() if isinstance(v, list) and v and all(isinstance(b, RawJson) for b in v)}
    rest = {k: v for k, v in payload.items() if k not in raw}
    try:
        text = json.dumps(rest, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: walk the payload once more, only then
        text = json.dumps(_finite(rest), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    spliced = "".join(f",{json.dumps(k)}:[{','.join(blocks)}]" for k, blocks in raw.items())
    return _script_safe(text[:-1] + spliced + "}")


def _script_safe(text: str) -> str:
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
