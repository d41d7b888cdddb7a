/* MODEL
name: provider_renames
kind: VIEW
grain: [from_provider]
*/
-- provider_renames: THE reviewed alias table of Liger provider names (one row per rename).
--
-- When upstream added the cuTile / CuTe DSL backends, its benchmark scripts started calling the
-- Triton kernels `liger_triton` (beside `liger_cutile`, `liger_cutedsl`) where they had said
-- `liger`. A measurement whose provider is `to_provider`, at `since_version` or later, is keyed
-- under `from_provider` (ranked_measurements), so its sweep is compared with the earlier
-- versions; `measured_provider` keeps the name as measured and version_coverage says
-- "compared across the rename liger -> liger_triton".
-- Only renames with evidence are listed: never map by guessing (a new backend such as
-- liger_cutile is a new provider, not a rename). Review a new row like code.
select from_provider, to_provider, since_version, evidence
from (
    values
    (
        'liger', 'liger_triton', '0.8.0',
        'data_raw/liger_csv/2026-06-25_7401db04e3_all_benchmark_data_cutile.csv: the cutile '
        || 'benchmark scripts name the Triton kernels liger_triton beside liger_cutile; the same '
        || 'kernels, configs and GPU were liger up to 0.7.0'
    ),
    (
        'liger_rms_norm', 'liger_triton_rms_norm', '0.8.0',
        'data_raw/liger_csv/2026-08-21_7a12e09257_all_benchmark_data_cutile.csv: '
        || 'liger_triton_rms_norm beside liger_cutile_rms_norm; liger_rms_norm up to 0.7.0'
    ),
    (
        'liger_fused_add_rms_norm', 'liger_triton_fused_add_rms_norm', '0.8.0',
        'data_raw/liger_csv/2026-08-21_7a12e09257_all_benchmark_data_cutile.csv: '
        || 'liger_triton_fused_add_rms_norm beside liger_cutile_fused_add_rms_norm; '
        || 'liger_fused_add_rms_norm up to 0.7.0'
    )
) as renames (from_provider, to_provider, since_version, evidence)
