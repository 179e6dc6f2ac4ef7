#!/usr/bin/env bash
# ping through the emulated DPU (docs/links.md; root only): host PF0's end of link hpf0 is attached
# to TAP interface sdpuA in network namespace A, uplink p0's outside end to TAP sdpuB in namespace
# B, and a forwarder on the DPU joins the two DPU ends (representor hpf0 <-> p0): here "softdpu
# link attach hpf0 --memif <p0's socket> --role server", which serves both. "ping -c 3" from A to
# B must succeed, and the attach processes' counters (softdpu link list --json) must move by at
# least the three echo requests and replies; 9000-byte packets pass, a frame over 16 KiB from a TAP
# is dropped and counted. The TAPs go when the attach processes stop (SIGHUP
# here); one whose TAP is deleted (ip -n NS link del) stops with status 1 and the reason. The
# namespaces are removed whatever happens. Exit status 77 (skipped) when not root, or without
# ip netns, /dev/net/tun or ping.
#   link_tap_ping.sh SOFTDPU_CLI
set -uo pipefail
cli=$1
# shellcheck source=../../support/link_helpers.sh
source "$(dirname "$0")/../../support/link_helpers.sh"
skip() {
	echo "link_tap_ping.sh: skipped: $*"
	exit 77
}
require_tap
unset SOFTDPU_TOPOLOGY SOFTDPU_SIDE
ns_a=softdpu-a-$$
ns_b=softdpu-b-$$
SOFTDPU_RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-tap-XXXXXX") || exit 1
export SOFTDPU_RUN_DIR
pids=()
cleanup() {
	stop_pids
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$SOFTDPU_RUN_DIR"
}
trap cleanup EXIT
fail() {
	echo "link_tap_ping.sh: FAIL: $*" >&2
	for log in "$SOFTDPU_RUN_DIR"/*.log; do
		[ -e "$log" ] && echo "--- $log" && cat "$log"
	done
	exit 1
}
ip netns add "$ns_a" 2>/dev/null || skip "ip netns add does not work here"
ip netns add "$ns_b" || fail "ip netns add $ns_b"
mkdir -p "$SOFTDPU_RUN_DIR/links"

counters() { # the counters of the three attached ends, as JSON
	"$cli" link list --json | python3 -c '
import json, sys
links = {l["name"]: l for l in json.load(sys.stdin)["links"]}
print(json.dumps({"pf0": links["hpf0"]["client"]["counters"], "hpf0": links["hpf0"]["server"]["counters"],
                  "p0": links["p0"]["client"]["counters"]}))'
}

# The DPU forwarder: representor hpf0 <-> the DPU's p0 (it serves both sockets).
"$cli" link attach hpf0 --memif "$SOFTDPU_RUN_DIR/links/p0.sock" --role server >"$SOFTDPU_RUN_DIR/dpu.log" 2>&1 &
pids+=($!)
wait_for "p0 is not served" test -S "$SOFTDPU_RUN_DIR/links/p0.sock"
"$cli" link attach pf0 --tap sdpuA --netns "$ns_a" >"$SOFTDPU_RUN_DIR/host.log" 2>&1 &
host=$!
pids+=($host)
"$cli" link attach p0 --tap sdpuB --netns "$ns_b" >"$SOFTDPU_RUN_DIR/wire.log" 2>&1 &
wire=$!
pids+=($wire)
is_state() { [ "$(state_of "$1")" = "$2" ]; }
wait_for "hpf0 is not connected" is_state hpf0 connected
wait_for "p0 is not connected" is_state p0 connected
wait_for "no TAP sdpuA in $ns_a" ip -n "$ns_a" link show sdpuA >/dev/null
wait_for "no TAP sdpuB in $ns_b" ip -n "$ns_b" link show sdpuB >/dev/null
ip -n "$ns_a" link show sdpuA | grep -q "state UP\|,UP" || fail "sdpuA is not up"
# A TAP name already taken in that namespace is refused.
err=$("$cli" link attach p1 --tap sdpuA --netns "$ns_a" 2>&1 >/dev/null)
[ $? = 1 ] && printf '%s\n' "$err" | head -n 1 |
	grep -q "^softdpu link attach: a network interface named sdpuA already exists in network namespace $ns_a$" ||
	fail "a second sdpuA in $ns_a: $err"
ip -n "$ns_a" addr add 10.201.0.1/24 dev sdpuA || fail "ip addr add in $ns_a"
ip -n "$ns_b" addr add 10.201.0.2/24 dev sdpuB || fail "ip addr add in $ns_b"

before=$(counters) || fail "link list --json"
echo "link_tap_ping.sh: counters before: $before"
ip netns exec "$ns_a" ping -c 3 -i 0.2 -W 5 10.201.0.2 || fail "ping from $ns_a to $ns_b failed"
after=$(counters) || fail "link list --json"
echo "link_tap_ping.sh: counters after: $after"
python3 - "$before" "$after" <<'PY' || fail "the counters did not move as they should"
import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for end in ("pf0", "hpf0", "p0"):
    b, a = before[end], after[end]
    assert b is not None and a is not None, (end, b, a)
    for direction in ("rx", "tx"):
        # three echo requests one way, three replies the other (ARP besides)
        assert a[direction]["packets"] - b[direction]["packets"] >= 3, (end, direction, b, a)
        assert a[direction]["bytes"] - b[direction]["bytes"] >= 3 * 98, (end, direction, b, a)
PY

# Jumbo frames (9000-byte packets) both ways; a frame larger than a link buffer (16 KiB) from the
# TAP is dropped and counted in pf0's tx drops.
ip -n "$ns_a" link set sdpuA mtu 9000 || fail "ip link set mtu 9000 in $ns_a"
ip -n "$ns_b" link set sdpuB mtu 9000 || fail "ip link set mtu 9000 in $ns_b"
ip netns exec "$ns_a" ping -c 2 -i 0.2 -W 5 -M do -s 8972 10.201.0.2 || fail "jumbo ping from $ns_a to $ns_b failed"
before=$(counters) || fail "link list --json"
ip -n "$ns_a" link set sdpuA mtu 20000 || fail "ip link set mtu 20000 in $ns_a"
ip netns exec "$ns_a" ping -c 1 -W 1 -M do -s 17000 10.201.0.2 && fail "a 17028-byte packet went through 16 KiB buffers"
after=$(counters) || fail "link list --json"
python3 - "$before" "$after" <<'PY' || fail "the oversized frame is not counted as a drop: $before -> $after"
import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert after["pf0"]["tx"]["drops"] - before["pf0"]["tx"]["drops"] >= 1
PY
ip -n "$ns_a" link set sdpuA mtu 9000 || fail "ip link set mtu 9000 in $ns_a"

# A clean stop (SIGHUP, as a closed terminal sends): exit status 0, the TAP gone from its namespace.
kill -HUP "$host"
wait "$host" || fail "attach process $host did not stop cleanly on SIGHUP"
pids=("${pids[@]/$host/}")
ip -n "$ns_a" link show sdpuA >/dev/null 2>&1 && fail "sdpuA is left in $ns_a"
# A TAP deleted under it: exit status 1, the reason on stderr; its counters go all the same.
ip -n "$ns_b" link del sdpuB || fail "ip -n $ns_b link del sdpuB"
for _ in $(seq 100); do
	kill -0 "$wire" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$wire" 2>/dev/null && fail "attach process $wire still runs after its TAP was deleted"
wait "$wire"
status=$?
pids=("${pids[@]/$wire/}")
[ "$status" = 1 ] || fail "attach process $wire exited with $status after its TAP was deleted, not 1"
grep -q "^softdpu link attach: TAP sdpuB: " "$SOFTDPU_RUN_DIR/wire.log" ||
	fail "no reason for the deleted TAP in wire.log"
echo "link_tap_ping.sh: $(grep "^softdpu link attach: TAP sdpuB: " "$SOFTDPU_RUN_DIR/wire.log")"
[ ! -e "$SOFTDPU_RUN_DIR/links/hpf0.client.stats" ] && [ ! -e "$SOFTDPU_RUN_DIR/links/p0.client.stats" ] ||
	fail "counters files are left behind"
echo "link_tap_ping.sh: ok"
