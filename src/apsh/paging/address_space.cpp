#include "apsh/paging/address_space.hpp"

#include <algorithm>

namespace softdpu::apsh::paging {

namespace {

constexpr uint64_t present_bit = 1ull << 0;
constexpr uint64_t large_page_bit = 1ull << 7;
constexpr uint64_t frame_mask = 0x000ffffffffff000ull; // bits 12..51

} // namespace

AddressSpace::AddressSpace(const source::PhysicalMemory &memory, uint64_t top_table, int levels)
    : memory_(memory), top_table_(top_table & frame_mask), levels_(levels == 5 ? 5 : 4)
{
}

bool AddressSpace::is_canonical(uint64_t va) const
{
	int top_bit = levels_ == 5 ? 56 : 47;
	uint64_t high = va >> top_bit; // the top bit and everything above it must be equal
	return high == 0 || high == (~0ull >> top_bit);
}

void AddressSpace::flush() const
{
	cache_.fill(CacheEntry{});
	if (tables_)
		for (size_t i = 0; i < table_slots; ++i)
			tables_[i].table = 1;
}

const AddressSpace::TableSlot &AddressSpace::last_level_table(uint64_t table) const
{
	if (!tables_)
		tables_ = std::make_unique_for_overwrite<TableSlot[]>(table_slots);
	TableSlot &slot = tables_[(table >> 12) % table_slots];
	if (slot.table != table) {
		slot.table = table;
		slot.readable =
		    memory_.read(table, {reinterpret_cast<uint8_t *>(slot.entries.data()), sizeof(slot.entries)});
	}
	return slot;
}

std::optional<uint64_t> AddressSpace::walk(uint64_t va) const
{
	uint64_t table = top_table_;
	for (int level = levels_; level >= 1; level--) {
		int shift = 12 + 9 * (level - 1);
		uint64_t index = (va >> shift) & 0x1ff;
		auto entry = memory_.read_value<uint64_t>(table + index * 8);
		if (!entry || !(*entry & present_bit))
			return std::nullopt;
		// PS in a PDPT entry (level 3) maps 1 GiB, in a PD entry (level 2) 2 MiB.
		if ((level == 3 || level == 2) && (*entry & large_page_bit)) {
			uint64_t page_mask = (1ull << shift) - 1;
			return (*entry & frame_mask & ~page_mask) | (va & page_mask);
		}
		table = *entry & frame_mask;
	}
	return table | (va & (page_size - 1));
}

std::optional<uint64_t> AddressSpace::translate(uint64_t va) const
{
	if (!is_canonical(va))
		return std::nullopt;
	uint64_t virtual_page = va & ~(page_size - 1);
	CacheEntry &slot = cache_[(virtual_page >> 12) % cache_entries];
	if (slot.virtual_page == virtual_page)
		return slot.physical_page | (va & (page_size - 1));
	auto pa = walk(va);
	if (pa)
		slot = {virtual_page, *pa & ~(page_size - 1)};
	return pa;
}

void AddressSpace::translate_pages(uint64_t va, std::span<uint64_t> out) const
{
	// The 2 MiB region whose last-level table (or large page) is loaded.
	uint64_t region = 1; // an odd value never matches va >> 21
	enum class Kind { absent, large, table } kind = Kind::absent;
	uint64_t large_base = 0, large_mask = 0;
	const std::array<uint64_t, 512> *entries = nullptr;
	for (size_t i = 0; i < out.size(); ++i) {
		const uint64_t page = va + i * page_size;
		out[i] = kNoPage;
		if (page < va)
			continue; // wrapped past the top
		if ((page >> 21) << 1 != region) {
			region = (page >> 21) << 1;
			kind = Kind::absent;
			if (!is_canonical(page)) // a 2 MiB region is canonical whole or not at all
				continue;
			uint64_t table = top_table_;
			for (int level = levels_; level >= 2; level--) {
				const int shift = 12 + 9 * (level - 1);
				auto entry = memory_.read_value<uint64_t>(table + ((page >> shift) & 0x1ff) * 8);
				if (!entry || !(*entry & present_bit))
					break;
				if ((level == 3 || level == 2) && (*entry & large_page_bit)) {
					large_mask = (1ull << shift) - 1;
					large_base = *entry & frame_mask & ~large_mask;
					kind = Kind::large;
					break;
				}
				table = *entry & frame_mask;
				if (level == 2) {
					const TableSlot &slot = last_level_table(table);
					entries = &slot.entries;
					kind = slot.readable ? Kind::table : Kind::absent;
				}
			}
		}
		if (kind == Kind::large) {
			out[i] = large_base | (page & large_mask);
		} else if (kind == Kind::table) {
			const uint64_t entry = (*entries)[(page >> 12) & 0x1ff];
			if (entry & present_bit)
				out[i] = entry & frame_mask;
		}
	}
}

size_t AddressSpace::read(uint64_t va, std::span<uint8_t> out) const
{
	size_t done = 0;
	while (done < out.size()) {
		uint64_t at = va + done;
		if (at < va) // wrapped past the top of the address space
			break;
		auto pa = translate(at);
		if (!pa)
			break;
		size_t chunk =
		    static_cast<size_t>(std::min<uint64_t>(out.size() - done, page_size - (at & (page_size - 1))));
		if (!memory_.read(*pa, out.subspan(done, chunk)))
			break;
		done += chunk;
	}
	return done;
}

} // namespace softdpu::apsh::paging
