#!/usr/bin/env bash
# Runs one unchanged perftest program (Debian's perftest package) as server and client, two
# processes on softdpu's RDMA device, with softdpu's libibverbs.so.1 and libmlx5.so.1 chosen by
# LD_LIBRARY_PATH as docs/rdma.md says.
#   perftest.sh [--expect-failure TEXT] <softdpu-rdma dir> <program> [perftest options...]
# Exits 77 (skipped) when the program is not installed. With --expect-failure, both sides must
# fail cleanly (exit status 1 to 127, not a signal) and one of them print TEXT.
set -u
expect_failure=""
if [ "${1:-}" = "--expect-failure" ]; then
	expect_failure=$2
	shift 2
fi
libdir=$1
program=$2
shift 2
if ! command -v "$program" >/dev/null 2>&1; then
	echo "$program not installed (Debian package perftest): skipped"
	exit 77
fi
export LD_LIBRARY_PATH=$libdir
export SOFTDPU_SIDE=host
unset SOFTDPU_TOPOLOGY

# Both libraries must be softdpu's: the system's rdma-core has no device here.
loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$(command -v "$program")")
for lib in libibverbs.so.1 libmlx5.so.1; do
	if ! printf '%s\n' "$loaded" | grep -q "$lib => $libdir/$lib"; then
		echo "$program does not load softdpu's $lib:"
		printf '%s\n' "$loaded"
		exit 1
	fi
done

work=$(mktemp -d)
server_pid=""
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# A TCP port no one listens on, for perftest's out-of-band exchange.
listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v port=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == port { found = 1 } END { exit !found }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port=$((20000 + $$ % 20000))
while listening "$port"; do port=$((port + 1)); done

# Under ASan the runtime goes first, for perftest alone (SOFTDPU_VERBS_PRELOAD). Leak detection is
# off for it: perftest does not free what it allocates (its own buffers, the device list), and
# our libraries' leaks are checked by the unit tests and rdma-core's pingpongs under ASan.
wrap=()
[ -n "${SOFTDPU_VERBS_PRELOAD:-}" ] &&
	wrap=(env LD_PRELOAD="$SOFTDPU_VERBS_PRELOAD" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
timeout 120 "${wrap[@]}" "$program" -p "$port" "$@" >"$work/server" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
	listening "$port" && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.05
done
timeout 120 "${wrap[@]}" "$program" -p "$port" "$@" localhost >"$work/client" 2>&1
client_status=$?
wait "$server_pid"
server_status=$?
server_pid=""

echo "=== $program $* (server, exit $server_status)"
cat "$work/server"
echo "=== $program $* localhost (client, exit $client_status)"
cat "$work/client"

if [ -n "$expect_failure" ]; then
	for status in "$server_status" "$client_status"; do
		if [ "$status" -eq 0 ] || [ "$status" -ge 124 ]; then
			echo "FAIL: expected a clean failure, got exit status $status"
			exit 1
		fi
	done
	if ! grep -qF -- "$expect_failure" "$work/server" "$work/client"; then
		echo "FAIL: neither side said \"$expect_failure\""
		exit 1
	fi
	echo "PASS: both sides refused cleanly"
	exit 0
fi
if [ "$server_status" -ne 0 ] || [ "$client_status" -ne 0 ]; then
	echo "FAIL: server exit $server_status, client exit $client_status"
	exit 1
fi
# The result table: a header line starting with #bytes and a row of numbers under it, from the
# client always, and from the server where it prints one (the passive side of a read latency test
# does not).
for side in server client; do
	if [ "$side" = server ] && ! grep -q '^ *#bytes' "$work/server"; then
		continue
	fi
	if ! awk '/^ *#bytes/ { header = 1; next } header && /^ *[0-9]+ +[0-9]+ / { row = 1 } END { exit !row }' "$work/$side"; then
		echo "FAIL: no result row from the $side"
		exit 1
	fi
done
echo "PASS"
