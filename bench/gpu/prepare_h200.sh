#!/usr/bin/env bash
# On this machine (the warehouse's stack): the carry for the H200 run and its three plans.
#   bench/gpu/prepare_h200.sh            (from the checkout's root; the clone: $LIGER_SHARED_CLONE,
#                                          default ../shared/data/liger_git)
# Writes the git-ignored gpu_carry/: liger_git/ (a copy of the bare clone) and plans/*.json:
#   nkc.json      softmax forward 1fdb668..7644a0f                 -> no_kernel_change, no harness run
#   confirm.json  the same with CONFIRM=1 (both ends re-run)         -> reproduced / not_reproduced / inconclusive
#   planted.json  7644a0f..scratch-softmax (bench/gpu/plant_softmax.sh)         -> culprit = the planted commit
# The runs are judged by their own spread against MIN_EFFECT (docs/bisect.md); warehouse/liger.duckdb's
# noise_floor, when built (`make run`), is reported beside the result as context. Then run bench/gpu/bisect_h200.sh on the GPU host, carrying gpu_carry.
set -euo pipefail
clone=${LIGER_SHARED_CLONE:-../shared/data/liger_git}
carry=gpu_carry
rm -rf "$carry/liger_git" "$carry/plans" "$carry/scratch_git"
mkdir -p "$carry/plans"
cp -R "$clone" "$carry/liger_git"
# git takes a bare copy without refs/ inside a work tree for that work tree's repository: give it refs/
mkdir -p "$carry/liger_git/refs/heads" "$carry/liger_git/refs/tags"
read -r planted tip < <(bench/gpu/plant_softmax.sh "$carry/liger_git" "$carry/scratch_git")
sweep=(KERNEL=softmax PASS=forward METRIC=speed PROVIDERS=liger RUNS=3 MAX_RUNS=6
       'CONFIG={"M": 2048, "dtype": "torch.float32"}')
LIGER_GIT_REPO=$carry/liger_git make -s bisect-plan "${sweep[@]}" FROM=1fdb668 TO=7644a0f PLAN_OUT=$carry/plans/nkc.json
LIGER_GIT_REPO=$carry/liger_git make -s bisect-plan "${sweep[@]}" FROM=1fdb668 TO=7644a0f CONFIRM=1 \
    PLAN_OUT=$carry/plans/confirm.json
LIGER_GIT_REPO=$carry/scratch_git make -s bisect-plan "${sweep[@]}" FROM=7644a0f TO="$tip" \
    PLAN_OUT=$carry/plans/planted.json
echo "$planted" >"$carry/plans/planted_sha.txt"
rm -rf "$carry/scratch_git"  # the GPU host makes the same copy (same shas) from liger_git
du -sh "$carry"
