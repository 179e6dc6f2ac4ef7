#!/usr/bin/env bash
# One of rdma-core's unchanged example programs (ibv_rc_pingpong, ibv_ud_pingpong,
# ibv_srq_pingpong) between two processes on softdpu's libibverbs: a server on one side of the
# emulated system and a client on the same or the other side.
#
#   pingpong.sh LIBDIR PROGRAM SERVER_SIDE:DEVICE:GID CLIENT_SIDE:DEVICE:GID ITERS [options...]
#
# LIBDIR holds softdpu's libibverbs.so.1; PROGRAM is e.g. ibv_rc_pingpong; SIDE is host or dpu,
# DEVICE an ibdev name of that side and GID the local GID index. The options (-s, -e, -c, ...) go
# to both. Both must exit 0 within the time limit and report ITERS iterations; exit 77 when
# PROGRAM is not installed (Debian: ibverbs-utils).
set -uo pipefail
libdir=$1 program=$2 server=$3 client=$4 iters=$5
shift 5
if ! command -v "$program" >/dev/null; then
	echo "pingpong.sh: $program is not installed (Debian: ibverbs-utils); skipped"
	exit 77
fi
IFS=: read -r server_side server_dev server_gid <<<"$server"
IFS=: read -r client_side client_dev client_gid <<<"$client"
limit=${PINGPONG_TIME_LIMIT:-60}
workdir=$(mktemp -d) || exit 1
server_pid=
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -KILL "$server_pid"
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$workdir"
}
trap cleanup EXIT

# Whether something listens on TCP port $1 (the server's address exchange), IPv4 or IPv6.
listening() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v port=":$hex" '$2 ~ port"$" && $4 == "0A" { found = 1 } END { exit !found }'
}

# A free port, then the server; it listens once its device is open.
for _ in $(seq 20); do
	port=$((20000 + RANDOM % 40000))
	listening "$port" || break
done
run() { # run SIDE DEVICE GID [args...]
	local side=$1 dev=$2 gid=$3
	shift 3
	# Line-buffered output, so that a program killed at the time limit still shows how far it got;
	# under ASan, the runtime preloaded first instead (SOFTDPU_VERBS_PRELOAD).
	local wrap=(stdbuf -oL -eL)
	[ -n "${SOFTDPU_VERBS_PRELOAD:-}" ] && wrap=(env LD_PRELOAD="$SOFTDPU_VERBS_PRELOAD")
	env SOFTDPU_SIDE="$side" LD_LIBRARY_PATH="$libdir" timeout -s KILL "$limit" "${wrap[@]}" \
		"$program" -d "$dev" -g "$gid" -p "$port" -n "$iters" "$@"
}
echo "pingpong.sh: server: SOFTDPU_SIDE=$server_side $program -d $server_dev -g $server_gid -p $port -n $iters $*"
run "$server_side" "$server_dev" "$server_gid" "$@" >"$workdir/server.out" 2>&1 &
server_pid=$!
for _ in $(seq $((limit * 10))); do
	listening "$port" && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
echo "pingpong.sh: client: SOFTDPU_SIDE=$client_side $program -d $client_dev -g $client_gid -p $port -n $iters $* localhost"
run "$client_side" "$client_dev" "$client_gid" "$@" localhost >"$workdir/client.out" 2>&1
client_status=$?
wait "$server_pid"
server_status=$?
server_pid=
echo "--- server (exit $server_status):"
cat "$workdir/server.out"
echo "--- client (exit $client_status):"
cat "$workdir/client.out"
failed=0
for who in server client; do
	status_var=${who}_status
	if [ "${!status_var}" != 0 ]; then
		echo "pingpong.sh: FAIL: the $who exited with status ${!status_var}"
		failed=1
	elif ! grep -Eq "^$iters iters in [0-9.]+ seconds" "$workdir/$who.out"; then
		echo "pingpong.sh: FAIL: the $who did not report $iters iterations"
		failed=1
	fi
done
exit $failed
