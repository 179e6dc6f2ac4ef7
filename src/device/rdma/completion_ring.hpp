// Producer and owner operations on a completion ring (queues.hpp) in memory some other object owns
// (a shared region). Both are lock-free; the owner side is for one consumer at a time (the CQ's
// lock serializes pollers). Only peers produce into a CQ's shared ring (receive completions, which
// the owner checks against the receives it posted): the owner's own completions never pass
// through memory a peer can write.
#pragma once

#include "device/rdma/queues.hpp"

#include <cstddef>

namespace softdpu::device::rdma {

class CompletionRing {
public:
	CompletionRing() = default;
	// Lays out a fresh ring of `slots` (a power of two) in `memory` (completion_ring_bytes(slots)).
	static CompletionRing format(void *memory, uint32_t slots) noexcept;
	// Views a ring another process laid out, in `size` mapped bytes: false when the header does
	// not describe a ring that fits (a lying or broken peer).
	static bool attach(void *memory, size_t size, CompletionRing *out) noexcept;

	bool valid() const noexcept { return header_ != nullptr; }
	CompletionRingHeader &header() const noexcept { return *header_; }
	uint32_t slots() const noexcept { return slots_; }

	enum class Produced { ok, full };
	// Producer: appends a record (its sequence field is ignored). `full`: the ring had no room;
	// the overrun flag is set for the owner to report.
	Produced produce(const CompletionRecord &record) noexcept;
	// Producer: after a successful produce, disarms the ring if the record fires its notification
	// (armed for any completion, or solicited-only and this one is solicited or an error). True
	// when the caller must signal the ring's completion channel.
	bool take_notification(bool solicited_or_error) noexcept;

	// Owner: the next published record, or null when none is (yet).
	const CompletionRecord *peek() const noexcept;
	// Owner: releases the record peek() returned.
	void pop() noexcept;
	// Owner: whether a published record not yet consumed (before the first unpublished slot)
	// names receive position `recv_index` of queue pair `qp_num`.
	bool published_ahead(uint32_t qp_num, uint32_t recv_index) const noexcept;

private:
	CompletionRingHeader *header_ = nullptr;
	CompletionRecord *records_ = nullptr;
	uint32_t slots_ = 0; // this side's own copy: never re-read from shared memory
	uint64_t head_ = 0;  // owner: its own copy, published to producers in header().head
};

} // namespace softdpu::device::rdma
