#include "device/rdma/receive_ring.hpp"

#include <bit>

namespace softdpu::device::rdma {

ReceiveRingHeader *attach_receive_ring(void *memory, size_t size, uint32_t slots, uint32_t max_sge,
				       uint32_t max_sge_limit) noexcept
{
	if (memory == nullptr || (slots != 0 && !std::has_single_bit(slots)) || max_sge > max_sge_limit)
		return nullptr;
	if (receive_ring_bytes(slots, max_sge) > size)
		return nullptr;
	auto *header = static_cast<ReceiveRingHeader *>(memory);
	if (header->magic != kReceiveRingMagic || header->slots != slots || header->max_sge != max_sge)
		return nullptr;
	return header;
}

ReceiveEntry *receive_entry(ReceiveRingHeader *header, uint32_t slots, uint32_t max_sge, uint64_t position) noexcept
{
	auto *base = reinterpret_cast<char *>(header + 1);
	return reinterpret_cast<ReceiveEntry *>(base + (position & (slots - 1)) * receive_entry_bytes(max_sge));
}

bool claim_receive(ReceiveRingHeader *header, uint32_t slots, uint32_t max_sge, uint64_t *position, WireSge *sges,
		   uint32_t *num_sge) noexcept
{
	if (header == nullptr || slots == 0)
		return false;
	uint64_t tail = header->tail.load(std::memory_order_acquire);
	for (;;) {
		const uint64_t head = header->head.load(std::memory_order_acquire);
		if (head == tail || head - tail > slots)
			return false;
		if (header->tail.compare_exchange_weak(tail, tail + 1, std::memory_order_acq_rel))
			break;
	}
	*position = tail;
	const ReceiveEntry *entry = receive_entry(header, slots, max_sge, tail);
	const uint32_t count = entry->num_sge; // read once
	*num_sge = count;
	if (count > max_sge)
		return true;
	for (uint32_t i = 0; i < count; ++i)
		sges[i] = entry->sge[i];
	return true;
}

} // namespace softdpu::device::rdma
