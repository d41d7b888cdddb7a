#!/usr/bin/env bash
# A scratch copy of a bare Liger-Kernel clone with a planted real slowdown (docs/bisect.md, "On an H200"):
#   bench/gpu/plant_softmax.sh <bare clone> <dest> [base, default 7644a0f]
# On branch scratch-softmax, from <base>: a comment in ops/softmax.py, a README edit, the PLANTED commit
# (softmax's forward launches its kernel twice), a second comment in ops/softmax.py, a README edit.
# Made with plumbing only (no checkout: the shared clone lacks two large blobs) and fixed names and
# dates, so the same shas come out on every machine: plans made here match the copy made on the GPU host.
# Prints "<planted sha> <tip sha>".
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
SOFTMAX=src/liger_kernel/ops/softmax.py

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
for kernel in ("_softmax_single_block_forward_kernel", "_softmax_multi_block_forward_kernel"):
    start = text.index("        " + kernel + "[(n_rows,)](")
    end = text.index("        )\n", start) + len("        )\n")
    assert text.count(text[start:end]) == 1
    text = text[:end] + text[start:end] + text[end:]
'
b=$(git rev-parse --verify "$base^{commit}")
c1=$(edit "$b" 1 "softmax: say why the single-block path exists (scratch)" $SOFTMAX \
    'text = text.replace("def _softmax_forward(", "# one block when the row fits (scratch comment)\ndef _softmax_forward(", 1)')
c2=$(edit "$c1" 2 "README: scratch note" README.md 'text += "\nscratch\n"')
c3=$(edit "$c2" 3 "softmax: launch the forward kernel twice (planted slowdown)" $SOFTMAX "$PLANT")
c4=$(edit "$c3" 4 "softmax: document the backward (scratch)" $SOFTMAX \
    'text = text.replace("def _softmax_backward(", "# dx = y * (dy - sum(dy * y)) (scratch comment)\ndef _softmax_backward(", 1)')
c5=$(edit "$c4" 5 "README: second scratch note" README.md 'text += "\nscratch 2\n"')
git update-ref refs/heads/scratch-softmax "$c5"
echo "$c3 $c5"
