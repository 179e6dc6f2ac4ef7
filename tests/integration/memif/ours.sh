#!/usr/bin/env bash
# Our memif generator against our memif sink (no DPDK), in two processes.
#
#   ours.sh PROGRAMS [sink options...] -- [gen options...]
#
# PROGRAMS is either the softdpu CLI ("softdpu memif sink|gen") or a directory holding the
# memif_sink and memif_gen samples. The sink is the server unless the options say otherwise;
# both get a fresh socket. Fails if either side fails.
set -uo pipefail
programs=$1
shift
sink_options=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	sink_options+=("$1")
	shift
done
[ $# -gt 0 ] && shift
if [ -d "$programs" ]; then
	sink=("$programs/memif_sink")
	gen=("$programs/memif_gen")
else
	sink=("$programs" memif sink)
	gen=("$programs" memif gen)
fi
socket="${TMPDIR:-/tmp}/softdpu-memif-ours-$$-$RANDOM.sock"
sink_pid=
cleanup() {
	if [ -n "$sink_pid" ] && kill -0 "$sink_pid" 2>/dev/null; then
		kill -TERM "$sink_pid"
		wait "$sink_pid"
	fi
	rm -f "$socket"
}
trap cleanup EXIT
pin_sink=()
pin_gen=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin_sink=(taskset -c 0)
	pin_gen=(taskset -c 1)
fi
"${pin_sink[@]}" "${sink[@]}" --role server --socket "$socket" "${sink_options[@]}" &
sink_pid=$!
"${pin_gen[@]}" "${gen[@]}" --role client --socket "$socket" --connect-timeout 20 "$@"
gen_status=$?
wait "$sink_pid"
sink_status=$?
sink_pid=
echo "ours.sh: gen exit $gen_status, sink exit $sink_status"
[ "$gen_status" = 0 ] && [ "$sink_status" = 0 ]
