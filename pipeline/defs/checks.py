"""Asset checks: digest integrity, fact-key uniqueness, quantile order, dangling digests, fact-less sightings,
quarantine counts."""

import dagster as dg

from pipeline.defs.resources import WarehouseResource
from pipeline.serve import checks


def _connect(warehouse: WarehouseResource):
    wh = warehouse.open()
    published = wh.published()
    if published is None:
        raise dg.Failure("nothing published yet")
    return checks.connect(wh, published)


def _result(rows: list[tuple], what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not rows,
        metadata={"offending_rows": len(rows), "sample": dg.MetadataValue.json([list(map(str, r)) for r in rows[:10]])},
        description=f"{len(rows)} {what}",
    )


@dg.asset_check(asset="fact_measurement", description="Every measurement and dimension digest recomputes.")
def digest_integrity(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        return _result(checks.digest_integrity(con), "digests that do not recompute")


@dg.asset_check(asset="fact_measurement", description="One row per measurement digest and per identity key.")
def fact_key_unique(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        return _result(checks.sql_check(con, "fact_key_unique"), "duplicate keys")


@dg.asset_check(asset="fact_measurement", description="0 < p20 <= p50 <= p80 on every fact.")
def quantile_order(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        return _result(checks.sql_check(con, "quantile_order"), "facts out of quantile order")


@dg.asset_check(asset="fact_measurement", description="Every dimension digest a fact names exists in its dim table.")
def dimensions_resolve(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        return _result(checks.sql_check(con, "dangling_dimension"), "dangling dimension digests")


@dg.asset_check(asset="fact_sighting", description="Every sighting names a measurement that is a fact.")
def sighting_has_fact(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        return _result(checks.sql_check(con, "sighting_without_fact"), "sightings without a fact")


@dg.asset_check(asset="quarantine", description="Quarantined rows by reason; WARN when any input was rejected.")
def quarantine_is_empty(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with _connect(warehouse) as con:
        counts = checks.quarantine_counts(con)
    return dg.AssetCheckResult(
        passed=not counts,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"total": sum(counts.values()), **{f"reason/{k}": v for k, v in counts.items()}},
        description=", ".join(f"{k}: {v}" for k, v in counts.items()) or "nothing quarantined",
    )
