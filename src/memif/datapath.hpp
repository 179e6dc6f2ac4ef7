// The datapath of one memif interface, as DPDK's memif driver keeps it apart from the control
// plane: the rings of a connected interface and the bounds of its shared regions, and the calls
// that move packets over them (alloc / tx / rx / refill / enq_tx). The control plane (Connection)
// fills the rings and bounds during the handshake, activates the datapath when the interface
// connects and clears it when it disconnects; the datapath calls back into the control plane only
// to drop a connection whose peer broke the ring protocol. No allocation and no system call here
// but the interrupt eventfd.
#pragma once

#include "memif/protocol.hpp"
#include "memif/support.hpp"

#include <vector>

namespace softdpu::memif {

class Connection;
class Database;

constexpr uint16_t kBufferRegion = 1; // our client puts rings in region 0, buffers in region 1

template <typename T> using DbVector = std::vector<T, DbAllocator<T>>;

// One ring of the interface, seen from our side.
struct Queue {
	RingHeader *ring = nullptr;
	uint8_t log2_ring_size = 0;
	uint16_t ring_size = 0;
	uint16_t region = 0;
	uint32_t offset = 0;
	UniqueFd event_fd;
	bool present = false; // server: an ADD_RING arrived for this index

	uint16_t last_head = 0; // server rx: next slot to read
	uint16_t last_tail = 0; // client rx: next slot to read
	uint16_t allocated = 0; // tx: buffers handed out by alloc/enq_tx, not yet sent
	// The peer's index as last read (client: tail, server: head). The shared copy sits on a cache
	// line the peer keeps writing, so the datapath works from this copy and re-reads the shared
	// one (acquire) only when the copy says there is too little room or data for the request.
	// The copy only ever lags the truth: fewer free slots or fewer received packets, never more.
	uint16_t peer_index = 0;
	// Client: the buffer (offset in region 1) each slot owns. Private memory, so the peer cannot
	// make two slots share a buffer by rewriting descriptors.
	DbVector<uint32_t> buffer_offsets;

	explicit Queue(const AllocatorFns *fns) : buffer_offsets(DbAllocator<uint32_t>(fns)) {}
	uint16_t mask() const { return uint16_t(ring_size - 1); }
};

class Datapath {
public:
	Datapath(Connection &control, Database &database, const memif_conn_args_t &args, void *private_ctx);
	Datapath(const Datapath &) = delete;
	Datapath &operator=(const Datapath &) = delete;

	int buffer_alloc(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out, uint16_t size);
	int tx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *tx);
	int rx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *rx);
	int refill_queue(uint16_t qid, uint16_t count, uint16_t headroom);
	int buffer_enq_tx(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out);

	// Per rx queue; kept across reconnects and applied to the rings at connect.
	int set_rx_mode(memif_rx_mode_t mode, uint16_t qid);
	bool polling(size_t qid) const { return qid < rx_modes_.size() && rx_modes_[qid] == MEMIF_RX_MODE_POLLING; }
	int get_queue_efd(uint16_t qid, int *fd) const;

private:
	friend class Connection; // the control plane sets up and tears down the rings below

	void clear(); // back to no rings (disconnected)
	DbVector<Queue> &tx_queues() { return master_ ? m2s_ : s2m_; }
	DbVector<Queue> &rx_queues() { return master_ ? s2m_ : m2s_; }
	const DbVector<Queue> &tx_queues() const { return master_ ? m2s_ : s2m_; }
	const DbVector<Queue> &rx_queues() const { return master_ ? s2m_ : m2s_; }
	int queue_at(DbVector<Queue> &queues, uint16_t qid, Queue *&out) const;
	// Checks the peer-written index of a ring; a lie disconnects (returns false).
	bool indices_sane(uint16_t head, uint16_t tail, uint16_t ring_size);
	// Free tx slots of a queue (not yet handed out), from the cached peer index; re-reads the
	// shared one when fewer than `wanted` are free. False: the peer lied (we disconnected).
	bool tx_free_slots(Queue &queue, uint16_t own, uint16_t wanted, uint16_t &free_slots);
	void kick(const Queue &queue);

	Connection &control_;
	Database &database_;
	void *private_ctx_;
	const bool master_;
	const uint32_t buffer_size_;
	bool active_ = false;           // connected: the rings below are mapped and checked
	DbVector<RegionBounds> bounds_; // the shared regions, as descriptor validation sees them
	DbVector<Queue> s2m_;
	DbVector<Queue> m2s_;
	DbVector<uint8_t> rx_modes_; // memif_rx_mode_t per rx qid
};

} // namespace softdpu::memif
