#include "memif/database.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/epoll.h>
#include <sys/eventfd.h>

namespace softdpu::memif {

// --- MemifSocket -------------------------------------------------------------------------------

MemifSocket::MemifSocket(Database &database, const char *filename, void *private_ctx)
    : database_(database), private_ctx_(private_ctx), interfaces_(DbAllocator<Connection *>(&database.allocator())),
      pending_(DbAllocator<int>(&database.allocator()))
{
	std::memcpy(filename_, filename, strnlen(filename, sizeof filename_ - 1));
	make_socket_address(filename_, address_);
}

MemifSocket::~MemifSocket()
{
	stop_listening();
	magic_ = 0;
}

int MemifSocket::attach(Connection &connection)
{
	const Role wanted = connection.is_master() ? Role::listener : Role::client;
	if (role_ != Role::unset && role_ != wanted)
		return MEMIF_ERR_INVAL_ARG;
	for (Connection *other : interfaces_)
		if (other->id() == connection.id() && wanted == Role::listener)
			return MEMIF_ERR_INVAL_ARG; // a listener tells its interfaces apart by id
	if (wanted == Role::listener && !listener_.valid()) {
		UniqueFd listener;
		int err = listen_on(address_, listener);
		if (err != MEMIF_ERR_SUCCESS)
			return err;
		err = database_.watch(listener.get(), Database::FdKind::listener, this);
		if (err != MEMIF_ERR_SUCCESS) {
			if (!address_.abstract)
				unlink(address_.address.sun_path);
			return err;
		}
		listener_ = std::move(listener);
	}
	interfaces_.push_back(&connection);
	role_ = wanted;
	return MEMIF_ERR_SUCCESS;
}

void MemifSocket::detach(Connection &connection)
{
	interfaces_.erase(std::remove(interfaces_.begin(), interfaces_.end(), &connection), interfaces_.end());
	if (interfaces_.empty()) {
		stop_listening();
		role_ = Role::unset;
	}
}

void MemifSocket::stop_listening()
{
	while (!pending_.empty())
		close_pending(pending_.back());
	if (listener_.valid()) {
		database_.unwatch(listener_.get());
		listener_.reset();
		if (!address_.abstract)
			unlink(address_.address.sun_path);
	}
}

void MemifSocket::close_pending(int fd)
{
	pending_.erase(std::remove(pending_.begin(), pending_.end(), fd), pending_.end());
	database_.unwatch(fd);
	::close(fd);
}

int MemifSocket::handle_listener_event()
{
	UniqueFd channel(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
	if (!channel.valid())
		return errno == EAGAIN ? MEMIF_ERR_SUCCESS : errno_to_memif(errno);
	Message hello;
	hello.type = MessageType::hello;
	copy_string_to_field(database_.app_name(), hello.hello.name, kNameSize);
	hello.hello.min_version = kProtocolVersion;
	hello.hello.max_version = kProtocolVersion;
	hello.hello.max_region = kMaxRegionIndex;
	hello.hello.max_m2s_ring = kMaxRingIndex;
	hello.hello.max_s2m_ring = kMaxRingIndex;
	hello.hello.max_log2_ring_size = kMaxLog2RingSize;
	int err = send_message(channel.get(), hello);
	if (err != MEMIF_ERR_SUCCESS)
		return err;
	pending_.push_back(channel.get());
	err = database_.watch(channel.get(), Database::FdKind::pending, this);
	if (err != MEMIF_ERR_SUCCESS) {
		pending_.pop_back();
		return err;
	}
	channel.release();
	return MEMIF_ERR_SUCCESS;
}

int MemifSocket::handle_pending_event(int fd, uint8_t events)
{
	ReceivedMessage received;
	const char *reason = "Malformed message";
	int err = (events & MEMIF_FD_EVENT_READ) != 0 ? receive_message(fd, received, &reason) : MEMIF_ERR_DISCONNECTED;
	if (err == MEMIF_ERR_AGAIN && (events & MEMIF_FD_EVENT_ERROR) == 0)
		return MEMIF_ERR_SUCCESS;
	Connection *target = nullptr;
	if (err == MEMIF_ERR_SUCCESS) {
		if (received.message.type != MessageType::init) {
			err = received.message.type == MessageType::disconnect ? MEMIF_ERR_DISCONNECT : MEMIF_ERR_MFMSG;
			reason = "Unexpected message";
		} else {
			for (Connection *candidate : interfaces_)
				if (candidate->id() == received.message.init.id)
					target = candidate;
			if (target == nullptr) {
				err = MEMIF_ERR_ID;
				reason = "ID not found";
			}
		}
	}
	if (err != MEMIF_ERR_SUCCESS) {
		if (err != MEMIF_ERR_DISCONNECTED && err != MEMIF_ERR_DISCONNECT && err != MEMIF_ERR_AGAIN) {
			Message refusal;
			refusal.type = MessageType::disconnect;
			refusal.disconnect.code = uint32_t(err);
			copy_string_to_field(reason, refusal.disconnect.reason, kReasonSize);
			send_message(fd, refusal);
		}
		close_pending(fd);
		return err;
	}
	pending_.erase(std::remove(pending_.begin(), pending_.end(), fd), pending_.end());
	return target->accept_init(UniqueFd(fd), received.message.init);
}

// --- Database ----------------------------------------------------------------------------------

Database::Database(const AllocatorFns &fns, memif_control_fd_update_t *on_control_fd_update, const char *app_name,
		   void *private_ctx)
    : fns_(fns), on_control_fd_update_(on_control_fd_update), private_ctx_(private_ctx),
      fds_(16, std::hash<int>(), std::equal_to<int>(), DbAllocator<std::pair<const int, FdEntry>>(&fns_)),
      sockets_(DbAllocator<MemifSocket *>(&fns_))
{
	copy_string_to_field(app_name != nullptr ? app_name : MEMIF_DEFAULT_APP_NAME, app_name_, kNameSize);
	timer_spec_.it_value.tv_sec = 2;
	timer_spec_.it_interval.tv_sec = 2;
}

Database::~Database()
{
	// Interfaces first (they use their sockets), then the sockets.
	for (MemifSocket *socket : sockets_) {
		while (!socket->interfaces().empty()) {
			Connection *connection = socket->interfaces().back();
			connection->disconnect(MEMIF_ERR_SUCCESS, "Interface deleted", true, false);
			if (!connection->is_master())
				remove_slave();
			socket->detach(*connection);
			db_delete(fns_, connection);
		}
	}
	for (MemifSocket *socket : sockets_)
		db_delete(fns_, socket);
	sockets_.clear();
	if (timer_.valid())
		unwatch(timer_.get());
	if (cancel_.valid())
		unwatch(cancel_.get());
	magic_ = 0;
}

int Database::start()
{
	if (on_control_fd_update_ == nullptr) {
		epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
		if (!epoll_.valid())
			return errno_to_memif(errno);
		cancel_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
		if (!cancel_.valid())
			return errno_to_memif(errno);
		const int err = watch(cancel_.get(), FdKind::cancel, this);
		if (err != MEMIF_ERR_SUCCESS)
			return err;
	}
	timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
	if (!timer_.valid())
		return errno_to_memif(errno);
	return watch(timer_.get(), FdKind::timer, this);
}

int Database::watch(int fd, FdKind kind, void *owner, uint16_t qid)
{
	fds_[fd] = FdEntry{kind, owner, qid};
	int err = MEMIF_ERR_SUCCESS;
	if (on_control_fd_update_ != nullptr) {
		if (on_control_fd_update_(fd, MEMIF_FD_EVENT_READ, private_ctx_) != 0)
			err = MEMIF_ERR_CB_FDUPDATE;
	} else {
		epoll_event event{};
		event.events = EPOLLIN;
		event.data.fd = fd;
		if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) < 0)
			err = errno_to_memif(errno);
	}
	if (err != MEMIF_ERR_SUCCESS)
		fds_.erase(fd);
	return err;
}

void Database::unwatch(int fd)
{
	if (fds_.erase(fd) == 0)
		return;
	if (on_control_fd_update_ != nullptr)
		on_control_fd_update_(fd, MEMIF_FD_EVENT_DEL, private_ctx_);
	else
		epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void Database::rebind(int fd, FdKind kind, void *owner)
{
	auto found = fds_.find(fd);
	if (found != fds_.end())
		found->second = FdEntry{kind, owner, 0};
}

int Database::handle_fd_event(int fd, uint8_t events)
{
	auto found = fds_.find(fd);
	if (found == fds_.end())
		return MEMIF_ERR_BAD_FD;
	const FdEntry entry = found->second;
	switch (entry.kind) {
	case FdKind::listener:
		return static_cast<MemifSocket *>(entry.owner)->handle_listener_event();
	case FdKind::pending:
		return static_cast<MemifSocket *>(entry.owner)->handle_pending_event(fd, events);
	case FdKind::control:
		return static_cast<Connection *>(entry.owner)->handle_control_event(events);
	case FdKind::interrupt:
		return static_cast<Connection *>(entry.owner)->handle_interrupt(entry.qid);
	case FdKind::timer: {
		uint64_t expirations;
		[[maybe_unused]] ssize_t drained = read(fd, &expirations, sizeof expirations);
		retry_connections();
		return MEMIF_ERR_SUCCESS;
	}
	case FdKind::cancel: {
		uint64_t count;
		[[maybe_unused]] ssize_t drained = read(fd, &count, sizeof count);
		return MEMIF_ERR_POLL_CANCEL;
	}
	}
	return MEMIF_ERR_BAD_FD;
}

int Database::poll_event(int timeout_seconds)
{
	if (!epoll_.valid())
		return MEMIF_ERR_INVAL_ARG; // the application watches the fds itself
	epoll_event event{};
	const int timeout_ms = timeout_seconds < 0 ? -1 : timeout_seconds * 1000;
	const int ready = epoll_wait(epoll_.get(), &event, 1, timeout_ms);
	if (ready < 0)
		return errno == EINTR ? MEMIF_ERR_SUCCESS : errno_to_memif(errno);
	if (ready == 0)
		return MEMIF_ERR_SUCCESS;
	uint8_t events = 0;
	if ((event.events & EPOLLIN) != 0)
		events |= MEMIF_FD_EVENT_READ;
	if ((event.events & EPOLLOUT) != 0)
		events |= MEMIF_FD_EVENT_WRITE;
	if ((event.events & (EPOLLERR | EPOLLHUP)) != 0)
		events |= MEMIF_FD_EVENT_ERROR;
	return handle_fd_event(event.data.fd, events);
}

int Database::cancel_poll_event()
{
	if (!cancel_.valid())
		return MEMIF_ERR_INVAL_ARG;
	const uint64_t one = 1;
	return write(cancel_.get(), &one, sizeof one) == ssize_t(sizeof one) ? MEMIF_ERR_SUCCESS
									     : errno_to_memif(errno);
}

int Database::set_connection_request_timer(const itimerspec &timer)
{
	timer_spec_ = timer;
	return update_timer();
}

int Database::update_timer()
{
	if (!timer_.valid())
		return MEMIF_ERR_SUCCESS;
	const itimerspec off{};
	if (timerfd_settime(timer_.get(), 0, slaves_ > 0 ? &timer_spec_ : &off, nullptr) < 0)
		return errno_to_memif(errno);
	return MEMIF_ERR_SUCCESS;
}

int Database::add_slave()
{
	if (slaves_++ == 0)
		return update_timer();
	return MEMIF_ERR_SUCCESS;
}

void Database::remove_slave()
{
	if (slaves_ > 0 && --slaves_ == 0)
		update_timer();
}

void Database::retry_connections()
{
	for (MemifSocket *socket : sockets_) {
		if (socket->role() != MemifSocket::Role::client)
			continue;
		for (Connection *connection : socket->interfaces())
			if (!connection->has_channel())
				connection->request_connection(); // failure: try again on the next tick
	}
}

int Database::create_socket(const char *filename, void *private_ctx, MemifSocket **out)
{
	SocketAddress address;
	if (make_socket_address(filename, address) != MEMIF_ERR_SUCCESS)
		return MEMIF_ERR_INVAL_ARG;
	sockets_.reserve(sockets_.size() + 1);
	MemifSocket *socket = db_new<MemifSocket>(fns_, *this, filename, private_ctx);
	if (socket == nullptr)
		return MEMIF_ERR_NOMEM;
	sockets_.push_back(socket);
	*out = socket;
	return MEMIF_ERR_SUCCESS;
}

int Database::delete_socket(MemifSocket *socket)
{
	if (socket->in_use())
		return MEMIF_ERR_INVAL_ARG;
	sockets_.erase(std::remove(sockets_.begin(), sockets_.end(), socket), sockets_.end());
	if (socket == default_socket_)
		default_socket_ = nullptr;
	db_delete(fns_, socket);
	return MEMIF_ERR_SUCCESS;
}

MemifSocket *Database::default_socket()
{
	if (default_socket_ == nullptr && default_socket_allowed_) {
		MemifSocket *socket = nullptr;
		if (create_socket(kDefaultSocketPath, nullptr, &socket) == MEMIF_ERR_SUCCESS)
			default_socket_ = socket;
	}
	return default_socket_;
}

} // namespace softdpu::memif
