#include "apsh/kernel/kallsyms.hpp"

#include "common/bytes.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace softdpu::apsh::kernel {

namespace {

constexpr uint32_t max_symbols = 4u << 20;        // far above any real kernel (~100k)
constexpr uint64_t max_names_bytes = 32ull << 20; // the 6.1 names table is ~1 MB
constexpr uint64_t token_table_bytes = 64u << 10; // 256 short tokens
// KSYM_NAME_LEN (512 since Linux 6.1, 128 before) counts the terminating NUL: a name has at most
// 511 characters, plus its type character in the table. A longer expansion is not a symbol.
constexpr size_t max_typed_name_length = 1 + 511;
// All names expanded together (about 2.3 MB for the 6.1 kernel's ~94,000 symbols).
constexpr size_t max_arena_bytes = 64u << 20;

// FNV-1a: cheap, and only used to skip most string compares.
uint32_t name_hash(std::string_view name)
{
	uint32_t hash = 2166136261u;
	for (char c : name)
		hash = (hash ^ static_cast<uint8_t>(c)) * 16777619u;
	return hash;
}

Status corrupt(const std::string &what)
{
	return Status{DOCA_ERROR_INVALID_VALUE, "kallsyms tables are corrupt: " + what};
}

} // namespace

Status Kallsyms::decode_tables(std::span<const uint8_t> names, std::span<const uint8_t> token_table,
			       std::span<const uint8_t> token_index, std::span<const uint8_t> offsets,
			       uint64_t relative_base, uint32_t count, Kallsyms &out)
{
	out.entries_.clear();
	out.arena_.clear();
	if (count == 0 || count > max_symbols)
		return corrupt("implausible symbol count " + std::to_string(count));
	if (token_index.size() < size_t{256} * 2)
		return corrupt("token index is short");
	if (offsets.size() / 4 < count)
		return corrupt("offset table is short");
	// Expand the 256 tokens once.
	std::array<std::string_view, 256> tokens;
	for (size_t i = 0; i < 256; i++) {
		const auto at = common::load_le<uint16_t>(token_index, i * 2);
		if (at >= token_table.size())
			return corrupt("token " + std::to_string(i) + " lies outside the token table");
		auto rest = token_table.subspan(at);
		auto nul = std::find(rest.begin(), rest.end(), uint8_t{0});
		if (nul == rest.end())
			return corrupt("token " + std::to_string(i) + " is not terminated");
		tokens[i] = std::string_view(reinterpret_cast<const char *>(rest.data()),
					     static_cast<size_t>(nul - rest.begin()));
	}
	// Each name takes at least two bytes of the table: a count beyond that cannot be real.
	out.entries_.reserve(std::min<size_t>(count, names.size() / 2));
	out.arena_.reserve(std::min({size_t{count} * 24, names.size() * 8, max_arena_bytes}));
	size_t pos = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (pos >= names.size())
			return corrupt("names end after " + std::to_string(i) + " of " + std::to_string(count));
		size_t length = names[pos++];
		if (length & 0x80) { // "big" symbol: 7 low bits, then the next byte's bits 7 and up
			if (pos >= names.size())
				return corrupt("truncated big-symbol length");
			length = (length & 0x7f) | (size_t{names[pos++]} << 7);
		}
		if (length == 0 || length > names.size() - pos)
			return corrupt("name " + std::to_string(i) + " runs past the table");
		// Expansion stops once the name is longer than any symbol can be: a crafted table can make
		// every name up to 32,767 references to a token of 65,535 bytes.
		size_t start = out.arena_.size();
		size_t name_length = 0;
		for (size_t t = 0; t < length && name_length <= max_typed_name_length; t++) {
			const std::string_view token = tokens[names[pos + t]];
			const size_t room = max_typed_name_length + 1 - name_length;
			out.arena_.append(token.substr(0, room));
			name_length += std::min(token.size(), room);
		}
		pos += length;
		if (name_length < 2 || name_length > max_typed_name_length) {
			out.arena_.erase(start); // (resize would do; GCC 12 -O2 + ASan warns on it falsely)
			continue;
		}
		if (out.arena_.size() > max_arena_bytes)
			return corrupt("names expand to more than " + std::to_string(max_arena_bytes) + " bytes");
		const auto offset = common::load_le<int32_t>(offsets, uint64_t{i} * 4);
		// CONFIG_KALLSYMS_ABSOLUTE_PERCPU: non-negative values are absolute (per-CPU symbols),
		// negative ones count down from relative_base.
		uint64_t address = offset >= 0
				       ? static_cast<uint64_t>(offset)
				       : relative_base - 1 - static_cast<uint64_t>(static_cast<int64_t>(offset));
		std::string_view symbol(out.arena_.data() + start + 1, name_length - 1); // the type comes first
		out.entries_.push_back({address, static_cast<uint32_t>(start + 1),
					static_cast<uint16_t>(name_length - 1), out.arena_[start], name_hash(symbol)});
	}
	return Status::success();
}

Status Kallsyms::decode(const paging::AddressSpace &kernel, const KallsymsTables &where, Kallsyms &out)
{
	auto count = kernel.read_value<uint32_t>(where.num_syms);
	if (!count)
		return Status{DOCA_ERROR_NOT_FOUND, "kallsyms_num_syms is not mapped"};
	auto relative_base = kernel.read_value<uint64_t>(where.relative_base);
	if (!relative_base)
		return Status{DOCA_ERROR_NOT_FOUND, "kallsyms_relative_base is not mapped"};
	if (*count == 0 || *count > max_symbols)
		return corrupt("implausible symbol count " + std::to_string(*count));
	// The names table ends before the next table the kernel lays out after it.
	uint64_t names_end = where.names + max_names_bytes;
	for (uint64_t next : {where.token_table, where.token_index, where.offsets, where.relative_base})
		if (next > where.names && next < names_end)
			names_end = next;
	std::vector<uint8_t> names(names_end - where.names);
	names.resize(kernel.read(where.names, names));
	std::vector<uint8_t> token_table(token_table_bytes);
	token_table.resize(kernel.read(where.token_table, token_table));
	std::vector<uint8_t> token_index(512);
	std::vector<uint8_t> offsets(uint64_t{*count} * 4);
	if (!kernel.read_exact(where.token_index, token_index) || !kernel.read_exact(where.offsets, offsets))
		return Status{DOCA_ERROR_NOT_FOUND, "kallsyms tables are not mapped"};
	return decode_tables(names, token_table, token_index, offsets, *relative_base, *count, out);
}

std::optional<uint64_t> Kallsyms::find(std::string_view name) const
{
	if (auto it = added_.find(std::string(name)); it != added_.end())
		return it->second;
	uint32_t hash = name_hash(name);
	std::optional<uint64_t> local;
	for (const Entry &entry : entries_) {
		if (entry.hash != hash || entry.name_length != name.size() ||
		    std::string_view(arena_.data() + entry.name_offset, entry.name_length) != name)
			continue;
		if (entry.type >= 'A' && entry.type <= 'Z')
			return entry.address;
		if (!local)
			local = entry.address;
	}
	return local;
}

} // namespace softdpu::apsh::kernel
