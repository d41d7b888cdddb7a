"""Runs one upstream benchmark script as ``python benchmark/scripts/benchmark_<kernel>.py`` would,
optionally narrowed to the judged sweep (standard library only; runs in the harness interpreter).

Usage: ``python harness_shim.py <script> [args...]``. Upstream's scripts call
``utils.run_benchmarks(...)`` once per metric with every pass, provider and config; a whole softmax
run takes about 50 s on an H200. With ``LIGER_BISECT_ONLY_METRIC`` / ``_PASS`` / ``_CONFIG`` /
``_PROVIDERS`` set, calls for another metric are skipped and the passes, configs and providers are cut
to the asked ones before upstream's own function runs, so the rows written are upstream's, just fewer.
A harness without ``utils.run_benchmarks`` runs whole.
"""

import json
import os
import runpy
import sys


def same_config(wanted, got):
    """One config rule for the shim and the runner: equal as JSON values (the warehouse keeps configs
    canonical, upstream writes ``json.dumps(config)`` in its own key order and spacing), else as text."""
    if wanted == got:
        return True
    try:
        return json.loads(wanted) == json.loads(got)
    except (TypeError, ValueError):
        return False


def _offer(kwargs):
    """Note each (metric, pass) the harness offers, so a run narrowed to nothing can say what it had."""
    path = os.environ.get("LIGER_BISECT_OFFERED")
    if path:
        with open(path, "a") as fh:
            for mode in kwargs.get("kernel_operation_modes") or []:
                fh.write(f"{kwargs.get('metric_name')}\t{mode}\n")


def _narrow(run_benchmarks):
    metric = os.environ.get("LIGER_BISECT_ONLY_METRIC")
    mode = os.environ.get("LIGER_BISECT_ONLY_PASS")
    config = os.environ.get("LIGER_BISECT_ONLY_CONFIG")
    providers = [p for p in os.environ.get("LIGER_BISECT_ONLY_PROVIDERS", "").split(",") if p]

    def narrowed(*args, **kwargs):
        _offer(kwargs)
        if metric and kwargs.get("metric_name", metric) != metric:
            return None
        if mode and kwargs.get("kernel_operation_modes"):
            kept = [m for m in kwargs["kernel_operation_modes"] if m == mode]
            if not kept:
                return None
            kwargs["kernel_operation_modes"] = kept
        if config and kwargs.get("extra_benchmark_configs"):
            kept = [c for c in kwargs["extra_benchmark_configs"] if same_config(config, json.dumps(c, default=str))]
            kwargs["extra_benchmark_configs"] = kept or kwargs["extra_benchmark_configs"]
        if providers and kwargs.get("kernel_providers"):
            kwargs["kernel_providers"] = [p for p in kwargs["kernel_providers"] if p in providers] or providers
        return run_benchmarks(*args, **kwargs)

    return narrowed


def main():
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script, *sys.argv[2:]]
    sys.path[0] = os.path.dirname(script)  # what `python <script>` puts first, instead of this folder
    try:
        import utils  # upstream's benchmark/scripts/utils.py
    except Exception:
        utils = None
    if utils is not None and hasattr(utils, "run_benchmarks"):
        utils.run_benchmarks = _narrow(utils.run_benchmarks)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
