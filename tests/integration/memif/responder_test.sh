#!/usr/bin/env bash
# The memif responder (server) answers ARP and ping from memif_responder_check (client).
#   responder_test.sh SOFTDPU RESPONDER_CHECK
set -uo pipefail
softdpu=$1
check=$2
socket="${TMPDIR:-/tmp}/softdpu-memif-responder-$$-$RANDOM.sock"
"$softdpu" memif responder --role server --socket "$socket" --ip 192.168.7.1 --mac 02:12:34:56:78:9a \
	--duration 60 &
responder_pid=$!
trap 'kill -TERM "$responder_pid" 2>/dev/null; rm -f "$socket"' EXIT
"$check" --socket "$socket" --ip 192.168.7.1 --mac 02:12:34:56:78:9a --connect-timeout 20
status=$?
kill -TERM "$responder_pid"
wait "$responder_pid"
responder_status=$?
echo "responder_test.sh: check exit $status, responder exit $responder_status"
[ "$status" = 0 ] && [ "$responder_status" = 0 ]
