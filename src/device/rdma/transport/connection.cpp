#include "device/rdma/transport/connection.hpp"
#include "device/rdma/transport/wire.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/memory_access.hpp"
#include "common/sdk_log.hpp"

namespace softdpu::device::rdma::transport {

namespace {

// ---- The agent: one thread per process, epoll over listeners, connections and the tick timer ----

using Handler = std::function<void(uint64_t id, uint32_t events)>;
constexpr uint64_t kTimerId = 1;

class Agent {
public:
	// This process's agent, started on first use (a forked child starts its own). Null when the
	// thread or its descriptors cannot be made (logged).
	static Agent *get() noexcept
	{
		static std::mutex mutex;
		static Agent *current = nullptr;
		std::lock_guard lock(mutex);
		const auto pid = static_cast<uint32_t>(getpid());
		if (current != nullptr && current->pid_ == pid)
			return current;
		// The parent's agent (in a forked child: its thread did not come along) is leaked.
		auto *agent = new (std::nothrow) Agent();
		if (agent == nullptr)
			return nullptr;
		agent->pid_ = pid;
		agent->epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
		agent->timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
		struct epoll_event ev = {};
		ev.events = EPOLLIN;
		ev.data.u64 = kTimerId;
		if (!agent->epoll_.valid() || !agent->timer_.valid() ||
		    epoll_ctl(agent->epoll_.get(), EPOLL_CTL_ADD, agent->timer_.get(), &ev) != 0) {
			SDK_LOG_ERR("rdma transport: cannot start the agent: %s", std::strerror(errno));
			delete agent;
			return nullptr;
		}
		try {
			std::thread thread([agent] { agent->run(); });
			agent->thread_id_ = thread.get_id();
			thread.detach();
		} catch (const std::exception &e) {
			SDK_LOG_ERR("rdma transport: cannot start the agent thread: %s", e.what());
			delete agent;
			return nullptr;
		}
		current = agent;
		return current;
	}

	bool on_agent_thread() const noexcept { return std::this_thread::get_id() == thread_id_; }

	// Watches fd (level-triggered) and calls handler on the agent thread. 0 on failure (logged).
	uint64_t add_fd(int fd, uint32_t events, Handler handler) noexcept
	{
		std::lock_guard lock(mutex_);
		const uint64_t id = next_id_++;
		try {
			entries_.emplace(id, Entry{fd, std::make_shared<Handler>(std::move(handler)), false});
		} catch (const std::bad_alloc &) {
			return 0;
		}
		struct epoll_event ev = {};
		ev.events = events;
		ev.data.u64 = id;
		if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
			SDK_LOG_ERR("rdma transport: agent cannot watch a descriptor: %s", std::strerror(errno));
			entries_.erase(id);
			return 0;
		}
		return id;
	}

	uint64_t add_tick(std::function<void()> tick) noexcept
	{
		std::lock_guard lock(mutex_);
		const uint64_t id = next_id_++;
		try {
			auto handler =
			    std::make_shared<Handler>([tick = std::move(tick)](uint64_t, uint32_t) { tick(); });
			entries_.emplace(id, Entry{-1, std::move(handler), true});
		} catch (const std::bad_alloc &) {
			return 0;
		}
		if (ticks_++ == 0)
			arm_timer(true);
		return id;
	}

	// After it returns, the handler of id is not running and never runs again (unless called from
	// that handler itself, on the agent thread). The descriptor is not closed.
	void remove(uint64_t id) noexcept
	{
		std::unique_lock lock(mutex_);
		const auto it = entries_.find(id);
		if (it != entries_.end()) {
			if (it->second.tick) {
				if (--ticks_ == 0)
					arm_timer(false);
			} else {
				epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd, nullptr);
			}
			entries_.erase(it);
		}
		if (!on_agent_thread())
			idle_.wait(lock, [&] { return dispatching_ != id; });
	}

private:
	struct Entry {
		int fd;
		std::shared_ptr<Handler> handler;
		bool tick;
	};

	Agent() = default;

	void arm_timer(bool on) noexcept
	{
		struct itimerspec spec = {};
		if (on) {
			spec.it_interval.tv_nsec = static_cast<long>(kTickPeriodUs) * 1000;
			spec.it_value = spec.it_interval;
		}
		timerfd_settime(timer_.get(), 0, &spec, nullptr);
	}

	void dispatch(uint64_t id, uint32_t events) noexcept
	{
		std::shared_ptr<Handler> handler;
		{
			std::lock_guard lock(mutex_);
			const auto it = entries_.find(id);
			if (it == entries_.end())
				return;
			handler = it->second.handler;
			dispatching_ = id;
		}
		try {
			(*handler)(id, events);
		} catch (const std::exception &e) {
			SDK_LOG_ERR("rdma transport: an agent callback threw: %s", e.what());
		}
		{
			std::lock_guard lock(mutex_);
			dispatching_ = 0;
		}
		idle_.notify_all();
	}

	void run() noexcept
	{
		struct epoll_event events[64];
		std::vector<uint64_t> ticks;
		for (;;) {
			const int n = epoll_wait(epoll_.get(), events, 64, -1);
			if (n < 0) {
				if (errno != EINTR) {
					SDK_LOG_ERR("rdma transport: agent: epoll_wait: %s", std::strerror(errno));
					std::this_thread::sleep_for(std::chrono::milliseconds(1));
				}
				continue;
			}
			for (int i = 0; i < n; ++i) {
				if (events[i].data.u64 != kTimerId) {
					dispatch(events[i].data.u64, events[i].events);
					continue;
				}
				uint64_t expirations = 0;
				if (read(timer_.get(), &expirations, sizeof(expirations)) < 0)
					continue;
				ticks.clear();
				{
					std::lock_guard lock(mutex_);
					try {
						for (const auto &[id, entry] : entries_)
							if (entry.tick)
								ticks.push_back(id);
					} catch (const std::bad_alloc &) {
					}
				}
				for (const uint64_t id : ticks)
					dispatch(id, 0);
			}
		}
	}

	uint32_t pid_ = 0;
	std::thread::id thread_id_;
	common::UniqueFd epoll_;
	common::UniqueFd timer_;
	std::mutex mutex_;
	std::condition_variable idle_;
	std::unordered_map<uint64_t, Entry> entries_;
	size_t ticks_ = 0;
	uint64_t next_id_ = kTimerId + 1;
	uint64_t dispatching_ = 0;
};

bool valid_fabric(std::string_view fabric) noexcept
{
	if (fabric.empty() || fabric.size() > kMaxFabricName)
		return false;
	return std::all_of(fabric.begin(), fabric.end(), [](char c) { return c > ' ' && c < 127; });
}

bool send_reply(int sock, const Reply &reply, const int *fds, size_t count) noexcept
{
	struct iovec iov = {const_cast<Reply *>(&reply), sizeof(reply)};
	struct msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxSentFds)];
	if (count > 0) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * count);
		struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * count);
		std::memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * count);
	}
	return sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(reply));
}

bool peer_credentials(int sock, struct ucred *cred) noexcept
{
	socklen_t len = sizeof(*cred);
	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0 && len == sizeof(*cred);
}

// A connection's end: hang-up, error, or end of stream (anything it sends is read and dropped).
bool connection_closed(int sock, uint32_t events) noexcept
{
	if ((events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)) != 0)
		return true;
	char buf[256];
	const ssize_t n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

} // namespace

void make_address(std::string_view fabric, uint32_t qpn, struct sockaddr_un *addr, socklen_t *len) noexcept
{
	std::memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	const int n =
	    std::snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "softdpu-rdma/%u/%.*s/%06x",
			  static_cast<unsigned>(geteuid()), static_cast<int>(fabric.size()), fabric.data(), qpn);
	*len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
}

// ---- Binding ----

struct BindingState : std::enable_shared_from_this<BindingState> {
	common::UniqueFd listener;
	std::vector<common::UniqueFd> fds;
	Reply reply = {};
	DisconnectCallback on_disconnect;
	Agent *agent = nullptr;
	std::mutex mutex;
	std::condition_variable idle;
	std::vector<std::pair<uint64_t, int>> connections; // agent id, socket (owned)
	bool closing = false;
	unsigned active = 0; // connection handlers running

	void accept_all() noexcept;
	void connection_event(uint64_t id, int sock, uint32_t pid, uint32_t events) noexcept;
};

void BindingState::accept_all() noexcept
{
	MemoryTable *table = MemoryTable::instance();
	if (table == nullptr)
		return;
	for (;;) {
		common::UniqueFd sock(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
		if (!sock.valid()) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN) {
				// Out of descriptors: the connection stays pending and the listener readable;
				// pause so the agent does not spin on it.
				SDK_LOG_ERR("rdma transport: qpn 0x%x: accept: %s", reply.qpn, std::strerror(errno));
				std::this_thread::sleep_for(std::chrono::milliseconds(10));
			}
			return;
		}
		struct ucred cred = {};
		if (!peer_credentials(sock.get(), &cred) || cred.uid != geteuid()) {
			SDK_LOG_ERR("rdma transport: qpn 0x%x: refused a connection from process %d of uid %u (not "
				    "this process's user)",
				    reply.qpn, cred.pid, cred.uid);
			Reply refusal = reply;
			refusal.status = kReplyRefused;
			refusal.fd_count = 0;
			refusal.info_len = 0;
			send_reply(sock.get(), refusal, nullptr, 0);
			continue;
		}
		int sent[kMaxSentFds];
		size_t count = 0;
		for (const common::UniqueFd &fd : fds)
			sent[count++] = fd.get();
		sent[count++] = table->rules_fd();
		sent[count++] = table->shared_fd();
		if (!send_reply(sock.get(), reply, sent, count)) {
			SDK_LOG_ERR("rdma transport: qpn 0x%x: cannot answer process %d: %s", reply.qpn, cred.pid,
				    std::strerror(errno));
			continue;
		}
		const int raw = sock.get();
		const auto pid = static_cast<uint32_t>(cred.pid);
		std::lock_guard lock(mutex);
		try {
			connections.reserve(connections.size() + 1);
		} catch (const std::bad_alloc &) {
			continue;
		}
		const uint64_t id = agent->add_fd(raw, EPOLLIN | EPOLLRDHUP,
						  // The handler holds the state: a callback may destroy the Binding,
						  // and the handler goes on after it returns.
						  [state = shared_from_this(), raw, pid](uint64_t self, uint32_t ev) {
							  state->connection_event(self, raw, pid, ev);
						  });
		if (id != 0)
			connections.emplace_back(id, sock.release());
	}
}

void BindingState::connection_event(uint64_t id, int sock, uint32_t pid, uint32_t events) noexcept
{
	if (!connection_closed(sock, events))
		return;
	agent->remove(id);
	{
		std::lock_guard lock(mutex);
		const auto it =
		    std::find_if(connections.begin(), connections.end(), [&](const auto &c) { return c.first == id; });
		if (closing || it == connections.end())
			return; // the destructor closes it
		close(it->second);
		connections.erase(it);
		++active;
	}
	if (on_disconnect)
		on_disconnect(pid);
	// Notified under the lock: the destructor, waiting for active == 0, frees this state (and
	// `idle`) as soon as it can take the lock again.
	std::lock_guard lock(mutex);
	--active;
	idle.notify_all();
}

Status Binding::bind(std::string_view fabric, std::span<const int> fds, std::span<const uint8_t> info,
		     DisconnectCallback on_disconnect, std::unique_ptr<Binding> *out) noexcept
{
	if (!valid_fabric(fabric) || fds.size() > kMaxBoundFds || info.size() > kMaxInfoBytes) {
		SDK_LOG_ERR("rdma transport: cannot bind: a fabric name of 1..%zu printable characters, at most %zu "
			    "descriptors and %zu info bytes",
			    kMaxFabricName, kMaxBoundFds, kMaxInfoBytes);
		return Status::invalid_argument;
	}
	MemoryTable *table = MemoryTable::instance();
	Agent *agent = Agent::get();
	if (table == nullptr || agent == nullptr)
		return Status::system_error;
	try {
		std::unique_ptr<Binding> binding(new Binding());
		auto state = std::make_shared<BindingState>();
		binding->fabric_ = std::string(fabric);
		state->agent = agent;
		state->on_disconnect = std::move(on_disconnect);
		Reply &reply = state->reply;
		reply.magic = kReplyMagic;
		reply.version = kReplyVersion;
		reply.status = kReplyOk;
		reply.fd_count = static_cast<uint32_t>(fds.size());
		reply.info_len = static_cast<uint32_t>(info.size());
		if (!info.empty())
			std::memcpy(reply.info, info.data(), info.size());
		for (size_t i = 0; i < fds.size(); ++i) {
			unsigned seals = 0;
			size_t size = 0;
			const FdKind kind = classify_fd(fds[i], &seals, &size);
			if (kind == FdKind::other ||
			    (kind == FdKind::memfd && (seals & kRegionSeals) != kRegionSeals)) {
				SDK_LOG_ERR(
				    "rdma transport: cannot bind: descriptor %d is neither a sealed shared region "
				    "nor an eventfd",
				    fds[i]);
				return Status::invalid_argument;
			}
			reply.fds[i] = FdDesc{static_cast<uint32_t>(kind), 0, size};
			state->fds.emplace_back(fcntl(fds[i], F_DUPFD_CLOEXEC, 0));
			if (!state->fds.back().valid()) {
				SDK_LOG_ERR("rdma transport: cannot bind: dup: %s", std::strerror(errno));
				return Status::no_resources;
			}
		}
		state->listener.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
		if (!state->listener.valid()) {
			SDK_LOG_ERR("rdma transport: cannot bind: socket: %s", std::strerror(errno));
			return Status::system_error;
		}
		// From a random start, the next free qpn: the kernel's abstract namespace makes each bind
		// atomic machine-wide (per network namespace), and frees the name when the socket closes.
		uint32_t start = 0;
		if (getrandom(&start, sizeof(start), GRND_NONBLOCK) != sizeof(start))
			start = static_cast<uint32_t>(getpid()) * 2654435761u;
		constexpr uint32_t span = kMaxQpn - kMinQpn + 1;
		uint32_t qpn = 0;
		for (uint32_t attempt = 0; attempt < 65536 && qpn == 0; ++attempt) {
			const uint32_t candidate = kMinQpn + (start + attempt) % span;
			struct sockaddr_un addr;
			socklen_t len = 0;
			make_address(fabric, candidate, &addr, &len);
			if (::bind(state->listener.get(), reinterpret_cast<struct sockaddr *>(&addr), len) == 0)
				qpn = candidate;
			else if (errno != EADDRINUSE) {
				SDK_LOG_ERR("rdma transport: cannot bind: %s", std::strerror(errno));
				return Status::system_error;
			}
		}
		if (qpn == 0) {
			SDK_LOG_ERR("rdma transport: cannot bind on fabric %s: no free qpn found",
				    binding->fabric_.c_str());
			return Status::no_resources;
		}
		if (listen(state->listener.get(), SOMAXCONN) != 0) {
			SDK_LOG_ERR("rdma transport: cannot bind: listen: %s", std::strerror(errno));
			return Status::system_error;
		}
		reply.qpn = qpn;
		binding->qpn_ = qpn;
		binding->listener_id_ =
		    agent->add_fd(state->listener.get(), EPOLLIN, [state](uint64_t, uint32_t) { state->accept_all(); });
		if (binding->listener_id_ == 0)
			return Status::system_error;
		binding->state_ = std::move(state);
		*out = std::move(binding);
		return Status::ok;
	} catch (const std::bad_alloc &) {
		return Status::no_resources;
	}
}

Binding::~Binding()
{
	if (!state_)
		return;
	BindingState &state = *state_;
	state.agent->remove(listener_id_); // no accept runs or starts any more
	state.listener.reset();            // the qpn is free again
	std::vector<std::pair<uint64_t, int>> connections;
	{
		std::lock_guard lock(state.mutex);
		state.closing = true;
		connections.swap(state.connections);
	}
	for (const auto &[id, sock] : connections) {
		state.agent->remove(id);
		close(sock);
	}
	if (!state.agent->on_agent_thread()) {
		std::unique_lock lock(state.mutex);
		state.idle.wait(lock, [&] { return state.active == 0; });
	}
}

// ---- Peer ----

struct PeerConnection {
	common::UniqueFd sock;
	std::atomic<bool> gone{false};
	DisconnectCallback on_disconnect;
	Agent *agent = nullptr;
	uint32_t pid = 0;
};

Status Peer::connect(std::string_view fabric, uint32_t qpn, DisconnectCallback on_disconnect,
		     std::unique_ptr<Peer> *out) noexcept
{
	if (!valid_fabric(fabric) || qpn < kMinQpn || qpn > kMaxQpn) {
		SDK_LOG_ERR("rdma transport: cannot connect: a fabric name of 1..%zu printable characters and a qpn "
			    "in [0x%x, 0x%x]",
			    kMaxFabricName, kMinQpn, kMaxQpn);
		return Status::invalid_argument;
	}
	Agent *agent = Agent::get();
	if (agent == nullptr)
		return Status::system_error;
	if (agent->on_agent_thread()) {
		SDK_LOG_ERR("rdma transport: cannot connect from the agent thread (it answers connections)");
		return Status::invalid_argument;
	}
	try {
		std::unique_ptr<Peer> peer(new Peer());
		auto conn = std::make_shared<PeerConnection>();
		conn->on_disconnect = std::move(on_disconnect);
		conn->sock.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
		if (!conn->sock.valid()) {
			SDK_LOG_ERR("rdma transport: cannot connect: socket: %s", std::strerror(errno));
			return Status::system_error;
		}
		struct sockaddr_un addr;
		socklen_t len = 0;
		make_address(fabric, qpn, &addr, &len);
		if (::connect(conn->sock.get(), reinterpret_cast<struct sockaddr *>(&addr), len) != 0) {
			if (errno == ECONNREFUSED || errno == ENOENT) {
				// An answer, not a failure: an RC requester retries until its budget runs out
				// (once per poll), a UD datagram is lost. An error record each time floods.
				SDK_LOG_DBG("rdma transport: no queue pair 0x%x on fabric %.*s", qpn,
					    static_cast<int>(fabric.size()), fabric.data());
				return Status::not_found;
			}
			SDK_LOG_ERR("rdma transport: cannot connect to qpn 0x%x: %s", qpn, std::strerror(errno));
			return errno == EAGAIN ? Status::no_resources : Status::system_error;
		}
		struct ucred cred = {};
		if (!peer_credentials(conn->sock.get(), &cred) || cred.uid != geteuid() || cred.pid <= 0) {
			SDK_LOG_ERR("rdma transport: refused qpn 0x%x: bound by process %d of uid %u, not this user",
				    qpn, cred.pid, cred.uid);
			return Status::refused;
		}
		struct pollfd p = {conn->sock.get(), POLLIN, 0};
		int ready;
		do
			ready = poll(&p, 1, kConnectTimeoutMs);
		while (ready < 0 && errno == EINTR);
		if (ready <= 0) {
			SDK_LOG_ERR("rdma transport: process %d (qpn 0x%x) did not answer within %d ms", cred.pid, qpn,
				    kConnectTimeoutMs);
			return Status::refused;
		}
		Reply reply;
		struct iovec iov = {&reply, sizeof(reply)};
		alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxSentFds)];
		struct msghdr msg = {};
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		const ssize_t n = recvmsg(conn->sock.get(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		// Own every descriptor that came, whatever else is wrong.
		std::vector<common::UniqueFd> received;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < count; ++i) {
				int fd;
				std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				received.emplace_back(fd);
			}
		}
		if (n == 0) {
			SDK_LOG_ERR("rdma transport: qpn 0x%x closed the connection without answering", qpn);
			return Status::peer_gone;
		}
		if (n != static_cast<ssize_t>(sizeof(reply)) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
		    reply.magic != kReplyMagic || reply.version != kReplyVersion) {
			SDK_LOG_ERR("rdma transport: refused qpn 0x%x: malformed answer", qpn);
			return Status::refused;
		}
		if (reply.status != kReplyOk) {
			SDK_LOG_ERR("rdma transport: qpn 0x%x refused the connection (another user?)", qpn);
			return Status::refused;
		}
		if (reply.qpn != qpn || reply.fd_count > kMaxBoundFds || reply.info_len > kMaxInfoBytes ||
		    received.size() != reply.fd_count + 2) {
			SDK_LOG_ERR("rdma transport: refused qpn 0x%x: its answer does not add up (%zu descriptors)",
				    qpn, received.size());
			return Status::refused;
		}
		const auto pid = static_cast<uint32_t>(cred.pid);
		peer->kinds_.resize(reply.fd_count);
		peer->regions_.resize(reply.fd_count);
		peer->eventfds_.resize(reply.fd_count);
		for (size_t i = 0; i < reply.fd_count; ++i) {
			unsigned seals = 0;
			size_t size = 0;
			const FdKind kind = classify_fd(received[i].get(), &seals, &size);
			if (static_cast<uint32_t>(kind) != reply.fds[i].kind || kind == FdKind::other) {
				SDK_LOG_ERR(
				    "rdma transport: refused qpn 0x%x: descriptor %zu is not the memfd or eventfd "
				    "it claims to be",
				    qpn, i);
				return Status::refused;
			}
			peer->kinds_[i] = kind;
			if (kind == FdKind::eventfd) {
				peer->eventfds_[i] = std::move(received[i]);
				continue;
			}
			if (reply.fds[i].size == 0 || reply.fds[i].size != round_to_pages(reply.fds[i].size)) {
				SDK_LOG_ERR("rdma transport: refused qpn 0x%x: region %zu has a bad size", qpn, i);
				return Status::refused;
			}
			const Status status =
			    SharedRegion::map_received(received[i].get(), reply.fds[i].size, &peer->regions_[i]);
			if (status != Status::ok)
				return status == Status::refused ? Status::refused : status;
		}
		const Status status = RemoteTable::open(received[reply.fd_count].get(),
							received[reply.fd_count + 1].get(), pid, &peer->table_);
		if (status != Status::ok)
			return status;
		peer->info_.assign(reply.info, reply.info + reply.info_len);
		peer->pid_ = pid;
		peer->qpn_ = qpn;
		conn->pid = pid;
		const int sock = conn->sock.get();
		conn->agent = agent;
		peer->conn_ = conn;
		peer->conn_id_ = agent->add_fd(sock, EPOLLIN | EPOLLRDHUP, [conn, sock](uint64_t id, uint32_t events) {
			if (!connection_closed(sock, events))
				return;
			conn->agent->remove(id);
			conn->gone.store(true, std::memory_order_release);
			if (conn->on_disconnect)
				conn->on_disconnect(conn->pid);
		});
		if (peer->conn_id_ == 0)
			return Status::system_error;
		*out = std::move(peer);
		return Status::ok;
	} catch (const std::bad_alloc &) {
		return Status::no_resources;
	}
}

Peer::~Peer()
{
	if (conn_id_ != 0)
		conn_->agent->remove(conn_id_);
}

SharedRegion *Peer::region(size_t index) noexcept
{
	return index < regions_.size() && regions_[index].valid() ? &regions_[index] : nullptr;
}

bool Peer::gone() const noexcept
{
	return conn_->gone.load(std::memory_order_acquire);
}

Status Peer::notify(size_t index) noexcept
{
	if (index >= eventfds_.size() || !eventfds_[index].valid())
		return Status::invalid_argument;
	if (gone())
		return Status::peer_gone;
	const uint64_t one = 1;
	if (::write(eventfds_[index].get(), &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		return Status::system_error;
	return Status::ok;
}

Status Peer::copy_failed(int err, bool write, const struct iovec *local, size_t local_count) noexcept
{
	if (err == ESRCH || err == EPERM) {
		// The process exited (or exec'd a program we may not touch): the peer is gone.
		conn_->gone.store(true, std::memory_order_release);
		return Status::peer_gone;
	}
	if (err != EFAULT)
		return Status::system_error;
	// Ours or theirs: our iovecs must be readable (write) or writable (read).
	for (size_t i = 0; i < local_count; ++i) {
		if (local[i].iov_len == 0)
			continue;
		const auto base = reinterpret_cast<uintptr_t>(local[i].iov_base);
		uintptr_t bad = 0;
		if (base + local[i].iov_len < base ||
		    common::check_range_access(base, local[i].iov_len, !write, &bad) != common::RangeAccess::ok)
			return Status::local_fault;
	}
	return Status::remote_access_error;
}

Status Peer::transfer(bool write, RemoteOp *ops, size_t count, uint32_t pd_id, uint32_t required_access,
		      size_t *ok_count, bool ordered) noexcept
{
	*ok_count = 0;
	if (gone()) {
		for (size_t i = 0; i < count; ++i)
			ops[i].status = Status::peer_gone;
		return Status::peer_gone;
	}
	struct iovec local[IOV_MAX];
	struct iovec remote[IOV_MAX];
	struct iovec merged[IOV_MAX];
	uint32_t included[IOV_MAX];
	const auto pid = static_cast<pid_t>(pid_);
	const auto copy = [&](const struct iovec *l, size_t nl, const struct iovec *r, size_t nr) {
		return write ? process_vm_writev(pid, l, nl, r, nr, 0) : process_vm_readv(pid, l, nl, r, nr, 0);
	};
	table_->enter();
	size_t i = 0;
	while (i < count) {
		size_t nl = 0;
		size_t nr = 0;
		size_t n = 0;
		uint64_t total = 0;
		for (; i < count; ++i) {
			RemoteOp &op = ops[i];
			if (op.local_count > IOV_MAX || (op.local_count > 0 && op.local == nullptr)) {
				op.status = op.local_count > IOV_MAX ? Status::no_resources : Status::invalid_argument;
				continue;
			}
			if (nl + op.local_count > IOV_MAX || nr == IOV_MAX)
				break; // the next system call
			uint64_t length = 0;
			bool wraps = false;
			for (size_t j = 0; j < op.local_count; ++j) {
				wraps |= length + op.local[j].iov_len < length;
				length += op.local[j].iov_len;
			}
			uint64_t addr = 0;
			op.status = wraps
					? Status::local_fault
					: table_->check(op.key, op.remote_addr, length, required_access, pd_id, &addr);
			if (op.status != Status::ok) {
				if (ordered) {
					// What comes before is copied below; nothing after.
					for (size_t k = i + 1; k < count; ++k)
						ops[k].status = Status::skipped;
					i = count;
					break;
				}
				continue;
			}
			if (length == 0) {
				++*ok_count;
				continue;
			}
			for (size_t j = 0; j < op.local_count; ++j)
				if (op.local[j].iov_len != 0)
					local[nl++] = op.local[j];
			remote[nr++] = {reinterpret_cast<void *>(addr), static_cast<size_t>(length)};
			included[n++] = static_cast<uint32_t>(i);
			total += length;
		}
		if (n == 0)
			continue;
		// Neighbouring remote ranges go as one (the local and remote lists are two streams): the
		// kernel pins the target's pages once per range, so a run of small writes to consecutive
		// addresses costs one pin instead of one per write.
		size_t nm = 0;
		for (size_t k = 0; k < nr; ++k) {
			if (nm > 0 &&
			    static_cast<char *>(merged[nm - 1].iov_base) + merged[nm - 1].iov_len == remote[k].iov_base)
				merged[nm - 1].iov_len += remote[k].iov_len;
			else
				merged[nm++] = remote[k];
		}
		const ssize_t done = copy(local, nl, merged, nm);
		if (done >= 0 && static_cast<uint64_t>(done) == total) {
			*ok_count += n;
			continue;
		}
		const int err = done < 0 ? errno : EFAULT;
		// Ops wholly copied are done; the rest go one by one to tell which failed and why.
		uint64_t covered = done > 0 ? static_cast<uint64_t>(done) : 0;
		for (size_t k = 0; k < n; ++k) {
			RemoteOp &op = ops[included[k]];
			const uint64_t length = remote[k].iov_len;
			if (covered >= length) {
				covered -= length;
				++*ok_count;
				continue;
			}
			covered = 0;
			if (err == ESRCH || err == EPERM) {
				op.status = copy_failed(err, write, op.local, op.local_count);
				continue;
			}
			const ssize_t again = copy(op.local, op.local_count, &remote[k], 1);
			if (again >= 0 && static_cast<uint64_t>(again) == length) {
				++*ok_count;
				continue;
			}
			op.status = copy_failed(again < 0 ? errno : EFAULT, write, op.local, op.local_count);
		}
	}
	table_->leave();
	return Status::ok;
}

Status Peer::write(const struct iovec *local, size_t local_count, uint32_t key, uint64_t remote_addr, uint32_t pd_id,
		   uint32_t required_access) noexcept
{
	RemoteOp op{local, local_count, key, remote_addr, Status::ok};
	size_t ok = 0;
	transfer(true, &op, 1, pd_id, required_access, &ok);
	return op.status;
}

Status Peer::read(const struct iovec *local, size_t local_count, uint32_t key, uint64_t remote_addr, uint32_t pd_id,
		  uint32_t required_access) noexcept
{
	RemoteOp op{local, local_count, key, remote_addr, Status::ok};
	size_t ok = 0;
	transfer(false, &op, 1, pd_id, required_access, &ok);
	return op.status;
}

size_t Peer::write_batch(RemoteOp *ops, size_t count, uint32_t pd_id, uint32_t required_access) noexcept
{
	size_t ok = 0;
	transfer(true, ops, count, pd_id, required_access, &ok);
	return ok;
}

size_t Peer::write_ordered(RemoteOp *ops, size_t count, uint32_t pd_id, uint32_t required_access) noexcept
{
	size_t ok = 0;
	transfer(true, ops, count, pd_id, required_access, &ok, true);
	return ok;
}

size_t Peer::read_batch(RemoteOp *ops, size_t count, uint32_t pd_id, uint32_t required_access) noexcept
{
	size_t ok = 0;
	transfer(false, ops, count, pd_id, required_access, &ok);
	return ok;
}

Status Peer::atomic(uint32_t key, uint64_t remote_addr, bool cas, uint64_t compare, uint64_t value, uint32_t pd_id,
		    uint32_t required_access, uint64_t *original) noexcept
{
	if (gone())
		return Status::peer_gone;
	if (remote_addr % 8 != 0)
		return Status::remote_invalid_request;
	table_->enter();
	uint64_t addr = 0;
	Status status = table_->check(key, remote_addr, 8, required_access, pd_id, &addr);
	if (status == Status::ok && addr % 8 != 0)
		status = Status::remote_invalid_request;
	if (status != Status::ok) {
		table_->leave();
		return status;
	}
	status = table_->lock(addr);
	if (status != Status::ok) {
		table_->leave();
		if (status == Status::peer_gone)
			conn_->gone.store(true, std::memory_order_release);
		return status;
	}
	uint64_t old = 0;
	struct iovec l = {&old, sizeof(old)};
	struct iovec r = {reinterpret_cast<void *>(addr), sizeof(old)};
	const auto pid = static_cast<pid_t>(pid_);
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	int err = n < 0 ? errno : EFAULT;
	if (n == sizeof(old)) {
		uint64_t next = cas ? (old == compare ? value : old) : old + value;
		if (!cas || old == compare) {
			l.iov_base = &next;
			n = process_vm_writev(pid, &l, 1, &r, 1, 0);
			err = n < 0 ? errno : EFAULT;
		}
	}
	table_->unlock(addr);
	table_->leave();
	if (n != sizeof(old)) {
		struct iovec mine = {&old, sizeof(old)};
		return copy_failed(err, true, &mine, 1);
	}
	*original = old;
	return Status::ok;
}

Status Peer::compare_swap(uint32_t key, uint64_t remote_addr, uint64_t compare, uint64_t swap, uint32_t pd_id,
			  uint64_t *original, uint32_t required_access) noexcept
{
	return atomic(key, remote_addr, true, compare, swap, pd_id, required_access, original);
}

Status Peer::fetch_add(uint32_t key, uint64_t remote_addr, uint64_t add, uint32_t pd_id, uint64_t *original,
		       uint32_t required_access) noexcept
{
	return atomic(key, remote_addr, false, 0, add, pd_id, required_access, original);
}

// ---- Ticker ----

Status Ticker::start(std::function<void()> tick, std::unique_ptr<Ticker> *out) noexcept
{
	Agent *agent = Agent::get();
	if (agent == nullptr || !tick)
		return agent == nullptr ? Status::system_error : Status::invalid_argument;
	std::unique_ptr<Ticker> ticker(new (std::nothrow) Ticker());
	if (!ticker)
		return Status::no_resources;
	ticker->agent_ = agent;
	ticker->id_ = agent->add_tick(std::move(tick));
	if (ticker->id_ == 0)
		return Status::no_resources;
	*out = std::move(ticker);
	return Status::ok;
}

Ticker::~Ticker()
{
	if (id_ != 0)
		static_cast<Agent *>(agent_)->remove(id_);
}

} // namespace softdpu::device::rdma::transport
