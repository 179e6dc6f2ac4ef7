// The kernel's own symbol table, decoded from guest memory (the 6.1 layout, as VMCOREINFO
// locates it): compressed names (a length byte, two bytes for "big" names, then token indexes
// into a 256-entry token table) and 32-bit offsets from kallsyms_relative_base.
#pragma once

#include "apsh/introspection.hpp"
#include "apsh/paging/address_space.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh::kernel {

struct KallsymsTables {
	uint64_t num_syms = 0; // addresses of the kernel variables
	uint64_t names = 0;
	uint64_t token_table = 0;
	uint64_t token_index = 0;
	uint64_t offsets = 0;
	uint64_t relative_base = 0;
};

class Kallsyms {
public:
	// Reads the tables through the kernel's address space and decodes every symbol.
	static Status decode(const paging::AddressSpace &kernel, const KallsymsTables &where, Kallsyms &out);
	// Decodes from tables already in memory (tests, fuzzing). token_index holds 256 u16 offsets.
	static Status decode_tables(std::span<const uint8_t> names, std::span<const uint8_t> token_table,
				    std::span<const uint8_t> token_index, std::span<const uint8_t> offsets,
				    uint64_t relative_base, uint32_t count, Kallsyms &out);

	// Global symbols win over local ones of the same name; added symbols over decoded ones.
	std::optional<uint64_t> find(std::string_view name) const;
	size_t size() const { return entries_.size() + added_.size(); }
	void add(std::string name, uint64_t address) { added_.insert_or_assign(std::move(name), address); }

private:
	// All names live in one arena; a lookup scans the compact entries comparing a hash first.
	// The walkers look up a dozen names, so this beats building a 100k-entry hash table.
	struct Entry {
		uint64_t address;
		uint32_t name_offset;
		uint16_t name_length;
		char type; // 'T', 't', 'D', ... (lower case: local)
		uint32_t hash;
	};
	std::string arena_;
	std::vector<Entry> entries_;
	std::unordered_map<std::string, uint64_t> added_;
};

} // namespace softdpu::apsh::kernel
