// The control plane of one memif interface: its configuration, the connection state machine of
// either role (handshake, lifecycle), the shared regions once connected, and the queries. The
// packets move through its Datapath (datapath.hpp).
#pragma once

#include "memif/control_channel.hpp"
#include "memif/datapath.hpp"
#include "memif/protocol.hpp"
#include "memif/support.hpp"

namespace softdpu::memif {

class Database;
class MemifSocket;

// A shared memory region, mapped by us or supplied by the application (external).
struct Region {
	uint8_t *addr = nullptr;
	uint64_t size = 0;
	UniqueFd fd;
	bool external = false;
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

	int get_details(memif_details_t *md, char *buf, ssize_t buflen) const;

	Datapath &datapath() { return datapath_; }
	// A peer that broke the ring protocol: tell it why and disconnect (the datapath's only call
	// into the control plane).
	void peer_broke_protocol(const char *reason) { fail(MEMIF_ERR_MFMSG, reason); }

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
	Datapath datapath_;
	DbVector<Outgoing> outbox_; // client handshake messages, sent one per ACK
	size_t outbox_next_ = 0;
	bool interrupts_registered_ = false;

	char remote_app_name_[kNameSize + 1] = {};
	char remote_if_name_[kNameSize + 1] = {};
	char reason_[kReasonSize + 1] = {};
	int last_error_ = MEMIF_ERR_SUCCESS;
};

} // namespace softdpu::memif
