# Sourced by the shell tests of the packet links (tests/cli/link_common.sh, the tests in
# tests/integration/links and tests/integration/dpdk_bridge): functions only, nothing runs.

# stop_pids: SIGTERM to each background process in the caller's array pids, and wait for it.
stop_pids() {
	for pid in "${pids[@]}"; do
		[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"
	done
}

# require_tap: the caller's skip (exit 77) unless root, with /dev/net/tun, ip (iproute2) and ping.
require_tap() {
	[ "$(id -u)" = 0 ] || skip "not root (a TAP needs CAP_NET_ADMIN)"
	[ -c /dev/net/tun ] || skip "no /dev/net/tun"
	command -v ip >/dev/null || skip "no ip (iproute2)"
	command -v ping >/dev/null || skip "no ping (iputils-ping)"
}

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds, 10 s at most; then the caller's
# fail DESCRIPTION.
wait_for() {
	local what=$1
	shift
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what"
}

# state_of LINK: the link's state as "$cli link list --json" sees it (the caller sets cli).
state_of() {
	"$cli" link list --json | python3 -c '
import json, sys
print({l["name"]: l for l in json.load(sys.stdin)["links"]}[sys.argv[1]]["state"])' "$1"
}
