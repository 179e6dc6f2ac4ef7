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
