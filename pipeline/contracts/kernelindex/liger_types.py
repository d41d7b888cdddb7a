"""Constants of KernelIndex's Liger importer: `apps/web/src/server/import/liger/types.ts` (`LIGER_REPO_URL`,
`LIGER_SOURCE.slug`, the CSV row schema `ligerRow`, `DTYPES`) and `schemas/kinds.ts` (`API_VERSION`), of
github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy: ../shared/reference/kernelindex, relative to the
checkout).
"""

from __future__ import annotations

API_VERSION = "kernelindex.dev/v1alpha1"  # schemas/kinds.ts
LIGER_REPO_URL = "https://github.com/linkedin/Liger-Kernel"
SOURCE_SLUG = "liger-kernel-bench"  # LIGER_SOURCE.slug
# ligerRow: a strict object, so a missing or an extra column makes the row a parse issue. Upstream's CSV
# header, and the project's one list of it: the CSV reader, the model and the bench generator derive theirs.
CSV_COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}
