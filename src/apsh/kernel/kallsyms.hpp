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

	std::optional<uint64_t> find(std::string_view name) const;
	size_t size() const { return symbols_.size(); }
	void add(std::string name, uint64_t address)
	{
		symbols_.insert_or_assign(std::move(name), Entry{address, 'D'});
	}

private:
	struct Entry {
		uint64_t address;
		char type; // 'T', 't', 'D', ... (lower case: local)
	};
	std::unordered_map<std::string, Entry> symbols_;
};

} // namespace softdpu::apsh::kernel
