// The memif datapath: buffer allocation, tx and rx bursts, refill and zero-copy enqueue on the
// rings the control plane set up. No allocation and no system call but the interrupt eventfd.
#include "memif/datapath.hpp"

#include "memif/connection.hpp"
#include "memif/database.hpp"

#include <algorithm>
#include <unistd.h>

namespace softdpu::memif {

Datapath::Datapath(Connection &control, Database &database, const memif_conn_args_t &args, void *private_ctx)
    : control_(control), database_(database), private_ctx_(private_ctx), master_(args.is_master != 0),
      buffer_size_(args.buffer_size), bounds_(DbAllocator<RegionBounds>(&database.allocator())),
      s2m_(DbAllocator<Queue>(&database.allocator())), m2s_(DbAllocator<Queue>(&database.allocator())),
      rx_modes_(DbAllocator<uint8_t>(&database.allocator()))
{
	rx_modes_.assign(master_ ? args.num_s2m_rings : args.num_m2s_rings, uint8_t(MEMIF_RX_MODE_INTERRUPT));
}

void Datapath::clear()
{
	active_ = false;
	s2m_.clear();
	m2s_.clear();
	bounds_.clear();
}

int Datapath::set_rx_mode(memif_rx_mode_t mode, uint16_t qid)
{
	if (mode != MEMIF_RX_MODE_INTERRUPT && mode != MEMIF_RX_MODE_POLLING)
		return MEMIF_ERR_INVAL_ARG;
	if (qid >= rx_modes_.size())
		return MEMIF_ERR_QID;
	rx_modes_[qid] = uint8_t(mode);
	if (active_ && qid < rx_queues().size())
		store_relaxed(rx_queues()[qid].ring->flags, mode == MEMIF_RX_MODE_POLLING ? kRingFlagMaskInt : 0);
	return MEMIF_ERR_SUCCESS;
}

// The queue qid of a connected interface, or the API's reason why there is none.
int Datapath::queue_at(DbVector<Queue> &queues, uint16_t qid, Queue *&out) const
{
	if (!active_)
		return MEMIF_ERR_NOCONN;
	if (qid >= queues.size())
		return MEMIF_ERR_QID;
	out = &queues[qid];
	return MEMIF_ERR_SUCCESS;
}

int Datapath::get_queue_efd(uint16_t qid, int *fd) const
{
	if (!active_)
		return MEMIF_ERR_NOCONN;
	if (qid >= rx_queues().size())
		return MEMIF_ERR_QID;
	*fd = rx_queues()[qid].event_fd.get();
	return MEMIF_ERR_SUCCESS;
}

bool Datapath::indices_sane(uint16_t head, uint16_t tail, uint16_t ring_size)
{
	if (uint16_t(head - tail) <= ring_size)
		return true;
	control_.peer_broke_protocol("Ring indexes out of range");
	return false;
}

void Datapath::kick(const Queue &queue)
{
	if ((load_relaxed(queue.ring->flags) & kRingFlagMaskInt) != 0)
		return;
	const uint64_t one = 1;
	[[maybe_unused]] ssize_t written = write(queue.event_fd.get(), &one, sizeof one);
}

bool Datapath::tx_free_slots(Queue &queue, uint16_t own, uint16_t wanted, uint16_t &free_slots)
{
	// Client (S2M producer): free = ring size - (head - tail). Server (M2S producer): free = what
	// the client posted beyond our tail, head - tail. Either distance is at most the ring size.
	const bool master = master_;
	const uint16_t ring_size = queue.ring_size;
	uint16_t used = master ? uint16_t(queue.peer_index - own) : uint16_t(own - queue.peer_index);
	if (used > ring_size) { // only a peer that rewrote our own index gets here
		control_.peer_broke_protocol("Ring indexes out of range");
		return false;
	}
	uint16_t free_now = master ? used : uint16_t(ring_size - used);
	if (uint16_t(free_now - std::min(free_now, queue.allocated)) < wanted) {
		const uint16_t peer = master ? load_acquire(queue.ring->head) : load_acquire(queue.ring->tail);
		const uint16_t head = master ? peer : own;
		const uint16_t tail = master ? own : peer;
		if (!indices_sane(head, tail, ring_size))
			return false;
		queue.peer_index = peer;
		used = uint16_t(head - tail);
		free_now = master ? used : uint16_t(ring_size - used);
	}
	// More handed out than free cannot happen unless the peer moved its index backwards.
	free_slots = uint16_t(free_now - std::min(free_now, queue.allocated));
	return true;
}

int Datapath::buffer_alloc(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out, uint16_t size)
{
	*count_out = 0;
	Queue *queue_ptr = nullptr;
	if (int error = queue_at(tx_queues(), qid, queue_ptr); error != MEMIF_ERR_SUCCESS)
		return error;
	Queue &queue = *queue_ptr;
	RingHeader *ring = queue.ring;
	const bool master = master_;
	const uint16_t mask = queue.mask();
	const uint16_t own = master ? load_relaxed(ring->tail) : load_relaxed(ring->head);
	uint16_t free_slots = 0;
	if (!tx_free_slots(queue, own, count, free_slots))
		return MEMIF_ERR_MFMSG;
	const uint16_t first = uint16_t(own + queue.allocated); // ring index of the first free slot
	const uint16_t limit = std::min(count, free_slots);     // one buffer per slot

	const uint32_t buffer_size = buffer_size_;
	memif_get_external_buffer_offset_t *const external = master ? nullptr : database_.get_external_buffer_offset();
	const RegionBounds buffers =
	    !master && bounds_.size() > kBufferRegion ? bounds_[kBufferRegion] : RegionBounds{};
	uint16_t produced = 0; // bufs filled with whole packets (= slots used)
	while (produced < limit) {
		// One packet: as many slots as its size needs, all or nothing.
		const uint16_t packet_start = produced;
		uint32_t remaining = size;
		bool complete = false;
		while (produced < limit) {
			const uint16_t slot = uint16_t(first + produced) & mask;
			uint32_t capacity;
			uint8_t *data;
			if (!master) {
				// Our own buffer: its offset comes from private memory (or the application),
				// and still has to lie inside the buffer region.
				uint32_t offset = queue.buffer_offsets[slot];
				if (external != nullptr) {
					offset = external(private_ctx_);
					queue.buffer_offsets[slot] = offset;
				}
				if (uint64_t(offset) + buffer_size > buffers.size || buffers.base == nullptr)
					return MEMIF_ERR_NOBUF;
				data = buffers.base + offset;
				capacity = buffer_size;
			} else {
				// What the client posted: read once, checked before use.
				const Descriptor posted = snapshot(ring->desc[slot]);
				data = resolve_descriptor(bounds_, posted);
				if (data == nullptr || posted.length == 0) {
					control_.peer_broke_protocol("Descriptor outside its region");
					return MEMIF_ERR_MFMSG;
				}
				capacity = posted.length;
			}
			__builtin_prefetch(data, 1);
			memif_buffer_t &buf = bufs[produced++];
			buf.desc_index = slot;
			buf.ring = ring;
			buf.data = data;
			buf.len = std::min(capacity, remaining);
			remaining -= buf.len;
			buf.flags = remaining > 0 ? MEMIF_BUFFER_FLAG_NEXT : 0;
			if (remaining == 0) {
				complete = true;
				break;
			}
		}
		if (!complete) { // out of slots or out of count within this packet: it is not handed out
			produced = packet_start;
			break;
		}
	}
	queue.allocated = uint16_t(queue.allocated + produced);
	*count_out = produced;
	// As libmemif 3.1: whatever part of the request is not met (the ring is full, or count has no
	// room for the next whole packet) is MEMIF_ERR_NOBUF_RING; count_out says what was allocated.
	return produced < count ? MEMIF_ERR_NOBUF_RING : MEMIF_ERR_SUCCESS;
}

int Datapath::tx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *tx)
{
	*tx = 0;
	Queue *queue_ptr = nullptr;
	if (int error = queue_at(tx_queues(), qid, queue_ptr); error != MEMIF_ERR_SUCCESS)
		return error;
	Queue &queue = *queue_ptr;
	RingHeader *ring = queue.ring;
	const bool master = master_;
	const uint16_t mask = queue.mask();
	uint16_t &index = master ? ring->tail : ring->head;
	const uint16_t start = load_relaxed(index);
	const uint16_t sendable = std::min(count, queue.allocated);
	int result = count > queue.allocated ? MEMIF_ERR_INVAL_ARG : MEMIF_ERR_SUCCESS;
	const uint64_t buffer_size = buffer_size_;
	uint16_t sent = 0;
	for (; sent < sendable; ++sent) {
		const memif_buffer_t &buf = bufs[sent];
		const uint16_t slot = uint16_t(start + sent) & mask;
		Descriptor &shared = ring->desc[slot];
		// The buffer's data pointer may have moved within its buffer (headroom); the
		// descriptor takes the offset it points at, if that stays inside the buffer's region.
		// A client's slot owns one buffer: the data must stay inside it. A server writes into
		// what the client posted, anywhere inside that region.
		const uint16_t region = master ? load_relaxed(shared.region) : kBufferRegion;
		if (region >= bounds_.size()) {
			result = MEMIF_ERR_INVAL_ARG;
			break;
		}
		const RegionBounds &bounds = bounds_[region];
		// Unsigned: a pointer below the region wraps to a huge offset and fails the checks.
		const uint64_t offset =
		    uint64_t(reinterpret_cast<uintptr_t>(buf.data) - reinterpret_cast<uintptr_t>(bounds.base));
		const uint64_t low = master ? 0 : queue.buffer_offsets[slot];
		const uint64_t high = master ? bounds.size : std::min<uint64_t>(low + buffer_size, bounds.size);
		if (offset < low || offset > UINT32_MAX || offset + buf.len > high) {
			result = MEMIF_ERR_INVAL_ARG;
			break;
		}
		const Descriptor desc{uint16_t((buf.flags & MEMIF_BUFFER_FLAG_NEXT) != 0 ? kDescFlagNext : 0), region,
				      buf.len, uint32_t(offset), 0};
		std::memcpy(&shared, &desc, sizeof desc); // the slot is unpublished: the peer does not read it
	}
	if (sent == 0)
		return result;
	store_release(index, uint16_t(start + sent)); // one publication per burst
	queue.allocated = uint16_t(queue.allocated - sent);
	*tx = sent;
	kick(queue);
	return result;
}

int Datapath::rx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *rx)
{
	*rx = 0;
	Queue *queue_ptr = nullptr;
	if (int error = queue_at(rx_queues(), qid, queue_ptr); error != MEMIF_ERR_SUCCESS)
		return error;
	Queue &queue = *queue_ptr;
	RingHeader *ring = queue.ring;
	const bool master = master_;
	const uint16_t mask = queue.mask();
	uint16_t &cursor = master ? queue.last_head : queue.last_tail;
	const bool interrupt = rx_modes_[qid] == MEMIF_RX_MODE_INTERRUPT;
	if (interrupt) {
		// Consume the queue's event first, then look at the ring: a signal that arrives after
		// this read announces packets the next call will see, so none is lost.
		uint64_t counter;
		[[maybe_unused]] ssize_t drained = read(queue.event_fd.get(), &counter, sizeof counter);
	}
	uint16_t available = uint16_t(queue.peer_index - cursor);
	if (available < count || interrupt) {
		if (master) {
			const uint16_t head = load_acquire(ring->head);
			const uint16_t tail = load_relaxed(ring->tail);
			if (!indices_sane(head, tail, queue.ring_size))
				return MEMIF_ERR_MFMSG;
			if (uint16_t(head - tail) < uint16_t(cursor - tail)) {
				control_.peer_broke_protocol("Ring head moved backwards");
				return MEMIF_ERR_MFMSG;
			}
			queue.peer_index = head;
		} else {
			const uint16_t head = load_relaxed(ring->head);
			const uint16_t tail = load_acquire(ring->tail);
			// The server may publish only what we posted: cursor <= tail <= head.
			if (uint16_t(tail - cursor) > uint16_t(head - cursor)) {
				control_.peer_broke_protocol("Ring tail beyond the posted buffers");
				return MEMIF_ERR_MFMSG;
			}
			queue.peer_index = tail;
		}
		available = uint16_t(queue.peer_index - cursor);
	}
	const uint16_t take = std::min(available, count);
	const uint32_t buffer_size = buffer_size_;
	for (uint16_t i = 0; i < take; ++i) {
		const uint16_t slot = uint16_t(cursor + i) & mask;
		const Descriptor desc = snapshot(ring->desc[slot]);
		uint8_t *data = resolve_descriptor(bounds_, desc);
		if (data == nullptr || (!master && desc.length > buffer_size)) {
			control_.peer_broke_protocol("Descriptor outside its region");
			return MEMIF_ERR_MFMSG;
		}
		__builtin_prefetch(data);
		memif_buffer_t &buf = bufs[i];
		buf.desc_index = slot;
		buf.ring = ring;
		buf.data = data;
		buf.len = desc.length;
		buf.flags =
		    uint8_t(MEMIF_BUFFER_FLAG_RX | ((desc.flags & kDescFlagNext) != 0 ? MEMIF_BUFFER_FLAG_NEXT : 0));
	}
	// A sender publishes a chain with one index update: a NEXT flag on the last published slot
	// means the rest is not there. Hold that incomplete chain back rather than read past it.
	uint16_t delivered = take;
	if (take == available) {
		while (delivered > 0 && (bufs[delivered - 1].flags & MEMIF_BUFFER_FLAG_NEXT) != 0)
			--delivered;
	}
	cursor = uint16_t(cursor + delivered);
	*rx = delivered;
	return MEMIF_ERR_SUCCESS;
}

int Datapath::refill_queue(uint16_t qid, uint16_t count, uint16_t headroom)
{
	Queue *queue_ptr = nullptr;
	if (int error = queue_at(rx_queues(), qid, queue_ptr); error != MEMIF_ERR_SUCCESS)
		return error;
	Queue &queue = *queue_ptr;
	RingHeader *ring = queue.ring;
	const uint16_t mask = queue.mask();
	if (master_) {
		// Hand consumed S2M buffers back: tail moves up to what we have read.
		const uint16_t tail = load_relaxed(ring->tail);
		const uint16_t returnable = uint16_t(queue.last_head - tail);
		const uint16_t n = std::min(count, returnable);
		for (uint16_t i = 0; i < n; ++i) {
			// No stale NEXT survives; a clean slot is left alone (no write to the peer's line).
			uint16_t &flags = ring->desc[uint16_t(tail + i) & mask].flags;
			if (load_relaxed(flags) != 0)
				store_relaxed(flags, 0);
		}
		store_release(ring->tail, uint16_t(tail + n)); // one publication per call
		return MEMIF_ERR_SUCCESS;
	}
	if (headroom >= buffer_size_)
		return MEMIF_ERR_INVAL_ARG;
	const uint16_t head = load_relaxed(ring->head);
	const uint16_t postable = uint16_t(queue.last_tail + queue.ring_size - head);
	const uint16_t n = std::min(count, postable);
	memif_get_external_buffer_offset_t *const external = database_.get_external_buffer_offset();
	const uint32_t length = uint32_t(buffer_size_ - headroom);
	for (uint16_t i = 0; i < n; ++i) {
		const uint16_t slot = uint16_t(head + i) & mask;
		uint32_t base = queue.buffer_offsets[slot];
		if (external != nullptr) {
			base = external(private_ctx_);
			queue.buffer_offsets[slot] = base;
		}
		const Descriptor desc{0, kBufferRegion, length, base + headroom, 0};
		std::memcpy(&ring->desc[slot], &desc, sizeof desc); // unpublished slot
	}
	store_release(ring->head, uint16_t(head + n));
	return MEMIF_ERR_SUCCESS;
}

int Datapath::buffer_enq_tx(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out)
{
	*count_out = 0;
	if (master_)
		return MEMIF_ERR_INVAL_ARG;
	Queue *tx_ptr = nullptr;
	if (int error = queue_at(tx_queues(), qid, tx_ptr); error != MEMIF_ERR_SUCCESS)
		return error;
	Queue &tx = *tx_ptr;
	RingHeader *ring = tx.ring;
	const uint16_t head = load_relaxed(ring->head);
	const uint16_t tail = load_acquire(ring->tail);
	if (!indices_sane(head, tail, tx.ring_size))
		return MEMIF_ERR_MFMSG;
	uint16_t free_slots = uint16_t(tx.ring_size - uint16_t(head - tail) - tx.allocated);
	uint16_t done = 0;
	for (; done < count; ++done) {
		if (free_slots == 0)
			break;
		memif_buffer_t &buf = bufs[done];
		// The buffer must be one of our received ones; find its queue by ring address.
		Queue *rx = nullptr;
		for (Queue &candidate : rx_queues())
			if (candidate.ring == buf.ring)
				rx = &candidate;
		if (rx == nullptr || buf.desc_index >= rx->ring_size)
			break;
		// The data must lie inside the buffer that rx slot owns.
		const uint32_t base = rx->buffer_offsets[buf.desc_index];
		uint8_t *const buffer = bounds_[kBufferRegion].base + base;
		uint8_t *const data = static_cast<uint8_t *>(buf.data);
		if (uint64_t(base) + buffer_size_ > bounds_[kBufferRegion].size || data < buffer ||
		    uint64_t(data - buffer) + buf.len > buffer_size_)
			break;
		const uint16_t tx_slot = uint16_t(head + tx.allocated) & tx.mask();
		// Swap buffer ownership: the tx slot takes the received buffer, the rx slot the tx one.
		std::swap(tx.buffer_offsets[tx_slot], rx->buffer_offsets[buf.desc_index]);
		Descriptor &desc = ring->desc[tx_slot];
		desc.region = kBufferRegion;
		desc.offset = uint32_t(static_cast<uint8_t *>(buf.data) - bounds_[kBufferRegion].base);
		desc.length = buf.len;
		desc.flags = (buf.flags & MEMIF_BUFFER_FLAG_NEXT) != 0 ? kDescFlagNext : 0;
		buf.desc_index = tx_slot;
		buf.ring = ring;
		buf.flags &= uint8_t(~MEMIF_BUFFER_FLAG_RX);
		++tx.allocated;
		--free_slots;
	}
	*count_out = done;
	if (done < count)
		return free_slots == 0 ? MEMIF_ERR_NOBUF_RING : MEMIF_ERR_INVAL_ARG;
	return MEMIF_ERR_SUCCESS;
}

} // namespace softdpu::memif
