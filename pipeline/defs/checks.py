"""Asset checks: digest integrity, fact-key uniqueness, quantile order, dangling digests, fact-less sightings,
quarantine counts.

Each run's checks read the facts that run committed (`run_seq`); a full warehouse run and every
`LIGER_FULL_CHECK_EVERY`-th run check every fact (pipeline/serve/checks.check_scope)."""

import dagster as dg

from pipeline.config import load
from pipeline.defs.resources import WarehouseResource
from pipeline.serve import checks

_SCOPE: dict[str, str] = {}


def _connect(context, warehouse: WarehouseResource):
    wh = warehouse.open()
    published = wh.published()
    if published is None:
        raise dg.Failure("nothing published yet")
    since, scope = checks.check_scope(published, context.run.run_id, load().full_check_every)
    _SCOPE[context.run.run_id] = scope
    return checks.connect(wh, published, since)


def _result(context, rows: list[tuple], what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not rows,
        metadata={
            "offending_rows": len(rows),
            "checked": _SCOPE.get(context.run.run_id, ""),
            "sample": dg.MetadataValue.json([list(map(str, r)) for r in rows[:10]]),
        },
        description=f"{len(rows)} {what} in {_SCOPE.get(context.run.run_id, 'the facts checked')}",
    )


@dg.asset_check(asset="fact_measurement", description="Every measurement and dimension digest recomputes.")
def digest_integrity(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        return _result(context, checks.digest_integrity(con), "digests that do not recompute")


@dg.asset_check(asset="fact_measurement", description="One row per measurement digest and per identity key.")
def fact_key_unique(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        return _result(context, checks.sql_check(con, "fact_key_unique"), "duplicate keys")


@dg.asset_check(asset="fact_measurement", description="0 < p20 <= p50 <= p80 on every fact.")
def quantile_order(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        return _result(context, checks.sql_check(con, "quantile_order"), "facts out of quantile order")


@dg.asset_check(asset="fact_measurement", description="Every dimension digest a fact names exists in its dim table.")
def dimensions_resolve(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        return _result(context, checks.sql_check(con, "dangling_dimension"), "dangling dimension digests")


@dg.asset_check(asset="fact_sighting", description="Every sighting names a measurement that is a fact.")
def sighting_has_fact(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        return _result(context, checks.sql_check(con, "sighting_without_fact"), "sightings without a fact")


@dg.asset_check(asset="quarantine", description="Quarantined rows by reason; WARN when any input was rejected.")
def quarantine_is_empty(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(context, warehouse) as con:
        counts = checks.quarantine_counts(con)
    return dg.AssetCheckResult(
        passed=not counts,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"total": sum(counts.values()), **{f"reason/{k}": v for k, v in counts.items()}},
        description=", ".join(f"{k}: {v}" for k, v in counts.items()) or "nothing quarantined",
    )
