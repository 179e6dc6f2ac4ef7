// x86-64 virtual-to-physical translation over guest-physical memory: 4-level and 5-level
// paging, 2 MiB and 1 GiB pages. With page-table isolation the kernel half of a process's PGD
// pair (what mm->pgd and the kernel's CR3 point to) maps user space too, so one walker serves
// kernel and user addresses. A small direct-mapped cache remembers recent translations; the
// guest may change its tables at any time, so owners flush it at the start of each query.
#pragma once

#include "apsh/source/physical_memory.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace softdpu::apsh::paging {

class AddressSpace {
public:
	static constexpr uint64_t page_size = 4096;

	// top_table: physical address of the PML4 (levels = 4) or PML5 (levels = 5).
	AddressSpace(const source::PhysicalMemory &memory, uint64_t top_table, int levels);

	// Physical address of va, or nothing when va is non-canonical or not mapped.
	std::optional<uint64_t> translate(uint64_t va) const;
	// Translates out.size() consecutive pages from the page-aligned va: out[i] is the physical
	// address of page i, or kNoPage when it is not mapped. Reads each page table once (not a walk per
	// page): for callers that translate whole areas. The last-level tables read are kept until
	// flush(), so that areas sharing a table (a library's text, data and bss) read it once.
	static constexpr uint64_t kNoPage = ~uint64_t{0};
	void translate_pages(uint64_t va, std::span<uint64_t> out) const;
	// Copies from va until the first unmapped page; returns the bytes copied.
	size_t read(uint64_t va, std::span<uint8_t> out) const;
	bool read_exact(uint64_t va, std::span<uint8_t> out) const { return read(va, out) == out.size(); }
	template <typename T> std::optional<T> read_value(uint64_t va) const
	{
		T value{};
		if (!read_exact(va, {reinterpret_cast<uint8_t *>(&value), sizeof(T)}))
			return std::nullopt;
		return value;
	}

	void flush() const;
	bool is_canonical(uint64_t va) const;
	uint64_t top_table() const { return top_table_; }
	int levels() const { return levels_; }
	const source::PhysicalMemory &memory() const { return memory_; }

private:
	std::optional<uint64_t> walk(uint64_t va) const;

	struct CacheEntry {
		uint64_t virtual_page = 1; // an odd value never matches a page-aligned VA
		uint64_t physical_page = 0;
	};
	static constexpr size_t cache_entries = 512;

	const source::PhysicalMemory &memory_;
	uint64_t top_table_;
	int levels_;
	mutable std::array<CacheEntry, cache_entries> cache_{};
	// translate_pages' last-level tables, direct-mapped by physical address (allocated on first use).
	struct TableSlot {
		uint64_t table = 1; // an odd value never matches a table's address
		bool readable = false;
		std::array<uint64_t, 512> entries;
	};
	static constexpr size_t table_slots = 16;
	mutable std::unique_ptr<TableSlot[]> tables_; // entries left uninitialised until read
	const TableSlot &last_level_table(uint64_t table) const;
};

} // namespace softdpu::apsh::paging
