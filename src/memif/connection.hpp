// One memif interface: its configuration, the connection state machine of either role, the shared
// regions and rings once connected, and the datapath (alloc / tx / rx / refill).
#pragma once

#include "memif/control_channel.hpp"
#include "memif/protocol.hpp"
#include "memif/support.hpp"

#include <vector>

namespace softdpu::memif {

class Database;
class MemifSocket;

template <typename T> using DbVector = std::vector<T, DbAllocator<T>>;

// A shared memory region, mapped by us or supplied by the application (external).
struct Region {
	uint8_t *addr = nullptr;
	uint64_t size = 0;
	UniqueFd fd;
	bool external = false;
};

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

class Connection {
public:
	static constexpr uint32_t kMagic = 0x6d656d69; // "memi": a live connection handle

	Connection(Database &database, MemifSocket &socket, const memif_conn_args_t &args,
		   memif_connection_update_t *on_connect, memif_connection_update_t *on_disconnect,
		   memif_interrupt_t *on_interrupt, void *private_ctx);
	~Connection();
	Connection(const Connection &) = delete;
	Connection &operator=(const Connection &) = delete;

	bool valid() const { return magic_ == kMagic; }
	bool is_master() const { return args_.is_master != 0; }
	bool connected() const { return state_ == State::connected; }
	bool has_channel() const { return control_.valid(); }
	uint32_t id() const { return args_.interface_id; }
	MemifSocket &socket() const { return socket_; }
	Database &database() const { return database_; }
	int last_error() const { return last_error_; }
	const char *last_reason() const { return reason_; }

	// --- control path -------------------------------------------------------------------
	// Client: connect to the socket and start the handshake (no-op while connecting/connected).
	int request_connection();
	// Server: take over an accepted channel whose INIT names this interface.
	int accept_init(UniqueFd channel, const InitMessage &init);
	// Events on our control socket.
	int handle_control_event(uint8_t events);
	// Events on the interrupt eventfd of rx queue qid.
	int handle_interrupt(uint16_t qid);
	// Tears the connection down. send_reason: tell the peer why (DISCONNECT) before closing.
	// notify: call on_disconnect if we were connected. Must be the last use of `this` by callers,
	// as the application may delete the interface from its callback.
	void disconnect(int error, const char *reason, bool send_reason, bool notify);

	int set_rx_mode(memif_rx_mode_t mode, uint16_t qid);
	int get_queue_efd(uint16_t qid, int *fd) const;
	int get_details(memif_details_t *md, char *buf, ssize_t buflen) const;

	// --- datapath (no allocation, no system call but the interrupt eventfd) ----------------
	int buffer_alloc(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out, uint16_t size);
	int tx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *tx);
	int rx_burst(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *rx);
	int refill_queue(uint16_t qid, uint16_t count, uint16_t headroom);
	int buffer_enq_tx(uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *count_out);

private:
	enum class State {
		idle,          // no control channel (client: waiting for a retry; server: listening)
		await_hello,   // client: connected, waiting for HELLO
		handshake,     // client: sending INIT/regions/rings; server: receiving them
		await_connect, // client: CONNECT sent, waiting for CONNECTED
		connected,
	};
	struct Outgoing {
		Message message;
		int fd; // borrowed from a region or queue
	};

	int handle_message(ReceivedMessage &received);
	int client_handle_hello(const HelloMessage &hello);
	int client_send_next();
	int client_handle_connected(const NameMessage &connected);
	int server_handle_add_region(const AddRegionMessage &message, UniqueFd fd);
	int server_handle_add_ring(const AddRingMessage &message, UniqueFd fd);
	int server_handle_connect(const NameMessage &connect);
	int client_create_regions_and_rings(uint16_t num_s2m, uint16_t num_m2s, uint8_t log2_ring_size);
	int server_map_regions_and_rings();
	int send(const Message &message, int fd = -1);
	int register_interrupts();
	void release_shared_memory();
	void fail(int error, const char *reason) { disconnect(error, reason, true, true); }
	void record_error(int error, const char *reason);
	void kick(const Queue &queue);

	DbVector<Queue> &tx_queues() { return is_master() ? m2s_ : s2m_; }
	DbVector<Queue> &rx_queues() { return is_master() ? s2m_ : m2s_; }
	const DbVector<Queue> &tx_queues() const { return is_master() ? m2s_ : s2m_; }
	const DbVector<Queue> &rx_queues() const { return is_master() ? s2m_ : m2s_; }
	int queue_at(DbVector<Queue> &queues, uint16_t qid, Queue *&out) const;
	// Checks the peer-written index of a ring; a lie disconnects (returns false).
	bool indices_sane(uint16_t head, uint16_t tail, uint16_t ring_size);
	// Free tx slots of a queue (not yet handed out), from the cached peer index; re-reads the
	// shared one when fewer than `wanted` are free. False: the peer lied (we disconnected).
	bool tx_free_slots(Queue &queue, uint16_t own, uint16_t wanted, uint16_t &free_slots);

	uint32_t magic_ = kMagic;
	Database &database_;
	MemifSocket &socket_;
	memif_conn_args_t args_;
	memif_connection_update_t *on_connect_;
	memif_connection_update_t *on_disconnect_;
	memif_interrupt_t *on_interrupt_;
	void *private_ctx_;

	State state_ = State::idle;
	UniqueFd control_;
	DbVector<Region> regions_;
	DbVector<RegionBounds> bounds_; // regions_ as the descriptor validation sees them
	DbVector<Queue> s2m_;
	DbVector<Queue> m2s_;
	DbVector<uint8_t> rx_modes_; // memif_rx_mode_t per rx qid, kept across reconnects
	DbVector<Outgoing> outbox_;  // client handshake messages, sent one per ACK
	size_t outbox_next_ = 0;
	bool interrupts_registered_ = false;

	char remote_app_name_[kNameSize + 1] = {};
	char remote_if_name_[kNameSize + 1] = {};
	char reason_[kReasonSize + 1] = {};
	int last_error_ = MEMIF_ERR_SUCCESS;
};

} // namespace softdpu::memif
