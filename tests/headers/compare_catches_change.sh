#!/usr/bin/env bash
# The header comparison is not vacuous: a copy of our headers with one parameter made const, one
# enumerator renumbered and one function removed must fail it, naming each of the three.
# Usage: compare_catches_change.sh PYTHON SOURCE_DIR
set -euo pipefail
python=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$source/include" "$work/include"
sed -i 's/doca_error_t doca_mmap_start(struct doca_mmap \*mmap);/doca_error_t doca_mmap_start(const struct doca_mmap *mmap);/' "$work/include/doca_mmap.h"
sed -i 's/DOCA_CTX_STATE_STOPPING = 3/DOCA_CTX_STATE_STOPPING = 4/' "$work/include/doca_ctx.h"
sed -i '/^doca_error_t doca_buf_get_len(/,/;/d' "$work/include/doca_buf.h"
if "$python" "$source/scripts/compare-doca-headers" --manifest "$source/tests/headers/doca-2.5.0108.api" \
	--ours "$work/include" >"$work/out" 2>&1; then
	cat "$work/out"
	echo "FAIL: the comparison accepted changed headers" >&2
	exit 1
fi
status=0
for expected in "differs function doca_mmap_start" "differs enumerator DOCA_CTX_STATE_STOPPING" "missing function doca_buf_get_len"; do
	grep -q "$expected" "$work/out" || { echo "FAIL: no '$expected' in:" >&2; cat "$work/out" >&2; status=1; }
done
exit $status
