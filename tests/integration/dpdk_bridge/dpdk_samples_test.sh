#!/usr/bin/env bash
# The DOCA DPDK bridge samples (samples/dpdk_forwarder, samples/dpdk_capture) built as a user builds
# them (the installed prefix, pkg-config only) and run against real clients on the packet links
# (docs/dpdk-bridge.md, label "dpdk"):
#
#   peers    the forwarder on the DPU between representor hpf0 and uplink p0; link_peer on host PF0
#            and on the outside end of p0 send each other COUNT frames of 64 to 9000 bytes both
#            ways at once and check every byte and the order; the forwarder's counters match.
#   testpmd  the forwarder again; unchanged dpdk-testpmd on host PF0 sends 512 frames each of 64,
#            1500 and 9000 bytes (txonly bursts, "start tx_first"), testpmd on the outside end of
#            p0 receives them (rxonly, one line per frame with "set verbose 1"); then the other way
#            round. Sent, forwarded and received counts match, lengths and their order too.
#   capture  dpdk_capture: the host sends COUNT frames on PF0, the DPU captures them from pf0hpf
#            into host memory with DMA, the host checks every record.
#   capture-testpmd  the same capture with unchanged dpdk-testpmd sending on host PF0 (512 frames
#            each of 64, 1500 and 9000 bytes); the host checks the records and their lengths in order.
#   peer-restart  the forwarder between link_peers while they leave mid-traffic: COUNT times both
#            peers run, exchanging frames, then one of them (host PF0's and p0's by turns) is
#            SIGKILLed, then the other; the forwarder must log each link going down and coming
#            back, and keep running. Then two fresh peers exchange 5000 frames through it, every
#            byte and the order checked, and the forwarder stops cleanly (exit 0).
#   tap-ping (root) the issue's ping through the DPU forwarder: the forwarder between hpf0 and p0,
#            "softdpu link attach pf0 --tap ... --netns A" (host PF0 as a kernel interface) and
#            "softdpu link attach p0 --tap ... --netns B" (the far end of the wire); "ping -c 3"
#            A -> B and B -> A, then "ping -s 8000" both ways with MTU 9000 on both TAPs (jumbo
#            frames). The attach processes' counters move by the echoes; once the forwarder has
#            stopped, its counters equal theirs frame for frame and byte for byte (IPv6 is off in
#            both namespaces, so only ARP and ICMP cross). Skipped (77) when not root, or without
#            ip netns, /dev/net/tun or ping.
#   errors   the samples' refusals: a representor the topology lacks, a capture host without its
#            DPU, a capture DPU without its host: each exits non-zero, in time, saying why.
#
#   dpdk_samples_test.sh BUILD_DIR SOURCE_DIR LINK_PEER MODE [COUNT]
# Exit status 77 (skipped) when dpdk-testpmd (testpmd mode) or DPDK's pkg-config is missing, and
# for tap-ping as above.
#
# DPDK 22.11's net_memif may crash (SIGSEGV in librte_net_memif) in a process that polls a port
# while its peer disconnects (docs/dpdk-bridge.md). The forwarder polls on EAL's interrupt thread,
# where net_memif handles a disconnection, so it survives its peers leaving (peer-restart); testpmd
# does not, so testpmd is stopped after the forwarder, and the other modes keep that order too.
set -uo pipefail
build_dir=$1
source_dir=$2
link_peer=$3
mode=$4
count=${5:-20000}
# shellcheck source=../../support/link_helpers.sh
source "$(dirname "$0")/../../support/link_helpers.sh"

case $mode in peers | testpmd | capture | capture-testpmd | peer-restart | tap-ping | errors) ;; *) echo "unknown mode $mode" >&2; exit 2 ;; esac
testpmd=${DPDK_TESTPMD:-$(command -v dpdk-testpmd || true)}
if [[ $mode == *testpmd ]] && [ -z "$testpmd" ]; then
	echo "SKIP: dpdk-testpmd not found (Debian's dpdk package)"
	exit 77
fi
if [ "$mode" = tap-ping ]; then
	skip() {
		echo "SKIP: $*"
		exit 77
	}
	require_tap
	ip netns add "sdpu-probe-$$" 2>/dev/null || skip "ip netns add does not work here"
	ip netns del "sdpu-probe-$$"
fi
if ! pkg-config --exists libdpdk; then
	echo "SKIP: DPDK's pkg-config (libdpdk-dev) not found"
	exit 77
fi

# Every process gets a hard limit: a hang is a failure, never a stuck test.
LIMIT=120
work=$(mktemp -d /tmp/sdpu-dpdk.XXXXXX) || exit 1
export SOFTDPU_RUN_DIR=$work/run
unset SOFTDPU_TOPOLOGY
pids=()
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# The DPDK run-time directories of every file prefix used here (sdpu_<name>_<this pid>).
	rm -rf /var/run/dpdk/sdpu_*_"$$" "${XDG_RUNTIME_DIR:-/tmp}"/dpdk/sdpu_*_"$$"
	# tap-ping's namespaces (their TAPs went with the attach processes).
	ip netns del "sdpu-a-$$" 2>/dev/null
	ip netns del "sdpu-b-$$" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
	echo "FAIL: $*" >&2
	for log in "$work"/*.log; do
		[ -f "$log" ] || continue
		echo "----- $(basename "$log") -----" >&2
		grep -v -E 'length=|^testpmd> *$' "$log" | tail -40 >&2
	done
	exit 1
}

# --- build the samples against an install --------------------------------------------------
prefix="$build_dir/dpdk-samples-prefix"
out="$build_dir/dpdk-samples-bin"
rm -rf "$prefix" "$out"
mkdir -p "$out"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null || fail "cmake --install"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pkg-config --exists doca-dpdk-bridge || { echo "SKIP: the DPDK bridge is not built"; exit 77; }
cflags=(-std=c11 -Wall -Wextra -Werror -DDOCA_ALLOW_EXPERIMENTAL_API -I "$source_dir/samples/common")
# What the DPDK samples share with each other and with the other samples (samples/common).
common_srcs=("$source_dir"/samples/common/{sample_common,sample_argp,dpdk_sample_common}.c)
for sample in dpdk_forwarder dpdk_capture; do
	src_dir="$source_dir/samples/$sample"
	pkgs=$(sed -n 's|^// pkg-config: *||p' "$src_dir/$sample.c" | head -1)
	# shellcheck disable=SC2046,SC2086
	cc "${cflags[@]}" -o "$out/$sample" "$src_dir"/*.c "${common_srcs[@]}" $(pkg-config --cflags --libs $pkgs) ||
		fail "building samples/$sample"
done
forwarder=$out/dpdk_forwarder
capture=$out/dpdk_capture

# EAL options of our own programs: one lcore, no hugepages, no PCI, a file prefix each
# (sdpu_<name>_<this pid>: the clean-up removes their run-time directories).
eal() {
	local name=sdpu_$1_$$
	echo "-l 0 --no-huge -m 256 --no-pci --no-telemetry --log-level=*:warning --file-prefix=$name"
}

# start_forwarder: the forwarder on the DPU, between hpf0 (pf0vf65535) and p0; waits until both
# sockets are served.
fwd_runs=0
start_forwarder() {
	fwd_runs=$((fwd_runs + 1))
	fwd_log=$work/forwarder-$fwd_runs.log
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=dpu timeout -s KILL $LIMIT "$forwarder" $(eal fwd) -- -r pf0vf65535 >"$fwd_log" 2>&1 &
	fwd_pid=$!
	pids+=("$fwd_pid")
	for _ in $(seq 100); do
		grep -q "Forwarding between" "$fwd_log" 2>/dev/null && break
		kill -0 "$fwd_pid" 2>/dev/null || fail "the forwarder exited during start-up"
		sleep 0.1
	done
	grep -q "Forwarding between" "$fwd_log" || fail "the forwarder did not start in 10 s"
	if [ ! -S "$SOFTDPU_RUN_DIR/links/hpf0.sock" ] || [ ! -S "$SOFTDPU_RUN_DIR/links/p0.sock" ]; then
		fail "the forwarder serves no hpf0.sock and p0.sock"
	fi
}

# stop_forwarder: SIGTERM, exit 0, counters in $fwd_log.
stop_forwarder() {
	kill -TERM "$fwd_pid"
	local status=0
	wait "$fwd_pid" || status=$?
	[ "$status" = 0 ] || fail "the forwarder exited with $status"
	grep -q "^.*Stopped" "$fwd_log" || fail "the forwarder did not stop cleanly"
}

# check_direction NAME FRAMES BYTES: the forwarder's counters for one direction.
check_direction() {
	local line
	line=$(grep "\] $1: received" "$fwd_log" | tail -1)
	local want="$1: received $2 frames ($3 bytes), sent $2 frames ($3 bytes), dropped 0"
	[[ "$line" == *"$want" ]] || fail "forwarder counters: expected \"$want\", got \"${line#*] }\""
	echo "ok: forwarder $want"
}

# The vdev of one testpmd: a memif client of a link's socket, 16 KiB buffers as the links use.
vdev() { echo "net_memif0,role=client,socket=$SOFTDPU_RUN_DIR/links/$1.sock,socket-abstract=no,bsize=16384"; }
# testpmd's own EAL: two lcores on CPU 1 (the forwarder polls on CPU 0; CPU 0 on a machine with one
# CPU), no hugepages, no PCI.
tp_cpu=$(($(nproc) > 1 ? 1 : 0))
tp_eal() {
	local name=sdpu_tp$1_$$
	echo "--lcores=0@$tp_cpu,1@$tp_cpu --no-huge -m 512 --no-pci --no-telemetry --file-prefix=$name"
}
# mbufs of 9216 data bytes after the 128-byte headroom: a 9000-byte frame in one mbuf.
tp_app=(-i --mbuf-size=9344 --total-num-mbufs=2048 --no-flush-rx)
# testpmd runs under "stdbuf -oL": its output to the log is line-buffered, so the verbose line
# of every frame is in the log when printed, whole, never cut by the prompt's echo (which
# testpmd writes to the descriptor directly).
# wait_link FD LOG: asks for the port's state until its link is up (testpmd itself waits up to
# 9 s for links at start-up before it reads commands).
wait_link() {
	for _ in $(seq 150); do
		echo "show port info 0" >&"$1"
		sleep 0.2
		grep -q "Link status: up" "$2" && return 0
	done
	fail "testpmd's link did not come up ($2)"
}
# start_tx_testpmd PREFIX LINK LOG: the sending testpmd (tx_pid) on LINK's end, in io forwarding
# with retry, its commands from fd 3 (the fifo tx.in), once its link is up.
start_tx_testpmd() {
	# shellcheck disable=SC2046
	timeout -s KILL $LIMIT stdbuf -oL "$testpmd" $(tp_eal "$1") --vdev="$(vdev "$2")" -- "${tp_app[@]}" \
		--forward-mode=io <"$work/tx.in" >"$3" 2>&1 &
	tx_pid=$!
	pids+=("$tx_pid")
	exec 3>"$work/tx.in"
	wait_link 3 "$3"
	echo "set fwd io retry" >&3
}
# start_peers COUNT TIMEOUT LINGER: link_peer on host PF0 (pf0_pid) and on the outside end of p0
# (p0_pid), exchanging COUNT frames each way, logs pf0.log and p0.log.
start_peers() {
	SOFTDPU_SIDE=host timeout -s KILL $LIMIT "$link_peer" --name pf0 --count "$1" --timeout "$2" --linger "$3" \
		>"$work/pf0.log" 2>&1 &
	pf0_pid=$!
	pids+=("$pf0_pid")
	timeout -s KILL $LIMIT "$link_peer" --name p0 --outside --count "$1" --timeout "$2" --linger "$3" \
		>"$work/p0.log" 2>&1 &
	p0_pid=$!
	pids+=("$p0_pid")
}
# finish_peers TRIES WHAT: until both peers have everything (lingering) or one exited, TRIES tenths
# of a second at most; then stops the forwarder (before its peers leave: see the note on DPDK's
# net_memif at the top), prints the peers' logs and fails (WHAT: ...) unless both exited 0.
finish_peers() {
	for _ in $(seq "$1"); do
		grep -q "finished; lingering" "$work/pf0.log" 2>/dev/null && grep -q "finished; lingering" "$work/p0.log" 2>/dev/null &&
			break
		if ! kill -0 "$pf0_pid" 2>/dev/null || ! kill -0 "$p0_pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	stop_forwarder
	pf0_status=0
	wait "$pf0_pid" || pf0_status=$?
	p0_status=0
	wait "$p0_pid" || p0_status=$?
	cat "$work/pf0.log" "$work/p0.log"
	if [ "$pf0_status" != 0 ] || [ "$p0_status" != 0 ]; then
		fail "$2: pf0 exit $pf0_status, p0 exit $p0_status"
	fi
}
case $mode in
peers)
	start_forwarder
	# Each peer lingers once it has everything, until the forwarder stops: the forwarder stops
	# before its peers leave (see the note on DPDK's net_memif at the top).
	start_peers "$count" 90 30
	finish_peers 1000 "link_peer"
	# Both peers send the same frames, plus one 64-byte "done" frame each.
	bytes=$(sed -n 's/.*link_peer pf0: sent [0-9]* frames (\([0-9]*\) bytes).*/\1/p' "$work/pf0.log")
	check_direction "representor -> uplink" $((count + 1)) $((bytes + 64))
	check_direction "uplink -> representor" $((count + 1)) $((bytes + 64))
	;;

testpmd)
	per_size=512
	sizes=(64 1500 9000)
	for direction in "hpf0 p0 representor -> uplink" "p0 hpf0 uplink -> representor"; do
		read -r from to name <<<"$direction"
		echo "--- testpmd on $from sends, the forwarder forwards ($name), testpmd on $to receives"
		start_forwarder
		rx_log=$work/rx-$to.log
		tx_log=$work/tx-$from.log
		rm -f "$work/rx.in" "$work/tx.in"
		mkfifo "$work/rx.in" "$work/tx.in"
		# shellcheck disable=SC2046
		timeout -s KILL $LIMIT stdbuf -oL "$testpmd" $(tp_eal "rx$to") --vdev="$(vdev "$to")" -- "${tp_app[@]}" \
			--forward-mode=rxonly <"$work/rx.in" >"$rx_log" 2>&1 &
		rx_pid=$!
		pids+=("$rx_pid")
		exec 4>"$work/rx.in"
		wait_link 4 "$rx_log"
		echo "set verbose 1" >&4
		echo "start" >&4
		# io forwarding with retry: "start tx_first N" sends N bursts of 32 txonly frames, retrying
		# on a full ring; nothing comes back, so nothing else is sent.
		start_tx_testpmd "tx$from" "$from" "$tx_log"
		expected=0
		for size in "${sizes[@]}"; do
			echo "set txpkts $size" >&3
			echo "start tx_first $((per_size / 32))" >&3
			expected=$((expected + per_size))
			for _ in $(seq 200); do
				[ "$(grep -o 'length=[0-9]*' "$rx_log" | wc -l)" -ge "$expected" ] && break
				sleep 0.1
			done
			echo "stop" >&3
		done
		sleep 0.5
		echo "stop" >&4
		# The counters are in; the forwarder stops before the testpmds leave, and a testpmd whose
		# server went away may itself crash on the way out (DPDK's net_memif): their exit status
		# is not the test's.
		stop_forwarder
		check_direction "$name" "$expected" $((per_size * (64 + 1500 + 9000)))
		echo "quit" >&3
		echo "quit" >&4
		exec 3>&- 4>&-
		wait "$tx_pid" 2>/dev/null
		wait "$rx_pid" 2>/dev/null
		# Sent: the per-port TX-packets of each "stop" (one block per size).
		sent=$(grep -A2 'Forward statistics for port 0' "$tx_log" | sed -n 's/^ *TX-packets: *\([0-9]*\).*/\1/p' |
			awk '{ s += $1 } END { print s + 0 }')
		tx_dropped=$(grep -A2 'Forward statistics for port 0' "$tx_log" |
			sed -n 's/.*TX-dropped: *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
		# Received: one verbose line per frame. testpmd's own receive counters are printed, not
		# checked: with DPDK 22.11's net_memif they sometimes stay 0 while frames arrive.
		received=$(grep -o 'length=[0-9]*' "$rx_log" | wc -l)
		rx_counted=$(grep -A1 'Forward statistics for port 0' "$rx_log" |
			sed -n 's/^ *RX-packets: *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
		lengths=$(grep -o 'length=[0-9]*' "$rx_log" | uniq -c | awk '{ printf "%s%s x %s", sep, $1, substr($2, 8); sep = ", " }')
		want_lengths="$per_size x 64, $per_size x 1500, $per_size x 9000"
		echo "testpmd on $from: sent $sent frames ($tx_dropped dropped); testpmd on $to: received $received (counted $rx_counted): $lengths"
		if [ "$sent" != "$expected" ] || [ "$tx_dropped" != 0 ]; then
			fail "testpmd on $from sent $sent of $expected frames ($tx_dropped dropped)"
		fi
		[ "$received" = "$expected" ] || fail "testpmd on $to received $received of $expected frames"
		[ "$lengths" = "$want_lengths" ] || fail "lengths in order: expected \"$want_lengths\", got \"$lengths\""
		one_mbuf=$(grep -o 'nb_segs=[0-9]*' "$rx_log" | grep -c -x 'nb_segs=1')
		[ "$one_mbuf" = "$expected" ] || fail "$((expected - one_mbuf)) frames in more than one mbuf"
	done
	;;

capture)
	socket=$work/capture.sock
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=dpu timeout -s KILL $LIMIT "$capture" $(eal capd) -- --role dpu --socket "$socket" -t 30 \
		>"$work/capture-dpu.log" 2>&1 &
	dpu_pid=$!
	pids+=("$dpu_pid")
	host_status=0
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=host timeout -s KILL $LIMIT "$capture" $(eal caph) -- --role host --socket "$socket" \
		--count "$count" -t 30 >"$work/capture-host.log" 2>&1 || host_status=$?
	dpu_status=0
	wait "$dpu_pid" || dpu_status=$?
	cat "$work/capture-dpu.log" "$work/capture-host.log"
	if [ "$host_status" != 0 ] || [ "$dpu_status" != 0 ]; then
		fail "dpdk_capture: host exit $host_status, DPU exit $dpu_status"
	fi
	grep -q "All $count frames captured in order and intact" "$work/capture-host.log" ||
		fail "the host did not check $count records"
	;;
capture-testpmd)
	socket=$work/capture.sock
	expected=1536
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=dpu timeout -s KILL $LIMIT "$capture" $(eal capd) -- --role dpu --socket "$socket" -t 30 \
		>"$work/capture-dpu.log" 2>&1 &
	dpu_pid=$!
	pids+=("$dpu_pid")
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=host timeout -s KILL $LIMIT "$capture" $(eal caph) -- --role host --socket "$socket" \
		--count "$expected" --external-sender -t 30 >"$work/capture-host.log" 2>&1 &
	host_pid=$!
	pids+=("$host_pid")
	for _ in $(seq 300); do
		grep -q "Waiting for $expected frames" "$work/capture-host.log" 2>/dev/null && break
		kill -0 "$host_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "Waiting for $expected frames" "$work/capture-host.log" || fail "the capture host is not waiting"
	rm -f "$work/tx.in"
	mkfifo "$work/tx.in"
	start_tx_testpmd cap hpf0 "$work/tx-hpf0.log"
	for size in 64 1500 9000; do
		echo "set txpkts $size" >&3
		echo "start tx_first 16" >&3
		sleep 0.5
		echo "stop" >&3
	done
	host_status=0
	wait "$host_pid" || host_status=$?
	dpu_status=0
	wait "$dpu_pid" || dpu_status=$?
	# The DPU has closed its port: testpmd's exit status is not the test's (see the note above).
	echo "quit" >&3
	exec 3>&-
	wait "$tx_pid" 2>/dev/null
	cat "$work/capture-dpu.log" "$work/capture-host.log"
	if [ "$host_status" != 0 ] || [ "$dpu_status" != 0 ]; then
		fail "dpdk_capture: host exit $host_status, DPU exit $dpu_status"
	fi
	want="Captured $expected frames from another sender on PF0, lengths in order: 512 x 64, 512 x 1500, 512 x 9000"
	grep -q "$want" "$work/capture-host.log" || fail "the host did not report \"$want\""
	echo "ok: $want"
	;;

peer-restart)
	start_forwarder
	# wait_log PATTERN N: until the forwarder's log holds N lines matching PATTERN (10 s at most).
	wait_log() {
		for _ in $(seq 100); do
			[ "$(grep -c -- "$1" "$fwd_log")" -ge "$2" ] && return 0
			kill -0 "$fwd_pid" 2>/dev/null || fail "the forwarder exited (waiting for \"$1\")"
			sleep 0.1
		done
		fail "the forwarder logged \"$1\" fewer than $2 times in 10 s"
	}
	hpf0_down="hpf0_s): link down"
	p0_down="p0_s): link down"
	for round in $(seq "$count"); do
		# Both peers connect (both links up in the forwarder) and exchange frames for a while.
		start_peers 100000000 60 0
		wait_log "hpf0_s): link up" "$round"
		wait_log "p0_s): link up" "$round"
		sleep 0.3
		if ((round % 2)); then victim=$pf0_pid other=$p0_pid; else victim=$p0_pid other=$pf0_pid; fi
		# The pids are timeout's: SIGKILL goes to the link_peer under it.
		victim_peer=$(pgrep -P "$victim") || fail "round $round: the peer to kill had already exited"
		kill -KILL "$victim_peer"
		sleep 0.05
		other_peer=$(pgrep -P "$other") && kill -KILL "$other_peer"
		wait "$victim" "$other" 2>/dev/null
		# The forwarder sees both links go down and keeps running.
		wait_log "$hpf0_down" "$round"
		wait_log "$p0_down" "$round"
	done
	echo "ok: $count peers SIGKILLed mid-traffic (host PF0's and p0's by turns), the forwarder still runs"
	# Frames flow again, end to end, every byte and the order checked.
	start_peers 5000 60 30
	finish_peers 600 "link_peer after the restarts"
	echo "ok: after $count restarts, 5000 frames each way arrived intact and in order; the forwarder stopped cleanly"
	;;

tap-ping)
	cli=$prefix/bin/softdpu
	[ -x "$cli" ] || fail "no softdpu in the install ($cli)"
	ns_a=sdpu-a-$$
	ns_b=sdpu-b-$$
	ip netns add "$ns_a" || fail "ip netns add $ns_a"
	ip netns add "$ns_b" || fail "ip netns add $ns_b"
	for ns in "$ns_a" "$ns_b"; do
		# Only ARP and ICMP: no IPv6 neighbour discovery or router solicitations in the counters.
		ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
			fail "disabling IPv6 in $ns"
	done
	is_connected() { [ "$(state_of "$1")" = connected ]; }
	counters() { # the attached ends' counters: host PF0's end of hpf0, the outside end of p0
		"$cli" link list --json | python3 -c '
import json, sys
links = {l["name"]: l for l in json.load(sys.stdin)["links"]}
print(json.dumps({"pf0": links["hpf0"]["client"]["counters"], "p0": links["p0"]["client"]["counters"]}))'
	}
	start_forwarder
	timeout -s KILL $LIMIT "$cli" link attach pf0 --tap sdpuA --netns "$ns_a" >"$work/attach-pf0.log" 2>&1 &
	host_pid=$!
	pids+=("$host_pid")
	timeout -s KILL $LIMIT "$cli" link attach p0 --tap sdpuB --netns "$ns_b" >"$work/attach-p0.log" 2>&1 &
	wire_pid=$!
	pids+=("$wire_pid")
	wait_for "host PF0's end of hpf0 is not connected" is_connected hpf0
	wait_for "the outside end of p0 is not connected" is_connected p0
	wait_for "no TAP sdpuA in $ns_a" ip -n "$ns_a" link show sdpuA >/dev/null
	wait_for "no TAP sdpuB in $ns_b" ip -n "$ns_b" link show sdpuB >/dev/null
	ip -n "$ns_a" addr add 10.202.0.1/24 dev sdpuA || fail "ip addr add in $ns_a"
	ip -n "$ns_b" addr add 10.202.0.2/24 dev sdpuB || fail "ip addr add in $ns_b"

	# ping_through NS ADDRESS SIZE: three echoes of SIZE bytes of ICMP data, not fragmented ("-M
	# do"), all answered; the counters move by them.
	ping_through() {
		local ns=$1 address=$2 size=$3 before after
		before=$(counters) || fail "link list --json"
		ip netns exec "$ns" ping -c 3 -i 0.2 -W 5 -s "$size" -M "do" "$address" ||
			fail "ping -s $size from $ns to $address failed"
		after=$(counters) || fail "link list --json"
		python3 - "$before" "$after" "$size" <<'PY' || fail "the attach counters did not move as they should (-s $size)"
import json, sys
before, after, payload = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
frame = 14 + 20 + 8 + payload  # Ethernet, IPv4, ICMP
for end in ("pf0", "p0"):
    b, a = before[end], after[end]
    for direction in ("rx", "tx"):
        # three echo requests one way, three replies the other (ARP besides)
        assert a[direction]["packets"] - b[direction]["packets"] >= 3, (end, direction, b, a)
        assert a[direction]["bytes"] - b[direction]["bytes"] >= 3 * frame, (end, direction, b, a)
        assert a[direction]["drops"] == b[direction]["drops"], (end, direction, b, a)
print(f"ok: {frame}-byte echoes: pf0 {after['pf0']}, p0 {after['p0']}")
PY
	}
	ping_through "$ns_a" 10.202.0.2 56
	ping_through "$ns_b" 10.202.0.1 56
	# Jumbo frames: MTU 9000 on both TAPs, 8042-byte frames (8000 bytes of ICMP data), unfragmented.
	ip -n "$ns_a" link set sdpuA mtu 9000 || fail "MTU 9000 on sdpuA"
	ip -n "$ns_b" link set sdpuB mtu 9000 || fail "MTU 9000 on sdpuB"
	ping_through "$ns_a" 10.202.0.2 8000
	ping_through "$ns_b" 10.202.0.1 8000

	# The forwarder stops first (see the note on DPDK's net_memif at the top); then its counters
	# must equal the attach processes': what host PF0 sent is what it received on the
	# representor and sent to p0, which the wire end received, and the other way round.
	sleep 0.5
	stop_forwarder
	final=$(counters) || fail "link list --json"
	echo "attach counters: $final"
	grep "\] .* -> .*: received" "$fwd_log" | tail -2 | sed 's/^.*\] /forwarder: /'
	python3 - "$final" "$fwd_log" <<'PY' || fail "the forwarder's counters disagree with the attach processes'"
import json, re, sys
ends = json.loads(sys.argv[1])
fwd = {}
for line in open(sys.argv[2]):
    m = re.search(r"\] (.+): received (\d+) frames \((\d+) bytes\), sent (\d+) frames \((\d+) bytes\), dropped (\d+)", line)
    if m:
        fwd[m.group(1)] = [int(x) for x in m.groups()[1:]]
for name, src, dst in (("representor -> uplink", "pf0", "p0"), ("uplink -> representor", "p0", "pf0")):
    rx, rx_bytes, tx, tx_bytes, dropped = fwd[name]
    sent, received = ends[src]["tx"], ends[dst]["rx"]
    want = [sent["packets"], sent["bytes"], received["packets"], received["bytes"], 0]
    assert [rx, rx_bytes, tx, tx_bytes, dropped] == want, (name, fwd[name], want)
    assert rx == tx and rx > 0, (name, fwd[name])
    print(f"ok: forwarder {name}: {rx} frames ({rx_bytes} bytes) = {src}'s tx = {dst}'s rx")
PY
	# Then the attach processes: a clean stop, their TAPs gone.
	for pid in "$host_pid" "$wire_pid"; do
		kill -TERM "$pid"
		wait "$pid" || fail "attach process $pid did not stop cleanly"
	done
	ip -n "$ns_a" link show sdpuA >/dev/null 2>&1 && fail "sdpuA is left in $ns_a"
	ip -n "$ns_b" link show sdpuB >/dev/null 2>&1 && fail "sdpuB is left in $ns_b"
	;;

errors)
	# expect_failure NAME LOG PATTERN MAX_SECONDS COMMAND...: non-zero exit, the message, in time.
	expect_failure() {
		local name=$1 log=$2 pattern=$3 max=$4 status=0 start
		shift 4
		start=$(date +%s)
		"$@" >"$log" 2>&1 || status=$?
		local took=$(($(date +%s) - start))
		[ "$status" != 0 ] || fail "$name: exited 0"
		[ "$status" != 137 ] || fail "$name: hung"
		grep -q -- "$pattern" "$log" || fail "$name: no \"$pattern\" in its output"
		[ "$took" -le "$max" ] || fail "$name: took $took s (at most $max)"
		echo "ok: $name: exit $status: $(grep -m1 -- "$pattern" "$log" | sed 's/^.*\] //')"
	}
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=dpu expect_failure "forwarder, representor pf0vf9" "$work/e1.log" "which the topology lacks" 20 \
		timeout -s KILL 30 "$forwarder" $(eal e1) -- -r pf0vf9
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=host expect_failure "capture host, no DPU" "$work/e2.log" "Cannot connect to the DPU" 20 \
		timeout -s KILL 30 "$capture" $(eal e2) -- --role host -s "$work/none.sock" -t 2
	# shellcheck disable=SC2046
	SOFTDPU_SIDE=dpu expect_failure "capture DPU, no host" "$work/e3.log" "waiting for the host to connect" 20 \
		timeout -s KILL 30 "$capture" $(eal e3) -- --role dpu -s "$work/none.sock" -t 2
	;;
esac
echo "dpdk_samples_test.sh $mode: passed"
