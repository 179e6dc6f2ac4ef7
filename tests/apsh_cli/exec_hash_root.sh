#!/bin/sh
# softdpu-exec-hash-build-map --root strips the root by path components: a file under R is
# recorded as the guest sees it, a file under a sibling that merely starts with R's name is not.
set -eu
tool=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/r/bin" "$work/r2/bin"
cp /bin/true "$work/r/bin/true"
cp /bin/true "$work/r2/bin/true"
"$tool" -o "$work/map.json" --root "$work/r/" "$work/r/bin/true" "$work/r2/bin/true"
grep -q "\"path\": \"/bin/true\"" "$work/map.json" || { echo "FAIL: $work/r/bin/true not recorded as /bin/true"; exit 1; }
grep -q "\"path\": \"$work/r2/bin/true\"" "$work/map.json" || { echo "FAIL: $work/r2/bin/true not kept whole"; grep '"path"' "$work/map.json"; exit 1; }
if grep -q '"path": "/2/bin/true"' "$work/map.json"; then echo "FAIL: string-prefix stripping"; exit 1; fi
echo "exec_hash_root: ok"
