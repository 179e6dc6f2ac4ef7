#!/bin/sh
# Checks that a library defines exactly the versioned symbols of a reference build of it (issue
# 20: softdpu's libmlx5.so.1 against Debian 12's): every "name@version" of the reference's dynamic
# symbol table, default and non-default versions alike, and no other; and the same version nodes.
#   compare_symbol_versions.sh <library> <reference library>
# Exits 77 (skipped) when the reference or objdump is missing.
set -u
lib=$1
reference=$2
if ! command -v objdump >/dev/null 2>&1 || [ ! -e "$reference" ]; then
	echo "objdump or $reference missing: skipped"
	exit 77
fi
symbols() {
	# Defined functions and objects: "version name" with the parentheses of hidden versions kept.
	objdump -T "$1" | awk '$0 ~ / (DF|DO) / && $0 !~ /\*UND\*/ { print $(NF-1), $NF }' | sort -u
}
nodes() {
	objdump -p "$1" | awk '/^Version definitions:/ { on = 1; next } /^Version References:/ { on = 0 }
		on && NF >= 4 && $2 != "0x01" { print $4 }' | sort -u
}
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
symbols "$reference" >"$tmp/reference.symbols"
symbols "$lib" >"$tmp/ours.symbols"
nodes "$reference" >"$tmp/reference.nodes"
nodes "$lib" >"$tmp/ours.nodes"
if ! diff -u "$tmp/reference.symbols" "$tmp/ours.symbols"; then
	echo "$lib: versioned symbols differ from $reference (- reference, + ours)"
	status=1
fi
if ! diff -u "$tmp/reference.nodes" "$tmp/ours.nodes"; then
	echo "$lib: version nodes differ from $reference"
	status=1
fi
if [ "$status" -eq 0 ]; then
	echo "$lib: $(wc -l <"$tmp/ours.symbols") versioned symbols in $(wc -l <"$tmp/ours.nodes") nodes, as $reference"
fi
exit "$status"
