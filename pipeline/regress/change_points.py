"""Change points: which version, or which benchmarked commit, introduced each lasting shift of a sweep.

``build_change_points(con)`` runs after the SQL views and creates the table
``change_points`` in the same connection. No Dagster imports here.

Method, per axis ('version': PEP 440 versions; 'commit': benchmarked commits in commit order) and
liger-family sweep (kernel, provider, mode, metric, GPU, x_name, extra_config) with at least 3
steps (versions or commits). One implementation for both axes: on the commit axis ``version`` /
``previous_version`` hold the commits' short shas and ``version_rank`` their commit order.

1. Chain the sweep pairs of ``verdicts`` (level 'sweep', one axis) into a level series:
   ``level_0 = 0`` and ``level_i = level_{i-1} + ln(step_i)``, where ``step_i``
   is the pair's geomean normalized ratio (``basis = 'normalized'``, when every
   pair of the chain has a reference) or else its raw geomean ratio
   (``basis = 'raw'``). The level is the log of "how much slower than the first
   version" on the x points each neighbouring pair shares. A pair without
   shared points breaks the chain; each unbroken chain of >= 3 versions is
   analysed on its own.
2. Segment the level series with PELT (the l2 cost, ``min_size=1``, as ruptures computes it),
   penalty ``change_point_penalty * threshold_log**2``, where
   ``threshold_log`` is the sweep's noise threshold from ``noise_floor``; a chain longer than
   ``change_point_window`` levels in overlapping windows of that many (``windowed_segments``).
3. Each segment boundary is a change point: the first version of the new
   segment introduced it. Shifts smaller than the noise threshold are dropped,
   so a reported shift is always beyond noise. ``direction`` is ``worse``
   (higher ms / MB) or ``better``.

PELT runs only when some chain has >= 3 steps and leaves its noise band.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.common.duck import has_tables

__all__ = [
    "build_change_points",
    "segment_levels",
    "sweep_change_points",
    "CHANGE_POINTS_DDL",
    "SOURCE_SQL",
    "SWEEP_KEY_COLUMNS",
    "PAIR_COLUMNS",
]

CHANGE_POINTS_DDL = """
create or replace table change_points (
    axis varchar,
    kernel_name varchar,
    kernel_provider varchar,
    kernel_operation_mode varchar,
    metric_name varchar,
    metric_unit varchar,
    gpu_name varchar,
    x_name varchar,
    extra_config varchar,
    version varchar,
    version_rank bigint,
    previous_version varchar,
    previous_version_rank bigint,
    direction varchar,
    shift_ratio double,
    level_before double,
    level_after double,
    basis varchar,
    versions_in_chain integer,
    first_version varchar,
    last_version varchar,
    pair_verdict varchar,
    threshold double,
    method varchar
)
"""

SOURCE_SQL = """
select
    axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
    gpu_name, x_name, extra_config,
    from_label as from_version, to_label as to_version,
    from_step_rank as from_version_rank, to_step_rank as to_version_rank,
    ratio as geomean_ratio, normalized_ratio as geomean_normalized_ratio, threshold, verdict
from verdicts
where level = 'sweep'
"""
# the rows name the computation they equal (segment_levels is held to ruptures' own breakpoints)
METHOD = "ruptures.Pelt(model='l2', min_size=1)"
_SWEEP_KEY = slice(0, 9)
SWEEP_KEY_COLUMNS = (
    "axis",
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "gpu_name",
    "x_name",
    "extra_config",
)
# One sweep's version pairs, in this order, sorted by to_version_rank (the Spark path uses these too).
PAIR_COLUMNS = (
    "from_version",
    "to_version",
    "from_version_rank",
    "to_version_rank",
    "geomean_ratio",
    "geomean_normalized_ratio",
    "threshold",
    "verdict",
)


# The columns a chain is segmented on, and those only its rows name (read for the few sweeps with a row)
_LEVEL_COLUMNS = ("geomean_ratio", "geomean_normalized_ratio", "threshold")
_LABEL_COLUMNS = ("from_version", "to_version", "from_version_rank", "to_version_rank", "verdict")


@dataclass(frozen=True)
class _Levels:
    """One sweep's pairs as columns, sorted by to_version_rank: a deep sweep's thousand pairs are a few
    lists, not a thousand objects."""

    ratio: Sequence[float | None]
    normalized: Sequence[float | None]
    threshold: Sequence[float | None]


@dataclass(frozen=True)
class _Labels:
    """What a sweep's rows name of its pairs (`_LABEL_COLUMNS`), in the same order."""

    from_version: Sequence[str]
    to_version: Sequence[str]
    from_rank: Sequence[int]
    to_rank: Sequence[int]
    verdict: Sequence[str]


@dataclass(frozen=True)
class _Shift:
    """A lasting shift of a chain: the index of its first level, the shift and the levels either side
    (logs), and what the chain's rows share."""

    start: int
    shift: float
    before: float
    after: float
    basis: str
    levels: int
    threshold: float


def _l2_cost(signal, start: int, end: int) -> float:
    # ruptures' CostL2.error, the same numpy expression, so the totals are ruptures' doubles
    return signal[start:end].var(axis=0).sum() * (end - start)


# A candidate's cost in plain floats is within this share of ruptures' (a few ulps of its segment's
# spread): candidates closer than that to the best or to the pruning limit are decided on ruptures' doubles.
_NEAR = 1e-9


def segment_levels(levels: Sequence[float], penalty: float) -> list[int]:
    """Indexes where a new segment starts: PELT (Killick et al. 2012) with the l2 cost, min_size 1,
    every index admissible, as ``ruptures.Pelt(model="l2", min_size=1, jump=1).fit(levels)
    .predict(pen=penalty)`` computes it, step for step (candidate order, sums, ties, pruning);
    tests/unit/regress/test_change_points.py holds the two to the same breakpoints. Written out
    because importing ruptures loads scipy.stats: about a second of every run, for a series of a
    few dozen levels. A numpy variance per candidate segment (ruptures' cost) was most of a deep
    build (bench/HISTORY.md), so each candidate start keeps running sums of its segment's levels
    taken from its own first level (exact to a few ulps of the segment's spread), and numpy's cost
    is computed only for the candidates that could win or be pruned on a last bit: the winner (its
    total is kept as ruptures' double) and those within _NEAR of the best or of the limit."""
    n = len(levels)
    if n < 3:
        return []
    import numpy as np

    signal = np.asarray(levels, dtype=float).reshape(-1, 1)
    values = [float(v) for v in levels]
    # total[t]: the cost of the best segmentation of levels[0:t] (ruptures' double); start[t]: where
    # its last segment starts
    total, start = [0.0] * (n + 1), [0] * (n + 1)
    # per admissible start t: [t, sum of (level - levels[t]), sum of their squares] over levels[t:end]
    admissible: list[list] = []
    for end in range(1, n + 1):
        admissible.append([end - 1, 0.0, 0.0])
        level, totals = values[end - 1], []
        for candidate in admissible:
            t = candidate[0]
            d = level - values[t]
            candidate[1] += d
            candidate[2] += d * d
            totals.append(total[t] + (max(candidate[2] - candidate[1] * candidate[1] / (end - t), 0.0) + penalty))
        best = min(totals)
        near = _NEAR * (abs(best) + penalty)
        for i, value in enumerate(totals):
            if value - best <= near or abs(value - best - penalty) <= near:
                t = admissible[i][0]
                totals[i] = total[t] + (_l2_cost(signal, t, end) + penalty)
        best = min(totals)
        total[end] = best
        start[end] = admissible[totals.index(best)][0]  # the first candidate wins a tie
        # PELT's pruning: a start whose total is more than one penalty above the best never wins later
        admissible = [c for c, cost in zip(admissible, totals, strict=True) if cost <= best + penalty]
    breakpoints, end = [], n
    while (end := start[end]) > 0:
        breakpoints.append(end)
    return sorted(breakpoints)


class WindowMemo(dict):
    """A window's segmentation by what it segments (the penalty and the window's levels, exactly):
    a chain that grows at its end keeps every window before its last ones, so a new run re-segments
    the windows it touches, not the chain (issue 57). ``added``: the entries computed since made."""

    def __init__(self, known: dict[str, list[int]] | None = None):
        super().__init__(known or {})
        self.added: dict[str, list[int]] = {}

    @staticmethod
    def key(penalty: float, chunk: Sequence[float]) -> str:
        # the doubles' own bytes: equal keys mean equal inputs, so equal breakpoints
        return hashlib.sha1(array("d", [penalty, *chunk]).tobytes()).hexdigest()

    def segments(self, chunk: Sequence[float], penalty: float) -> list[int]:
        key = self.key(penalty, chunk)
        if key not in self:
            self[key] = self.added[key] = segment_levels(chunk, penalty)
        return self[key]


def windowed_segments(
    levels: Sequence[float], penalty: float, window: int, band: float = 0.0, memo: WindowMemo | None = None
) -> list[int]:
    """`segment_levels` judging each step against the ``window`` levels around it, not the whole
    chain: windows of ``window`` levels (at least 8), each starting half a window after the one
    before; a boundary counts in the window where it lies in the middle half (the first window from
    the chain's start, the last to its end), so every index belongs to one window. A window whose
    levels stay within ``band`` (the noise, as a log) is not segmented. ``window`` 0, or a chain
    no longer than it: the whole chain at once, as before. Linear in the chain's length. ``memo``:
    windows segmented before (a window of the same levels and penalty is not segmented again)."""
    n = len(levels)
    if not window or n <= max(window, 8):
        return segment_levels(levels, penalty)
    window = max(window, 8)
    hop = window // 2
    found: list[int] = []
    first = 0
    while True:
        last = first + window >= n
        own_lo = 0 if first == 0 else first + hop // 2
        own_hi = n if last else first + hop // 2 + hop
        chunk = levels[first : first + window]
        if max(chunk) - min(chunk) > band:
            breaks = memo.segments(chunk, penalty) if memo is not None else segment_levels(chunk, penalty)
            found.extend(first + b for b in breaks if own_lo <= first + b < own_hi)
        if last:
            return found
        first += hop


def _chains(pairs: _Levels) -> list[range]:
    """Split a sweep's consecutive pairs where a pair has no shared points: each chain of two pairs
    or more (three versions), as the range of its pairs' indexes."""
    chains, start = [], None
    for i, ratio in enumerate(pairs.ratio):
        if ratio is None or ratio <= 0:
            if start is not None and i - start >= 2:
                chains.append(range(start, i))
            start = None
        elif start is None:
            start = i
    if start is not None and len(pairs.ratio) - start >= 2:
        chains.append(range(start, len(pairs.ratio)))
    return chains


def _chain_shifts(
    pairs: _Levels, chain: range, penalty_factor: float, window: int, memo: WindowMemo | None = None
) -> list[_Shift]:
    normalized, ratio = pairs.normalized[chain.start : chain.stop], pairs.ratio[chain.start : chain.stop]
    use_normalized = all(v is not None and v > 0 for v in normalized)
    levels = [0.0]
    for value in normalized if use_normalized else ratio:
        levels.append(levels[-1] + math.log(value))
    thresholds = [t for t in pairs.threshold[chain.start : chain.stop] if t is not None]
    threshold = max(thresholds) if thresholds else 0.03
    threshold_log = math.log1p(threshold)
    # A reported shift is a difference of two segment means, never more than the level range:
    # a chain that never leaves its noise band cannot yield a row, so PELT is not run on it.
    if max(levels) - min(levels) <= threshold_log:
        return []
    starts = windowed_segments(levels, penalty_factor * threshold_log**2, window, threshold_log, memo)
    bounds = [0, *starts, len(levels)]
    means = [sum(levels[a:b]) / (b - a) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    basis = "normalized" if use_normalized else "raw"
    return [
        _Shift(start, means[i + 1] - means[i], means[i], means[i + 1], basis, len(levels), threshold)
        for i, start in enumerate(starts)
        if abs(means[i + 1] - means[i]) > threshold_log
    ]


def _rows(key: tuple, labels: _Labels, chain: range, shifts: list[_Shift]) -> list[tuple]:
    """The rows of a chain's shifts; level i of the chain is the from side of its first pair, then
    each pair's to side."""
    first = chain.start
    versions = [labels.from_version[first], *labels.to_version[chain.start : chain.stop]]
    ranks = [labels.from_rank[first], *labels.to_rank[chain.start : chain.stop]]
    return [
        (
            *key,
            versions[s.start],
            ranks[s.start],
            versions[s.start - 1],
            ranks[s.start - 1],
            "worse" if s.shift > 0 else "better",
            math.exp(s.shift),
            math.exp(s.before),
            math.exp(s.after),
            s.basis,
            s.levels,
            versions[0],
            versions[-1],
            labels.verdict[first + s.start - 1],
            s.threshold,
            METHOD,
        )
        for s in shifts
    ]


def _sweep_shifts(
    pairs: _Levels, penalty_factor: float, window: int, memo: WindowMemo | None = None
) -> list[tuple[range, list[_Shift]]]:
    found = []
    for chain in _chains(pairs):
        shifts = _chain_shifts(pairs, chain, penalty_factor, window, memo)
        if shifts:
            found.append((chain, shifts))
    return found


def sweep_change_points(
    key: Sequence, pairs: Sequence[Sequence], penalty_factor: float, window: int = 0
) -> list[tuple]:
    """Change-point rows (columns of ``change_points``) of one sweep.

    ``key``: the values of SWEEP_KEY_COLUMNS; ``pairs``: tuples in PAIR_COLUMNS order, sorted by
    to_version_rank. Engines that group sweeps themselves (Spark) call this once per sweep.
    """
    columns = dict(zip(PAIR_COLUMNS, (list(c) for c in zip(*pairs, strict=True)), strict=True)) if pairs else {}
    levels = _Levels(*(columns.get(c, []) for c in _LEVEL_COLUMNS))
    labels = _Labels(*(columns.get(c, []) for c in _LABEL_COLUMNS))
    found = _sweep_shifts(levels, float(penalty_factor), int(window))
    return [row for chain, shifts in found for row in _rows(tuple(key), labels, chain, shifts)]


# Each sweep's inputs (its pairs, and the penalty and window), as a sum of one hash per pair: a sweep
# whose inputs are unchanged keeps its rows, so a new snapshot re-segments only the sweeps it moved.
# A sum, not a digest of the ordered list: each pair names its own place (to_version_rank), and
# DuckDB adds hashes without sorting or writing every sweep's pairs out as text.
INPUTS_TABLE = "change_point_inputs"
# Each window segmented (WindowMemo): kept across builds, rewritten by a full one.
WINDOWS_TABLE = "change_point_windows"
_KEY = ", ".join(SWEEP_KEY_COLUMNS)
_S_KEY = ", ".join(f"s.{c}" for c in SWEEP_KEY_COLUMNS)
# Doubles to 12 significant digits: DuckDB sums a geomean in its threads' order, so an unchanged
# sweep's ratios can come out one ulp apart from build to build.
_DOUBLES = {"geomean_ratio", "geomean_normalized_ratio", "threshold"}


def _twelve_digits(column: str) -> str:
    return (
        f"case when {column} = 0 or not isfinite({column}) then {column} "
        f"else round({column}, 11 - cast(floor(log10(abs({column}))) as integer)) end"
    )


_PAIR_VALUES = ", ".join(_twelve_digits(c) if c in _DOUBLES else c for c in PAIR_COLUMNS)
_INPUTS_SQL = f"""
select {_KEY}, sum(hash({_PAIR_VALUES}, settings.change_point_penalty, settings.change_point_window))
    as inputs_hash
from ({SOURCE_SQL}) cross join regression_settings as settings group by all
"""
_SAME_SWEEP = " and ".join(f"c.{c} is not distinct from s.{c}" for c in SWEEP_KEY_COLUMNS)


def _changed_sweeps(con, full: bool) -> str:
    """Empties ``change_points`` of the sweeps whose inputs changed (all of them when ``full``),
    leaves their keys in the temp table ``changed_sweep`` and returns the query of their source rows."""
    con.execute(f"create or replace temp table sweep_inputs as {_INPUTS_SQL}")
    if full or not has_tables(con, INPUTS_TABLE, "change_points") or not _hashed_inputs(con):
        con.execute(CHANGE_POINTS_DDL)
        con.execute(f"create or replace temp table changed_sweep as select {_KEY} from sweep_inputs")
        source = SOURCE_SQL
    else:
        con.execute(f"""create or replace temp table changed_sweep as
            select {_KEY} from (select * from sweep_inputs except select * from {INPUTS_TABLE})
            union select {_KEY} from (select * from {INPUTS_TABLE} except select * from sweep_inputs)""")
        con.execute(f"delete from change_points s where exists (select 1 from changed_sweep c where {_SAME_SWEEP})")
        source = f"select s.* from ({SOURCE_SQL}) s semi join changed_sweep c on {_SAME_SWEEP}"
    con.execute(f"create or replace table {INPUTS_TABLE} as select * from sweep_inputs")
    con.execute("drop table sweep_inputs")
    return source


def _hashed_inputs(con) -> bool:
    """Whether the kept inputs are this build's kind (a file from before holds another)."""
    return "inputs_hash" in {r[0] for r in con.execute(f"describe {INPUTS_TABLE}").fetchall()}


def _load_windows(con, full: bool) -> WindowMemo:
    """The windows segmented by earlier builds of this file (none after a full build's start)."""
    if full or not has_tables(con, WINDOWS_TABLE):
        con.execute(f"create or replace table {WINDOWS_TABLE} (window_key varchar, breakpoints integer[])")
        return WindowMemo()
    return WindowMemo(dict(con.execute(f"select window_key, breakpoints from {WINDOWS_TABLE}").fetchall()))


def _labelled_rows(con, source: str, found: dict[tuple, list]) -> list[tuple]:
    """The rows of the shifts ``found`` per sweep, with the versions they name (read for those sweeps only)."""
    if not found:
        return []
    keys = list(found)
    wanted = ", ".join(f"unnest($k{i}) as {c}" for i, c in enumerate(SWEEP_KEY_COLUMNS))
    same = " and ".join(f"s.{c} is not distinct from w.{c}" for c in SWEEP_KEY_COLUMNS)
    lists = ", ".join(f"list(s.{c} order by s.to_version_rank)" for c in _LABEL_COLUMNS)
    labelled = con.execute(
        f"select {_S_KEY}, {lists} from ({source}) s semi join (select {wanted}) w on {same} group by all",
        {f"k{i}": [k[i] for k in keys] for i in range(len(SWEEP_KEY_COLUMNS))},
    ).fetchall()
    rows = []
    for sweep in labelled:
        key = tuple(sweep[_SWEEP_KEY])
        labels = _Labels(*sweep[_SWEEP_KEY.stop :])
        rows += [row for chain, shifts in found[key] for row in _rows(key, labels, chain, shifts)]
    return rows


def build_change_points(con, full: bool = True) -> int:
    """Create table ``change_points`` from the sweep rows of ``verdicts`` (both axes); return the
    number of rows computed. ``full=False`` keeps the rows of sweeps whose inputs did not change
    since the last call on this database (``change_point_inputs``) and segments only the others.

    Works with zero sweeps (creates an empty table). Reads the PELT penalty
    factor from ``regression_settings``.
    """
    source = _changed_sweeps(con, full)
    ((penalty_factor, window),) = con.execute(
        "select change_point_penalty, change_point_window from regression_settings"
    ).fetchall()
    lists = ", ".join(f"list({c} order by to_version_rank)" for c in _LEVEL_COLUMNS)
    sweeps = con.execute(f"select {_KEY}, {lists} from ({source}) group by all").fetchall()

    memo = _load_windows(con, full)
    found: dict[tuple, list] = {}
    for sweep in sweeps:
        shifts = _sweep_shifts(_Levels(*sweep[_SWEEP_KEY.stop :]), float(penalty_factor), int(window), memo)
        if shifts:
            found[tuple(sweep[_SWEEP_KEY])] = shifts
    rows = _labelled_rows(con, source, found)
    if memo.added:
        con.execute(
            f"insert into {WINDOWS_TABLE} select unnest($k), unnest($b)",
            {"k": list(memo.added), "b": list(memo.added.values())},
        )

    if rows:
        import pyarrow as pa

        names = [r[0] for r in con.execute("describe change_points").fetchall()]
        con.register("change_point_rows", pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}))
        con.execute("insert into change_points select * from change_point_rows")
        con.unregister("change_point_rows")
    return len(rows)
