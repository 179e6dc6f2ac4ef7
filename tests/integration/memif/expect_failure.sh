#!/usr/bin/env bash
# Runs a command that must fail and whose output must match a pattern (grep -E).
#   expect_failure.sh PATTERN command [args...]
# Passes through exit status 77 (skipped).
set -uo pipefail
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" = 77 ]; then
	exit 77
fi
if [ "$status" = 0 ]; then
	echo "expect_failure.sh: the command succeeded; a failure was expected" >&2
	exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
	echo "expect_failure.sh: the output does not match '$pattern'" >&2
	exit 1
fi
echo "expect_failure.sh: failed as expected (status $status)"
