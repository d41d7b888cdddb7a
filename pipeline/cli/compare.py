"""`make compare FROM=0.6.5 TO=0.7.0 [GPU="NVIDIA H100 80GB HBM3"] [ALL=1]`: the sweeps that moved
between two releases, versions or commits, with the verdict rule of sql/regress/verdicts/verdicts.sql."""

from __future__ import annotations

import argparse
import sys

from pipeline.regress.judge import compare
from pipeline.serve.connect import connect


def _ratio(value) -> str:
    return "" if value is None else f"x{value:.3f}"


def render(rows: list[dict]) -> str:
    if not rows:
        return "no sweep moved beyond its noise"
    header = ("verdict", "kernel", "provider", "mode", "metric", "GPU", "steps", "runs", "ratio", "normalized", "noise")
    table = [header]
    for r in rows:
        table.append(
            (
                r["verdict"],
                r["kernel_name"],
                r["kernel_provider"],
                r["kernel_operation_mode"],
                r["metric_name"],
                r["gpu_name"],
                f"{r['from_label']} -> {r['to_label']}",
                f"{r['from_runs']}/{r['to_runs']}",
                _ratio(r["ratio"]),
                _ratio(r["normalized_ratio"]),
                "" if r["threshold"] is None else f"+-{100 * r['threshold']:.1f}%",
            )
        )
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = ["\n".join(lines), "", "why:"]
    out += [
        f"  {r['kernel_name']} / {r['kernel_provider']} / {r['kernel_operation_mode']} / {r['metric_name']}"
        f" / {r['gpu_name']}: {r['verdict']}: {r['reason']}"
        for r in rows
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from pipeline.cli.parser import parse

    return run(parse(["compare", *(sys.argv[1:] if argv is None else argv)]))


def run(args: argparse.Namespace) -> int:
    """`liger-bench compare FROM TO [--gpu] [--all]`."""
    try:
        rows = compare(args.from_, args.to, args.gpu or None, moved_only=not args.all, connect=connect)
    except LookupError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
