"""The pull-request gate (docs/gate.md): a candidate run against its base in the warehouse, one verdict
per sweep by THE rule, a status, gate.json and a PR comment (gate.md)."""

from pipeline.outputs.gate.candidate import GateInputError
from pipeline.outputs.gate.judge import GateOptions, run_gate, status_of

__all__ = ["GateInputError", "GateOptions", "run_gate", "status_of"]
