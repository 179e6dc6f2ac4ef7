#!/usr/bin/env bash
# A pingpong client (ibv_rc_pingpong, ibv_ud_pingpong, ...) pointed at a port where no server
# listens must fail by itself, at once and with a message, not hang.
#
#   no_server.sh LIBDIR PROGRAM SIDE:DEVICE:GID
set -uo pipefail
libdir=$1 program=$2
IFS=: read -r side dev gid <<<"$3"
if ! command -v "$program" >/dev/null; then
	echo "no_server.sh: $program is not installed (Debian: ibverbs-utils); skipped"
	exit 77
fi
# A port nobody listens on: one we bound and closed (the kernel does not hand it out at once).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$SECONDS
output=$(env SOFTDPU_SIDE="$side" LD_LIBRARY_PATH="$libdir" timeout -s KILL 30 \
	env ${SOFTDPU_VERBS_PRELOAD:+LD_PRELOAD="$SOFTDPU_VERBS_PRELOAD"} "$program" -d "$dev" -g "$gid" -p "$port" localhost 2>&1)
status=$?
printf '%s\n(exit status %d after %d s)\n' "$output" "$status" $((SECONDS - start))
if [ "$status" = 0 ] || [ "$status" = 137 ]; then
	echo "no_server.sh: FAIL: expected a failure of its own, not exit status $status"
	exit 1
fi
if ! grep -q "Couldn't connect to localhost:$port" <<<"$output"; then
	echo "no_server.sh: FAIL: no \"Couldn't connect\" message"
	exit 1
fi
echo "no_server.sh: failed as expected"
