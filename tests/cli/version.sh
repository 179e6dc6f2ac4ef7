#!/bin/sh
# softdpu --version and softdpu version: the same text on stdout, nothing on stderr, exit 0.
#   version.sh <softdpu> <project version> <DOCA release> <source dir>
# Line 1: "softdpu <project version> (DOCA <release of the libraries>)"; line 2: "DOCA API:
# <major.minor> (headers <release>, libraries <release>)"; line 3, when the source is a git
# checkout: "git: <git describe>", whose commit must exist in that repository.
cli=$1 version=$2 doca=$3 src=$4
fail() {
	echo "FAIL: $*"
	exit 1
}
out=$(mktemp) && err=$(mktemp) && word=$(mktemp) || exit 1
trap 'rm -f "$out" "$err" "$word"' EXIT
"$cli" --version >"$out" 2>"$err" || fail "--version: exit status $?"
[ -s "$err" ] && fail "--version wrote on stderr: $(cat "$err")"
"$cli" version >"$word" 2>"$err" || fail "version: exit status $?"
[ -s "$err" ] && fail "version wrote on stderr: $(cat "$err")"
cat "$out"
cmp -s "$out" "$word" || fail "softdpu version differs from --version: $(cat "$word")"
api=$(echo "$doca" | cut -d. -f1,2)
[ "$(sed -n 1p "$out")" = "softdpu $version (DOCA $doca)" ] || fail "line 1, expected: softdpu $version (DOCA $doca)"
[ "$(sed -n 2p "$out")" = "DOCA API: $api (headers $doca, libraries $doca)" ] ||
	fail "line 2, expected: DOCA API: $api (headers $doca, libraries $doca)"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	line=$(sed -n 3p "$out")
	case $line in
	"git: "?*) ;;
	*) fail "line 3, expected git: <describe> in a git checkout" ;;
	esac
	describe=${line#git: }
	describe=${describe%-dirty}
	commit=${describe##*-g} # tag-N-gHASH or HASH
	git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null || fail "git: $commit is no commit of $src"
	[ "$(wc -l <"$out")" -eq 3 ] || fail "more than 3 lines"
else
	[ "$(wc -l <"$out")" -eq 2 ] || fail "not a git checkout: expected 2 lines"
fi
echo "ok"
