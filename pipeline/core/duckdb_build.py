"""Everything that goes into liger.duckdb besides the Parquet views: settings, version order, change points."""

from __future__ import annotations

from pathlib import Path

import duckdb

from .change_points import build_change_points
from .regression_settings import RegressionSettings, write_settings_table
from .versions import write_version_order_table
from .warehouse import Warehouse


def build_views(wh: Warehouse, gen: Path, settings: RegressionSettings | None = None) -> list[str]:
    settings = settings or RegressionSettings()

    def settings_table(con: duckdb.DuckDBPyConnection) -> None:
        write_settings_table(con, settings)

    def version_order(con: duckdb.DuckDBPyConnection) -> None:
        versions = [r[0] for r in con.execute("select distinct liger_version from fact_measurement").fetchall()]
        write_version_order_table(con, versions)

    return wh.build_duckdb(gen, before_views=[settings_table, version_order], after_views=[build_change_points])
