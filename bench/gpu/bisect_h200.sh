#!/usr/bin/env bash
# The H200 part of docs/bisect.md ("On an H200"): run on a GPU host with python3, torch, Triton and git,
# no network and no project venv (only the standard-library runner, pipeline/bisect/runner.py).
#   bench/gpu/bisect_h200.sh [nkc|confirm|planted|all]     (default all; from the checkout's root)
# Needs gpu_carry/ from bench/gpu/prepare_h200.sh (liger_git/ and plans/). Writes under $OUT (default
# gpu_out/): <part>/ (the runner's folder: result.json, result.md, commit_runs/...), timings.tsv.
# Expected harness runs (RUNS=3, MAX_RUNS=6, forward speed, one config, liger only; 3 against 3 runs
# cannot reach p < 0.05, so a clear difference takes 4 against 4):
#   nkc 0; confirm 6 to 12 (12 when the runs of one commit flip between levels); planted 16 expected
#   (8 to confirm, 4 + 4 for two bisect steps over 3 candidates), 36 at the very worst.
set -euo pipefail
part=${1:-all}
out=${OUT:-gpu_out}
py=${LIGER_BENCH_PYTHON:-python3}
carry=gpu_carry
mkdir -p "$out"
command -v git >/dev/null || { echo "git is needed on the GPU host (git archive)" >&2; exit 2; }
[ -d "$carry/liger_git" ] && [ -d "$carry/plans" ] || { echo "run bench/gpu/prepare_h200.sh first and carry gpu_carry" >&2; exit 2; }
[ "${CHECK_TORCH:-1}" = 0 ] || "$py" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.cuda.is_available())" \
    | tee "$out/harness_python.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$out/harness_python.txt" || true

run_plan() {  # run_plan <name> <repo>
    local name=$1 repo=$2 t0 t1
    t0=$(date +%s)
    python3 -I pipeline/bisect/runner.py "$carry/plans/$name.json" "$out/$name" --repo "$repo" --python "$py"
    t1=$(date +%s)
    printf '%s\t%s\t%s\n' "$name" "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["outcome"], r["harness_runs"], sep="\t")' "$out/$name/result.json")" "$((t1 - t0))" \
        >>"$out/timings.tsv"
    cat "$out/$name/result.md"
}

[ -f "$out/timings.tsv" ] || printf 'plan\toutcome\tharness_runs\tseconds\n' >"$out/timings.tsv"
case $part in nkc | all) run_plan nkc "$carry/liger_git" ;; esac
case $part in confirm | all) run_plan confirm "$carry/liger_git" ;; esac
case $part in
planted | all)
    scratch=$(mktemp -d)/scratch_git
    read -r planted tip < <(bench/gpu/plant_softmax.sh "$carry/liger_git" "$scratch")
    want=$(cat "$carry/plans/planted_sha.txt")
    [ "$planted" = "$want" ] || { echo "the scratch copy's planted commit $planted is not the plan's $want" >&2; exit 1; }
    run_plan planted "$scratch"
    echo "planted commit: $planted"
    ;;
esac
cat "$out/timings.tsv"
