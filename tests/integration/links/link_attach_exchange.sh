#!/usr/bin/env bash
# softdpu link attach between two emulated systems (docs/links.md): system A (run directory A) has
# a DPU program on representor hpf0; system B (run directory B) a host program on PF0. "softdpu
# link attach pf0 --memif B/links/hpf0.sock --role server" takes host PF0's end of A's hpf0 link
# and serves B's hpf0 socket (standing in for B's representor), so the two programs exchange COUNT
# numbered frames of 64 to 9000 bytes both ways through the attach process; each end (link_peer.c)
# checks every frame: in order, unmodified, one buffer each. Twice with the same attach process:
# its memif peers come and go, and it reconnects to both. Its counters, in "softdpu link list
# --json" while it runs, must match what the programs report having sent (the last "done" frame
# of each program included), with no drops; after SIGTERM it exits 0 and leaves nothing behind.
#
#   link_attach_exchange.sh SOFTDPU_CLI LINK_PEER COUNT
set -uo pipefail
cli=$1
peer=$2
count=$3
# shellcheck source=../../support/link_helpers.sh
source "$(dirname "$0")/../../support/link_helpers.sh"
unset SOFTDPU_TOPOLOGY SOFTDPU_SIDE
top=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-attach-XXXXXX") || exit 1
run_a=$top/a
run_b=$top/b
mkdir -p "$run_a" "$run_b/links"
pids=()
cleanup() {
	stop_pids
	rm -rf "$top"
}
trap cleanup EXIT
fail() {
	echo "link_attach_exchange.sh: FAIL: $*" >&2
	exit 1
}

SOFTDPU_RUN_DIR=$run_a "$cli" link attach pf0 --memif "$run_b/links/hpf0.sock" --role server >"$top/attach.log" 2>&1 &
attach=$!
pids+=($attach)
for _ in $(seq 100); do
	[ -S "$run_b/links/hpf0.sock" ] && break
	sleep 0.1
done
[ -S "$run_b/links/hpf0.sock" ] || fail "the attach process does not serve $run_b/links/hpf0.sock: $(cat "$top/attach.log")"

sent_frames=0
sent_bytes=0
for round in 1 2; do
	SOFTDPU_RUN_DIR=$run_a SOFTDPU_SIDE=dpu "$peer" --name hpf0 --count "$count" >"$top/dpu.log" 2>&1 &
	dpu=$!
	pids+=($dpu)
	SOFTDPU_RUN_DIR=$run_b SOFTDPU_SIDE=host "$peer" --name pf0 --count "$count" >"$top/host.log" 2>&1
	host_status=$?
	wait "$dpu"
	dpu_status=$?
	pids=("${pids[@]/$dpu/}")
	cat "$top/dpu.log" "$top/host.log"
	[ "$host_status" = 0 ] && [ "$dpu_status" = 0 ] || fail "round $round: host exit $host_status, DPU exit $dpu_status"
	# What the DPU program sent on hpf0, as it reports it: COUNT frames, then one 64-byte "done".
	bytes=$(sed -n 's/^link_peer hpf0: sent \([0-9]*\) frames (\([0-9]*\) bytes).*/\2/p' "$top/dpu.log")
	[ -n "$bytes" ] || fail "round $round: no report from the DPU program"
	host_bytes=$(sed -n 's/^link_peer pf0: sent \([0-9]*\) frames (\([0-9]*\) bytes).*/\2/p' "$top/host.log")
	sent_frames=$((sent_frames + count + 1))
	sent_bytes=$((sent_bytes + bytes + 64))
	host_sent_bytes=$((${host_sent_bytes:-0} + host_bytes + 64))
	# The attach process's counters of hpf0's client end: rx from the DPU program, tx towards it.
	SOFTDPU_RUN_DIR=$run_a "$cli" link list --json | python3 -c '
import json, sys
frames, rx_bytes, tx_bytes, pid = (int(v) for v in sys.argv[1:5])
hpf0 = {l["name"]: l for l in json.load(sys.stdin)["links"]}["hpf0"]
c = hpf0["client"]["counters"]
assert c is not None and c["pid"] == pid, hpf0
assert c["rx"] == {"packets": frames, "bytes": rx_bytes, "drops": 0}, c
assert c["tx"] == {"packets": frames, "bytes": tx_bytes, "drops": 0}, c
assert hpf0["server"]["counters"] is None, hpf0
print("link_attach_exchange.sh: counters", c)' "$sent_frames" "$sent_bytes" "$host_sent_bytes" "$attach" ||
		fail "round $round: the counters in link list --json do not match what was sent"
done
kill -TERM "$attach"
wait "$attach"
rc=$?
pids=()
cat "$top/attach.log"
[ "$rc" = 0 ] || fail "attach exited with status $rc on SIGTERM"
[ "$(grep -c "link hpf0 connected" "$top/attach.log")" = 2 ] || fail "the attach process did not connect to hpf0 twice"
[ "$(grep -c "memif $run_b/links/hpf0.sock connected" "$top/attach.log")" = 2 ] || fail "the peer did not connect twice"
[ ! -e "$run_a/links/hpf0.client.stats" ] || fail "the counters file is left behind"
[ ! -e "$run_b/links/hpf0.sock" ] || fail "the served socket is left behind"
SOFTDPU_RUN_DIR=$run_a "$cli" link list --json | python3 -c '
import json, sys
hpf0 = {l["name"]: l for l in json.load(sys.stdin)["links"]}["hpf0"]
assert hpf0["client"]["counters"] is None, hpf0' || fail "counters listed after the attach process left"
echo "link_attach_exchange.sh: ok"
