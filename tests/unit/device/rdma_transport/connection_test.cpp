// Bindings, peers and one-sided access between real processes (fork): what is passed at connect,
// qpn uniqueness, refusals (unbound qpn, another user, a lying peer), remote writes, reads and
// atomics with every status, batches, a peer killed with SIGKILL, ticks, and nothing left behind.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
#include "device/rdma/transport/wire.hpp"

namespace {

using namespace softdpu::device::rdma::transport;
using transport_test::Child;
using transport_test::recv_u64;
using transport_test::send_u64;

constexpr uint32_t kAllAccess = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic;
constexpr size_t kTargetBytes = 64 * 1024;
constexpr uint32_t kPd = 7;
constexpr uint64_t kReadOnlyIova = 0x10000000;

uint8_t pattern(size_t i)
{
	return static_cast<uint8_t>(i * 7 + 3);
}

// Commands of the target child.
enum Command : uint64_t { cmd_exit = 1, cmd_dump, cmd_remove, cmd_add };

// A process that binds on `fab`, registers a buffer three ways and serves commands: the target of
// the remote-access tests. Sends qpn, buffer address, key_all (everything, PD kPd), key_ro (remote
// read only, iova kReadOnlyIova), key_pd9 (remote write, first page, PD 9), counter key (atomics,
// 64 bytes after the buffer's first 4 KiB... see below).
int target_main(int channel, const std::string &fab)
{
	auto *buffer = static_cast<uint8_t *>(aligned_alloc(4096, kTargetBytes));
	for (size_t i = 0; i < kTargetBytes; ++i)
		buffer[i] = pattern(i);
	MemoryTable *table = MemoryTable::instance();
	std::unique_ptr<Binding> binding;
	const uint8_t info[] = {'t', 'g', 't'};
	if (table == nullptr || Binding::bind(fab, {}, info, nullptr, &binding) != Status::ok)
		return 10;
	const auto addr = reinterpret_cast<uint64_t>(buffer);
	uint32_t key_all = 0, key_ro = 0, key_pd9 = 0;
	if (table->add(addr, kTargetBytes, addr, kAllAccess, kPd, &key_all) != Status::ok ||
	    table->add(addr, kTargetBytes, kReadOnlyIova, kAccessRemoteRead, kPd, &key_ro) != Status::ok ||
	    table->add(addr, 4096, addr, kAccessRemoteWrite, 9, &key_pd9) != Status::ok)
		return 11;
	send_u64(channel, binding->qpn());
	send_u64(channel, addr);
	send_u64(channel, key_all);
	send_u64(channel, key_ro);
	send_u64(channel, key_pd9);
	for (;;) {
		const uint64_t cmd = recv_u64(channel);
		if (cmd == cmd_dump) {
			const uint64_t offset = recv_u64(channel);
			const uint64_t len = recv_u64(channel);
			if (offset > kTargetBytes || len > kTargetBytes - offset)
				return 12;
			transport_test::send_all(channel, buffer + offset, len);
		} else if (cmd == cmd_remove) {
			send_u64(channel,
				 static_cast<uint64_t>(table->remove(static_cast<uint32_t>(recv_u64(channel)))));
		} else if (cmd == cmd_add) {
			uint32_t key = 0;
			const Status status = table->add(addr, kTargetBytes, addr, kAllAccess, kPd, &key);
			send_u64(channel, status == Status::ok ? key : 0);
		} else {
			return 0; // cmd_exit, or the parent went away
		}
	}
}

struct Target {
	explicit Target(const std::string &fab) : child([fab](int channel) { return target_main(channel, fab); })
	{
		qpn = static_cast<uint32_t>(child.recv());
		addr = child.recv();
		key_all = static_cast<uint32_t>(child.recv());
		key_ro = static_cast<uint32_t>(child.recv());
		key_pd9 = static_cast<uint32_t>(child.recv());
	}
	std::vector<uint8_t> dump(uint64_t offset, uint64_t len) const
	{
		std::vector<uint8_t> bytes(len);
		child.send(cmd_dump);
		child.send(offset);
		child.send(len);
		if (!transport_test::recv_all(child.fd(), bytes.data(), len))
			bytes.clear();
		return bytes;
	}
	Child child;
	uint32_t qpn = 0;
	uint64_t addr = 0;
	uint32_t key_all = 0, key_ro = 0, key_pd9 = 0;
};

// Waits for a condition set from the agent thread.
struct Flag {
	std::mutex mutex;
	std::condition_variable cv;
	std::vector<uint32_t> pids;
	void set(uint32_t pid)
	{
		{
			std::lock_guard lock(mutex);
			pids.push_back(pid);
		}
		cv.notify_all();
	}
	bool wait(std::chrono::milliseconds timeout)
	{
		std::unique_lock lock(mutex);
		return cv.wait_for(lock, timeout, [&] { return !pids.empty(); });
	}
};

size_t open_fds()
{
	size_t count = 0;
	DIR *dir = opendir("/proc/self/fd");
	while (dir != nullptr && readdir(dir) != nullptr)
		++count;
	if (dir != nullptr)
		closedir(dir);
	return count;
}

// Names of this user and fabric still bound (listening) on the machine.
size_t bound_names(const std::string &fab)
{
	std::ifstream unix_sockets("/proc/net/unix");
	const std::string needle = "@softdpu-rdma/" + std::to_string(geteuid()) + "/" + fab + "/";
	std::string line;
	size_t count = 0;
	// Listening sockets only (flag __SO_ACCEPTCON): accepted ones show their listener's name too.
	while (std::getline(unix_sockets, line)) {
		std::istringstream fields(line);
		std::string num, refs, protocol, flags;
		fields >> num >> refs >> protocol >> flags;
		count += line.find(needle) != std::string::npos && flags == "00010000" ? 1 : 0;
	}
	return count;
}

TEST(RdmaTransportConnect, FdsAndInfoPassAcrossProcesses)
{
	const std::string fab = transport_test::fabric("pass");
	Child server([fab](int channel) {
		SharedRegion region;
		if (SharedRegion::create(10000, "test-rq", &region) != Status::ok)
			return 10;
		std::strcpy(static_cast<char *>(region.data()), "hello from the bound side");
		const int efd = eventfd(0, EFD_CLOEXEC);
		const int fds[] = {region.fd(), efd};
		const uint8_t info[] = {1, 2, 3, 4, 5};
		std::unique_ptr<Binding> binding;
		if (Binding::bind(fab, fds, info, nullptr, &binding) != Status::ok)
			return 11;
		send_u64(channel, binding->qpn());
		if (recv_u64(channel) != 1) // the parent connected, wrote and notified
			return 12;
		uint64_t count = 0;
		if (read(efd, &count, sizeof(count)) != sizeof(count) || count != 1)
			return 13;
		if (std::strcmp(static_cast<char *>(region.data()) + 100, "written by the connector") != 0)
			return 14;
		send_u64(channel, 0);
		recv_u64(channel);
		return 0;
	});
	const auto qpn = static_cast<uint32_t>(server.recv());
	ASSERT_GE(qpn, kMinQpn);
	ASSERT_LE(qpn, kMaxQpn);
	std::unique_ptr<Peer> peer;
	ASSERT_EQ(Peer::connect(fab, qpn, nullptr, &peer), Status::ok);
	EXPECT_EQ(peer->pid(), static_cast<uint32_t>(server.pid()));
	EXPECT_EQ(peer->qpn(), qpn);
	EXPECT_EQ(peer->info(), (std::vector<uint8_t>{1, 2, 3, 4, 5}));
	ASSERT_EQ(peer->fd_count(), 2u);
	EXPECT_EQ(peer->fd_kind(0), FdKind::memfd);
	EXPECT_EQ(peer->fd_kind(1), FdKind::eventfd);
	EXPECT_EQ(peer->fd_kind(2), FdKind::other);
	SharedRegion *region = peer->region(0);
	ASSERT_NE(region, nullptr);
	EXPECT_EQ(region->size(), round_to_pages(10000));
	EXPECT_STREQ(static_cast<char *>(region->data()), "hello from the bound side");
	std::strcpy(static_cast<char *>(region->data()) + 100, "written by the connector");
	EXPECT_EQ(peer->region(1), nullptr);
	EXPECT_EQ(peer->notify(0), Status::invalid_argument) << "a region is not an eventfd";
	EXPECT_EQ(peer->notify(7), Status::invalid_argument);
	EXPECT_EQ(peer->notify(1), Status::ok);
	server.send(1);
	EXPECT_EQ(server.recv(), 0u);
	server.send(0);
	EXPECT_EQ(server.wait_exit(), 0);
}

TEST(RdmaTransportConnect, UnboundQpnIsNotFound)
{
	const std::string fab = transport_test::fabric("unbound");
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(fab, {}, {}, nullptr, &binding), Status::ok);
	const uint32_t qpn = binding->qpn();
	EXPECT_EQ(bound_names(fab), 1u);
	binding.reset();
	EXPECT_EQ(bound_names(fab), 0u) << "unbinding frees the name";
	std::unique_ptr<Peer> peer;
	EXPECT_EQ(Peer::connect(fab, qpn, nullptr, &peer), Status::not_found);
	EXPECT_EQ(Peer::connect(fab + "-other", qpn, nullptr, &peer), Status::not_found);
	EXPECT_EQ(peer, nullptr);
	EXPECT_EQ(Peer::connect(fab, 0, nullptr, &peer), Status::invalid_argument);
	EXPECT_EQ(Peer::connect(fab, kMaxQpn + 1, nullptr, &peer), Status::invalid_argument);
	EXPECT_EQ(Peer::connect("", kMinQpn, nullptr, &peer), Status::invalid_argument);
	EXPECT_EQ(Peer::connect(std::string(kMaxFabricName + 1, 'x'), kMinQpn, nullptr, &peer),
		  Status::invalid_argument);
	EXPECT_EQ(Binding::bind("with space", {}, {}, nullptr, &binding), Status::invalid_argument);
	const int pipe_fds[2] = {0, 1};
	EXPECT_EQ(Binding::bind(fab, pipe_fds, {}, nullptr, &binding), Status::invalid_argument)
	    << "only shared regions and eventfds are passed";
	std::vector<uint8_t> big(kMaxInfoBytes + 1);
	EXPECT_EQ(Binding::bind(fab, {}, big, nullptr, &binding), Status::invalid_argument);
}

// Two processes binding at once (not a *Concurrent* suite: TSan cannot start threads in a forked
// child of a threaded process; RdmaTransportConcurrent below runs threads of one process).
TEST(RdmaTransportConnect, QpnsAreUniqueWhenTwoProcessesBindAtOnce)
{
	const std::string fab = transport_test::fabric("unique");
	constexpr uint64_t kEach = 300;
	const auto binder = [fab](int channel) {
		std::vector<std::unique_ptr<Binding>> bindings(kEach);
		for (auto &binding : bindings)
			if (Binding::bind(fab, {}, {}, nullptr, &binding) != Status::ok)
				return 10;
		for (const auto &binding : bindings)
			send_u64(channel, binding->qpn());
		recv_u64(channel); // hold them until the parent has all
		return 0;
	};
	Child a(binder);
	Child b(binder);
	std::set<uint64_t> qpns;
	for (const Child *child : {&a, &b})
		for (uint64_t i = 0; i < kEach; ++i) {
			const uint64_t qpn = child->recv();
			ASSERT_GE(qpn, kMinQpn);
			ASSERT_LE(qpn, kMaxQpn);
			qpns.insert(qpn);
		}
	EXPECT_EQ(qpns.size(), 2 * kEach) << "every qpn of the fabric is unique on the machine";
	EXPECT_EQ(bound_names(fab), 2 * kEach);
	a.send(0);
	b.send(0);
	EXPECT_EQ(a.wait_exit(), 0);
	EXPECT_EQ(b.wait_exit(), 0);
	EXPECT_EQ(bound_names(fab), 0u);
}

TEST(RdmaTransportConnect, AnotherUserIsRefusedBothWays)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to run a process as another user";
	const std::string fab = transport_test::fabric("uid");
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(fab, {}, {}, nullptr, &binding), Status::ok);
	struct sockaddr_un ours;
	socklen_t ours_len = 0;
	make_address(fab, binding->qpn(), &ours, &ours_len);
	const auto become_nobody = [] {
		return setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0;
	};

	// A process of another user reaching our name: the agent answers with a refusal, no fds.
	Child intruder([&](int) {
		if (!become_nobody())
			return 10;
		const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (connect(sock, reinterpret_cast<const struct sockaddr *>(&ours), ours_len) != 0)
			return 11;
		Reply reply = {};
		alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxSentFds)];
		struct iovec iov = {&reply, sizeof(reply)};
		struct msghdr msg = {};
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		struct pollfd p = {sock, POLLIN, 0};
		if (poll(&p, 1, 5000) != 1)
			return 12;
		const ssize_t n = recvmsg(sock, &msg, 0);
		if (n != static_cast<ssize_t>(sizeof(reply)) || reply.status != kReplyRefused)
			return 13;
		if (msg.msg_controllen != 0)
			return 14; // descriptors were sent
		// Its own name space (its uid) has no such queue pair.
		std::unique_ptr<Peer> peer;
		return Peer::connect(fab, binding->qpn(), nullptr, &peer) == Status::not_found ? 0 : 15;
	});
	EXPECT_EQ(intruder.wait_exit(), 0);

	// Another user squatting on a name of ours: the connector refuses it.
	struct sockaddr_un squat;
	socklen_t squat_len = 0;
	make_address(fab, kMinQpn + 1, &squat, &squat_len);
	Child squatter([&](int channel) {
		if (!become_nobody())
			return 10;
		const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (bind(sock, reinterpret_cast<const struct sockaddr *>(&squat), squat_len) != 0 ||
		    listen(sock, 4) != 0)
			return 11;
		send_u64(channel, 1);
		recv_u64(channel);
		return 0;
	});
	ASSERT_EQ(squatter.recv(), 1u);
	std::unique_ptr<Peer> peer;
	EXPECT_EQ(Peer::connect(fab, kMinQpn + 1, nullptr, &peer), Status::refused);
	squatter.send(0);
	EXPECT_EQ(squatter.wait_exit(), 0);
}

// ---- A lying peer: a listener in this process that answers with a forged message ----

struct Forged {
	Reply reply = {};
	std::vector<int> fds;
	size_t bytes = sizeof(Reply);
};

Status connect_to_forger(const std::string &fab, uint32_t qpn, const Forged &forged)
{
	const int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un addr;
	socklen_t len = 0;
	make_address(fab, qpn, &addr, &len);
	if (bind(listener, reinterpret_cast<struct sockaddr *>(&addr), len) != 0 || listen(listener, 4) != 0) {
		close(listener);
		return Status::system_error;
	}
	std::thread forger([&] {
		const int sock = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
		if (sock < 0)
			return;
		struct iovec iov = {const_cast<Reply *>(&forged.reply), forged.bytes};
		struct msghdr msg = {};
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * 32)];
		if (!forged.fds.empty()) {
			msg.msg_control = control;
			msg.msg_controllen = CMSG_SPACE(sizeof(int) * forged.fds.size());
			struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
			cmsg->cmsg_level = SOL_SOCKET;
			cmsg->cmsg_type = SCM_RIGHTS;
			cmsg->cmsg_len = CMSG_LEN(sizeof(int) * forged.fds.size());
			std::memcpy(CMSG_DATA(cmsg), forged.fds.data(), sizeof(int) * forged.fds.size());
		}
		sendmsg(sock, &msg, MSG_NOSIGNAL);
		char byte;
		struct pollfd p = {sock, POLLIN, 0};
		poll(&p, 1, 3000);
		(void)recv(sock, &byte, 1, MSG_DONTWAIT);
		close(sock);
	});
	std::unique_ptr<Peer> peer;
	const Status status = Peer::connect(fab, qpn, nullptr, &peer);
	peer.reset();
	// Unblock the forger if connect kept the socket (it should not).
	forger.join();
	close(listener);
	return status;
}

Forged honest_reply(uint32_t qpn, const SharedRegion &region, const MemoryTable &table)
{
	Forged f;
	f.reply.magic = kReplyMagic;
	f.reply.version = kReplyVersion;
	f.reply.status = kReplyOk;
	f.reply.qpn = qpn;
	f.reply.fd_count = 1;
	f.reply.fds[0] = FdDesc{static_cast<uint32_t>(FdKind::memfd), 0, region.size()};
	f.fds = {region.fd(), table.rules_fd(), table.shared_fd()};
	return f;
}

TEST(RdmaTransportConnect, LyingPeerIsRefused)
{
	const std::string fab = transport_test::fabric("liar");
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	SharedRegion region;
	ASSERT_EQ(SharedRegion::create(8192, "test-region", &region), Status::ok);
	SharedRegion fake_rules;
	ASSERT_EQ(SharedRegion::create(sizeof(TableRules), "fake", &fake_rules, F_SEAL_FUTURE_WRITE), Status::ok);
	const uint32_t qpn = 0x4242;

	// The honest message is accepted: the forger itself is right (and the agent runs from here).
	EXPECT_EQ(connect_to_forger(fab, qpn, honest_reply(qpn, region, *table)), Status::ok);
	const size_t fds_before = open_fds();

	int pipe_fds[2];
	ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
	Forged f = honest_reply(qpn, region, *table);
	f.fds[0] = pipe_fds[0];
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a pipe claimed as a memfd";

	const int unsealed = static_cast<int>(syscall(SYS_memfd_create, "unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	ASSERT_EQ(ftruncate(unsealed, 8192), 0);
	f = honest_reply(qpn, region, *table);
	f.fds[0] = unsealed;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "an unsealed memfd";

	f = honest_reply(qpn, region, *table);
	f.reply.fds[0].size = 4096;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a region smaller than its memfd";
	f.reply.fds[0].size = 1u << 20;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a region larger than its memfd";
	f.reply.fds[0].size = 8000;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "not a page multiple";

	const int efd = eventfd(0, EFD_CLOEXEC);
	f = honest_reply(qpn, region, *table);
	f.fds[0] = efd;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "an eventfd claimed as a memfd";
	f.reply.fds[0].kind = static_cast<uint32_t>(FdKind::eventfd);
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::ok) << "an eventfd as what it is";

	f = honest_reply(qpn, region, *table);
	f.fds.pop_back();
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a descriptor missing";
	f = honest_reply(qpn, region, *table);
	f.reply.fd_count = kMaxBoundFds + 1;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a count beyond the limit";
	f = honest_reply(qpn, region, *table);
	f.reply.info_len = kMaxInfoBytes + 1;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "info beyond the message";
	f = honest_reply(qpn, region, *table);
	f.bytes = 16;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a short message";
	f = honest_reply(qpn, region, *table);
	f.reply.magic = 0;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "no magic";
	f = honest_reply(qpn, region, *table);
	f.reply.qpn = qpn + 1;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "another qpn";
	f = honest_reply(qpn, region, *table);
	f.reply.status = kReplyRefused;
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a refusal";

	// The memory table: rules that others could write, files swapped, a table of another size.
	f = honest_reply(qpn, region, *table);
	f.fds[1] = table->shared_fd();
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "rules not sealed against writes";
	f = honest_reply(qpn, region, *table);
	f.fds[1] = fake_rules.fd();
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "rules without a header";
	f = honest_reply(qpn, region, *table);
	f.fds[2] = region.fd();
	EXPECT_EQ(connect_to_forger(fab, qpn, f), Status::refused) << "a shared file of the wrong size";

	close(pipe_fds[0]);
	close(pipe_fds[1]);
	close(unsealed);
	close(efd);
	EXPECT_EQ(connect_to_forger(fab, qpn, honest_reply(qpn, region, *table)), Status::ok);
	EXPECT_EQ(open_fds(), fds_before) << "every descriptor received from the liar was closed";
}

// ---- Remote memory ----

class RdmaTransportRemote : public ::testing::Test {
protected:
	void SetUp() override
	{
		fab_ = transport_test::fabric("remote");
		target_ = std::make_unique<Target>(fab_);
		ASSERT_NE(target_->qpn, 0u);
		ASSERT_EQ(Peer::connect(fab_, target_->qpn, nullptr, &peer_), Status::ok);
		EXPECT_EQ(peer_->info(), (std::vector<uint8_t>{'t', 'g', 't'}));
	}
	void TearDown() override
	{
		peer_.reset();
		if (target_) {
			target_->child.send(cmd_exit);
			EXPECT_EQ(target_->child.wait_exit(), 0);
		}
	}
	std::string fab_;
	std::unique_ptr<Target> target_;
	std::unique_ptr<Peer> peer_;
};

TEST_F(RdmaTransportRemote, WriteAndReadMoveTheRightBytes)
{
	Target &t = *target_;
	// A scatter list of three pieces into one remote range.
	std::string a = "first piece,", b = "second,", c = "third.";
	struct iovec local[] = {{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}};
	const std::string all = a + b + c;
	ASSERT_EQ(peer_->write(local, 3, t.key_all, t.addr + 1000, kPd), Status::ok);
	const auto bytes = t.dump(1000, all.size());
	EXPECT_EQ(std::string(bytes.begin(), bytes.end()), all);
	EXPECT_EQ(t.dump(999, 1)[0], pattern(999)) << "nothing before the range";
	EXPECT_EQ(t.dump(1000 + all.size(), 1)[0], pattern(1000 + all.size())) << "nothing after it";

	std::vector<uint8_t> back(all.size());
	struct iovec into = {back.data(), back.size()};
	ASSERT_EQ(peer_->read(&into, 1, t.key_all, t.addr + 1000, kPd), Status::ok);
	EXPECT_EQ(std::string(back.begin(), back.end()), all);

	// Through the iova of another registration of the same memory.
	std::vector<uint8_t> via(300);
	struct iovec via_iov = {via.data(), via.size()};
	ASSERT_EQ(peer_->read(&via_iov, 1, t.key_ro, kReadOnlyIova + 5000, kPd), Status::ok);
	for (size_t i = 0; i < via.size(); ++i)
		ASSERT_EQ(via[i], pattern(5000 + i)) << i;

	// The whole registration, to the last byte.
	std::vector<uint8_t> whole(kTargetBytes);
	struct iovec whole_iov = {whole.data(), whole.size()};
	ASSERT_EQ(peer_->read(&whole_iov, 1, t.key_ro, kReadOnlyIova, kPd), Status::ok);
	EXPECT_EQ(whole[kTargetBytes - 1], pattern(kTargetBytes - 1));

	// Zero bytes: the key, access and PD are still checked.
	EXPECT_EQ(peer_->write(nullptr, 0, t.key_all, t.addr, kPd), Status::ok);
	EXPECT_EQ(peer_->write(nullptr, 0, t.key_all ^ 0xff, t.addr, kPd), Status::remote_access_error);
}

TEST_F(RdmaTransportRemote, EveryRefusalHasItsStatus)
{
	Target &t = *target_;
	uint8_t data[64];
	std::memset(data, 0xee, sizeof(data));
	struct iovec local = {data, sizeof(data)};
	// Keys that were never handed out.
	EXPECT_EQ(peer_->write(&local, 1, 0, t.addr, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, 0xffffff01u, t.addr, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, (t.key_all & ~0xffu) | ((t.key_all + 1) & 0xff), t.addr, kPd),
		  Status::remote_access_error)
	    << "the right entry, another tag";
	// Out of range: past the end, before the start, wrapping.
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, t.addr + kTargetBytes - 32, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, t.addr - 1, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, ~0ull - 16, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->read(&local, 1, t.key_ro, kReadOnlyIova + kTargetBytes, kPd), Status::remote_access_error);
	// Access bits: key_ro grants remote read only.
	EXPECT_EQ(peer_->write(&local, 1, t.key_ro, kReadOnlyIova, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->read(&local, 1, t.key_pd9, t.addr, 9), Status::remote_access_error) << "write-only key";
	uint64_t old = 0;
	EXPECT_EQ(peer_->fetch_add(t.key_ro, kReadOnlyIova, 1, kPd, &old), Status::remote_access_error);
	// The protection domain.
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, t.addr, kPd + 1), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, t.key_pd9, t.addr, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->write(&local, 1, t.key_pd9, t.addr, 9), Status::ok);
	EXPECT_EQ(peer_->write(&local, 1, t.key_pd9, t.addr + 4096 - 64, 9), Status::ok);
	EXPECT_EQ(peer_->write(&local, 1, t.key_pd9, t.addr + 4096 - 63, 9), Status::remote_access_error);
	// Nothing was written by the refused ones.
	const auto tail = t.dump(kTargetBytes - 32, 32);
	for (size_t i = 0; i < tail.size(); ++i)
		EXPECT_EQ(tail[i], pattern(kTargetBytes - 32 + i));
	const auto head = t.dump(4096, 64);
	EXPECT_EQ(head[0], pattern(4096));

	// More pieces than one system call takes.
	std::vector<struct iovec> many(IOV_MAX + 1, local);
	EXPECT_EQ(peer_->write(many.data(), many.size(), t.key_all, t.addr, kPd), Status::no_resources);

	// Our own side: memory we do not have, or cannot write.
	void *gone = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(gone, MAP_FAILED);
	munmap(gone, 4096);
	struct iovec bad = {gone, 64};
	EXPECT_EQ(peer_->write(&bad, 1, t.key_all, t.addr, kPd), Status::local_fault);
	void *readonly = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(readonly, MAP_FAILED);
	struct iovec ro = {readonly, 64};
	EXPECT_EQ(peer_->read(&ro, 1, t.key_all, t.addr, kPd), Status::local_fault);
	EXPECT_EQ(peer_->write(&ro, 1, t.key_all, t.addr, kPd), Status::ok) << "reading it is fine";
	munmap(readonly, 4096);
}

TEST_F(RdmaTransportRemote, DeregisteredKeyStaysDeadWhenItsEntryComesBack)
{
	Target &t = *target_;
	uint8_t data[16] = {1, 2, 3};
	struct iovec local = {data, sizeof(data)};
	ASSERT_EQ(peer_->write(&local, 1, t.key_all, t.addr, kPd), Status::ok);
	t.child.send(cmd_remove);
	t.child.send(t.key_all);
	ASSERT_EQ(t.child.recv(), static_cast<uint64_t>(Status::ok));
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, t.addr, kPd), Status::remote_access_error);
	EXPECT_EQ(peer_->read(&local, 1, t.key_all, t.addr, kPd), Status::remote_access_error);
	t.child.send(cmd_add);
	const auto fresh = static_cast<uint32_t>(t.child.recv());
	ASSERT_NE(fresh, 0u);
	EXPECT_NE(fresh, t.key_all);
	EXPECT_EQ(peer_->write(&local, 1, fresh, t.addr, kPd), Status::ok);
	EXPECT_EQ(peer_->write(&local, 1, t.key_all, t.addr, kPd), Status::remote_access_error);
}

TEST_F(RdmaTransportRemote, BatchedSmallWrites)
{
	Target &t = *target_;
	constexpr size_t kOps = 1500; // more than IOV_MAX: two system calls
	constexpr size_t kSize = 32;
	std::vector<uint8_t> source(kOps * kSize);
	for (size_t i = 0; i < source.size(); ++i)
		source[i] = static_cast<uint8_t>(~pattern(i));
	std::vector<struct iovec> iovs(kOps);
	std::vector<RemoteOp> ops(kOps);
	for (size_t i = 0; i < kOps; ++i) {
		iovs[i] = {source.data() + i * kSize, kSize};
		ops[i] = RemoteOp{&iovs[i], 1, t.key_all, t.addr + i * kSize, Status::invalid_argument};
	}
	// Two bad keys and one range past the end, in the middle.
	ops[100].key = 0;
	ops[1100].key = t.key_ro;
	ops[700].remote_addr = t.addr + kTargetBytes;
	EXPECT_EQ(peer_->write_batch(ops.data(), ops.size(), kPd), kOps - 3);
	EXPECT_EQ(ops[100].status, Status::remote_access_error);
	EXPECT_EQ(ops[1100].status, Status::remote_access_error);
	EXPECT_EQ(ops[700].status, Status::remote_access_error);
	const auto bytes = t.dump(0, kOps * kSize);
	for (size_t i = 0; i < kOps; ++i) {
		const bool refused = i == 100 || i == 700 || i == 1100;
		if (!refused) {
			ASSERT_EQ(ops[i].status, Status::ok) << i;
		}
		for (size_t j = 0; j < kSize; ++j)
			ASSERT_EQ(bytes[i * kSize + j], refused ? pattern(i * kSize + j) : source[i * kSize + j])
			    << "op " << i << " byte " << j;
	}

	// A local fault in the middle of one system call fails that op only.
	void *gone = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	struct iovec bad = {gone, kSize};
	for (size_t i = 0; i < 10; ++i)
		ops[i] = RemoteOp{&iovs[i], 1, t.key_all, t.addr + 60000 + i * kSize, Status::invalid_argument};
	ops[4].local = &bad;
	EXPECT_EQ(peer_->write_batch(ops.data(), 10, kPd), 9u);
	EXPECT_EQ(ops[4].status, Status::local_fault);
	EXPECT_EQ(ops[5].status, Status::ok);
	const auto after = t.dump(60000 + 5 * kSize, kSize);
	EXPECT_EQ(after[0], source[5 * kSize]) << "the ops after the fault were written";

	// Batched reads.
	std::vector<uint8_t> back(kOps * kSize);
	for (size_t i = 0; i < 64; ++i) {
		iovs[i] = {back.data() + i * kSize, kSize};
		ops[i] = RemoteOp{&iovs[i], 1, t.key_all, t.addr + i * kSize, Status::invalid_argument};
	}
	EXPECT_EQ(peer_->read_batch(ops.data(), 64, kPd), 64u);
	EXPECT_TRUE(std::equal(back.begin(), back.begin() + 64 * kSize, source.begin()));
}

TEST_F(RdmaTransportRemote, AtomicsAreAtomicAcrossProcesses)
{
	Target &t = *target_;
	const uint64_t counter = t.addr + 8192;
	const uint64_t cas_word = t.addr + 8200;
	uint64_t old = 0;
	// Start from zero.
	uint64_t zero[2] = {0, 0};
	struct iovec z = {zero, sizeof(zero)};
	ASSERT_EQ(peer_->write(&z, 1, t.key_all, counter, kPd), Status::ok);
	EXPECT_EQ(peer_->fetch_add(t.key_all, counter + 4, 1, kPd, &old), Status::remote_invalid_request);
	EXPECT_EQ(peer_->compare_swap(t.key_all, counter + 1, 0, 1, kPd, &old), Status::remote_invalid_request);
	EXPECT_EQ(peer_->fetch_add(t.key_all, t.addr + kTargetBytes, 1, kPd, &old), Status::remote_access_error);
	EXPECT_EQ(peer_->compare_swap(t.key_all, cas_word, 5, 6, kPd, &old), Status::ok);
	EXPECT_EQ(old, 0u) << "no swap when the value differs";

	constexpr uint64_t kAdds = 20000;
	constexpr uint64_t kSwaps = 5000;
	const std::string fab = fab_;
	const uint32_t qpn = t.qpn;
	const uint32_t key = t.key_all;
	const auto hammer = [key, counter, cas_word](Peer &p) {
		uint64_t original = 0;
		for (uint64_t i = 0; i < kAdds; ++i)
			if (p.fetch_add(key, counter, 1, kPd, &original) != Status::ok)
				return false;
		for (uint64_t i = 0; i < kSwaps; ++i) {
			uint64_t expected = 0;
			for (;;) {
				if (p.compare_swap(key, cas_word, expected, expected + 1, kPd, &original) != Status::ok)
					return false;
				if (original == expected)
					break;
				expected = original;
			}
		}
		return true;
	};
	Child other([&](int) {
		std::unique_ptr<Peer> mine;
		if (Peer::connect(fab, qpn, nullptr, &mine) != Status::ok)
			return 10;
		return hammer(*mine) ? 0 : 11;
	});
	EXPECT_TRUE(hammer(*peer_));
	EXPECT_EQ(other.wait_exit(60000), 0);
	uint64_t values[2] = {};
	struct iovec v = {values, sizeof(values)};
	ASSERT_EQ(peer_->read(&v, 1, key, counter, kPd), Status::ok);
	EXPECT_EQ(values[0], 2 * kAdds);
	EXPECT_EQ(values[1], 2 * kSwaps);
	ASSERT_EQ(peer_->fetch_add(key, counter, 10, kPd, &old), Status::ok);
	EXPECT_EQ(old, 2 * kAdds);
}

// A connector killed with SIGKILL while holding an atomic's stripe lock does not wedge it.
TEST(RdmaTransportAtomics, LockOfADeadHolderIsBroken)
{
	const std::string fab = transport_test::fabric("lock");
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	alignas(8) static uint64_t word = 41;
	const auto addr = reinterpret_cast<uint64_t>(&word);
	uint32_t key = 0;
	ASSERT_EQ(table->add(addr, sizeof(word), addr, kAccessRemoteAtomic, 1, &key), Status::ok);
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(fab, {}, {}, nullptr, &binding), Status::ok);
	std::unique_ptr<Peer> self;
	ASSERT_EQ(Peer::connect(fab, binding->qpn(), nullptr, &self), Status::ok) << "a peer in the same process";
	EXPECT_EQ(self->pid(), static_cast<uint32_t>(getpid()));

	// A process that died holding the lock of this address.
	Child dead([](int) { return 0; });
	ASSERT_EQ(dead.wait_exit(), 0);
	SharedRegion state;
	ASSERT_EQ(SharedRegion::map_received(table->shared_fd(), sizeof(TableShared), &state), Status::ok);
	auto &stripe = static_cast<TableShared *>(state.data())->locks[(addr / 8) % kLockStripes];
	stripe.holder.store(static_cast<uint32_t>(dead.pid()));

	uint64_t old = 0;
	const auto start = std::chrono::steady_clock::now();
	ASSERT_EQ(self->fetch_add(key, addr, 1, 1, &old), Status::ok);
	EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
	EXPECT_EQ(old, 41u);
	EXPECT_EQ(word, 42u);
	EXPECT_EQ(stripe.holder.load(), 0u) << "released after the operation";

	// A live process that never lets go (stopped, or a peer writing the shared file): bounded.
	Child holder([](int channel) {
		transport_test::recv_u64(channel);
		return 0;
	});
	stripe.holder.store(static_cast<uint32_t>(holder.pid()));
	const auto held = std::chrono::steady_clock::now();
	EXPECT_EQ(self->fetch_add(key, addr, 1, 1, &old), Status::system_error);
	EXPECT_GE(std::chrono::steady_clock::now() - held, kLockWait);
	EXPECT_EQ(word, 42u) << "nothing done without the lock";
	stripe.holder.store(0);

	// Plain writes and reads into this process's own memory take the same path.
	std::vector<uint8_t> mine(256, 0);
	uint32_t mine_key = 0;
	ASSERT_EQ(table->add(reinterpret_cast<uint64_t>(mine.data()), mine.size(), 0x7000,
			     kAccessRemoteWrite | kAccessRemoteRead, 1, &mine_key),
		  Status::ok);
	const char text[] = "to myself";
	struct iovec from = {const_cast<char *>(text), sizeof(text)};
	ASSERT_EQ(self->write(&from, 1, mine_key, 0x7000 + 10, 1), Status::ok);
	EXPECT_STREQ(reinterpret_cast<const char *>(mine.data()) + 10, text);
	char back[sizeof(text)] = {};
	struct iovec into = {back, sizeof(back)};
	ASSERT_EQ(self->read(&into, 1, mine_key, 0x7000 + 10, 1), Status::ok);
	EXPECT_STREQ(back, text);
	EXPECT_EQ(self->write(&from, 1, mine_key, 0x7000 + 250, 1), Status::remote_access_error);
	EXPECT_EQ(table->remove(mine_key), Status::ok);
	EXPECT_EQ(self->write(&from, 1, mine_key, 0x7000 + 10, 1), Status::remote_access_error);
	self.reset();
	binding.reset();
	EXPECT_EQ(table->remove(key), Status::ok);
}

// A real accessor process writing as fast as it can while the owner deregisters: once remove()
// has returned, no write lands any more (the in-access protocol), and the writer sees the refusal.
TEST(RdmaTransportRemoveRace, NoWriteLandsAfterRemoveReturns)
{
	const std::string fab = transport_test::fabric("race");
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	std::vector<uint8_t> buffer(64 * 1024, 0);
	const auto addr = reinterpret_cast<uint64_t>(buffer.data());
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(fab, {}, {}, nullptr, &binding), Status::ok);
	for (int round = 0; round < 5; ++round) {
		std::fill(buffer.begin(), buffer.end(), 0);
		uint32_t key = 0;
		ASSERT_EQ(table->add(addr, buffer.size(), addr, kAccessRemoteWrite, 1, &key), Status::ok);
		const uint32_t qpn = binding->qpn();
		Child writer([fab, qpn, key, addr](int channel) {
			std::unique_ptr<Peer> peer;
			if (Peer::connect(fab, qpn, nullptr, &peer) != Status::ok)
				return 10;
			std::vector<uint8_t> ones(4096, 0xab);
			struct iovec local = {ones.data(), ones.size()};
			for (uint64_t i = 0;; ++i) {
				const Status status = peer->write(&local, 1, key, addr + (i % 16) * 4096, 1);
				if (status == Status::remote_access_error) {
					send_u64(channel, i);
					return 0;
				}
				if (status != Status::ok)
					return 11;
			}
		});
		// Wait until writes land, then deregister under fire.
		const auto start = std::chrono::steady_clock::now();
		while (std::count(buffer.begin(), buffer.end(), 0xab) == 0 &&
		       std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
			std::this_thread::sleep_for(std::chrono::microseconds(200));
		ASSERT_GT(std::count(buffer.begin(), buffer.end(), 0xab), 0) << "the writer writes";
		ASSERT_EQ(table->remove(key), Status::ok);
		std::fill(buffer.begin(), buffer.end(), 0);
		const uint64_t writes = writer.recv();
		EXPECT_GT(writes, 0u);
		EXPECT_EQ(writer.wait_exit(), 0);
		EXPECT_EQ(std::count(buffer.begin(), buffer.end(), 0xab), 0) << "a write landed after remove returned";
	}
}

// ---- Peers going away ----

TEST(RdmaTransportDeath, KilledTargetIsSeenAndLaterAccessesReportPeerGone)
{
	const std::string fab = transport_test::fabric("death");
	Target t(fab);
	Flag flag;
	std::unique_ptr<Peer> peer;
	ASSERT_EQ(Peer::connect(
		      fab, t.qpn, [&](uint32_t pid) { flag.set(pid); }, &peer),
		  Status::ok);
	uint8_t data[64] = {};
	struct iovec local = {data, sizeof(data)};
	ASSERT_EQ(peer->write(&local, 1, t.key_all, t.addr, kPd), Status::ok);
	EXPECT_FALSE(peer->gone());
	const auto pid = static_cast<uint32_t>(t.child.pid());
	t.child.kill9();
	ASSERT_TRUE(flag.wait(std::chrono::seconds(10))) << "the disconnect callback ran";
	EXPECT_EQ(flag.pids, std::vector<uint32_t>{pid});
	EXPECT_TRUE(peer->gone());
	EXPECT_EQ(peer->write(&local, 1, t.key_all, t.addr, kPd), Status::peer_gone);
	EXPECT_EQ(peer->read(&local, 1, t.key_all, t.addr, kPd), Status::peer_gone);
	uint64_t old = 0;
	EXPECT_EQ(peer->fetch_add(t.key_all, t.addr, 1, kPd, &old), Status::peer_gone);
	RemoteOp op{&local, 1, t.key_all, t.addr, Status::ok};
	EXPECT_EQ(peer->write_batch(&op, 1, kPd), 0u);
	EXPECT_EQ(op.status, Status::peer_gone);
	std::unique_ptr<Peer> again;
	EXPECT_EQ(Peer::connect(fab, t.qpn, nullptr, &again), Status::not_found) << "its qpn died with it";
	EXPECT_EQ(bound_names(fab), 0u);
	peer.reset();
}

TEST(RdmaTransportDeath, TargetKilledMidTransferEndsWithPeerGone)
{
	const std::string fab = transport_test::fabric("mid");
	Target t(fab);
	std::unique_ptr<Peer> peer;
	ASSERT_EQ(Peer::connect(fab, t.qpn, nullptr, &peer), Status::ok);
	std::vector<uint8_t> data(kTargetBytes, 0x5c);
	struct iovec local = {data.data(), data.size()};
	std::thread killer([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		kill(t.child.pid(), SIGKILL);
	});
	Status status = Status::ok;
	uint64_t writes = 0;
	const auto start = std::chrono::steady_clock::now();
	while (status == Status::ok && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
		status = peer->write(&local, 1, t.key_all, t.addr, kPd);
		++writes;
	}
	killer.join();
	EXPECT_EQ(status, Status::peer_gone) << "after " << writes << " writes";
	EXPECT_GT(writes, 1u);
	t.child.kill9();
}

TEST(RdmaTransportDeath, BindingSeesKilledConnector)
{
	const std::string fab = transport_test::fabric("death-bound");
	Flag flag;
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(
		      fab, {}, {}, [&](uint32_t pid) { flag.set(pid); }, &binding),
		  Status::ok);
	const uint32_t qpn = binding->qpn();
	Child connector([fab, qpn](int channel) {
		std::unique_ptr<Peer> peer;
		if (Peer::connect(fab, qpn, nullptr, &peer) != Status::ok)
			return 10;
		send_u64(channel, 1);
		pause();
		return 0;
	});
	ASSERT_EQ(connector.recv(), 1u);
	EXPECT_FALSE(flag.wait(std::chrono::milliseconds(50)));
	const auto pid = static_cast<uint32_t>(connector.pid());
	connector.kill9();
	ASSERT_TRUE(flag.wait(std::chrono::seconds(10)));
	EXPECT_EQ(flag.pids, std::vector<uint32_t>{pid});
	binding.reset();
}

TEST(RdmaTransportDeath, ClosingEitherSideDisconnectsTheOther)
{
	const std::string fab = transport_test::fabric("close");
	Flag bound_side;
	Flag peer_side;
	std::unique_ptr<Binding> binding;
	ASSERT_EQ(Binding::bind(
		      fab, {}, {}, [&](uint32_t pid) { bound_side.set(pid); }, &binding),
		  Status::ok);
	std::unique_ptr<Peer> peer;
	ASSERT_EQ(Peer::connect(
		      fab, binding->qpn(), [&](uint32_t pid) { peer_side.set(pid); }, &peer),
		  Status::ok);
	peer.reset();
	ASSERT_TRUE(bound_side.wait(std::chrono::seconds(10)));
	EXPECT_EQ(bound_side.pids, std::vector<uint32_t>{static_cast<uint32_t>(getpid())});
	ASSERT_EQ(Peer::connect(
		      fab, binding->qpn(), [&](uint32_t pid) { peer_side.set(pid); }, &peer),
		  Status::ok);
	binding.reset();
	ASSERT_TRUE(peer_side.wait(std::chrono::seconds(10)));
	EXPECT_TRUE(peer->gone());
	EXPECT_EQ(peer->notify(0), Status::invalid_argument);
	EXPECT_EQ(peer->write(nullptr, 0, 1, 0, 0), Status::peer_gone) << "a closed binding is a gone peer";
}

// The lead's objects may go in their own callbacks (a QP destroyed when its peer dies).
TEST(RdmaTransportDeath, ObjectsMayBeDestroyedInTheirOwnCallbacks)
{
	const std::string fab = transport_test::fabric("self-destroy");
	Flag done;
	std::unique_ptr<Binding> binding;
	std::unique_ptr<Peer> peer;
	std::mutex mutex;
	{
		std::lock_guard lock(mutex);
		ASSERT_EQ(Binding::bind(
			      fab, {}, {},
			      [&](uint32_t pid) {
				      std::lock_guard inner(mutex);
				      binding.reset();
				      done.set(pid);
			      },
			      &binding),
			  Status::ok);
		ASSERT_EQ(Peer::connect(fab, binding->qpn(), nullptr, &peer), Status::ok);
	}
	peer.reset();
	ASSERT_TRUE(done.wait(std::chrono::seconds(10)));
	{
		std::lock_guard lock(mutex);
		EXPECT_EQ(binding, nullptr);
	}
	EXPECT_EQ(bound_names(fab), 0u);

	Flag peer_done;
	std::unique_ptr<Binding> other;
	ASSERT_EQ(Binding::bind(fab, {}, {}, nullptr, &other), Status::ok);
	{
		std::lock_guard inner(mutex);
		ASSERT_EQ(Peer::connect(
			      fab, other->qpn(),
			      [&](uint32_t pid) {
				      std::lock_guard in_callback(mutex);
				      peer.reset();
				      peer_done.set(pid);
			      },
			      &peer),
			  Status::ok);
	}
	other.reset();
	ASSERT_TRUE(peer_done.wait(std::chrono::seconds(10)));
	std::lock_guard lock(mutex);
	EXPECT_EQ(peer, nullptr);
}

TEST(RdmaTransportDeath, NothingIsLeftBehind)
{
	const auto shm_entries = [] {
		std::set<std::string> names;
		DIR *dir = opendir("/dev/shm");
		for (struct dirent *e = dir != nullptr ? readdir(dir) : nullptr; e != nullptr; e = readdir(dir))
			names.insert(e->d_name);
		if (dir != nullptr)
			closedir(dir);
		return names;
	};
	const auto before = shm_entries();
	const std::string fab = transport_test::fabric("leftovers");
	{
		Target t(fab);
		std::unique_ptr<Peer> peer;
		ASSERT_EQ(Peer::connect(fab, t.qpn, nullptr, &peer), Status::ok);
		uint8_t data[8] = {};
		struct iovec local = {data, sizeof(data)};
		ASSERT_EQ(peer->write(&local, 1, t.key_all, t.addr, kPd), Status::ok);
		EXPECT_EQ(bound_names(fab), 1u);
		t.child.kill9();
	}
	EXPECT_EQ(shm_entries(), before);
	EXPECT_EQ(bound_names(fab), 0u);
}

// ---- Ticks ----

TEST(RdmaTransportTicker, TicksEveryMillisecondUntilDestroyed)
{
	std::atomic<unsigned> ticks{0};
	std::unique_ptr<Ticker> ticker;
	ASSERT_EQ(Ticker::start([&] { ticks.fetch_add(1); }, &ticker), Status::ok);
	const auto start = std::chrono::steady_clock::now();
	while (ticks.load() < 20 && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	EXPECT_GE(ticks.load(), 20u);
	ticker.reset();
	const unsigned stopped = ticks.load();
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	EXPECT_EQ(ticks.load(), stopped) << "no tick after the destructor returned";
	EXPECT_EQ(Ticker::start(nullptr, &ticker), Status::invalid_argument);
}

// Threads of one process binding, connecting to themselves, writing, adding atomically and
// closing at once, with a ticker starting and stopping: the agent under TSan.
TEST(RdmaTransportConcurrent, ThreadsBindConnectAccessAndClose)
{
	const std::string fab = transport_test::fabric("threads");
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	alignas(8) static uint64_t counter = 0;
	counter = 0;
	const auto addr = reinterpret_cast<uint64_t>(&counter);
	uint32_t key = 0;
	ASSERT_EQ(table->add(addr, sizeof(counter), addr, kAccessRemoteAtomic | kAccessRemoteRead, 2, &key),
		  Status::ok);
	constexpr int kThreads = 4;
	constexpr int kRounds = 20;
	constexpr uint64_t kAdds = 50;
	std::atomic<unsigned> disconnects{0};
	std::atomic<int> failures{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; ++t)
		threads.emplace_back([&, t] {
			for (int round = 0; round < kRounds; ++round) {
				std::unique_ptr<Binding> binding;
				std::unique_ptr<Peer> peer;
				std::unique_ptr<Ticker> ticker;
				if (Binding::bind(
					fab, {}, {}, [&](uint32_t) { disconnects.fetch_add(1); }, &binding) !=
					Status::ok ||
				    Peer::connect(fab, binding->qpn(), nullptr, &peer) != Status::ok ||
				    Ticker::start([] {}, &ticker) != Status::ok) {
					failures.fetch_add(1);
					return;
				}
				uint64_t old = 0;
				for (uint64_t i = 0; i < kAdds; ++i)
					if (peer->fetch_add(key, addr, 1, 2, &old) != Status::ok)
						failures.fetch_add(1);
				if ((t + round) % 2 == 0)
					peer.reset(); // the binding sees it go
				binding.reset();
			}
		});
	for (auto &thread : threads)
		thread.join();
	EXPECT_EQ(failures.load(), 0);
	EXPECT_EQ(counter, kThreads * kRounds * kAdds);
	EXPECT_EQ(bound_names(fab), 0u);
	EXPECT_EQ(table->remove(key), Status::ok);
}

} // namespace
