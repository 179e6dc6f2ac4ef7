#!/usr/bin/env bash
# Builds the memif samples (samples/memif) as a user would, against an installed prefix with
# pkg-config libmemif only, then runs them: generator -> sink, and the responder's --help.
#   samples_build.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
prefix="$build_dir/memif-samples-prefix"
out="$build_dir/memif-samples-bin"
rm -rf "$prefix" "$out"
mkdir -p "$out"
if ! cmake --install "$build_dir" --prefix "$prefix" >/dev/null 2>&1; then
	# Only part of the tree is built: stage what "cmake --install" puts there for libmemif.
	echo "note: cmake --install failed (partial build); staging libmemif's installed files only"
	rm -rf "$prefix"
	mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
	cp "$source_dir/include/libmemif.h" "$prefix/include/"
	cp -P "$build_dir"/src/memif/libmemif.so* "$prefix/lib/"
	cp "$build_dir/pkgconfig/libmemif.pc" "$prefix/lib/pkgconfig/"
fi
pc=$(find "$prefix" -name libmemif.pc | head -1)
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir libmemif)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

for name in gen sink responder; do
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror -o "$out/memif_$name" "$source_dir/samples/memif/memif_$name.c" \
		"$source_dir"/samples/memif/memif_app_*.c $(pkg-config --cflags --libs libmemif)
	libraries=$(ldd "$out/memif_$name") # (not piped into grep -q: SIGPIPE under pipefail)
	if [[ $libraries != *libmemif.so* ]]; then
		echo "memif_$name is not linked to libmemif.so" >&2
		exit 1
	fi
done
"$out/memif_responder" --help | grep -q -- '--ip'
"$source_dir/tests/integration/memif/ours.sh" "$out" --count 50000 --size 1500 -- --count 50000 --size 1500
echo "memif samples: built with pkg-config libmemif and passed"
