#include "device/memory_source.hpp"

#include "common/env.hpp"

#include <utility>

namespace softdpu::device {

const char *to_string(MemoryKind kind) noexcept
{
	switch (kind) {
	case MemoryKind::automatic:
		return "auto";
	case MemoryKind::qemu_shared_ram:
		return "qemu_shared_ram";
	case MemoryKind::raw:
		return "raw";
	case MemoryKind::elf_core:
		return "elf_core";
	case MemoryKind::lime:
		return "lime";
	case MemoryKind::qemu_pid:
		return "pid";
	case MemoryKind::qemu_name:
		return "qemu_name";
	case MemoryKind::libvirt:
		return "libvirt";
	}
	return "?";
}

std::optional<MemoryKind> memory_kind_from_string(std::string_view text) noexcept
{
	static constexpr std::pair<std::string_view, MemoryKind> kNames[] = {
	    {"auto", MemoryKind::automatic},
	    {"qemu_shared_ram", MemoryKind::qemu_shared_ram},
	    {"qemu", MemoryKind::qemu_shared_ram},
	    {"raw", MemoryKind::raw},
	    {"elf_core", MemoryKind::elf_core},
	    {"elf", MemoryKind::elf_core},
	    {"lime", MemoryKind::lime},
	    {"pid", MemoryKind::qemu_pid},
	    {"qemu_name", MemoryKind::qemu_name},
	    {"qemu-name", MemoryKind::qemu_name},
	    {"libvirt", MemoryKind::libvirt}};
	for (const auto &[name, kind] : kNames)
		if (text == name)
			return kind;
	return std::nullopt;
}

bool is_process_kind(MemoryKind kind) noexcept
{
	return kind == MemoryKind::qemu_pid || kind == MemoryKind::qemu_name || kind == MemoryKind::libvirt;
}

bool check_memory_target(MemoryKind kind, std::string_view value, std::string &error)
{
	error.clear();
	if (value.empty()) {
		error = is_process_kind(kind) ? "empty " + std::string(to_string(kind)) + " value"
					      : "empty memory source path";
		return false;
	}
	if (kind == MemoryKind::qemu_pid) {
		uint64_t pid = 0;
		for (char c : value) {
			if (c < '0' || c > '9' || pid > 4194304) {
				error = "pid: \"" + std::string(value) + "\" is not a process ID (a decimal number)";
				return false;
			}
			pid = pid * 10 + static_cast<uint64_t>(c - '0');
		}
		if (pid == 0 || pid > 4194304) {
			error = "pid: " + std::string(value) + " is not a process ID (1 to 4194304)";
			return false;
		}
		return true;
	}
	if (kind == MemoryKind::qemu_name || kind == MemoryKind::libvirt) {
		const char *what = kind == MemoryKind::libvirt ? "libvirt domain" : "QEMU -name";
		if (value.size() > 255) {
			error = std::string(what) + " is longer than 255 bytes";
			return false;
		}
		for (char c : value)
			if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f ||
			    (kind == MemoryKind::libvirt && c == '/')) {
				error = std::string(what) + " \"" + std::string(value) + "\" has a control character" +
					(kind == MemoryKind::libvirt ? " or a '/'" : "");
				return false;
			}
	}
	return true;
}

std::optional<MemorySource> parse_memory_source_spec(std::string_view text, std::string &error)
{
	error.clear();
	MemorySource source;
	std::string_view rest = text;
	const size_t colon = text.find(':');
	if (colon != std::string_view::npos && text.substr(0, colon).find('/') == std::string_view::npos) {
		auto kind = memory_kind_from_string(text.substr(0, colon));
		if (!kind) {
			error =
			    "unknown memory kind \"" + std::string(text.substr(0, colon)) +
			    "\" (expected qemu, raw, elf, lime, auto, pid, qemu-name or libvirt; or qemu_shared_ram, "
			    "elf_core, qemu_name)";
			return std::nullopt;
		}
		source.kind = *kind;
		rest = text.substr(colon + 1);
	}
	if (const size_t comma = rest.rfind(",qmp="); comma != std::string_view::npos) {
		source.qmp_socket = std::string(rest.substr(comma + 5));
		rest = rest.substr(0, comma);
		if (source.qmp_socket.empty()) {
			error = "empty QMP socket path after \",qmp=\"";
			return std::nullopt;
		}
		if (source.kind != MemoryKind::qemu_shared_ram && source.kind != MemoryKind::automatic &&
		    !is_process_kind(source.kind)) {
			error = "a QMP socket only goes with a qemu, pid, qemu-name, libvirt (or auto) memory source";
			return std::nullopt;
		}
	}
	if (!check_memory_target(source.kind, rest, error))
		return std::nullopt;
	source.path = std::string(rest);
	return source;
}

std::optional<MemorySource> memory_source_from_environment(std::string &error)
{
	error.clear();
	const auto value = common::env_value("SOFTDPU_APSH_MEMORY");
	if (!value)
		return std::nullopt;
	auto source = parse_memory_source_spec(*value, error);
	if (!source)
		error = "SOFTDPU_APSH_MEMORY: " + error;
	return source;
}

} // namespace softdpu::device
