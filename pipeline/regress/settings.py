"""Thresholds for regression verdicts, stored as the one-row table ``regression_settings``.

The analysis models (``sql/regress/*.sql``) read every threshold from
that table, so changing a default here (or in the Dagster run config of the
DuckDB build asset) changes the verdicts without touching SQL.

Why these defaults (measured on the shipped upstream history, 118 same-version
re-run points):

* The median same-version re-run moves the p50 by 1.7 % (speed: 2.9 %,
  memory: 0 %), but some groups move far more (a few kernels move 10 % or more
  between two runs of one version, mostly at the smallest sizes and across dev
  builds that kept the version string). A fixed ratio alarm would therefore be
  both too loose for memory and too tight for the noisy kernels, so the noise
  is estimated per kernel/provider/mode/metric/GPU from the re-runs.
* ``noise_quantile = 0.9``: the noise of one re-run sweep (a sweep measured
  more than once at one version) is the 90th percentile of its points'
  within-version spread ln(max p50 / min p50), not the median: a verdict has
  to survive the bad re-runs, not the typical one. Sweeps have 4-8 points, so
  this is close to their worst point.
* ``min_rerun_sweeps = 3``: noise is measured per GPU, metric and duration bucket (sql/regress/
  noise_floor.sql) from re-runs (a commit benchmarked twice, snapshots with no kernel change between
  them, a version run twice without known commits). A bucket's loudest and quietest re-run sweeps are
  left out, and it is used only with at least 3 re-run sweeps left, so no single run (cold or quiet)
  sets a threshold; else the GPU's row for the metric, else the defaults below. Never another GPU's.
* ``noise_multiplier = 1.5``: a change must exceed 1.5x that noise.
* ``min_noise_floor = 0.03``: no speed threshold is ever below 3 %;
  ``memory_min_noise_floor = 0.001``: Liger's harness measures memory exactly (re-runs repeat the same
  MB), so a reproduced memory step of 0.5 % is real.
* ``default_noise_threshold = 0.10`` / ``default_memory_threshold = 0.03``: a GPU with too few re-runs
  of its own (the H200 runs: one per version) uses these, and every reason says so.
* ``settle_runs = 3``: a change beyond noise whose bands overlap is ``inconclusive`` while a side has
  fewer runs; the reason says how many more would settle it. With 3 agreeing runs a side, the medians decide.
* ``require_band_separation = True``: upstream stores p20/p80 beside every
  median; a point is only a regression when the bands do not overlap
  (to_p20 > from_p80), an improvement when to_p80 < from_p20.
* ``sweep_min_band_fraction = 0.5``: a sweep verdict needs at least half of
  the shared x points to have separated bands in the direction of the change.
* ``min_shared_points = 2``: a sweep verdict needs two x points that both
  versions measured; one point is too easy to fool (smallest sizes are the
  noisiest), and a single point is still judged in ``regressions``.
* ``reference_max_gap_hours = 24``: a reference provider (torch, huggingface,
  ...) only normalizes a liger measurement when it was measured within a day
  of it at the same version, i.e. on the same machine in the same session.
* ``change_point_penalty = 1.0``: the PELT penalty, in units of the
  squared log-threshold of the sweep; a shift smaller than the noise threshold
  never opens a new segment.
* ``change_point_window = 32``: PELT judges each step against the 32 steps around it, not the
  whole history: a chain longer than the window is segmented in windows of 32 levels, each half
  overlapping the next, and a boundary counts in the window where it lies in the middle half.
  Its cost grows with the steps of a sweep, not their square (docs/regressions.md, issue 47);
  0 segments every chain whole.
* ``noise_tolerance = 0.05``: a verdict is judged against the noise as it was measured when the
  verdict was judged (``noise_judged``); a later run re-judges the pairs of a GPU, metric and
  duration bucket only when its threshold moved by 5 % of itself or more (or its row became trusted,
  untrusted, new or gone). 0 re-judges every pair whenever any noise figure changes
  (docs/regressions.md, issue 57).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pipeline.config import load

__all__ = ["RegressionSettings", "write_settings_table", "SETTINGS_TABLE"]

SETTINGS_TABLE = "regression_settings"


class RegressionSettings(BaseModel):
    """Thresholds for the regression verdicts (see module docstring for the reasoning)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_noise_floor: float = Field(
        0.03,
        ge=0.0,
        le=1.0,
        description="Smallest relative change ever judged beyond noise (0.03 = 3 %).",
    )
    noise_multiplier: float = Field(
        1.5,
        gt=0.0,
        le=100.0,
        description="A change must exceed this many times the re-run spread of its group.",
    )
    noise_quantile: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="Quantile of the same-version re-run |log ratio| used as a group's spread.",
    )
    min_rerun_sweeps: int = Field(
        3,
        ge=1,
        le=10_000,
        description="Re-run sweeps a group needs before its own noise replaces the pooled one.",
    )
    require_band_separation: bool = Field(
        True,
        description="Require non-overlapping p20-p80 bands for a regression/improvement.",
    )
    sweep_min_band_fraction: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Share of shared x points whose bands must separate for a sweep verdict.",
    )
    min_shared_points: int = Field(
        2,
        ge=1,
        le=10_000,
        description="Minimum x points measured by both versions for a sweep verdict.",
    )
    reference_max_gap_hours: float = Field(
        24.0,
        ge=0.0,
        le=24.0 * 3650,
        description="A reference measurement counts only within this many hours of the liger one.",
    )
    memory_min_noise_floor: float = Field(
        0.001,
        ge=0.0,
        le=1.0,
        description="Smallest memory change judged beyond noise: Liger's harness measures MB exactly.",
    )
    default_noise_threshold: float = Field(
        0.10,
        ge=0.0,
        le=10.0,
        description="Threshold on a GPU with too few re-runs of its own (speed and other metrics).",
    )
    default_memory_threshold: float = Field(
        0.03,
        ge=0.0,
        le=10.0,
        description="Memory threshold on a GPU with too few memory re-runs of its own.",
    )
    settle_runs: int = Field(
        3,
        ge=1,
        le=1000,
        description="Runs per side whose agreement settles a change beyond noise when bands overlap.",
    )
    change_point_penalty: float = Field(
        1.0,
        gt=0.0,
        le=1000.0,
        description="PELT penalty in units of the sweep's squared log threshold.",
    )
    change_point_window: int = Field(
        32,
        ge=0,
        le=100_000,
        description="Levels of a sweep's chain that PELT segments at once (0: the whole chain); at least 8.",
    )
    noise_tolerance: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="A judged bucket's threshold is kept while the new one differs by less than this share of it.",
    )


_COLUMNS: dict[str, str] = {
    "min_noise_floor": "double",
    "noise_multiplier": "double",
    "noise_quantile": "double",
    "min_rerun_sweeps": "integer",
    "require_band_separation": "boolean",
    "sweep_min_band_fraction": "double",
    "min_shared_points": "integer",
    "reference_max_gap_hours": "double",
    "memory_min_noise_floor": "double",
    "default_noise_threshold": "double",
    "default_memory_threshold": "double",
    "settle_runs": "integer",
    "change_point_penalty": "double",
    "change_point_window": "integer",
    "noise_tolerance": "double",
}
assert set(_COLUMNS) == set(RegressionSettings.model_fields), "settings table out of sync"


def write_settings_table(con, settings: RegressionSettings | None = None) -> RegressionSettings:
    """Create (or replace) the one-row ``regression_settings`` table in ``con``.

    Values are bound as parameters; only the fixed column names above appear in SQL.
    """
    settings = settings or RegressionSettings()
    columns = ", ".join(f"{name} {sql_type} not null" for name, sql_type in _COLUMNS.items())
    con.execute(f"create or replace table {SETTINGS_TABLE} ({columns})")
    placeholders = ", ".join("?" for _ in _COLUMNS)
    values = [getattr(settings, name) for name in _COLUMNS]
    con.execute(f"insert into {SETTINGS_TABLE} values ({placeholders})", values)
    return settings


FRESHNESS_TABLE = "freshness_settings"


def write_freshness_table(con, now=None, factor: float | None = None) -> None:
    """The one-row ``freshness_settings`` table that ``source_freshness`` judges by: ``now`` (NULL: the
    clock when the view is read) and the overdue factor, from LIGER_FRESHNESS_NOW / _FACTOR."""
    settings = load()
    now = settings.freshness_now if now is None else now
    factor = settings.freshness_factor if factor is None else factor
    con.execute(f"create or replace table {FRESHNESS_TABLE} (judged_at timestamp, overdue_factor double not null)")
    con.execute(f"insert into {FRESHNESS_TABLE} values (?, ?)", [now, factor])


def freshness_state() -> list:
    """What the freshness table is made of, for the build's state (a new LIGER_FRESHNESS_NOW rebuilds)."""
    settings = load()
    return [settings.freshness_now.isoformat() if settings.freshness_now else None, settings.freshness_factor]
