#!/usr/bin/env bash
# One interoperability run: a softdpu memif application against DPDK testpmd.
#
#   interop.sh SOFTDPU [--abstract] [testpmd.sh options...] -- APPLICATION [options...]
#
# SOFTDPU is the softdpu CLI; APPLICATION and its options go to "softdpu memif". Both sides get
# the same fresh socket (a file under $TMPDIR, or an abstract name with --abstract); testpmd
# runs on CPU 0 and our side on CPU 1 when there are two CPUs. Exit status: ours (77: skipped
# because dpdk-testpmd is missing).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
softdpu=$1
shift
abstract=0
if [ "${1:-}" = --abstract ]; then
	abstract=1
	shift
fi
testpmd_options=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	testpmd_options+=("$1")
	shift
done
[ $# -gt 0 ] || { echo "usage: interop.sh SOFTDPU [--abstract] [testpmd.sh options] -- APPLICATION [options]" >&2; exit 2; }
shift

if [ "$abstract" = 1 ]; then
	socket="@softdpu-memif-$$-$RANDOM"
else
	socket="${TMPDIR:-/tmp}/softdpu-memif-$$-$RANDOM.sock"
	trap 'rm -f "$socket"' EXIT
fi
pin=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin=(taskset -c 1)
fi
"$here/testpmd.sh" --cpu 0 --socket "$socket" "${testpmd_options[@]}" -- \
	"${pin[@]}" "$softdpu" memif "$1" --socket "$socket" --connect-timeout 20 "${@:2}"
