# Sourced by the link CLI tests (link_list.sh, link_attach.sh): a fresh run directory under /tmp
# (removed at exit, with the background processes in pids killed first), fail, and the state of a
# link as "softdpu link list" sees it. The caller sets cli (the softdpu CLI), me (its name for
# messages) and run_prefix (the run directory's name) first.
# shellcheck source=../support/link_helpers.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/link_helpers.sh"
unset SOFTDPU_TOPOLOGY SOFTDPU_SIDE
SOFTDPU_RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$run_prefix-XXXXXX") || exit 1
export SOFTDPU_RUN_DIR
pids=()
cleanup() {
	stop_pids
	rm -rf "$SOFTDPU_RUN_DIR"
}
trap cleanup EXIT
fail() {
	echo "$me: FAIL: $*" >&2
	exit 1
}
wait_state() { # LINK STATE: up to 10 s
	for _ in $(seq 100); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$1 is $(state_of "$1"), expected $2"
}
