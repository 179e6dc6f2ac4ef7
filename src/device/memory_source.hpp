// Memory sources of App Shield: where it reads the physical memory of the system behind a
// representor (docs/apsh.md). One vocabulary for every place that names one: the topology file's
// "memory" of a representor, SOFTDPU_APSH_MEMORY and `softdpu apsh --memory`.
// Stateless: libdoca_apsh compiles this file in as well (it uses no libdoca_common state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace softdpu::device {

// Files (automatic .. lime) and running QEMU processes, whose guest RAM is read through the
// process's own memory (qemu_pid, qemu_name, libvirt: the path is then the PID, the QEMU -name or
// the libvirt domain).
enum class MemoryKind : uint8_t { automatic, qemu_shared_ram, raw, elf_core, lime, qemu_pid, qemu_name, libvirt };

// The canonical names: "auto", "qemu_shared_ram", "raw", "elf_core", "lime", "pid", "qemu_name",
// "libvirt".
const char *to_string(MemoryKind kind) noexcept;
// A canonical name or a short one ("qemu" for qemu_shared_ram, "elf" for elf_core, "qemu-name"
// for qemu_name); nullopt for anything else.
std::optional<MemoryKind> memory_kind_from_string(std::string_view text) noexcept;
// True for the kinds that name a running QEMU process rather than a file.
bool is_process_kind(MemoryKind kind) noexcept;
// Checks the value that goes with a kind: a path for the file kinds (not checked here), a PID
// (decimal, 1 .. 4194304), a QEMU -name or a libvirt domain name (printable, at most 255 bytes,
// no '/'). False with error set otherwise.
bool check_memory_target(MemoryKind kind, std::string_view value, std::string &error);

struct MemorySource {
	MemoryKind kind = MemoryKind::automatic;
	std::string path;       // the RAM file or image; the PID, -name or domain of the process kinds
	std::string qmp_socket; // optional, qemu_shared_ram and the process kinds: QEMU's QMP socket

	friend bool operator==(const MemorySource &, const MemorySource &) = default;
};

// "<kind>:<path>[,qmp=<socket>]", kind as memory_kind_from_string takes it, or a bare path (kind
// auto; a path whose text before its first ':' has a '/' is a bare path too): "pid:1234",
// "qemu-name:vm1,qmp=/run/vm1.qmp", "libvirt:web". nullopt with error set when malformed.
std::optional<MemorySource> parse_memory_source_spec(std::string_view text, std::string &error);

// SOFTDPU_APSH_MEMORY (parse_memory_source_spec's syntax): a memory source for every
// representor, overriding the topology's. nullopt when unset or empty; error set, starting with
// "SOFTDPU_APSH_MEMORY: ", when the value is malformed.
std::optional<MemorySource> memory_source_from_environment(std::string &error);

} // namespace softdpu::device
