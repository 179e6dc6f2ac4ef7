#!/bin/sh
# Where "softdpu run" finds softdpu's libibverbs: beside an installed softdpu
# (<prefix>/bin -> <prefix>/<libdir>/softdpu-rdma), and a clear error (exit status 1) when a
# softdpu executable has none beside it.
#   run_locations.sh <build dir> <libdir, relative to the prefix>
build_dir=$1
libdir=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
failed=0

# A copy of the executable with no library directory near it.
mkdir -p "$work/lone/bin"
cp "$build_dir/tools/softdpu" "$work/lone/bin/softdpu"
out=$("$work/lone/bin/softdpu" run -- true 2>&1)
rc=$?
echo "lone softdpu: exit status $rc: $out"
if [ "$rc" -ne 1 ] || ! echo "$out" | head -n 1 | grep -q "^softdpu run: softdpu's RDMA libraries are missing: no libibverbs.so.1 in $work/lone/"; then
	echo "FAIL: expected exit status 1 and the missing library directory named"
	failed=1
fi

# An installed prefix, as a user has it.
if ! cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1; then
	cat "$work/install.log"
	if grep -q "file INSTALL cannot find" "$work/install.log"; then
		echo "note: only part of the tree is built, nothing to install; the installed case is skipped"
		[ "$failed" = 0 ] && exit 77
		exit 1
	fi
	echo "FAIL: cmake --install"
	exit 1
fi
want="$work/prefix/$libdir/softdpu-rdma"
out=$(env -u LD_LIBRARY_PATH "$work/prefix/bin/softdpu" run --side host -- sh -c 'echo "$LD_LIBRARY_PATH $SOFTDPU_SIDE"; exit 3' 2>&1)
rc=$?
echo "installed softdpu: exit status $rc: $out"
if [ "$rc" -ne 3 ] || [ "$out" != "$want host" ]; then
	echo "FAIL: expected exit status 3 and \"$want host\""
	failed=1
fi
if [ ! -e "$want/libibverbs.so.1" ]; then
	echo "FAIL: $want/libibverbs.so.1 is not installed"
	failed=1
elif command -v ibv_devinfo >/dev/null; then
	# SOFTDPU_VERBS_PRELOAD: the ASan runtime, which the uninstrumented ibv_devinfo needs first.
	out=$("$work/prefix/bin/softdpu" run --side host -- env ${SOFTDPU_VERBS_PRELOAD:+LD_PRELOAD="$SOFTDPU_VERBS_PRELOAD"} \
		ibv_devinfo -l 2>&1)
	rc=$?
	echo "installed softdpu run -- ibv_devinfo -l: exit status $rc:"
	echo "$out"
	if [ "$rc" -ne 0 ] || ! echo "$out" | grep -q "mlx5_4"; then
		echo "FAIL: the host's devices (mlx5_0..mlx5_4) not listed"
		failed=1
	fi
fi
exit $failed
