#!/bin/sh
# Checks the dynamic symbols each shared library exports (issue 19): the C API only, never a
# C++ (_Z...) symbol.
#   check_exports.sh <library> <allowed-name-regex>
# Every defined dynamic symbol must match the regex (an extended regular expression for the whole
# name, version suffix removed); fails listing the ones that do not, or when nothing is exported.
set -u
lib=$1
allowed=$2
if ! command -v nm >/dev/null 2>&1; then
	echo "nm not found"
	exit 77
fi
symbols=$(nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u) || exit 1
count=$(printf '%s\n' "$symbols" | grep -c .)
if [ "$count" -eq 0 ]; then
	echo "$lib: exports nothing"
	exit 1
fi
bad=$(printf '%s\n' "$symbols" | grep -Ev "^($allowed)\$")
mangled=$(printf '%s\n' "$symbols" | grep '^_Z')
if [ -n "$mangled" ]; then
	echo "$lib: exports C++ symbols:"
	printf '%s\n' "$mangled" | c++filt | head -20
	exit 1
fi
if [ -n "$bad" ]; then
	echo "$lib: exports names outside its API:"
	printf '%s\n' "$bad" | head -20
	exit 1
fi
echo "$lib: $count symbols, all C API"
