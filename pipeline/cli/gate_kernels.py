"""`python -m pipeline.cli.gate_kernels <Liger checkout> <base rev> <head rev>`: the kernels a pull
request touches (``touches_kernel`` over its commits), one a line, among those upstream's harness can
benchmark (benchmark/scripts/benchmark_<kernel>.py). The gate's workflow runs exactly these."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.outputs.gate.candidate import GateInputError
from pipeline.outputs.gate.suspects import touched_kernels


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m pipeline.cli.gate_kernels <Liger checkout> <base rev> <head rev>", file=sys.stderr)
        return 2
    try:
        kernels = touched_kernels(Path(args[0]), args[1], args[2])
    except GateInputError as exc:
        print(f"gate_kernels: {exc}", file=sys.stderr)
        return 2
    print("\n".join(kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
