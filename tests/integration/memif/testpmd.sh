#!/usr/bin/env bash
# Runs DPDK dpdk-testpmd with one net_memif port as the peer of a command, and always stops it.
#
#   testpmd.sh [options] [-- command [args...]]
#
# testpmd as server (default): testpmd starts first; once its socket listens and forwarding
# runs, the command runs in the foreground. testpmd as client: the command (our server) starts
# first in the background; once its socket exists, testpmd starts (DPDK's client connects only
# at port start and never retries). Without a command, testpmd runs for --duration seconds.
# Finally testpmd gets SIGINT (SIGKILL after 10 s); the exit status is the command's.
# Exit status 77 (skip) when dpdk-testpmd is not installed.
#
# Options:
#   --role server|client   testpmd's memif role (default server)
#   --socket PATH|@NAME    socket; @NAME is abstract (default: a fresh path under $TMPDIR)
#   --secret STRING        memif secret
#   --zero-copy            DPDK zero-copy (client role only; adds --single-file-segments)
#   --forward MODE         testpmd forwarding mode: io, mac, macswap, txonly, rxonly (default io)
#   --txpkts LEN           frame length for txonly (default 64)
#   --burst N              packets per burst (default 32)
#   --bsize N, --rsize N   memif buffer size and log2 ring size (DPDK defaults 2048, 10)
#   --cpu N                CPU for both testpmd lcores (default 0)
#   --duration S           without a command: seconds to forward (default 5)
#   --log FILE             keep testpmd's output here (default: a temporary file, printed on failure)
#   --rates                at the end print "testpmd rates: rx_pps=... tx_pps=..." (medians of the
#                          per-second samples, the first and last non-zero samples excluded)
#   --verbose              print testpmd's whole output at the end
# The environment variable SOCKET in the command's environment holds the socket (@NAME form
# for abstract sockets), and TESTPMD_PID testpmd's process id.
set -uo pipefail

role=server
socket=
secret=
zero_copy=0
forward=io
txpkts=64
burst=32
bsize=
rsize=
cpu=0
duration=5
log=
rates=0
verbose=0
command=()

usage() {
	sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--role) role=$2; shift 2 ;;
	--socket) socket=$2; shift 2 ;;
	--secret) secret=$2; shift 2 ;;
	--zero-copy) zero_copy=1; shift ;;
	--forward) forward=$2; shift 2 ;;
	--txpkts) txpkts=$2; shift 2 ;;
	--burst) burst=$2; shift 2 ;;
	--bsize) bsize=$2; shift 2 ;;
	--rsize) rsize=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--rates) rates=1; shift ;;
	--verbose) verbose=1; shift ;;
	--) shift; command=("$@"); break ;;
	-h | --help) usage ;;
	*) echo "testpmd.sh: unknown option '$1'" >&2; usage ;;
	esac
done

case $role in server | client) ;; *) echo "testpmd.sh: --role must be server or client" >&2; exit 2 ;; esac
case $forward in io | mac | macswap | txonly | rxonly) ;; *)
	echo "testpmd.sh: unsupported --forward '$forward'" >&2; exit 2 ;;
esac
if [ "$zero_copy" = 1 ] && [ "$role" != client ]; then
	echo "testpmd.sh: --zero-copy needs --role client (only a memif client can be zero-copy)" >&2
	exit 2
fi

testpmd_bin=${DPDK_TESTPMD:-$(command -v dpdk-testpmd || true)}
if [ -z "$testpmd_bin" ]; then
	echo "SKIP: dpdk-testpmd not found (install dpdk-dev)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-testpmd.XXXXXX") || exit 1
[ -n "$socket" ] || socket="$work/memif.sock"
[ -n "$log" ] || log="$work/testpmd.log"
prefix="softdpu_memif_$$_$RANDOM"
testpmd_pid=
command_pid=

abstract=0
if [ "${socket:0:1}" = @ ]; then
	abstract=1
fi

# Is the socket listening? A file socket exists; an abstract one shows in /proc/net/unix as @name.
socket_ready() {
	if [ "$abstract" = 1 ]; then
		awk -v name="$socket" '$NF == name { found = 1 } END { exit !found }' /proc/net/unix
	else
		[ -S "$socket" ]
	fi
}

stop_testpmd() {
	[ -n "$testpmd_pid" ] || return 0
	if kill -0 "$testpmd_pid" 2>/dev/null; then
		kill -INT "$testpmd_pid" 2>/dev/null
		for _ in $(seq 100); do
			kill -0 "$testpmd_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$testpmd_pid" 2>/dev/null; then
			echo "testpmd.sh: testpmd did not stop on SIGINT; killing it" >&2
			kill -KILL "$testpmd_pid" 2>/dev/null
		fi
	fi
	wait "$testpmd_pid" 2>/dev/null
	testpmd_status=$?
	testpmd_pid=
}

cleanup() {
	stop_testpmd
	if [ -n "$command_pid" ] && kill -0 "$command_pid" 2>/dev/null; then
		kill -TERM "$command_pid" 2>/dev/null
		wait "$command_pid" 2>/dev/null
	fi
	# Runtime directories EAL made for our file prefix (root: /var/run/dpdk; others: XDG or /tmp).
	rm -rf "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix" 2>/dev/null
	[ "$abstract" = 1 ] || [ "$socket" != "$work/memif.sock" ] || rm -f "$socket"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

vdev="net_memif0,role=$role"
if [ "$abstract" = 1 ]; then
	vdev+=",socket=${socket:1}"
else
	vdev+=",socket=$socket,socket-abstract=no"
fi
[ -z "$secret" ] || vdev+=",secret=$secret"
[ -z "$bsize" ] || vdev+=",bsize=$bsize"
[ -z "$rsize" ] || vdev+=",rsize=$rsize"
eal=(--lcores="0@$cpu,1@$cpu" --no-huge -m 512 --no-pci --file-prefix="$prefix" --log-level=pmd.net.memif:info)
if [ "$zero_copy" = 1 ]; then
	eal+=(--single-file-segments)
	vdev+=",zero-copy=yes"
fi
# --no-flush-rx: by default testpmd drains (drops) whatever is already queued when forwarding
# starts, which loses the first frames of a peer that transmits as soon as the link is up.
app=(--forward-mode="$forward" --stats-period=1 --total-num-mbufs=16384 --burst="$burst" --no-flush-rx)
[ "$forward" != txonly ] || app+=(--txpkts="$txpkts")

print_log() {
	echo "----- testpmd output ($log) -----" >&2
	# Without the per-second statistics blocks.
	tr -d '\033' <"$log" | awk '/Port statistics ====/ { skip = 1 } skip && /^ *#+$/ { skip = 0; next } !skip && !/^\[2J/' >&2
	echo "----- end of testpmd output -----" >&2
}

start_testpmd() {
	"$testpmd_bin" "${eal[@]}" --vdev="$vdev" -- "${app[@]}" </dev/null >"$log" 2>&1 &
	testpmd_pid=$!
	# Ready when forwarding has started (the port is started, so the server listens and the
	# client has connected or failed).
	for _ in $(seq 300); do
		if grep -q 'packet forwarding - ports=' "$log" 2>/dev/null; then
			if [ "$role" = client ] || socket_ready; then
				return 0
			fi
		fi
		if grep -q 'Fail to start port' "$log" 2>/dev/null; then
			echo "testpmd.sh: testpmd could not start its memif port" >&2
			print_log
			return 1
		fi
		if ! kill -0 "$testpmd_pid" 2>/dev/null; then
			echo "testpmd.sh: testpmd exited during start-up" >&2
			print_log
			return 1
		fi
		sleep 0.1
	done
	echo "testpmd.sh: testpmd not ready after 30 s" >&2
	print_log
	return 1
}

export SOCKET="$socket"
status=0
if [ "$role" = server ]; then
	start_testpmd || exit 1
	export TESTPMD_PID=$testpmd_pid
	if [ ${#command[@]} -gt 0 ]; then
		"${command[@]}"
		status=$?
	else
		sleep "$duration"
	fi
else
	if [ ${#command[@]} -gt 0 ]; then
		"${command[@]}" &
		command_pid=$!
		for _ in $(seq 200); do
			socket_ready && break
			kill -0 "$command_pid" 2>/dev/null || break
			sleep 0.05
		done
		if ! socket_ready; then
			echo "testpmd.sh: the command never listened on $socket" >&2
			wait "$command_pid"
			status=$?
			command_pid=
			exit $((status == 0 ? 1 : status))
		fi
		start_testpmd || exit 1
		export TESTPMD_PID=$testpmd_pid
		wait "$command_pid"
		status=$?
		command_pid=
	else
		start_testpmd || exit 1
		sleep "$duration"
	fi
fi

testpmd_died=0
kill -0 "$testpmd_pid" 2>/dev/null || testpmd_died=1
stop_testpmd
if [ "$testpmd_died" = 1 ] && [ "$status" = 0 ] && [ "$testpmd_status" -gt 128 ] &&
	grep -q 'Disconnect received' "$log" 2>/dev/null; then
	# The command finished (and checked what it came to check), then closed its interface; DPDK
	# 22.11's memif port sometimes crashes tearing itself down on that disconnect (its control
	# thread frees the rings while the forwarding lcore still polls them, seen in zero-copy mode).
	# Like the crash while stopping below, that is not a failure of the command under test.
	echo "testpmd.sh: note: testpmd crashed (status $testpmd_status) on the command's disconnect" >&2
elif [ "$testpmd_died" = 1 ]; then
	echo "testpmd.sh: testpmd exited before it was stopped (status $testpmd_status)" >&2
	print_log
	[ "$status" != 0 ] || status=1
elif [ "$testpmd_status" != 0 ]; then
	# DPDK 22.11 occasionally crashes while tearing a memif port down (see the memif notes);
	# that is not a failure of the command under test.
	echo "testpmd.sh: note: testpmd exited with status $testpmd_status while stopping" >&2
fi

if [ "$rates" = 1 ]; then
	tr -d '\033' <"$log" | awk '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n == 0 ? 0 : (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2)
		}
		/Rx-pps:/ { if ($2 > 0) rx[++nrx] = $2; }
		/Tx-pps:/ { if ($2 > 0) tx[++ntx] = $2 }
		END {
			# Drop the first and last non-zero samples: partial seconds.
			m = 0; for (i = 2; i < nrx; i++) r[++m] = rx[i]
			k = 0; for (i = 2; i < ntx; i++) t2[++k] = tx[i]
			printf "testpmd rates: rx_pps=%d tx_pps=%d rx_samples=%d tx_samples=%d\n", median(r, m), median(t2, k), m, k
		}'
fi
[ "$verbose" = 0 ] || print_log
exit "$status"
