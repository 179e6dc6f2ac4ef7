#!/bin/sh
# softdpu-apsh-config offline: --vmlinuz on the kernel that tests/guest/fetch-kernel cached, and
# --deb on a package laid out like Debian's linux-image (./boot/vmlinuz-<release>) holding that
# same bzImage. Both must give the same BTF and link-time symbols, with the release from the
# image's banner or the package's file name. Exit 77 (skip) without the cached kernel or dpkg-deb.
tool=$1
kernel_dir=${SOFTDPU_GUEST_CACHE:-$2}/kernel
[ -s "$kernel_dir/vmlinuz" ] && [ -s "$kernel_dir/release" ] || { echo "no cached kernel in $kernel_dir"; exit 77; }
command -v dpkg-deb >/dev/null || { echo "no dpkg-deb"; exit 77; }
release=$(cat "$kernel_dir/release")
work=$(mktemp -d "${TMPDIR:-/tmp}/apsh-config-deb.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" --vmlinuz "$kernel_dir/vmlinuz" -o "$work/vmlinuz" || fail "--vmlinuz"
grep -q "\"kernel\": \"$release\"" "$work/vmlinuz/symbols.json" || fail "release $release not found by the banner"
grep -q '"slid": false' "$work/vmlinuz/symbols.json" || fail "offline addresses must be link-time"
grep -q '"init_task": "0xffffffff8' "$work/vmlinuz/symbols.json" || fail "init_task (exported) missing"
# The .BTF section of the ELF kernel that fetch-kernel extracted with its own method.
if command -v objcopy >/dev/null && [ -s "$kernel_dir/vmlinux" ]; then
	objcopy -O binary --only-section=.BTF "$kernel_dir/vmlinux" "$work/expected.btf" &&
		cmp -s "$work/expected.btf" "$work/vmlinuz/vmlinux.btf" || fail "vmlinux.btf differs from the kernel's .BTF"
	"$tool" --vmlinux "$kernel_dir/vmlinux" -o "$work/vmlinux" || fail "--vmlinux"
	cmp -s "$work/vmlinuz/symbols.json" "$work/vmlinux/symbols.json" || fail "--vmlinux and --vmlinuz differ"
fi

mkdir -p "$work/pkg/DEBIAN" "$work/pkg/boot"
cp "$kernel_dir/vmlinuz" "$work/pkg/boot/vmlinuz-$release"
printf 'Package: linux-image-%s\nVersion: 1\nArchitecture: amd64\nMaintainer: softdpu tests\nDescription: test\n' \
	"$release" >"$work/pkg/DEBIAN/control"
dpkg-deb -Znone --build "$work/pkg" "$work/kernel.deb" >/dev/null || fail "dpkg-deb --build"
"$tool" --deb "$work/kernel.deb" -o "$work/deb" || fail "--deb"
cmp -s "$work/vmlinuz/symbols.json" "$work/deb/symbols.json" || fail "--deb and --vmlinuz give different symbol maps"
cmp -s "$work/vmlinuz/vmlinux.btf" "$work/deb/vmlinux.btf" || fail "--deb and --vmlinuz give different BTF"
[ ! -e "$work/deb/kpgd_file.conf" ] && [ ! -e "$work/deb/mem_regions.json" ] || fail "offline mode cannot know kpgd or regions"
echo "offline modes agree on $release"
