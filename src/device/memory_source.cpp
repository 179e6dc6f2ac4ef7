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
	    {"lime", MemoryKind::lime}};
	for (const auto &[name, kind] : kNames)
		if (text == name)
			return kind;
	return std::nullopt;
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
			error = "unknown memory kind \"" + std::string(text.substr(0, colon)) +
				"\" (expected qemu, raw, elf, lime or auto; or qemu_shared_ram, elf_core)";
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
		if (source.kind != MemoryKind::qemu_shared_ram && source.kind != MemoryKind::automatic) {
			error = "a QMP socket only goes with a qemu (or auto) memory source";
			return std::nullopt;
		}
	}
	if (rest.empty()) {
		error = "empty memory source path";
		return std::nullopt;
	}
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
