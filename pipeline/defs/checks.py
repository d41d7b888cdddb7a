"""Asset checks: digest integrity, fact-key uniqueness, quantile order, dangling digests, fact-less sightings,
quarantine counts.

Each run's checks read the facts that run committed (`run_seq`); a full warehouse run and every
`LIGER_FULL_CHECK_EVERY`-th run check every fact (pipeline/serve/checks.check_scope). They run as one
step on one connection over the published state: a step and a connection each (the views over every
table's files) cost more than most checks' own queries. Each check is still its own result in the UI,
and a selection of some of them runs only those. The step computes what it reports: no thread of
another step evaluates them.
"""

from collections.abc import Callable, Iterator

import dagster as dg
import duckdb

from pipeline.config import load
from pipeline.defs.resources import WarehouseResource
from pipeline.serve import checks
from pipeline.store.warehouse import Published, Warehouse

Offending = Callable[[duckdb.DuckDBPyConnection], list[tuple]]

# check name -> (asset, description, the offending rows, what one of them is)
_ROW_CHECKS: dict[str, tuple[str, str, Offending, str]] = {
    "digest_integrity": (
        "fact_measurement",
        "Every measurement and dimension digest recomputes.",
        checks.digest_integrity,
        "digests that do not recompute",
    ),
    "fact_key_unique": (
        "fact_measurement",
        "One row per measurement digest and per identity key.",
        lambda con: checks.sql_check(con, "fact_key_unique"),
        "duplicate keys",
    ),
    "quantile_order": (
        "fact_measurement",
        "0 < p20 <= p50 <= p80 on every fact.",
        lambda con: checks.sql_check(con, "quantile_order"),
        "facts out of quantile order",
    ),
    "dimensions_resolve": (
        "fact_measurement",
        "Every dimension digest a fact names exists in its dim table.",
        lambda con: checks.sql_check(con, "dangling_dimension"),
        "dangling dimension digests",
    ),
    "sighting_has_fact": (
        "fact_sighting",
        "Every sighting names a measurement that is a fact.",
        lambda con: checks.sql_check(con, "sighting_without_fact"),
        "sightings without a fact",
    ),
}
_QUARANTINE = dg.AssetCheckSpec(
    "quarantine_is_empty",
    asset="quarantine",
    description="Quarantined rows by reason; WARN when any input was rejected.",
)


def _row_result(spec: dg.AssetCheckSpec, rows: list[tuple], what: str, scope: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=spec.asset_key,
        check_name=spec.name,
        passed=not rows,
        metadata={
            "offending_rows": len(rows),
            "checked": scope,
            "sample": dg.MetadataValue.json([list(map(str, r)) for r in rows[:10]]),
        },
        description=f"{len(rows)} {what} in {scope}",
    )


def _quarantine_result(counts: dict[str, int]) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=_QUARANTINE.asset_key,
        check_name=_QUARANTINE.name,
        passed=not counts,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"total": sum(counts.values()), **{f"reason/{k}": v for k, v in counts.items()}},
        description=", ".join(f"{k}: {v}" for k, v in counts.items()) or "nothing quarantined",
    )


_SPECS = {
    name: dg.AssetCheckSpec(name, asset=asset, description=description)
    for name, (asset, description, _, _) in _ROW_CHECKS.items()
}


def _evaluate(wh: Warehouse, published: Published, since: int | None, names: set[str]) -> tuple[dict, dict]:
    """The offending rows of each check named, and the quarantine counts, over one connection."""
    with checks.connect(wh, published, since) as con:
        rows = {name: offending(con) for name, (_, _, offending, _) in _ROW_CHECKS.items() if name in names}
        return rows, checks.quarantine_counts(con)


@dg.multi_asset_check(specs=[*_SPECS.values(), _QUARANTINE], can_subset=True, name="warehouse_checks")
def warehouse_checks(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> Iterator[dg.AssetCheckResult]:
    wh = warehouse.open()
    published = wh.published()
    if published is None:
        raise dg.Failure("nothing published yet")
    since, scope = checks.check_scope(published, context.run.run_id, load().full_check_every)
    selected = {key.name for key in context.selected_asset_check_keys}
    rows, counts = _evaluate(wh, published, since, selected)
    for name, spec in _SPECS.items():
        if name in selected:
            _, _, _, what = _ROW_CHECKS[name]
            yield _row_result(spec, rows[name], what, scope)
    if _QUARANTINE.name in selected:
        yield _quarantine_result(counts)
