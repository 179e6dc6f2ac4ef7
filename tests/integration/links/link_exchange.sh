#!/usr/bin/env bash
# The end-to-end link test (docs/links.md): a DPU program on representor hpf0 and a host program
# on PF0, two processes that find the link's socket and roles through softdpu/link.h, exchange
# numbered frames of 64 to 9000 bytes both ways (link_peer.c checks each: in order, unmodified,
# one buffer each), and "softdpu link list" sees the link down, served, then down again.
#
#   link_exchange.sh SOFTDPU_CLI LINK_PEER COUNT [HOST_NAME DPU_NAME LINK]
set -uo pipefail
cli=$1
peer=$2
count=$3
host_name=${4:-pf0}
dpu_name=${5:-hpf0}
link=${6:-hpf0}
unset SOFTDPU_TOPOLOGY
SOFTDPU_RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-links-XXXXXX") || exit 1
export SOFTDPU_RUN_DIR
dpu_pid=
cleanup() {
	if [ -n "$dpu_pid" ] && kill -0 "$dpu_pid" 2>/dev/null; then
		kill -TERM "$dpu_pid"
		wait "$dpu_pid"
	fi
	rm -rf "$SOFTDPU_RUN_DIR"
}
trap cleanup EXIT
fail() {
	echo "link_exchange.sh: $*" >&2
	exit 1
}
# state_of LINK: the link's state in "softdpu link list --json".
state_of() {
	"$cli" link list --json | python3 -c '
import json, sys
links = {l["name"]: l for l in json.load(sys.stdin)["links"]}
print(links[sys.argv[1]]["state"])' "$1"
}
socket=$SOFTDPU_RUN_DIR/links/$link.sock
[ "$(state_of "$link")" = down ] || fail "$link is not down before the programs start"

SOFTDPU_SIDE=dpu "$peer" --name "$dpu_name" --count "$count" &
dpu_pid=$!
for _ in $(seq 100); do
	[ "$(state_of "$link")" = listening ] && break
	kill -0 "$dpu_pid" 2>/dev/null || break
	sleep 0.1
done
[ "$(state_of "$link")" = listening ] || fail "$link is not listening once the DPU program serves $socket"
SOFTDPU_SIDE=host "$peer" --name "$host_name" --count "$count"
host_status=$?
wait "$dpu_pid"
dpu_status=$?
dpu_pid=
echo "link_exchange.sh: host exit $host_status, DPU exit $dpu_status"
[ "$host_status" = 0 ] && [ "$dpu_status" = 0 ] || exit 1
[ "$(state_of "$link")" = down ] || fail "$link is not down after both programs exit"
[ ! -e "$socket" ] || fail "$socket is left behind"
