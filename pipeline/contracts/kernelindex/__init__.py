"""One identity with KernelIndex: a Liger CSV row as KernelIndex's six `kernelindex.dev/v1alpha1` objects.

A Python re-implementation (not a copy) of KernelIndex's Liger importer, github.com/SamMausberg/KernelIndex
at e6c5a71 (`apps/web/src/server/import/liger/*.ts`, `import/shared.ts`, `identity/digest.ts`,
`schemas/*.ts`; a reading copy is in ../shared/reference/kernelindex, relative to the checkout), one module
per upstream part:

- `liger_types` (types.ts, kinds.ts): the CSV header, the source, the dtypes, `API_VERSION`;
- `kernels` (kernels.ts, kernels-extra.ts, kernels-losses.ts): the curated kernels and timed passes, as data;
- `providers` (normalize.ts): the hardware, project and provider tables, as data;
- `ecmascript` (the JavaScript semantics below) and `shared` (shared.ts: kebab, timestamps, axis expressions);
- `binders` (the kernels' `bind` functions), `manifests` (normalize.ts: the five objects);
- `identity` (reconcile.ts's checks: a row's objects but its run), `run` (normalize.ts `runFromRow`);
- `run_text` (identity/digest.ts, fast: a run's RFC 8785 text from one template);
- `mapping` (discover.ts `parseRows`, reconcile.ts: a row, a file).

The same run text in DuckDB SQL is staging's (pipeline/stage/kernelindex_sql.py). One upstream CSV row becomes:

- `OperationSpec`: one per curated kernel (the module computation; all passes share it);
- `WorkloadCase`: one per kernel and bound case (axes from `x_value` + the config, plus the float dtype);
- `ImplementationRevision`: one per kernel and provider;
- `BenchmarkProtocol`: one per timed pass (`forward`, `backward`, `full`);
- `ExecutionEnvironment`: one per GPU (hardware only: the CSV records no CUDA, driver or torch version);
- `BenchmarkRun`: one per row.

Each object's digest is `"sha256:" + sha256(RFC 8785 canonical JSON of {apiVersion, kind, spec})`
(`object_digest`, contracts/digests.py); `metadata` (names, titles, `liger_version`, the git commit) never enters a
digest.

Which rows map, and why the others do not (checked in this order, as `reconcileLiger` does; the reason
names are those of KernelIndex's report and of the golden `summary.json`):

1. `memoryRows`: `metric_name` is not `speed` (memory rows carry no latency);
2. `uncuratedKernels`: the kernel is not one of the 35 whose tensor semantics KernelIndex verified
   (`dpo_loss`, `dyt*`, `poly_norm`, `qwen2vl_mrope`, ... are not), counted per kernel name;
3. `unknownConfig`, counted per kernel name: the pass is not forward/backward/full (e.g. `no-grad-forward`),
   or `x_value` is not a positive integer (`qwen3.5_9b`), or the config is not JSON, or the config's shape
   is not the one the kernel's binder knows (the CSV spans script eras; each binder guards on its era's keys);
   the pass is checked before the provider, the config after it;
4. `unknownProvider`: the provider is not in KernelIndex's provider table (`liger_triton`, `liger_cutile`,
   `liger-fp32-accum`, ...), counted per provider;
5. `unknownGpu`: the GPU is not in its hardware table (`NVIDIA H200`, `NVIDIA H100 NVL`,
   `NVIDIA A100-SXM4-40GB`), counted per GPU name;
6. `issues`: the run cannot be normalized (median not a positive finite number, unparseable timestamp);
7. `duplicateRows`: within one file, a run whose externalId was already made.

Everything but the run depends only on (kernel, pass, provider, x_name, x_value, config, GPU): that part is
`resolve_identity`, cached per distinct tuple, so it can be applied per distinct value of a column set.

JavaScript semantics reproduced (the digests depend on them): numbers are IEEE doubles (`Number(...)` of a
CSV string, `JSON.parse` of the config: `4096.0` is the integer 4096, `1e21` stays a double); `Math.round`
rounds ties up (`2.5 -> 3`, `-2.5 -> -2`; Python's `round` rounds to even); numbers print as ECMAScript
does (`0.000001`, `1e+21`, via RFC 8785); axis names sort with `localeCompare` (`_` before digits before
letters); timestamps without a zone are UTC and print as `toISOString()` (`...T21:27:38.000Z`).
"""

from pipeline.contracts.kernelindex.ecmascript import js_json_parse
from pipeline.contracts.kernelindex.identity import (
    IDENTITY_COLUMNS,
    IDENTITY_REASONS,
    SKIP_REASONS,
    Identity,
    Skip,
    rejected_reason,
    resolve_identity,
)
from pipeline.contracts.kernelindex.kernels import KERNELS_BY_NAME
from pipeline.contracts.kernelindex.liger_types import API_VERSION, CSV_COLUMNS
from pipeline.contracts.kernelindex.manifests import operation_digest, operation_manifest
from pipeline.contracts.kernelindex.mapping import FileMapping, MappedRow, header_problem, map_file, map_row, parse_csv
from pipeline.contracts.kernelindex.run import build_run
from pipeline.contracts.kernelindex.run_text import json_string_halves, row_run_digest, run_digest, run_frame

# The public API: what the stages, the model and the export use.
__all__ = [
    "API_VERSION",
    "CSV_COLUMNS",
    "IDENTITY_COLUMNS",
    "IDENTITY_REASONS",
    "KERNELS_BY_NAME",
    "SKIP_REASONS",
    "FileMapping",
    "Identity",
    "MappedRow",
    "Skip",
    "build_run",
    "header_problem",
    "js_json_parse",
    "json_string_halves",
    "map_file",
    "map_row",
    "operation_digest",
    "operation_manifest",
    "parse_csv",
    "rejected_reason",
    "resolve_identity",
    "row_run_digest",
    "run_digest",
    "run_frame",
]
