#!/usr/bin/env bash
# softdpu link attach (docs/links.md): the failures that need another process or root, each with
# its reason first on stderr and exit status 1, and nothing left behind:
#   - the end's link is already served by someone else (a representor end), or already has a client
#     (a function end), or its socket path holds something that is not a socket;
#   - another attach process already holds the same end (its counters file is locked);
#   - the --memif socket is already served when we are to serve it;
#   - the end's counters file cannot be created (a directory in its place);
#   - the --memif socket cannot be served (a directory we may not write to);
#   - no CAP_NET_ADMIN for the TAP (as root: run under setpriv without it);
# and a clean stop on SIGTERM, and on a SIGHUP pending from the start: exit status 0, the counters
# file and the served socket removed.
# The peers are softdpu's memif tools.
#   link_attach.sh SOFTDPU_CLI
set -uo pipefail
cli=$1
me=link_attach.sh
run_prefix=softdpu-attach
# shellcheck source=link_common.sh
source "$(dirname "$0")/link_common.sh"
links=$SOFTDPU_RUN_DIR/links
mkdir -p "$links"
# expect_failure REGEX ARGS...: "softdpu link attach ARGS" fails (status 1) with REGEX as its first line.
expect_failure() {
	local pattern=$1
	shift
	local err
	err=$("$cli" link attach "$@" 2>&1 >/dev/null)
	local rc=$?
	[ "$rc" = 1 ] || fail "link attach $*: exit status $rc, expected 1 ($err)"
	printf '%s\n' "$err" | head -n 1 | grep -Eq -- "$pattern" || fail "link attach $*: \"$err\" does not match $pattern"
	echo "link_attach.sh: link attach $*: $(printf '%s\n' "$err" | head -n 1)"
}

# A representor end whose link someone already serves.
"$cli" memif sink --role server --socket "$links/hpf0.sock" --buffer-size 16384 --quiet --connect-timeout 60 &
pids+=($!)
wait_state hpf0 listening
expect_failure "^softdpu link attach: link hpf0 is already served by another process \(listening\)$" \
	hpf0 --memif "$SOFTDPU_RUN_DIR/peer.sock"
expect_failure "^softdpu link attach: link hpf0 is already served by another process \(listening\)$" \
	pf0hpf --memif "$SOFTDPU_RUN_DIR/peer.sock"
# ... and a --memif socket someone already serves, when we are to serve it.
expect_failure "^softdpu link attach: --memif $links/hpf0.sock is already served by another process$" \
	p1 --memif "$links/hpf0.sock" --role server

# A function end whose link already has a client.
"$cli" memif gen --role client --socket "$links/hpf0.sock" --buffer-size 16384 --rate 100 --duration 60 --quiet &
pids+=($!)
wait_state hpf0 connected
expect_failure "^softdpu link attach: link hpf0 already has a client: another process is connected to $links/hpf0.sock$" \
	pf0 --memif "$SOFTDPU_RUN_DIR/peer.sock"
expect_failure "^softdpu link attach: link hpf0 already has a client" enp11s0f0np0 --memif "$SOFTDPU_RUN_DIR/peer.sock"

# Something that is not a socket at the link's socket path.
: >"$links/hpf1.sock"
expect_failure "^softdpu link attach: link hpf1: $links/hpf1.sock is not a socket$" hpf1 --memif "$SOFTDPU_RUN_DIR/peer.sock"
rm -f "$links/hpf1.sock"

# The same end attached twice: the first attach (p0's outside end; nobody serves p0, so it waits)
# holds the end's counters file; the second is refused, with the first one's pid in the reason.
"$cli" link attach p0 --memif "$SOFTDPU_RUN_DIR/peer.sock" --role server >"$SOFTDPU_RUN_DIR/first.log" 2>&1 &
first=$!
pids+=($first)
for _ in $(seq 100); do
	[ -e "$links/p0.client.stats" ] && [ -S "$SOFTDPU_RUN_DIR/peer.sock" ] && break
	sleep 0.1
done
[ -S "$SOFTDPU_RUN_DIR/peer.sock" ] || fail "the first attach does not serve $SOFTDPU_RUN_DIR/peer.sock"
err=$("$cli" link attach p0 --memif "$SOFTDPU_RUN_DIR/other.sock" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 1 ] || fail "a second attach of p0: exit status $rc, expected 1"
printf '%s\n' "$err" | head -n 1 | grep -Eq "^softdpu link attach: link p0: the outside end \(client\) is already attached by another process$" ||
	fail "a second attach of p0: $err"
printf '%s\n' "$err" | grep -q "kept by process $first" || fail "a second attach of p0 does not name process $first: $err"
# Its counters are listed (zero: nothing came yet); the server end has none.
"$cli" link list --json | python3 -c '
import json, sys
p0 = {l["name"]: l for l in json.load(sys.stdin)["links"]}["p0"]
c = p0["client"]["counters"]
assert c is not None and c["pid"] == int(sys.argv[1]), p0
assert c["rx"] == {"packets": 0, "bytes": 0, "drops": 0} and c["tx"] == c["rx"], c
assert p0["server"]["counters"] is None, p0' "$first" || fail "unexpected counters of p0"
"$cli" link list | grep -Eq "^p0 .* client:rx=0/0/0,tx=0/0/0 +$links/p0.sock$" || fail "the table does not show p0's counters"
"$cli" link list | grep -Eq "^p1 .* down +- +$links/p1.sock$" || fail "the table does not show \"-\" for p1"
# SIGTERM: a clean stop, nothing left behind.
kill -TERM "$first"
wait "$first"
rc=$?
pids=("${pids[@]/$first/}")
[ "$rc" = 0 ] || fail "attach exited with status $rc on SIGTERM: $(cat "$SOFTDPU_RUN_DIR/first.log")"
grep -q "^softdpu link attach: stopped; link p0: rx 0 frames" "$SOFTDPU_RUN_DIR/first.log" || fail "no final report: $(cat "$SOFTDPU_RUN_DIR/first.log")"
[ ! -e "$links/p0.client.stats" ] || fail "the counters file is left behind"
[ ! -e "$SOFTDPU_RUN_DIR/peer.sock" ] || fail "the served --memif socket is left behind"

# A SIGHUP that is already pending when it starts (blocked and raised, then exec: it stays pending)
# stops it cleanly too, once everything is set up: exit status 0, the final report, nothing left.
out=$(timeout 20 python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGHUP])
os.kill(os.getpid(), signal.SIGHUP)
os.execv(sys.argv[1], sys.argv[1:])' "$cli" link attach p1 --memif "$SOFTDPU_RUN_DIR/hup.sock" --role server 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "attach with a pending SIGHUP: exit status $rc: $out"
printf '%s\n' "$out" | grep -q "^softdpu link attach: stopped; link p1: rx 0 frames" || fail "no final report after SIGHUP: $out"
[ ! -e "$links/p1.client.stats" ] && [ ! -e "$SOFTDPU_RUN_DIR/hup.sock" ] || fail "SIGHUP left the counters or the socket"

# A directory where the end's counters file goes: the counters cannot be created.
mkdir "$links/hpf1.client.stats"
expect_failure "^softdpu link attach: cannot create the counters of link hpf1 \(DOCA_ERROR_OPERATING_SYSTEM\)$" \
	pf1 --memif "$SOFTDPU_RUN_DIR/peer.sock"
err=$("$cli" link attach pf1 --memif "$SOFTDPU_RUN_DIR/peer.sock" 2>&1)
printf '%s\n' "$err" | grep -q "open($links/hpf1.client.stats): Is a directory" || fail "the counters error does not say why: $err"
rmdir "$links/hpf1.client.stats"

# A --memif socket to serve in a directory we may not write to: cannot serve it (as root: without
# CAP_DAC_OVERRIDE); the counters file goes again.
mkdir "$SOFTDPU_RUN_DIR/closed"
chmod 000 "$SOFTDPU_RUN_DIR/closed"
run=("$cli")
if [ "$(id -u)" = 0 ]; then
	run=()
	command -v setpriv >/dev/null && run=(setpriv --inh-caps=-all --bounding-set=-dac_override,-dac_read_search "$cli")
fi
if [ ${#run[@]} -gt 0 ]; then
	err=$("${run[@]}" link attach p1 --memif "$SOFTDPU_RUN_DIR/closed/peer.sock" --role server 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 1 ] || fail "serving in a closed directory: exit status $rc: $err"
	printf '%s\n' "$err" | head -n 1 | grep -Eq "^softdpu link attach: cannot serve $SOFTDPU_RUN_DIR/closed/peer.sock: Permission denied$" ||
		fail "serving in a closed directory: $err"
	echo "link_attach.sh: $(printf '%s\n' "$err" | head -n 1)"
	[ ! -e "$links/p1.client.stats" ] || fail "a failed attach left its counters file"
fi
chmod 700 "$SOFTDPU_RUN_DIR/closed"

# A TAP without CAP_NET_ADMIN (as root: without it in the bounding set).
if [ -c /dev/net/tun ]; then
	run=("$cli")
	if [ "$(id -u)" = 0 ]; then
		if command -v setpriv >/dev/null; then
			run=(setpriv --inh-caps=-all --bounding-set=-net_admin "$cli")
		else
			run=()
		fi
	fi
	if [ ${#run[@]} -gt 0 ]; then
		err=$("${run[@]}" link attach p1 --tap sdpu-nocap0 2>&1 >/dev/null)
		rc=$?
		[ "$rc" = 1 ] || fail "a TAP without CAP_NET_ADMIN: exit status $rc: $err"
		printf '%s\n' "$err" | head -n 1 | grep -Eq "^softdpu link attach: cannot create TAP interface sdpu-nocap0: Operation not permitted \(needs CAP_NET_ADMIN: run as root\)$" ||
			fail "a TAP without CAP_NET_ADMIN: $err"
		[ ! -e "$links/p1.client.stats" ] || fail "a failed attach left its counters file"
	fi
fi
echo "link_attach.sh: ok"
