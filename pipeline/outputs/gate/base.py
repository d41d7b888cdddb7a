"""The base of a gate: a gh-pages snapshot (``0a62700-v0.6.4``, or a run id ``<folder>@<sha12>``), a
release, a Liger version or a benchmarked commit (full or short sha), resolved in the warehouse the
way `make compare` resolves a point (``analyze.compare.resolve_point``), and its runs on one GPU."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from pipeline.outputs.gate.candidate import FACT_COLUMNS, GateInputError
from pipeline.regress.judge import Point, resolve_point

_HEX = re.compile(r"^[0-9a-f]{7,40}$")
KNOWN_SHOWN = 8


@dataclass(frozen=True)
class Base:
    text: str  # as given
    kind: str  # 'snapshot' | 'commit' | 'version'
    label: str  # how the comment names it
    commit: str | None  # the benchmarked commit as the warehouse holds it (full, or short without a clone)
    release: str | None
    where: str  # the measurements it takes, as SQL over `measurements` with $base
    value: str


def _snapshot(con, text: str) -> Base | None:
    """A run id, or a folder name that is more than a bare sha (a bare sha is the commit: all its runs)."""
    if "@" not in text and _HEX.match(text.lower()):
        return None
    found = con.execute(
        """select distinct snapshot, benchmarked_commit, release from measurements
           where snapshot = $t or split_part(snapshot, '@', 1) = $t or ($t like '%@%' and starts_with(snapshot, $t))""",
        {"t": text},
    ).fetchall()
    if not found:
        return None
    if len(found) > 1:
        raise GateInputError(f"base {text!r} names {len(found)} runs: {', '.join(sorted(r[0] for r in found))}")
    snap, commit, release = found[0]
    return Base(text, "snapshot", snap.split("@")[0], commit, release, "snapshot = $base", snap)


def _known(con) -> str:
    releases = [r[0] for r in con.execute(
        "select distinct release from measurements where release is not null order by 1 desc"
    ).fetchall()]  # fmt: skip
    commits = [r[0] for r in con.execute(
        """select substr(benchmarked_commit, 1, 7) from measurements where benchmarked_commit is not null
           group by 1 order by max(commit_order) desc"""
    ).fetchall()]  # fmt: skip
    return (
        f"releases: {', '.join(releases[:KNOWN_SHOWN]) or 'none'}; "
        f"newest benchmarked commits: {', '.join(commits[:KNOWN_SHOWN]) or 'none'}"
    )


def resolve_base(con, text: str) -> Base:
    """``text`` as a base in the warehouse ``con``; GateInputError names what the warehouse knows."""
    text = text.strip()
    if not text:
        raise GateInputError("no base given (BASE=<commit | release | snapshot>)")
    found = _snapshot(con, text)
    if found is not None:
        return found
    try:
        point: Point = resolve_point(con, text)
    except LookupError as exc:
        raise GateInputError(f"unknown base: {exc}; the warehouse has {_known(con)}") from exc
    if point.axis == "commit":
        release = con.execute(
            "select max(release) from measurements where benchmarked_commit = $c", {"c": point.commit}
        ).fetchall()[0][0]
        return Base(text, "commit", point.commit[:7], point.commit, release, "benchmarked_commit = $base", point.commit)
    return Base(text, "version", point.version or text, None, point.version, "liger_version = $base", point.version)


def base_gpus(con, base: Base) -> list[str]:
    rows = con.execute(
        f"select distinct gpu_name from measurements where {base.where} order by 1", {"base": base.value}
    )
    return [r[0] for r in rows.fetchall()]


def base_rows(con, base: Base, gpu: str) -> pa.Table:
    """The base's measurements on ``gpu``, placed first on the commit axis (``commit_order`` 0); every
    run of a commit benchmarked twice takes part, as in ``commit_regressions``."""
    rows = con.sql(
        f"""select {FACT_COLUMNS}, null::bigint as version_rank,
                coalesce(benchmarked_commit, $label) as benchmarked_commit, commit_status, release,
                0::bigint as commit_order, coalesce(snapshot, 'base:' || $label) as snapshot
            from measurements where {base.where} and gpu_name = $gpu""",
        params={"base": base.value, "gpu": gpu, "label": base.label},
    ).to_arrow_table()
    if rows.num_rows == 0:
        gpus = base_gpus(con, base)
        raise GateInputError(f"base {base.text} has no run on {gpu}: it was measured on {', '.join(gpus) or 'no GPU'}")
    return rows
