"""The regression report step alone, on a built warehouse (the call the Dagster asset makes)."""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs.report.write import DEFAULT_MAX_PLOTS, write_report


def run(db: Path, out_dir: Path, max_plots: int = DEFAULT_MAX_PLOTS) -> dict:
    summary = write_report(db, out_dir, max_plots=max_plots)
    return {"flagged_sweeps": summary["flagged_sweeps"], "plots": summary["plots"]}
