#!/usr/bin/env bash
# The install's two flavours (README, "DPU flavour"): installs softdpu into a private prefix, builds
# flavour/flavour_probe.c through <prefix>/lib/pkgconfig (host) and <prefix>/lib/pkgconfig-dpu (DPU),
# with cc + pkg-config and, when meson is installed, with meson and dependency('doca') as DOCA's
# samples do, and checks what each build reports. Also checks <prefix>/applications/VERSION and
# what `pkg-config --static` lists.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
prefix="$build_dir/flavour-prefix"
work="$build_dir/flavour-work"

rm -rf "$prefix" "$work"
mkdir -p "$work"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libdoca_common.so' -print -quit)")
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The side must come from the flavour's defaults, never from the caller's environment.
unset SOFTDPU_SIDE SOFTDPU_TOPOLOGY
probe="$source_dir/tests/samples/flavour/flavour_probe.c"
failures=0

expect() { # expect <what> <wanted> <got>
  if [ "$2" = "$3" ]; then
    echo "ok: $1: $3"
  else
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

version=$(cat "$prefix/applications/VERSION")
expect "applications/VERSION is DOCA's version string" "2.5.0108" "$version"

for flavour in host dpu; do
  pcdir="$libdir/pkgconfig"
  [ "$flavour" = dpu ] && pcdir="$libdir/pkgconfig-dpu"
  for pkg in doca doca-common doca-dma doca-argp; do
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -o "$work/probe-$flavour-$pkg" "$probe" \
      $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs "$pkg" doca-common)
    expect "$flavour flavour through $pkg (cc)" "flavour=$flavour side=dpu version=$version" \
      "$("$work/probe-$flavour-$pkg")"
  done
  if [ -e "$pcdir/doca-apsh.pc" ]; then
    expect "$flavour doca-apsh --static lists libyara and libcrypto" "yes" \
      "$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs doca-apsh | grep -q -- '-lyara' &&
        PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs doca-apsh | grep -q -- '-lcrypto' && echo yes)"
  fi
  expect "$flavour doca-dma --static lists the C++ runtime" "yes" \
    "$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs doca-dma | grep -q -- '-lstdc++' && echo yes)"
  if command -v meson >/dev/null; then
    if ! { PKG_CONFIG_PATH="$pcdir" meson setup "$work/meson-$flavour" "$source_dir/tests/samples/flavour" &&
      ninja -C "$work/meson-$flavour"; } >"$work/meson-$flavour.log" 2>&1; then
      cat "$work/meson-$flavour.log"
      exit 1
    fi
    expect "$flavour flavour through meson dependency('doca')" "flavour=$flavour side=dpu version=$version" \
      "$("$work/meson-$flavour/flavour_probe")"
  else
    echo "meson not installed: the meson builds are not checked"
  fi
done
# The host flavour's process is the host side when asked to be.
expect "host flavour with SOFTDPU_SIDE=host" "flavour=host side=host version=$version" \
  "$(SOFTDPU_SIDE=host "$work/probe-host-doca")"

[ "$failures" -eq 0 ]
