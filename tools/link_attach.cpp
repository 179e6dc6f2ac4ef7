// softdpu link attach <end> --tap IFNAME [--netns NAME] | --memif SOCKET [--role client|server] [--id N]
//
// Which end: a function or representor name, or its network interface. An uplink's or external
// link's own name (p0, p1) is its outside end: we connect to the DPU PF's socket as the outside.
// Any other end is taken with its own role: a host function (pf0) connects, a representor (hpf0,
// pf0hpf) serves. Frames go both ways, one memif buffer each (16 KiB buffers: up to 9000 bytes and
// more); a frame that cannot be handed on (the other side down, a TAP queue full, a chained or
// oversized frame) is dropped and counted. Between two memif sides a full ring holds frames back
// rather than dropping them. One thread, one epoll: libmemif reports its fds through
// memif_control_fd_update_t, the TAP and a signalfd join them.
#include "link_attach.hpp"
#include "commands.hpp"
#include "link_state.hpp"

#include <libmemif.h>
#include <softdpu/link.h>

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h> // before linux/if_tun.h, which then leaves out linux/if.h
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace softdpu::cli {

namespace {

constexpr uint16_t kBurst = 64;
constexpr uint16_t kTapBurst = 32;          // frames read from the TAP per round
constexpr uint32_t kPeerBufferSize = 16384; // as the links': a 9000-byte frame in one buffer
constexpr uint8_t kPeerLog2RingSize = 10;
constexpr uint64_t kSignalTag = 1ull << 32; // epoll tags of our own fds; memif fds are tagged by number
constexpr uint64_t kTapTag = 2ull << 32;

int attach_error(const std::string &message)
{
	std::fprintf(stderr, "softdpu link attach: %s\n", message.c_str());
	print_sdk_messages("  ");
	return 1;
}

// Closes an fd when it goes out of scope.
struct Fd {
	int fd = -1;
	Fd() = default;
	explicit Fd(int value) : fd(value) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	~Fd()
	{
		if (fd >= 0)
			close(fd);
	}
};

// --- which end ------------------------------------------------------------------------------

struct AttachEnd {
	softdpu_link link{};
	bool is_master = false;
	std::string text; // "the client end (host pf0)"
};

bool names(const softdpu_link_end &end, const std::string &name)
{
	return end.owner[0] != '\0' && (name == end.owner || (end.iface[0] != '\0' && name == end.iface));
}

// The end `name` stands for, or an error message.
bool find_end(const std::string &name, AttachEnd &out, std::string &error)
{
	uint32_t count = 0;
	if (const doca_error_t status = softdpu_link_get_count(&count); status != DOCA_SUCCESS) {
		error = std::string("cannot list links (") + doca_error_get_name(status) + ")";
		return false;
	}
	for (uint32_t i = 0; i < count; ++i) {
		softdpu_link link{};
		if (const doca_error_t status = softdpu_link_get(i, &link); status != DOCA_SUCCESS) {
			error = std::string("cannot list links (") + doca_error_get_name(status) + ")";
			return false;
		}
		const bool outward = link.kind != SOFTDPU_LINK_KIND_REPRESENTOR;
		if (names(link.server, name)) {
			out.link = link;
			// The DPU PF of an uplink serves for the DPU program; attaching its name takes the outside.
			out.is_master = !outward;
			out.text = outward ? "the outside end (client)"
					   : std::string("the server end (") + link.server.side + " " +
						 link.server.owner + ")";
			return true;
		}
		if (names(link.client, name)) {
			out.link = link;
			out.is_master = false;
			out.text = std::string("the client end (") + link.client.side + " " + link.client.owner + ")";
			return true;
		}
	}
	error = "no link end named \"" + name + "\" (softdpu link list shows the links)";
	return false;
}

// --- TAP in a network namespace ---------------------------------------------------------------

// Creates TAP `name` (up, non-blocking) in network namespace `netns` (the caller's when empty).
// Only the TAP lives there: the caller's thread returns to its own namespace, so the memif sockets
// stay where "softdpu link list" sees them.
int open_tap(const std::string &name, const std::string &netns, std::string &error)
{
	Fd home;
	Fd target;
	const std::string where = netns.empty() ? "" : " in network namespace " + netns;
	if (!netns.empty()) {
		const std::string path = "/var/run/netns/" + netns;
		target.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
		if (target.fd < 0) {
			error = errno == ENOENT ? "network namespace " + netns + " does not exist (no " + path +
						      "; create it with: ip netns add " + netns + ")"
						: "cannot open " + path + ": " + std::strerror(errno);
			return -1;
		}
		home.fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (home.fd < 0) {
			error = std::string("cannot open /proc/self/ns/net: ") + std::strerror(errno);
			return -1;
		}
		if (setns(target.fd, CLONE_NEWNET) != 0) {
			error = "cannot enter network namespace " + netns + ": " + std::strerror(errno) +
				(errno == EPERM ? " (needs CAP_SYS_ADMIN: run as root)" : "");
			return -1;
		}
	}
	int tap = -1;
	do {
		if (if_nametoindex(name.c_str()) != 0) {
			error = "a network interface named " + name + " already exists" + where;
			break;
		}
		tap = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (tap < 0) {
			error = std::string("cannot open /dev/net/tun: ") + std::strerror(errno) +
				(errno == ENOENT ? " (no TUN/TAP support: load the tun module, or give the container "
						   "/dev/net/tun)"
						 : "");
			break;
		}
		ifreq request{};
		request.ifr_flags = IFF_TAP | IFF_NO_PI;
		std::memcpy(request.ifr_name, name.c_str(), name.size());
		if (ioctl(tap, TUNSETIFF, &request) != 0) {
			error = "cannot create TAP interface " + name + where + ": " + std::strerror(errno) +
				(errno == EPERM ? " (needs CAP_NET_ADMIN: run as root)" : "");
			close(tap);
			tap = -1;
			break;
		}
		Fd control(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		ifreq flags{};
		std::memcpy(flags.ifr_name, name.c_str(), name.size());
		if (control.fd < 0 || ioctl(control.fd, SIOCGIFFLAGS, &flags) != 0 ||
		    (flags.ifr_flags |= IFF_UP, ioctl(control.fd, SIOCSIFFLAGS, &flags) != 0)) {
			error = "cannot bring TAP interface " + name + " up: " + std::strerror(errno);
			close(tap);
			tap = -1;
			break;
		}
	} while (false);
	if (home.fd >= 0 && setns(home.fd, CLONE_NEWNET) != 0) {
		error = std::string("cannot return to the original network namespace: ") + std::strerror(errno);
		if (tap >= 0)
			close(tap);
		return -1;
	}
	return tap;
}

// --- the forwarder ------------------------------------------------------------------------------

void add(uint64_t &field, uint64_t n)
{
	std::atomic_ref<uint64_t> value(field);
	value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// One memif interface and the frames received on it that are not handed on yet.
struct MemifPort {
	const char *label = "";
	memif_socket_handle_t socket = nullptr;
	memif_conn_handle_t conn = nullptr;
	bool connected = false;
	uint32_t buffer_size = 0; // the connection's (the client chooses)
	std::array<memif_buffer_t, kBurst> rx{};
	uint16_t rx_count = 0; // rx[rx_next, rx_count): received, not refilled yet
	uint16_t rx_next = 0;
	bool in_chain = false; // inside a chained frame (being dropped)
	bool polling = false;  // its receive queue in polling mode (the loop is busy)
	// Buffers allocated for sending and not sent yet (the TAP's frames are read straight into them).
	std::array<memif_buffer_t, kTapBurst> tx_spare{};
	uint16_t tx_spare_count = 0;
};

int g_epoll = -1; // libmemif's fd callback has no context of ours (global database)

int on_fd_update(int fd, uint8_t events, void *)
{
	if ((events & MEMIF_FD_EVENT_DEL) != 0)
		return epoll_ctl(g_epoll, EPOLL_CTL_DEL, fd, nullptr) == 0 || errno == ENOENT ? 0 : -1;
	epoll_event event{};
	event.events = ((events & MEMIF_FD_EVENT_READ) != 0 ? EPOLLIN : 0u) |
		       ((events & MEMIF_FD_EVENT_WRITE) != 0 ? EPOLLOUT : 0u);
	event.data.u64 = uint64_t(uint32_t(fd));
	if ((events & MEMIF_FD_EVENT_MOD) != 0)
		return epoll_ctl(g_epoll, EPOLL_CTL_MOD, fd, &event);
	if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, fd, &event) == 0)
		return 0;
	return errno == EEXIST ? epoll_ctl(g_epoll, EPOLL_CTL_MOD, fd, &event) : -1;
}

int on_connect(memif_conn_handle_t conn, void *context)
{
	auto *port = static_cast<MemifPort *>(context);
	memif_refill_queue(conn, 0, UINT16_MAX, 0); // a client posts its receive buffers
	memif_set_rx_mode(conn, MEMIF_RX_MODE_INTERRUPT, 0);
	port->polling = false;
	memif_details_t details{};
	std::vector<char> text(4096);
	port->buffer_size = kPeerBufferSize;
	if (memif_get_details(conn, &details, text.data(), ssize_t(text.size())) == MEMIF_ERR_SUCCESS &&
	    details.tx_queues_num > 0)
		port->buffer_size = details.tx_queues[0].buffer_size;
	port->connected = true;
	port->rx_count = port->rx_next = 0;
	port->tx_spare_count = 0;
	port->in_chain = false;
	std::printf("softdpu link attach: %s connected\n", port->label);
	std::fflush(stdout);
	return 0;
}

int on_disconnect(memif_conn_handle_t, void *context)
{
	auto *port = static_cast<MemifPort *>(context);
	if (port->connected) {
		std::printf("softdpu link attach: %s disconnected\n", port->label);
		std::fflush(stdout);
	}
	port->connected = false;
	port->rx_count = port->rx_next = 0; // the buffers went with the shared memory
	port->tx_spare_count = 0;
	port->in_chain = false;
	return 0;
}

int on_interrupt(memif_conn_handle_t, void *, uint16_t)
{
	return 0; // the loop reads every queue after each wake-up; rx_burst consumes the signal
}

int create_memif(MemifPort &port, const std::string &path, bool is_master, uint32_t id, uint32_t buffer_size,
		 uint8_t log2_ring_size, const std::string &name, std::string &error)
{
	int err = memif_create_socket(&port.socket, path.c_str(), nullptr);
	if (err == MEMIF_ERR_SUCCESS) {
		memif_conn_args_t args{};
		args.socket = port.socket;
		args.num_s2m_rings = 1;
		args.num_m2s_rings = 1;
		args.buffer_size = uint16_t(buffer_size);
		args.log2_ring_size = log2_ring_size;
		args.is_master = is_master ? 1 : 0;
		args.interface_id = id;
		std::memcpy(args.interface_name, name.c_str(), std::min(name.size(), sizeof(args.interface_name) - 1));
		args.mode = MEMIF_INTERFACE_MODE_ETHERNET;
		err = memif_create(&port.conn, &args, on_connect, on_disconnect, on_interrupt, &port);
	}
	if (err != MEMIF_ERR_SUCCESS) {
		error =
		    std::string(is_master ? "cannot serve " : "cannot connect to ") + path + ": " + memif_strerror(err);
		return -1;
	}
	return 0;
}

class Forwarder {
public:
	Forwarder(softdpu_link_stats *stats) : stats_(stats) {}

	MemifPort link;
	MemifPort peer;     // with --memif
	int tap = -1;       // with --tap
	uint64_t moved = 0; // frames handed on or dropped so far: progress
	int tap_error = 0;  // errno of a failed read from the TAP

	// Moves what is waiting, both ways. True when more is waiting (call again soon).
	bool pump()
	{
		bool more = false;
		if (tap >= 0) {
			more |= link_to_tap();
			more |= tap_to_link();
		} else {
			more |= memif_to_memif(link, peer, true);
			more |= memif_to_memif(peer, link, false);
		}
		return more;
	}

	// While the loop is busy (it comes back within a millisecond), the memif receive queues are
	// polled: the peers stop signalling and a burst reads no eventfd. True when a queue went back
	// to interrupt mode: the caller then looks once more, for what came while it was polled.
	bool set_polling(bool on)
	{
		bool back = false;
		for (MemifPort *port : {&link, &peer}) {
			if (!port->connected || port->polling == on)
				continue;
			if (memif_set_rx_mode(port->conn, on ? MEMIF_RX_MODE_POLLING : MEMIF_RX_MODE_INTERRUPT, 0) !=
			    MEMIF_ERR_SUCCESS)
				continue;
			port->polling = on;
			back |= !on;
		}
		return back;
	}

private:
	softdpu_link_stats *stats_;
	// What does not go into a memif buffer: the rest of an oversized frame, a frame while the link
	// is down or its ring full (dropped). Allocated once, never zeroed again.
	std::vector<uint8_t> overflow_ = std::vector<uint8_t>(65536);

	// Receives a burst on `in` when everything before was handed on; counts frames from the link.
	void receive(MemifPort &in, bool from_link)
	{
		if (in.rx_next != in.rx_count)
			return;
		in.rx_count = in.rx_next = 0;
		uint16_t n = 0;
		const int err = memif_rx_burst(in.conn, 0, in.rx.data(), kBurst, &n);
		if (err != MEMIF_ERR_SUCCESS && err != MEMIF_ERR_NOBUF)
			return;
		in.rx_count = n;
		if (!from_link)
			return;
		uint64_t frames = 0, bytes = 0;
		for (uint16_t i = 0; i < n; ++i) {
			bytes += in.rx[i].len;
			frames += (in.rx[i].flags & MEMIF_BUFFER_FLAG_NEXT) == 0 ? 1 : 0;
		}
		add(stats_->rx.packets, frames);
		add(stats_->rx.bytes, bytes);
	}

	void drop(bool from_link, uint64_t n = 1) { add(from_link ? stats_->rx.drops : stats_->tx.drops, n); }

	// Drops the frame (or part of a chained one) at in.rx_next.
	void drop_next(MemifPort &in, bool from_link)
	{
		const bool next = (in.rx[in.rx_next].flags & MEMIF_BUFFER_FLAG_NEXT) != 0;
		if (!next) {
			drop(from_link); // counts the frame once, at its last buffer
			++moved;
		}
		in.in_chain = next;
		++in.rx_next;
		memif_refill_queue(in.conn, 0, 1, 0);
	}

	// While the other side is down, frames wait in in's ring (its sender finds the ring full): the
	// queue's signal is taken here, and the loop wakes again when the other side connects.
	static void quiet(MemifPort &in)
	{
		int efd = -1;
		if (memif_get_queue_efd(in.conn, 0, &efd) != MEMIF_ERR_SUCCESS || efd < 0)
			return;
		uint64_t signals = 0;
		const ssize_t taken = read(efd, &signals, sizeof(signals)); // -1 (EAGAIN): none was pending
		(void)taken;
	}

	bool memif_to_memif(MemifPort &in, MemifPort &out, bool from_link)
	{
		if (!in.connected)
			return false;
		if (!out.connected) {
			quiet(in);
			return false;
		}
		receive(in, from_link);
		while (in.rx_next < in.rx_count) {
			// A run of single-buffer frames that fit the other side's buffers.
			uint16_t run = 0;
			while (out.connected && !in.in_chain && in.rx_next + run < in.rx_count) {
				const memif_buffer_t &b = in.rx[in.rx_next + run];
				if ((b.flags & MEMIF_BUFFER_FLAG_NEXT) != 0 || b.len > out.buffer_size)
					break;
				++run;
			}
			if (run == 0) {
				drop_next(in, from_link);
				continue;
			}
			std::array<memif_buffer_t, kBurst> bufs{};
			uint16_t got = 0;
			memif_buffer_alloc(out.conn, 0, bufs.data(), run, &got, uint16_t(out.buffer_size));
			for (uint16_t i = 0; i < got; ++i) {
				const memif_buffer_t &b = in.rx[in.rx_next + i];
				std::memcpy(bufs[i].data, b.data, b.len);
				bufs[i].len = b.len;
			}
			uint16_t sent = 0;
			if (got > 0)
				memif_tx_burst(out.conn, 0, bufs.data(), got, &sent);
			moved += got;
			if (!from_link) {
				add(stats_->tx.packets, sent);
				add(stats_->tx.bytes, bytes_of(bufs.data(), sent));
			}
			if (sent < got)
				drop(from_link, got - sent);
			in.rx_next = uint16_t(in.rx_next + got);
			if (got > 0)
				memif_refill_queue(in.conn, 0, got, 0);
			if (got < run)
				return true; // the other ring is full: hold the rest back, try again soon
		}
		return in.rx_count == kBurst;
	}

	bool link_to_tap()
	{
		if (!link.connected)
			return false;
		receive(link, true);
		const uint16_t n = uint16_t(link.rx_count - link.rx_next);
		for (uint16_t i = link.rx_next; i < link.rx_count; ++i) {
			const memif_buffer_t &b = link.rx[i];
			const bool next = (b.flags & MEMIF_BUFFER_FLAG_NEXT) != 0;
			if (next || link.in_chain) {
				if (!next)
					drop(true);
				link.in_chain = next;
				continue;
			}
			if (write(tap, b.data, b.len) != ssize_t(b.len))
				drop(true); // the TAP's queue is full, or the interface is down
		}
		link.rx_next = link.rx_count;
		moved += n;
		if (n > 0)
			memif_refill_queue(link.conn, 0, n, 0);
		return link.rx_count == kBurst;
	}

	static uint64_t bytes_of(const memif_buffer_t *bufs, uint16_t n)
	{
		uint64_t bytes = 0;
		for (uint16_t i = 0; i < n; ++i)
			bytes += bufs[i].len;
		return bytes;
	}

	// Frames from the TAP go straight into the link's buffers: allocated first, then read into.
	bool tap_to_link()
	{
		MemifPort &out = link;
		uint16_t n = 0; // frames read into out.tx_spare[0, n)
		int reads = 0;
		for (; reads < kTapBurst; ++reads) {
			if (out.connected && n == out.tx_spare_count) {
				uint16_t got = 0;
				memif_buffer_alloc(out.conn, 0, out.tx_spare.data() + n, uint16_t(kTapBurst - n), &got,
						   uint16_t(out.buffer_size));
				out.tx_spare_count = uint16_t(n + got);
			}
			const bool room = out.connected && n < out.tx_spare_count;
			std::array<iovec, 2> parts{};
			int count = 0;
			if (room)
				parts[size_t(count++)] = {out.tx_spare[n].data, out.tx_spare[n].len};
			parts[size_t(count++)] = {overflow_.data(), overflow_.size()};
			const ssize_t len = readv(tap, parts.data(), count);
			if (len < 0 && errno != EAGAIN && errno != EINTR)
				tap_error = errno; // the interface went away (ip link del): the loop stops
			if (len <= 0)
				break; // EAGAIN: nothing more for now
			++moved;
			if (!room || size_t(len) > parts[0].iov_len) {
				drop(false); // the link is down or its ring full (a TAP drops as a NIC would), or too
					     // big
				continue;
			}
			out.tx_spare[n++].len = uint32_t(len);
		}
		if (n > 0) {
			uint16_t sent = 0;
			memif_tx_burst(out.conn, 0, out.tx_spare.data(), n, &sent);
			add(stats_->tx.packets, sent);
			add(stats_->tx.bytes, bytes_of(out.tx_spare.data(), sent));
			drop(false, n - sent);
			// What was not sent stays allocated: those buffers are the first ones used next time.
			std::copy(out.tx_spare.begin() + sent, out.tx_spare.begin() + out.tx_spare_count,
				  out.tx_spare.begin());
			out.tx_spare_count = uint16_t(out.tx_spare_count - sent);
		}
		return reads == kTapBurst;
	}
};

std::string counters_text(const softdpu_link_stats &stats)
{
	char text[256];
	std::snprintf(text, sizeof(text),
		      "rx %llu frames, %llu bytes, %llu dropped; tx %llu frames, %llu bytes, %llu dropped",
		      (unsigned long long)stats.rx.packets, (unsigned long long)stats.rx.bytes,
		      (unsigned long long)stats.rx.drops, (unsigned long long)stats.tx.packets,
		      (unsigned long long)stats.tx.bytes, (unsigned long long)stats.tx.drops);
	return text;
}

// The checks before anything is created: the end is free, the peer's socket path makes sense.
bool check_free(const AttachEnd &end, const AttachOptions &options, std::string &error)
{
	const auto table = unix_socket_table();
	const LinkState state = state_of(end.link.socket, table);
	const std::string link = std::string("link ") + end.link.name;
	if (state.state == "not-a-socket") {
		error = link + ": " + end.link.socket + " is not a socket";
		return false;
	}
	if (end.is_master && (state.state == "listening" || state.state == "connected")) {
		error = link + " is already served by another process (" + state.state + ")";
		return false;
	}
	if (!end.is_master && state.state == "connected") {
		error = link + " already has a client: another process is connected to " + end.link.socket;
		return false;
	}
	if (options.memif.empty())
		return true;
	const std::string &path = options.memif;
	if (path == end.link.socket) {
		error = "--memif " + path + " is the link's own socket";
		return false;
	}
	const size_t slash = path.rfind('/');
	const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
	struct stat st {};
	if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
		error = "--memif " + path + ": no directory " + dir;
		return false;
	}
	const LinkState peer = state_of(path, table);
	if (peer.state == "not-a-socket") {
		error = "--memif " + path + ": not a socket";
		return false;
	}
	if (options.memif_server && (peer.state == "listening" || peer.state == "connected")) {
		error = "--memif " + path + " is already served by another process";
		return false;
	}
	return true;
}

} // namespace

int link_attach(const AttachOptions &options)
{
	// SIGINT, SIGTERM and SIGHUP are blocked from the start (a signal before the loop runs waits for
	// it instead of killing us with the TAP and the counters file left behind), then read through a
	// signalfd, so that the loop ends between bursts.
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
	signal(SIGPIPE, SIG_IGN);

	AttachEnd end;
	std::string error;
	if (!find_end(options.end, end, error) || !check_free(end, options, error))
		return attach_error(error);

	// The TAP first: its errors (no namespace, no CAP_NET_ADMIN) leave nothing behind.
	Fd tap;
	if (!options.tap.empty()) {
		tap.fd = open_tap(options.tap, options.netns, error);
		if (tap.fd < 0)
			return attach_error(error);
	}

	softdpu_link_stats_file *stats_file = nullptr;
	softdpu_link_stats *stats = nullptr;
	if (const doca_error_t status =
		softdpu_link_stats_create(end.link.name, end.is_master ? 1 : 0, &stats_file, &stats);
	    status != DOCA_SUCCESS)
		return attach_error(status == DOCA_ERROR_IN_USE
					? std::string("link ") + end.link.name + ": " + end.text +
					      " is already attached by another process"
					: std::string("cannot create the counters of link ") + end.link.name + " (" +
					      doca_error_get_name(status) + ")");
	struct StatsGuard {
		softdpu_link_stats_file *file;
		~StatsGuard() { softdpu_link_stats_destroy(file); }
	} stats_guard{stats_file};

	Fd signals(signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC));
	Fd epoll(epoll_create1(EPOLL_CLOEXEC));
	if (signals.fd < 0 || epoll.fd < 0)
		return attach_error(std::string("cannot set up the event loop: ") + std::strerror(errno));
	g_epoll = epoll.fd;
	epoll_event event{};
	event.events = EPOLLIN;
	event.data.u64 = kSignalTag;
	epoll_ctl(epoll.fd, EPOLL_CTL_ADD, signals.fd, &event);
	if (tap.fd >= 0) {
		event.data.u64 = kTapTag;
		epoll_ctl(epoll.fd, EPOLL_CTL_ADD, tap.fd, &event);
	}

	char app_name[] = "softdpu-link-attach";
	if (const int err = memif_init(on_fd_update, app_name, nullptr, nullptr, nullptr); err != MEMIF_ERR_SUCCESS)
		return attach_error(std::string("memif_init: ") + memif_strerror(err));
	Forwarder forwarder(stats);
	forwarder.tap = tap.fd;
	const std::string link_label = std::string("link ") + end.link.name;
	const std::string peer_label = "memif " + options.memif;
	forwarder.link.label = link_label.c_str();
	forwarder.peer.label = peer_label.c_str();
	int status = 0;
	if (create_memif(forwarder.link, end.link.socket, end.is_master, end.link.interface_id, end.link.buffer_size,
			 end.link.log2_ring_size, "softdpu-attach-" + options.end, error) != 0 ||
	    (!options.memif.empty() &&
	     create_memif(forwarder.peer, options.memif, options.memif_server, options.memif_id, kPeerBufferSize,
			  kPeerLog2RingSize, std::string("softdpu-") + end.link.name, error) != 0)) {
		status = attach_error(error);
	} else {
		const std::string other =
		    options.tap.empty()
			? "memif " + options.memif + " (" + (options.memif_server ? "server" : "client") + ", id " +
			      std::to_string(options.memif_id) + ")"
			: "TAP " + options.tap +
			      (options.netns.empty() ? "" : " in network namespace " + options.netns);
		std::printf("softdpu link attach: link %s, %s, %s %s <-> %s; SIGINT, SIGTERM or SIGHUP stops\n",
			    end.link.name, end.text.c_str(), end.is_master ? "serving" : "connecting to",
			    end.link.socket, other.c_str());
		std::fflush(stdout);
		bool stop = false;
		bool more = false;
		std::array<epoll_event, 16> events{};
		while (!stop) {
			if (forwarder.set_polling(more) && !more)
				more = forwarder.pump(); // no signal announces what came while the queues were polled
			const int n = epoll_wait(epoll.fd, events.data(), int(events.size()), more ? 1 : 1000);
			if (n < 0 && errno != EINTR) {
				status = attach_error(std::string("epoll_wait: ") + std::strerror(errno));
				break;
			}
			// Frames first, as long as they move: what a peer wrote before it disconnected is
			// still forwarded before its disconnection is handled.
			for (int round = 0; round < 1024; ++round) {
				const uint64_t before = forwarder.moved;
				more = forwarder.pump();
				if (!more || forwarder.moved == before)
					break;
			}
			for (int i = 0; i < n; ++i) {
				const uint64_t tag = events[size_t(i)].data.u64;
				if (tag == kSignalTag) {
					stop = true;
				} else if (tag != kTapTag) {
					more = true; // a side may have connected: what waits for it goes now
					const uint32_t ev = events[size_t(i)].events;
					uint8_t flags = 0;
					flags |= (ev & EPOLLIN) != 0 ? MEMIF_FD_EVENT_READ : 0;
					flags |= (ev & EPOLLOUT) != 0 ? MEMIF_FD_EVENT_WRITE : 0;
					flags |= (ev & (EPOLLERR | EPOLLHUP)) != 0 ? MEMIF_FD_EVENT_ERROR : 0;
					memif_control_fd_handler(int(tag), flags);
				}
			}
			if (forwarder.tap_error != 0) {
				status = attach_error("TAP " + options.tap + ": " + std::strerror(forwarder.tap_error));
				break;
			}
		}
	}
	if (forwarder.peer.conn != nullptr)
		memif_delete(&forwarder.peer.conn);
	if (forwarder.link.conn != nullptr)
		memif_delete(&forwarder.link.conn);
	if (forwarder.peer.socket != nullptr)
		memif_delete_socket(&forwarder.peer.socket);
	if (forwarder.link.socket != nullptr)
		memif_delete_socket(&forwarder.link.socket);
	memif_cleanup();
	g_epoll = -1;
	if (status == 0)
		std::printf("softdpu link attach: stopped; link %s: %s\n", end.link.name,
			    counters_text(*stats).c_str());
	return status;
}

} // namespace softdpu::cli
