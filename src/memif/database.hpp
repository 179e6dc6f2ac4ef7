// A libmemif database (the global one of memif_init, or one per memif_per_thread_init): the
// application's callbacks and allocator, the fds it watches, sockets and their interfaces, the
// client retry timer and the internal epoll loop of memif_poll_event.
#pragma once

#include "memif/connection.hpp"

#include <unordered_map>

namespace softdpu::memif {

// A memif socket handle: a name plus, once used by a master, a listener with its accepted
// channels that have not yet said which interface they want (INIT).
class MemifSocket {
public:
	static constexpr uint32_t kMagic = 0x736f636b; // "sock"
	enum class Role { unset, listener, client };

	MemifSocket(Database &database, const char *filename, void *private_ctx);
	~MemifSocket();
	MemifSocket(const MemifSocket &) = delete;
	MemifSocket &operator=(const MemifSocket &) = delete;

	bool valid() const { return magic_ == kMagic; }
	const char *filename() const { return filename_; }
	const SocketAddress &address() const { return address_; }
	Database &database() const { return database_; }
	void *private_ctx() const { return private_ctx_; }
	Role role() const { return role_; }
	bool in_use() const { return !interfaces_.empty(); }
	const DbVector<Connection *> &interfaces() const { return interfaces_; }

	// Adds an interface; the first decides the socket's role (a master starts the listener).
	int attach(Connection &connection);
	// Removes an interface; the last one returns the socket to its initial state.
	void detach(Connection &connection);
	int handle_listener_event();
	int handle_pending_event(int fd, uint8_t events);

private:
	void close_pending(int fd);
	void stop_listening();

	uint32_t magic_ = kMagic;
	Database &database_;
	char filename_[sizeof(sockaddr_un::sun_path) + 1] = {};
	SocketAddress address_;
	void *private_ctx_;
	Role role_ = Role::unset;
	UniqueFd listener_;
	DbVector<Connection *> interfaces_;
	DbVector<int> pending_; // accepted channel fds awaiting INIT (owned)
};

class Database {
public:
	static constexpr uint32_t kMagic = 0x6d61696e; // "main"
	enum class FdKind { listener, pending, control, interrupt, timer, cancel };

	Database(const AllocatorFns &fns, memif_control_fd_update_t *on_control_fd_update, const char *app_name,
		 void *private_ctx);
	~Database();
	Database(const Database &) = delete;
	Database &operator=(const Database &) = delete;

	// Creates the timer (and the epoll and cancel fds in internal-poll mode).
	int start();

	bool valid() const { return magic_ == kMagic; }
	const AllocatorFns &allocator() const { return fns_; }
	const char *app_name() const { return app_name_; }
	void *private_ctx() const { return private_ctx_; }

	// Watches fd (READ) and dispatches its events to owner; unwatch before closing.
	int watch(int fd, FdKind kind, void *owner, uint16_t qid = 0);
	void unwatch(int fd);
	// Changes which object a watched fd belongs to (a pending channel becoming a connection's).
	void rebind(int fd, FdKind kind, void *owner);

	int handle_fd_event(int fd, uint8_t events);
	int poll_event(int timeout_seconds);
	int cancel_poll_event();
	int set_connection_request_timer(const itimerspec &timer);

	// Slave interfaces arm the retry timer while there is at least one.
	int add_slave();
	void remove_slave();

	int create_socket(const char *filename, void *private_ctx, MemifSocket **out);
	int delete_socket(MemifSocket *socket);
	MemifSocket *default_socket(); // created on first use
	void enable_default_socket() { default_socket_allowed_ = true; }

	void register_external_region(memif_add_external_region_t *add, memif_get_external_region_addr_t *get_addr,
				      memif_del_external_region_t *del, memif_get_external_buffer_offset_t *offset)
	{
		add_external_region_ = add;
		get_external_region_addr_ = get_addr;
		del_external_region_ = del;
		get_external_buffer_offset_ = offset;
	}
	memif_add_external_region_t *add_external_region() const { return add_external_region_; }
	memif_get_external_region_addr_t *get_external_region_addr() const { return get_external_region_addr_; }
	memif_del_external_region_t *del_external_region() const { return del_external_region_; }
	memif_get_external_buffer_offset_t *get_external_buffer_offset() const { return get_external_buffer_offset_; }

private:
	struct FdEntry {
		FdKind kind;
		void *owner;
		uint16_t qid;
	};
	using FdMap = std::unordered_map<int, FdEntry, std::hash<int>, std::equal_to<int>,
					 DbAllocator<std::pair<const int, FdEntry>>>;
	int update_timer();
	void retry_connections();

	uint32_t magic_ = kMagic;
	AllocatorFns fns_;
	memif_control_fd_update_t *on_control_fd_update_;
	void *private_ctx_;
	char app_name_[kNameSize + 1] = {};
	UniqueFd epoll_;
	UniqueFd cancel_;
	UniqueFd timer_;
	itimerspec timer_spec_{};
	size_t slaves_ = 0;
	FdMap fds_;
	DbVector<MemifSocket *> sockets_;
	MemifSocket *default_socket_ = nullptr;
	bool default_socket_allowed_ = false;

	memif_add_external_region_t *add_external_region_ = nullptr;
	memif_get_external_region_addr_t *get_external_region_addr_ = nullptr;
	memif_del_external_region_t *del_external_region_ = nullptr;
	memif_get_external_buffer_offset_t *get_external_buffer_offset_ = nullptr;
};

inline constexpr const char *kDefaultSocketPath = "/run/vpp/memif.sock";

} // namespace softdpu::memif
