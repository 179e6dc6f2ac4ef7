#!/usr/bin/env bash
# Runs the DevX sample (samples/devx) on softdpu's device: a DevX queue pair in one process, a
# verbs queue pair in another, with softdpu's libibverbs.so.1 and libmlx5.so.1 chosen by
# LD_LIBRARY_PATH as docs/mlx5.md says. The sample checks every byte and every CQE itself.
#   devx_test.sh <softdpu-rdma dir> <devx_sample binary> [sample options...]
#   devx_test.sh <softdpu-rdma dir> --build <samples/devx dir> [sample options...]
# --build compiles the sample first as a user does (cc, pkg-config libibverbs libmlx5, -Werror).
set -u
libdir=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$1" = "--build" ]; then
	src=$2
	shift 2
	# shellcheck disable=SC2046
	if ! cc -std=c11 -Wall -Wextra -Werror -O2 -o "$work/devx_sample" "$src"/devx_sample.c "$src"/devx_rc.c \
		"$src"/verbs_peer.c $(pkg-config --cflags --libs libibverbs libmlx5); then
		echo "the DevX sample does not build with pkg-config libibverbs libmlx5"
		exit 1
	fi
	sample=$work/devx_sample
else
	sample=$1
	shift
fi
export LD_LIBRARY_PATH=$libdir
unset SOFTDPU_TOPOLOGY

# Both libraries must be softdpu's.
loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$sample")
for lib in libibverbs.so.1 libmlx5.so.1; do
	if ! printf '%s\n' "$loaded" | grep -q "$lib => $libdir/$lib"; then
		echo "the sample does not load softdpu's $lib:"
		printf '%s\n' "$loaded"
		exit 1
	fi
done

# Under ASan the runtime goes first (SOFTDPU_VERBS_PRELOAD), as for rdma-core's programs.
wrap=()
[ -n "${SOFTDPU_VERBS_PRELOAD:-}" ] && wrap=(env LD_PRELOAD="$SOFTDPU_VERBS_PRELOAD")
echo "=== devx_sample $*"
timeout 120 "${wrap[@]}" "$sample" "$@"
status=$?
[ "$status" -eq 124 ] && echo "the sample did not finish within 120 s"
exit "$status"
