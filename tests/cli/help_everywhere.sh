#!/bin/sh
# `--help` (and -h) of every command and subcommand: usage on stdout, nothing on stderr, exit 0.
#   help_everywhere.sh <softdpu> "<command path>"...   ("" is softdpu itself)
cli=$1
shift
failed=0
for path in "$@"; do
	for flag in --help -h; do
		out=$(mktemp) && err=$(mktemp) || exit 1
		# shellcheck disable=SC2086 # the path is words
		"$cli" $path $flag >"$out" 2>"$err"
		rc=$?
		if [ "$rc" -ne 0 ] || ! grep -qi '^usage: ' "$out" || [ -s "$err" ]; then
			echo "FAIL: softdpu $path $flag: exit status $rc; stdout:"
			cat "$out"
			echo "stderr:"
			cat "$err"
			failed=1
		else
			echo "ok: softdpu $path $flag"
		fi
		rm -f "$out" "$err"
	done
done
exit $failed
