#include "apsh/kernel/vmcoreinfo.hpp"

#include "common/bytes.hpp"

#include <cstring>

namespace softdpu::apsh::kernel {

namespace {

constexpr size_t note_max_bytes = 4096; // VMCOREINFO_BYTES is one page

bool parse_unsigned(std::string_view text, int base, uint64_t &value)
{
	if (base == 16 && (text.starts_with("0x") || text.starts_with("0X")))
		text.remove_prefix(2);
	const auto parsed = base == 16 ? common::parse_hex(text) : common::parse_decimal(text);
	if (!parsed)
		return false;
	value = *parsed;
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

// A candidate at bytes[at] (a window that holds the byte before it unless it starts its RAM range,
// and up to a note's length after it): a whole note to parse?
bool try_candidate(std::span<const uint8_t> bytes, size_t at, VmcoreInfo &out)
{
	size_t available = std::min<size_t>(bytes.size() - at, note_max_bytes);
	std::string_view text(reinterpret_cast<const char *>(bytes.data() + at), available);
	text = text.substr(0, text.find('\0'));
	if (text.find("\nKERNELOFFSET=") == std::string_view::npos ||
	    !(at == 0 || bytes[at - 1] == '\0' || bytes[at - 1] == '\n'))
		return false;
	VmcoreInfo info;
	if (!parse_vmcoreinfo(text, info).ok() || !info.kernel_offset ||
	    !(info.symbols.count("init_top_pgt") || info.symbols.count("swapper_pg_dir")))
		return false;
	out = std::move(info);
	return true;
}

} // namespace

Status find_vmcoreinfo(const source::PhysicalMemory &memory, VmcoreInfo &out, uint64_t *found_at)
{
	// The kernel keeps the text in a zeroed page (vmcoreinfo_data, at offset 0) and as an ELF note
	// in page-aligned memory (vmcoreinfo_note: 12-byte header + "VMCOREINFO\0\0", text at 24).
	// First pass: only those two spots of each page (no search through the bytes: on a 2 GiB
	// guest whose note lies near the top this is several times faster). Second pass, only when the
	// first finds nothing (a kernel that keeps them elsewhere): every "OSRELEASE=" that parses.
	// Both go over the bytes the source holds, in bounded windows (PhysicalMemory::scan skips the
	// holes of a sparse file), whatever the image's size.
	constexpr uint64_t page = 4096;
	constexpr size_t note_text_offset = 24;
	const source::ScanOptions options{.lookbehind = 1, .lookahead = note_max_bytes};
	// A candidate at window.bytes[at]: with the byte before it unless the window starts a range.
	auto candidate_at = [](const source::ScanWindow &window, size_t at, VmcoreInfo &info) {
		const std::span<const uint8_t> candidate = at == 0 ? window.bytes : window.bytes.subspan(at - 1);
		return try_candidate(candidate, at == 0 ? 0 : 1, info);
	};
	bool found = false;
	Status status = memory.scan(options, [&](const source::ScanWindow &window) {
		const uint8_t *base = window.bytes.data();
		const uint64_t first_page = (window.gpa + window.begin + page - 1) & ~(page - 1);
		for (uint64_t gpa = first_page; gpa < window.gpa + window.end; gpa += page) {
			const size_t at = static_cast<size_t>(gpa - window.gpa);
			for (size_t offset : {size_t{0}, note_text_offset}) {
				if (at + offset + marker.size() > window.bytes.size() ||
				    std::memcmp(base + at + offset, marker.data(), marker.size()) != 0)
					continue;
				if (candidate_at(window, at + offset, out)) {
					found = true;
					if (found_at)
						*found_at = gpa + offset;
					return false;
				}
			}
		}
		return true;
	});
	if (!status.ok() || found)
		return status;

	status = memory.scan(options, [&](const source::ScanWindow &window) {
		const uint8_t *base = window.bytes.data();
		// Matches that start in [begin, end) may run into the lookahead.
		const size_t search_end = std::min(window.bytes.size(), window.end + marker.size() - 1);
		size_t cursor = window.begin;
		while (cursor < window.end) {
			auto *hit = static_cast<const uint8_t *>(
			    memmem(base + cursor, search_end - cursor, marker.data(), marker.size()));
			if (!hit)
				break;
			const size_t at = static_cast<size_t>(hit - base);
			if (candidate_at(window, at, out)) {
				found = true;
				if (found_at)
					*found_at = window.gpa + at;
				return false;
			}
			cursor = at + 1;
		}
		return true;
	});
	if (!status.ok() || found)
		return status;
	return Status{DOCA_ERROR_NOT_FOUND, "no VMCOREINFO note in RAM"};
}

} // namespace softdpu::apsh::kernel
