// A peer's receive ring (queues.hpp) as the sender of a message sees it: checked against what the
// peer declared before any use, then claimed entry by entry. Everything read from the ring is
// copied once and bounded by the declared counts (the peer may change it under us).
#pragma once

#include "device/rdma/queues.hpp"

#include <cstddef>
#include <cstdint>

namespace softdpu::device::rdma {

// The ring in `size` mapped bytes at `memory`, when its header says what the peer declared
// (slots: a power of two or 0; max_sge at most max_sge_limit) and its entries fit. Null otherwise.
ReceiveRingHeader *attach_receive_ring(void *memory, size_t size, uint32_t slots, uint32_t max_sge,
				       uint32_t max_sge_limit) noexcept;

// The entry at `position` of a ring of `slots` entries of `max_sge` elements.
ReceiveEntry *receive_entry(ReceiveRingHeader *header, uint32_t slots, uint32_t max_sge, uint64_t position) noexcept;

// Claims the oldest entry no one has claimed (compare-and-swap on the tail, so several senders
// may share the ring) and copies its scatter list into sges (room for max_sge). False when no
// entry is posted (or the indices are not a ring's). True with *position set when one was
// claimed; *num_sge is what the entry says, which the caller must check against max_sge: more
// means a malformed entry (the receive fails, and nothing was copied).
bool claim_receive(ReceiveRingHeader *header, uint32_t slots, uint32_t max_sge, uint64_t *position, WireSge *sges,
		   uint32_t *num_sge) noexcept;

} // namespace softdpu::device::rdma
