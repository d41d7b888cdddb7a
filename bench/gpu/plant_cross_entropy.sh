#!/usr/bin/env bash
# A scratch copy of a bare Liger-Kernel clone with a planted MODEST slowdown (docs/bisect.md, issue 55):
#   bench/gpu/plant_cross_entropy.sh <bare clone> <dest> [base, default 7644a0f]
# On branch scratch-ce, from <base>: a comment in ops/cross_entropy.py, a README edit, the PLANTED commit
# (the forward launches its kernel a second time over 30 % of the rows: about x1.3 on a sweep of
# 0.4-9 ms on an H100, which does not flip between levels), a second comment, a README edit.
# Plumbing only and fixed names and dates, as plant_softmax.sh. Prints "<planted sha> <tip sha>".
set -euo pipefail
src=$1 dest=$2 base=${3:-7644a0f}
rm -rf "$dest"
mkdir -p "$dest"
cp -R "$src"/. "$dest"/
mkdir -p "$dest/refs/heads" "$dest/refs/tags"
export GIT_DIR=$dest GIT_AUTHOR_NAME=bisect GIT_AUTHOR_EMAIL=bisect@example.invalid
export GIT_COMMITTER_NAME=bisect GIT_COMMITTER_EMAIL=bisect@example.invalid LC_ALL=C
unset GIT_WORK_TREE GIT_INDEX_FILE
index=$(mktemp)
trap 'rm -f "$index" "$index.in" "$index.out"' EXIT
CE=src/liger_kernel/ops/cross_entropy.py

edit() {  # edit <parent> <n> <message> <path> <python transform of `text`>
    local parent=$1 n=$2 msg=$3 path=$4 code=$5 blob tree
    git show "$parent:$path" >"$index.in"
    python3 -c "import sys
text = open(sys.argv[1], newline='').read()
$code
open(sys.argv[2], 'w', newline='').write(text)" "$index.in" "$index.out" || { echo "plant: editing $path failed" >&2; exit 1; }
    blob=$(git hash-object -w "$index.out")
    GIT_INDEX_FILE=$index git read-tree "$parent"
    GIT_INDEX_FILE=$index git update-index --cacheinfo "100644,$blob,$path"
    tree=$(GIT_INDEX_FILE=$index git write-tree)
    GIT_AUTHOR_DATE="2026-01-01T00:0$n:00+00:00" GIT_COMMITTER_DATE="2026-01-01T00:0$n:00+00:00" \
        git commit-tree "$tree" -p "$parent" -m "$msg"
}

PLANT='
start = text.index("    liger_cross_entropy_kernel[(n_rows,)](")
end = text.index("    )\n", start) + len("    )\n")
launch = text[start:end]
assert text.count(launch) == 1
extra = launch.replace("[(n_rows,)]", "[(max(1, n_rows * 3 // 10),)]", 1)
text = text[:end] + extra + text[end:]
'
b=$(git rev-parse --verify "$base^{commit}")
c1=$(edit "$b" 1 "cross_entropy: say why the gradient is stored in X (scratch)" $CE \
    'text = text.replace("def cross_entropy_forward(", "# the gradient reuses X (scratch comment)\ndef cross_entropy_forward(", 1)')
c2=$(edit "$c1" 2 "README: scratch note" README.md 'text += "\nscratch\n"')
c3=$(edit "$c2" 3 "cross_entropy: launch the forward kernel again over 30% of the rows (planted slowdown)" $CE "$PLANT")
c4=$(edit "$c3" 4 "cross_entropy: document the backward (scratch)" $CE \
    'text = text.replace("def cross_entropy_backward(", "# grad_input = grad_output * X (scratch comment)\ndef cross_entropy_backward(", 1)')
c5=$(edit "$c4" 5 "README: second scratch note" README.md 'text += "\nscratch 2\n"')
git update-ref refs/heads/scratch-ce "$c5"
echo "$c3 $c5"
