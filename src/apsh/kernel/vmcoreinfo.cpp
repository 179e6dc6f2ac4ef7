#include "apsh/kernel/vmcoreinfo.hpp"

#include <cstring>

namespace softdpu::apsh::kernel {

namespace {

constexpr size_t note_max_bytes = 4096; // VMCOREINFO_BYTES is one page

bool parse_unsigned(std::string_view text, int base, uint64_t &value)
{
	if (base == 16 && (text.starts_with("0x") || text.starts_with("0X")))
		text.remove_prefix(2);
	if (text.empty() || text.size() > (base == 16 ? 16u : 20u))
		return false;
	uint64_t result = 0;
	for (char c : text) {
		int digit = c >= '0' && c <= '9'                 ? c - '0'
			    : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
			    : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
								 : -1;
		if (digit < 0)
			return false;
		uint64_t next = result * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
		if (next / static_cast<uint64_t>(base) != result && base == 10)
			return false;
		result = next;
	}
	value = result;
	return true;
}

bool parse_signed(std::string_view text, int64_t &value)
{
	bool negative = text.starts_with('-');
	if (negative)
		text.remove_prefix(1);
	uint64_t magnitude;
	if (!parse_unsigned(text, 10, magnitude) || magnitude > (1ull << 63))
		return false;
	// Wrapping negation keeps INT64_MIN representable.
	value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
	return negative || magnitude < (1ull << 63);
}

// "SYMBOL(init_top_pgt)" with prefix "SYMBOL(" gives "init_top_pgt".
bool bracketed(std::string_view key, std::string_view prefix, std::string &inner)
{
	if (!key.starts_with(prefix) || !key.ends_with(')') || key.size() <= prefix.size() + 1)
		return false;
	inner = std::string(key.substr(prefix.size(), key.size() - prefix.size() - 1));
	return true;
}

} // namespace

std::optional<uint64_t> VmcoreInfo::symbol(const std::string &name) const
{
	auto it = symbols.find(name);
	if (it == symbols.end())
		return std::nullopt;
	return it->second;
}

std::optional<uint64_t> VmcoreInfo::phys_base() const
{
	auto it = numbers.find("phys_base");
	if (it == numbers.end())
		return std::nullopt;
	return static_cast<uint64_t>(it->second);
}

std::optional<bool> VmcoreInfo::five_level() const
{
	auto it = numbers.find("pgtable_l5_enabled");
	if (it == numbers.end())
		return std::nullopt;
	return it->second != 0;
}

Status parse_vmcoreinfo(std::string_view text, VmcoreInfo &out)
{
	out = {};
	text = text.substr(0, std::min(text.find('\0'), note_max_bytes));
	while (!text.empty()) {
		size_t newline = text.find('\n');
		std::string_view line = text.substr(0, newline);
		text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
		size_t equals = line.find('=');
		if (equals == std::string_view::npos)
			continue;
		std::string_view key = line.substr(0, equals), value = line.substr(equals + 1);
		std::string name;
		uint64_t unsigned_value;
		int64_t signed_value;
		if (key == "OSRELEASE")
			out.osrelease = std::string(value);
		else if (key == "BUILD-ID")
			out.build_id = std::string(value);
		else if (key == "KERNELOFFSET" && parse_unsigned(value, 16, unsigned_value))
			out.kernel_offset = unsigned_value;
		else if (bracketed(key, "SYMBOL(", name) && parse_unsigned(value, 16, unsigned_value))
			out.symbols[name] = unsigned_value;
		else if (bracketed(key, "NUMBER(", name) && parse_signed(value, signed_value))
			out.numbers[name] = signed_value;
		else if (bracketed(key, "SIZE(", name) && parse_unsigned(value, 10, unsigned_value))
			out.sizes[name] = unsigned_value;
		else if (bracketed(key, "OFFSET(", name) && parse_unsigned(value, 10, unsigned_value))
			out.offsets[name] = unsigned_value;
	}
	if (out.osrelease.empty())
		return Status{DOCA_ERROR_INVALID_VALUE, "VMCOREINFO has no OSRELEASE"};
	return Status::success();
}

namespace {

constexpr std::string_view marker = "OSRELEASE=";

// A candidate at `hit` (inside `bytes`, which starts at GPA `base`): a whole note to parse?
bool try_candidate(std::span<const uint8_t> bytes, const uint8_t *hit, uint64_t base, VmcoreInfo &out,
		   uint64_t *found_at)
{
	const uint8_t *end = bytes.data() + bytes.size();
	size_t available = std::min<size_t>(static_cast<size_t>(end - hit), note_max_bytes);
	std::string_view text(reinterpret_cast<const char *>(hit), available);
	text = text.substr(0, text.find('\0'));
	if (text.find("\nKERNELOFFSET=") == std::string_view::npos ||
	    !(hit == bytes.data() || hit[-1] == '\0' || hit[-1] == '\n'))
		return false;
	VmcoreInfo info;
	if (!parse_vmcoreinfo(text, info).ok() || !info.kernel_offset ||
	    !(info.symbols.count("init_top_pgt") || info.symbols.count("swapper_pg_dir")))
		return false;
	out = std::move(info);
	if (found_at)
		*found_at = base + static_cast<uint64_t>(hit - bytes.data());
	return true;
}

} // namespace

Status find_vmcoreinfo(const source::PhysicalMemory &memory, VmcoreInfo &out, uint64_t *found_at)
{
	// Fast path: the kernel keeps the text in a zeroed page (vmcoreinfo_data, at offset 0) and
	// as an ELF note in page-aligned memory (vmcoreinfo_note: 12-byte header + "VMCOREINFO\0\0").
	for (const RamRange &range : memory.ranges()) {
		auto bytes = memory.view(range.gpa_start, range.gpa_end - range.gpa_start);
		uint64_t first_page = (range.gpa_start + 4095) & ~uint64_t{4095};
		for (uint64_t page = first_page; page + 4096 <= range.gpa_end; page += 4096)
			for (uint64_t at : {uint64_t{24}, uint64_t{0}}) {
				const uint8_t *hit = bytes.data() + (page + at - range.gpa_start);
				if (std::memcmp(hit, marker.data(), marker.size()) == 0 &&
				    try_candidate(bytes, hit, range.gpa_start, out, found_at))
					return Status::success();
			}
	}
	for (const RamRange &range : memory.ranges()) {
		auto bytes = memory.view(range.gpa_start, range.gpa_end - range.gpa_start);
		const uint8_t *cursor = bytes.data();
		const uint8_t *end = bytes.data() + bytes.size();
		while (cursor < end) {
			auto *hit = static_cast<const uint8_t *>(
			    memmem(cursor, static_cast<size_t>(end - cursor), marker.data(), marker.size()));
			if (!hit)
				break;
			if (try_candidate(bytes, hit, range.gpa_start, out, found_at))
				return Status::success();
			cursor = hit + 1;
		}
	}
	return Status{DOCA_ERROR_NOT_FOUND, "no VMCOREINFO note in RAM"};
}

} // namespace softdpu::apsh::kernel
