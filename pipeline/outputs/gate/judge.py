"""The gate, Dagster-free: a candidate run against its base's runs in the warehouse, on the candidate's
GPU, with THE verdict rule and the warehouse's measured noise (``analyze.compare.judge_rows``: the
analysis models on a private connection that holds the two sides as two steps of the commit axis,
``noise_floor`` copied from the warehouse). It writes nothing into the warehouse.

    from pipeline.outputs.gate import GateOptions, run_gate
    doc = run_gate(GateOptions(run=Path("all_benchmark_data.csv"), base="0a62700"))
    doc["status"], doc["exit_code"]   # 'fail', 1

Status: ``fail`` when a sweep is a ``regression``; ``neutral`` when none is but some verdict asks for a
look and is no failure (``inconclusive``, ``unstable``, ``transient``); ``skipped`` when no sweep could
be judged (nothing the base measured too, or every sweep ``insufficient``); ``pass`` otherwise
(``unchanged``, ``improvement``, and ``drift``: the reference moved with it, the machine, not Liger).
Bad input raises ``GateInputError`` (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.outputs.gate.base import Base, base_gpus, base_rows, resolve_base
from pipeline.outputs.gate.candidate import Candidate, GateInputError, load_candidate
from pipeline.outputs.gate.suspects import AUTO, auto_base, resolve_commit, resolve_head, suspects_by_kernel
from pipeline.regress.judge import SWEEP_KEY, judge_rows, sweep_verdicts

FORMAT = "liger-gate/1"
FAILING = ("regression",)
NEUTRAL = ("inconclusive", "unstable", "transient")
NOT_JUDGED = ("insufficient",)
EXIT = {"pass": 0, "neutral": 0, "skipped": 0, "fail": 1}
CANDIDATE_LABEL = "candidate"


@dataclass(frozen=True)
class GateOptions:
    run: Path  # the candidate: a CSV in upstream's format, or a folder of them
    base: str  # a commit, release, Liger version, snapshot, or 'auto' (needs repo and head)
    gpu: str | None = None  # which of the candidate's GPUs (needed only when it has several)
    head: str | None = None  # the candidate's commit (a revision of the clone, or a sha)
    repo: Path | None = None  # a Liger-Kernel clone: full shas and the commits between base and head
    warn_only: bool = False
    extra: dict = field(default_factory=dict)


def _gpu(candidate: Candidate, wanted: str | None) -> str:
    if wanted:
        if wanted not in candidate.gpus:
            raise GateInputError(
                f"the candidate has no row on {wanted}: it was measured on {', '.join(candidate.gpus)}"
            )
        return wanted
    if len(candidate.gpus) != 1:
        raise GateInputError(f"the candidate was measured on {len(candidate.gpus)} GPUs ({', '.join(candidate.gpus)}): "
                             "choose one with GPU=")  # fmt: skip
    return candidate.gpus[0]


def _without_candidate(base: pa.Table, candidate: pa.Table) -> pa.Table:
    """The candidate is never its own base: base measurements that are the candidate's (same digest,
    e.g. a run the warehouse already holds) are left out."""
    own = pc.is_in(base.column("measurement_digest"), value_set=candidate.column("measurement_digest"))
    return base.filter(pc.invert(own))


def status_of(verdicts: list[str]) -> str:
    judged = [v for v in verdicts if v not in NOT_JUDGED]
    if not judged:
        return "skipped"
    if any(v in FAILING for v in judged):
        return "fail"
    return "neutral" if any(v in NEUTRAL for v in judged) else "pass"


def _result(row: dict, suspects: dict) -> dict:
    kernels = suspects.get("kernels") or {}
    out = {
        "kernel": row["kernel_name"], "provider": row["kernel_provider"], "pass": row["kernel_operation_mode"],
        "metric": row["metric_name"], "x_name": row["x_name"], "config": row["extra_config"],
        "verdict": row["verdict"], "ratio": row["ratio"], "normalized_ratio": row["normalized_ratio"],
        "reference_ratio": row["reference_ratio"], "threshold": row["threshold"],
        "threshold_source": row["threshold_source"], "noise_scope": row["noise_scope"],
        "base_runs": row["from_runs"], "candidate_runs": row["to_runs"], "points": row["points"],
        "reason": row["reason"],
    }  # fmt: skip
    if row["verdict"] in FAILING and row["kernel_name"] in kernels:
        out["suspects"] = kernels[row["kernel_name"]]
    return out


def _not_compared(rows: pa.Table, judged: list[dict]) -> int:
    """The candidate's liger-family sweeps with no verdict (the base never measured them)."""
    cand = rows.filter(pc.and_(pc.equal(rows.column("commit_order"), 1),
                               pc.starts_with(rows.column("kernel_provider"), "liger")))  # fmt: skip
    sweeps = {tuple(r[k] for k in SWEEP_KEY) for r in cand.select(list(SWEEP_KEY)).to_pylist()}
    return len(sweeps - {tuple(r[k] for k in SWEEP_KEY) for r in judged})


def _base_doc(base: Base, rows: pa.Table, repo: Path | None) -> dict:
    snapshots = sorted(set(rows.column("snapshot").to_pylist()))
    return {"text": base.text, "kind": base.kind, "label": base.label, "commit": resolve_commit(repo, base.commit),
            "release": base.release, "runs": len(snapshots), "snapshots": snapshots}  # fmt: skip


def run_gate(opts: GateOptions, con) -> dict:
    """The gate's document (gate.json): ``con`` is a read-only connection to liger.duckdb."""
    head = resolve_head(opts.repo, opts.head)
    label = (head or CANDIDATE_LABEL)[:40]
    candidate = load_candidate(opts.run, commit_label=label, snapshot=f"{CANDIDATE_LABEL}:{opts.run.name}")
    gpu = _gpu(candidate, opts.gpu)
    base = resolve_base(con, auto_base(con, opts.repo, head, gpu) if opts.base.strip() == AUTO else opts.base)
    base_table = _without_candidate(base_rows(con, base, gpu), candidate.rows)
    rows = pa.concat_tables([base_table, candidate.rows.filter(pc.equal(candidate.rows.column("gpu_name"), gpu))],
                            promote_options="permissive")  # fmt: skip
    scratch = judge_rows(con, rows)
    try:
        judged = sweep_verdicts(scratch, "commit", moved_only=False)
    finally:
        scratch.close()
    flagged = {r["kernel_name"] for r in judged if r["verdict"] in FAILING}
    suspects = suspects_by_kernel(opts.repo, base.commit, head, flagged) if flagged else {}
    status = status_of([r["verdict"] for r in judged])
    counts: dict[str, int] = {}
    for r in judged:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return {
        "format": FORMAT, "status": status, "exit_code": 0 if opts.warn_only else EXIT[status],
        "warn_only": opts.warn_only, "gpu": gpu, "base": _base_doc(base, base_table, opts.repo),
        "base_gpus": base_gpus(con, base),
        "candidate": {"files": list(candidate.files), "commit": head, "rows": candidate.rows.num_rows,
                      "gpus": list(candidate.gpus)},
        "counts": dict(sorted(counts.items(), key=lambda kv: -kv[1])), "sweeps": len(judged),
        "not_compared": _not_compared(rows, judged),
        "suspects": {k: v for k, v in suspects.items() if k != "kernels"} or None,
        "results": [_result(r, suspects) for r in judged],
    }  # fmt: skip
