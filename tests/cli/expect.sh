#!/bin/sh
# Runs a command and checks its exit status and the FIRST line of one output stream:
#   expect.sh <status> stdout|stderr <extended regex> <command> [args...]
# The other stream must be empty: help and version go to stdout only; an error's reason comes
# first on stderr, with no log record or other line before it and nothing on stdout.
want_rc=$1
stream=$2
pattern=$3
shift 3
out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
echo "--- exit status $rc; stdout:"
cat "$out"
echo "--- stderr:"
cat "$err"
if [ "$rc" -ne "$want_rc" ]; then
	echo "FAIL: exit status $rc, expected $want_rc"
	exit 1
fi
if [ "$stream" = stdout ]; then checked=$out other=$err; else checked=$err other=$out; fi
if ! head -n 1 "$checked" | grep -Eq -- "$pattern"; then
	echo "FAIL: the first line of $stream does not match: $pattern"
	exit 1
fi
if [ -s "$other" ]; then
	echo "FAIL: unexpected output on the other stream"
	exit 1
fi
exit 0
