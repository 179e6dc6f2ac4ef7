#!/usr/bin/env bash
# Installs softdpu into a private prefix, builds each samples/*.c as a user would (installed
# headers and pkg-config only), and runs it. A sample checks its own results and exits non-zero
# on any mismatch.
set -euo pipefail
build_dir=$1
source_dir=$2
prefix="$build_dir/samples-prefix"
out="$build_dir/samples-bin"

rm -rf "$prefix" "$out"
mkdir -p "$out"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# softdpu's libibverbs first, as docs/rdma.md tells users (samples that use verbs need it).
export LD_LIBRARY_PATH="$prefix/lib/softdpu-rdma:$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

shopt -s nullglob
# Set-up shared by the PE/DMA samples (device, mmap, buffers, PE) is compiled into each sample
# that includes sample_common.h (the argp and DPDK helpers there are for the apps in folders).
common_srcs=("$source_dir"/samples/common/sample_common.c)
count=0
for src in "$source_dir"/samples/*.c; do
  name=$(basename "$src" .c)
  # Each sample names the pkg-config packages it needs on a "// pkg-config:" line.
  pkgs=$(sed -n 's|^// pkg-config: *||p' "$src" | head -1)
  pkgs=${pkgs:-doca-common}
  extra_srcs=()
  if grep -q '^#include "sample_common.h"' "$src"; then
    extra_srcs=("${common_srcs[@]}")
  fi
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -DDOCA_ALLOW_EXPERIMENTAL_API -I "$source_dir/samples/common" \
    -o "$out/$name" "$src" "${extra_srcs[@]}" $(pkg-config --cflags --libs $pkgs)
  echo "--- running sample $name"
  "$out/$name"
  count=$((count + 1))
done
echo "samples: $count built and passed"
[ "$count" -gt 0 ]
