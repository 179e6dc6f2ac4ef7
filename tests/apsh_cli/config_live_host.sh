#!/bin/sh
# softdpu-apsh-config --live on this machine's own kernel. Exit 77 (skip) where the kernel has no
# BTF or hides its addresses (not root, kptr_restrict).
tool=$1
[ -r /sys/kernel/btf/vmlinux ] || { echo "no /sys/kernel/btf/vmlinux"; exit 77; }
text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms 2>/dev/null)
case $text in "" | 0000000000000000) echo "kallsyms addresses hidden"; exit 77 ;; esac
out=$(mktemp -d "${TMPDIR:-/tmp}/apsh-config-live.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
"$tool" --live -o "$out" || exit 1
# The running addresses of the symbol map are the kernel's own.
grep -q "\"_text\": \"0x$(echo "$text" | sed 's/^0*//')\"" "$out/symbols.json" || { echo "_text differs"; cat "$out/symbols.json"; exit 1; }
grep -q '"slid": true' "$out/symbols.json" || exit 1
cmp -s /sys/kernel/btf/vmlinux "$out/vmlinux.btf" || { echo "vmlinux.btf differs from the kernel's"; exit 1; }
grep -q '"allowed_regions"' "$out/mem_regions.json" || { echo "no mem_regions.json"; exit 1; }
echo "live mode on $(uname -r): $(ls "$out" | tr '\n' ' ')"
