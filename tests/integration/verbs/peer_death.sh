#!/usr/bin/env bash
# Runs peer_death (a peer killed with SIGKILL mid-transfer, see peer_death.c) on softdpu's
# libibverbs, then checks that nothing is left behind: no new entry in /dev/shm, and no abstract
# socket of the run's queue pairs ("@softdpu-rdma/<uid>/<side>/<function>/<qpn>") in /proc/net/unix.
#
#   peer_death.sh LIBDIR PEER_DEATH MODE SURVIVOR_SIDE:DEVICE VICTIM_SIDE:DEVICE
set -uo pipefail
libdir=$1 program=$2
shift 2
before=$(ls -A /dev/shm | sort)
output=$(env LD_LIBRARY_PATH="$libdir" timeout -s KILL 90 "$program" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" != 0 ]; then
	echo "peer_death.sh: FAIL: peer_death exited with status $status"
	exit 1
fi
# The processes are gone; the kernel frees their sockets and memory with them.
sleep 0.2
failed=0
new_shm=$(comm -13 <(printf '%s\n' "$before") <(ls -A /dev/shm | sort) | grep -i softdpu)
if [ -n "$new_shm" ]; then
	echo "peer_death.sh: FAIL: left in /dev/shm: $new_shm"
	failed=1
fi
while read -r _ _ _ qpn; do
	if grep -Eq "@softdpu-rdma/$(id -u)/[^ ]*/${qpn#0x}\$" /proc/net/unix; then
		echo "peer_death.sh: FAIL: the socket of queue pair $qpn is still bound:"
		grep -E "softdpu-rdma/.*/${qpn#0x}\$" /proc/net/unix
		failed=1
	fi
done < <(grep '^qpn ' <<<"$output")
if ! grep -q '^qpn ' <<<"$output"; then
	echo "peer_death.sh: FAIL: peer_death named no queue pair"
	failed=1
fi
[ "$failed" = 0 ] && echo "peer_death.sh: nothing left behind"
exit $failed
