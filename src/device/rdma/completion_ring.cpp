#include "device/rdma/completion_ring.hpp"

#include <bit>
#include <new>

namespace softdpu::device::rdma {

CompletionRing CompletionRing::format(void *memory, uint32_t slots) noexcept
{
	CompletionRing ring;
	ring.header_ = new (memory) CompletionRingHeader();
	ring.header_->magic = kCompletionRingMagic;
	ring.header_->slots = slots;
	ring.records_ = reinterpret_cast<CompletionRecord *>(ring.header_ + 1);
	for (uint32_t i = 0; i < slots; ++i)
		new (&ring.records_[i]) CompletionRecord();
	ring.slots_ = slots;
	return ring;
}

bool CompletionRing::attach(void *memory, size_t size, CompletionRing *out) noexcept
{
	if (memory == nullptr || size < sizeof(CompletionRingHeader))
		return false;
	auto *header = static_cast<CompletionRingHeader *>(memory);
	const uint32_t slots = header->slots; // read once: the peer may change it under us
	if (header->magic != kCompletionRingMagic || slots == 0 || !std::has_single_bit(slots) ||
	    completion_ring_bytes(slots) > size)
		return false;
	out->header_ = header;
	out->records_ = reinterpret_cast<CompletionRecord *>(header + 1);
	out->slots_ = slots;
	return true;
}

CompletionRing::Produced CompletionRing::produce(const CompletionRecord &record) noexcept
{
	uint64_t position = header_->tail.load(std::memory_order_relaxed);
	do {
		if (position - header_->head.load(std::memory_order_acquire) >= slots_) {
			header_->overrun.store(1, std::memory_order_release);
			return Produced::full;
		}
	} while (!header_->tail.compare_exchange_weak(position, position + 1, std::memory_order_acq_rel));
	CompletionRecord &slot = records_[position & (slots_ - 1)];
	slot.wr_id = record.wr_id;
	slot.status = record.status;
	slot.opcode = record.opcode;
	slot.byte_len = record.byte_len;
	slot.imm_data = record.imm_data;
	slot.qp_num = record.qp_num;
	slot.src_qp = record.src_qp;
	slot.wc_flags = record.wc_flags;
	slot.recv_index = record.recv_index;
	slot.from_peer = record.from_peer;
	slot.solicited = record.solicited;
	slot.sequence.store(position + 1, std::memory_order_release);
	return Produced::ok;
}

bool CompletionRing::take_notification(bool solicited_or_error) noexcept
{
	uint32_t armed = header_->armed.load(std::memory_order_acquire);
	while (armed == 1 || (armed == 2 && solicited_or_error)) {
		if (header_->armed.compare_exchange_weak(armed, 0, std::memory_order_acq_rel)) {
			header_->event_pending.store(1, std::memory_order_release);
			return true;
		}
	}
	return false;
}

const CompletionRecord *CompletionRing::peek() const noexcept
{
	const CompletionRecord &slot = records_[head_ & (slots_ - 1)];
	if (slot.sequence.load(std::memory_order_acquire) != head_ + 1)
		return nullptr;
	return &slot;
}

bool CompletionRing::published_ahead(uint32_t qp_num, uint32_t recv_index) const noexcept
{
	for (uint64_t position = head_; position - head_ < slots_; ++position) {
		const CompletionRecord &slot = records_[position & (slots_ - 1)];
		if (slot.sequence.load(std::memory_order_acquire) != position + 1)
			return false;
		if (slot.qp_num == qp_num && slot.recv_index == recv_index)
			return true;
	}
	return false;
}

void CompletionRing::pop() noexcept
{
	++head_;
	header_->head.store(head_, std::memory_order_release);
}

} // namespace softdpu::device::rdma
