// The data path between two processes (a forked child with its own device context, on mlx5_1;
// this process on mlx5_0): one-sided operations and SENDs both ways with the data checked in each
// process, completion channels woken by the peer, the peer killed with SIGKILL (QP_FATAL on the
// async fd, failed and flushed requests, no hang), and nothing left behind (/dev/shm, the queue
// pairs' abstract socket names).
#include "verbs_test_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using transport_test::Child;
using verbs_test::Address;
using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_n;
using verbs_test::recv_value;
using verbs_test::send_value;

uint8_t pattern(int seed, size_t i)
{
	return static_cast<uint8_t>(seed * 31 + i * 13 + (i >> 8));
}

void fill(uint8_t *data, size_t length, int seed)
{
	for (size_t i = 0; i < length; ++i)
		data[i] = pattern(seed, i);
}

bool matches(const uint8_t *data, size_t length, int seed)
{
	for (size_t i = 0; i < length; ++i)
		if (data[i] != pattern(seed, i))
			return false;
	return true;
}

// Where the parent lets the child write.
struct Target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t reserved;
};

// The child's side of a connection: an endpoint on mlx5_1 connected to the parent's, whose
// address comes over the channel after the child's went out. Non-zero: where it failed.
int child_connect(Endpoint &endpoint, int channel, const Options &options = {})
{
	if (!endpoint.create("mlx5_1", options))
		return 2;
	if (!send_value(channel, endpoint.address()))
		return 3;
	Address parent;
	if (!recv_value(channel, &parent))
		return 4;
	if (endpoint.connect(parent) != 0)
		return 5;
	return 0;
}

// The parent's side: its endpoint on mlx5_0, connected to the child's (whose address *remote is).
::testing::AssertionResult parent_connect(Endpoint &endpoint, const Child &child, Address *remote,
					  const Options &options = {})
{
	if (child.pid() <= 0)
		return ::testing::AssertionFailure() << "fork failed";
	if (auto made = endpoint.create("mlx5_0", options); !made)
		return made;
	if (!recv_value(child.fd(), remote))
		return ::testing::AssertionFailure() << "no address from the child";
	if (!send_value(child.fd(), endpoint.address()))
		return ::testing::AssertionFailure() << "cannot send the address";
	if (int error = endpoint.connect(*remote))
		return ::testing::AssertionFailure() << "connecting: " << std::strerror(error);
	return ::testing::AssertionSuccess();
}

// Whether `fd` becomes readable within timeout_ms, through epoll.
bool readable(int fd, int timeout_ms)
{
	const int epoll = epoll_create1(EPOLL_CLOEXEC);
	epoll_event event{};
	event.events = EPOLLIN;
	event.data.fd = fd;
	epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
	epoll_event out{};
	const int n = epoll_wait(epoll, &out, 1, timeout_ms);
	close(epoll);
	return n == 1;
}

TEST(VerbsXproc, OneSidedAndTwoSidedBothWays)
{
	Child child([](int channel) {
		Endpoint endpoint;
		if (int failed = child_connect(endpoint, channel))
			return failed;
		fill(endpoint.buf(), 1024, 1);                            // the parent READs it
		*reinterpret_cast<uint64_t *>(endpoint.buf() + 7000) = 5; // the parent adds 7
		if (endpoint.post_recv({endpoint.sge(4096, 200), endpoint.sge(4400, 200)}, 9) != 0)
			return 6;
		transport_test::send_u64(channel, 1); // ready
		Target target{};
		if (!recv_value(channel, &target))
			return 7;
		const auto received = poll_n(endpoint.recv_cq, 1);
		if (received.size() != 1 || received[0].status != IBV_WC_SUCCESS || received[0].wr_id != 9 ||
		    received[0].byte_len != 300 || received[0].opcode != IBV_WC_RECV)
			return 8;
		// The SEND scattered over two elements; the WRITE and the atomic landed.
		uint8_t message[300];
		std::memcpy(message, endpoint.buf() + 4096, 200);
		std::memcpy(message + 200, endpoint.buf() + 4400, 100);
		if (!matches(message, 300, 3))
			return 9;
		if (!matches(endpoint.buf() + 2000, 1000, 2))
			return 10;
		if (*reinterpret_cast<uint64_t *>(endpoint.buf() + 7000) != 12)
			return 11;
		// Now the child writes with immediate into the parent, which posted a receive.
		fill(endpoint.buf() + 5000, 256, 4);
		if (endpoint.post(IBV_WR_RDMA_WRITE_WITH_IMM, {endpoint.sge(5000, 256)}, target.addr, target.rkey,
				  IBV_SEND_SIGNALED, 1, 0x600d) != 0)
			return 12;
		const auto sent = poll_n(endpoint.send_cq, 1);
		if (sent.size() != 1 || sent[0].status != IBV_WC_SUCCESS)
			return 13;
		transport_test::send_u64(channel, 3);
		return transport_test::recv_u64(channel) == 4 ? 0 : 14;
	});
	Endpoint endpoint;
	Address remote;
	ASSERT_TRUE(parent_connect(endpoint, child, &remote));
	ASSERT_EQ(child.recv(), 1u);

	ASSERT_EQ(
	    endpoint.post(IBV_WR_RDMA_READ, {endpoint.sge(0, 1024)}, remote.addr, remote.rkey, IBV_SEND_SIGNALED, 1),
	    0);
	fill(endpoint.buf() + 2000, 1000, 2);
	ASSERT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(2000, 1000)}, remote.addr + 2000, remote.rkey,
				IBV_SEND_SIGNALED, 2),
		  0);
	ASSERT_EQ(endpoint.post(IBV_WR_ATOMIC_FETCH_AND_ADD, {endpoint.sge(3000, 8)}, remote.addr + 7000, remote.rkey,
				IBV_SEND_SIGNALED, 3, 0, 7),
		  0);
	fill(endpoint.buf() + 4000, 300, 3);
	ASSERT_EQ(endpoint.post(IBV_WR_SEND, {endpoint.sge(4000, 300)}, 0, 0, IBV_SEND_SIGNALED, 4), 0);
	const auto done = poll_n(endpoint.send_cq, 4);
	ASSERT_EQ(done.size(), 4u);
	for (size_t i = 0; i < 4; ++i) {
		EXPECT_EQ(done[i].wr_id, i + 1);
		EXPECT_EQ(done[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(done[i].status);
	}
	EXPECT_TRUE(matches(endpoint.buf(), 1024, 1)) << "the READ brought the child's memory";
	EXPECT_EQ(*reinterpret_cast<uint64_t *>(endpoint.buf() + 3000), 5u);

	// The child's WRITE_WITH_IMM: its target and a receive for the notification.
	ASSERT_EQ(endpoint.post_recv({endpoint.sge(7000, 8)}, 77), 0);
	ASSERT_TRUE(send_value(child.fd(), Target{endpoint.addr(6000), endpoint.mr->rkey, 0}));
	ASSERT_EQ(child.recv(), 3u);
	const auto received = poll_n(endpoint.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 77u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(be32toh(received[0].imm_data), 0x600du);
	EXPECT_EQ(received[0].byte_len, 256u);
	EXPECT_TRUE(matches(endpoint.buf() + 6000, 256, 4));
	ASSERT_TRUE(child.send(4));
	EXPECT_EQ(child.wait_exit(), 0);
}

TEST(VerbsXproc, RemoteKeysAreCheckedInTheTargetProcess)
{
	// Each key on a fresh pair of queue pairs (an access error fails the queue pair).
	for (int which = 0; which < 2; ++which) {
		SCOPED_TRACE(which == 0 ? "a registration without remote write" : "a deregistered key");
		Child child([](int channel) {
			Endpoint endpoint;
			if (int failed = child_connect(endpoint, channel))
				return failed;
			// A registration that allows remote reads only, and one that is gone.
			ibv_mr *read_only =
			    verbs_test::reg_mr(endpoint.pd, endpoint.buf() + 4096, 4096, IBV_ACCESS_REMOTE_READ);
			ibv_mr *gone = verbs_test::reg_mr(endpoint.pd, endpoint.buf(), 4096,
							  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
			if (read_only == nullptr || gone == nullptr)
				return 6;
			const Target targets[2] = {
			    {reinterpret_cast<uint64_t>(endpoint.buf() + 4096), read_only->rkey, 0},
			    {reinterpret_cast<uint64_t>(endpoint.buf()), gone->rkey, 0}};
			ibv_dereg_mr(gone);
			if (!send_value(channel, targets))
				return 7;
			const uint64_t done = transport_test::recv_u64(channel);
			ibv_dereg_mr(read_only);
			// Nothing was written.
			for (size_t i = 0; i < 8192; ++i)
				if (endpoint.buf()[i] != 0)
					return 8;
			return done == 1 ? 0 : 9;
		});
		Endpoint endpoint;
		Address remote;
		ASSERT_TRUE(parent_connect(endpoint, child, &remote));
		Target targets[2];
		ASSERT_TRUE(recv_value(child.fd(), &targets));
		std::memset(endpoint.buf(), 0x77, 64);
		ASSERT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 64)}, targets[which].addr,
					targets[which].rkey, IBV_SEND_SIGNALED, 1),
			  0);
		const auto done = poll_n(endpoint.send_cq, 1);
		ASSERT_EQ(done.size(), 1u);
		EXPECT_EQ(done[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(done[0].status);
		EXPECT_EQ(endpoint.state(), IBV_QPS_ERR);
		ASSERT_TRUE(child.send(1));
		EXPECT_EQ(child.wait_exit(), 0);
	}
}

TEST(VerbsXproc, ChannelWakesOnThePeersSend)
{
	Child child([](int channel) {
		Endpoint endpoint;
		if (int failed = child_connect(endpoint, channel))
			return failed;
		for (uint64_t step = 1;; ++step) {
			const uint64_t what = transport_test::recv_u64(channel);
			if (what == 0)
				return 0;
			if (what == ~0ull)
				return 6;
			const unsigned int flags =
			    what == 2 ? IBV_SEND_SIGNALED | IBV_SEND_SOLICITED : IBV_SEND_SIGNALED;
			if (endpoint.post(IBV_WR_SEND, {endpoint.sge(0, 32)}, 0, 0, flags, step) != 0)
				return 7;
			const auto sent = poll_n(endpoint.send_cq, 1);
			if (sent.size() != 1 || sent[0].status != IBV_WC_SUCCESS)
				return 8;
			transport_test::send_u64(channel, step);
		}
	});
	Options options;
	options.channel = true;
	Endpoint endpoint;
	Address remote;
	ASSERT_TRUE(parent_connect(endpoint, child, &remote, options));
	const int fd = endpoint.channel->fd;
	for (uint64_t i = 0; i < 3; ++i)
		ASSERT_EQ(endpoint.post_recv({endpoint.sge(i * 64, 64)}, i), 0);

	// Armed for any completion: the child's SEND wakes the channel.
	ASSERT_EQ(ibv_req_notify_cq(endpoint.recv_cq, 0), 0);
	EXPECT_FALSE(readable(fd, 0));
	ASSERT_TRUE(child.send(1));
	ASSERT_TRUE(readable(fd, verbs_test::kTimeoutMs));
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	ASSERT_EQ(ibv_get_cq_event(endpoint.channel, &cq, &context), 0);
	EXPECT_EQ(cq, endpoint.recv_cq);
	EXPECT_FALSE(readable(fd, 0));
	ibv_ack_cq_events(cq, 1);
	EXPECT_EQ(child.recv(), 1u);
	auto received = poll_n(endpoint.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 0u);

	// Solicited only: the child's unsolicited SEND completes without an event, its solicited one
	// wakes the channel.
	ASSERT_EQ(ibv_req_notify_cq(endpoint.recv_cq, 1), 0);
	ASSERT_TRUE(child.send(1));
	EXPECT_EQ(child.recv(), 2u);
	received = poll_n(endpoint.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 1u);
	EXPECT_FALSE(readable(fd, 50));
	ASSERT_TRUE(child.send(2));
	ASSERT_TRUE(readable(fd, verbs_test::kTimeoutMs));
	ASSERT_EQ(ibv_get_cq_event(endpoint.channel, &cq, &context), 0);
	ibv_ack_cq_events(cq, 1);
	EXPECT_EQ(child.recv(), 3u);
	received = poll_n(endpoint.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 2u);
	ASSERT_TRUE(child.send(0));
	EXPECT_EQ(child.wait_exit(), 0);
}

TEST(VerbsXproc, UdSendToAnotherProcess)
{
	constexpr uint32_t kQkey = 0x5eed;
	Child child([](int channel) {
		Options options;
		options.type = IBV_QPT_UD;
		options.qkey = kQkey;
		Endpoint endpoint;
		if (!endpoint.create("mlx5_1", options) || endpoint.connect() != 0)
			return 2;
		if (endpoint.post_recv({endpoint.sge(0, 40 + 128)}, 5) != 0)
			return 3;
		if (!send_value(channel, endpoint.address()))
			return 4;
		Address parent;
		if (!recv_value(channel, &parent))
			return 5;
		const auto received = poll_n(endpoint.recv_cq, 1);
		if (received.size() != 1 || received[0].status != IBV_WC_SUCCESS || received[0].wr_id != 5 ||
		    received[0].byte_len != 40 + 128 || (received[0].wc_flags & IBV_WC_GRH) == 0 ||
		    received[0].src_qp != parent.qpn)
			return 6;
		const auto *grh = reinterpret_cast<const ibv_grh *>(endpoint.buf());
		if (std::memcmp(grh->sgid.raw, parent.gid.raw, 16) != 0 || !matches(endpoint.buf() + 40, 128, 7))
			return 7;
		return 0;
	});
	ASSERT_GT(child.pid(), 0);
	Options options;
	options.type = IBV_QPT_UD;
	options.qkey = kQkey;
	Endpoint endpoint;
	ASSERT_TRUE(endpoint.create("mlx5_0", options));
	ASSERT_EQ(endpoint.connect(), 0);
	Address remote;
	ASSERT_TRUE(recv_value(child.fd(), &remote));
	ASSERT_TRUE(send_value(child.fd(), endpoint.address()));
	ibv_ah_attr ah_attr{};
	ah_attr.is_global = 1;
	ah_attr.port_num = 1;
	ah_attr.grh.dgid = remote.gid;
	ah_attr.grh.sgid_index = 1;
	ibv_ah *ah = ibv_create_ah(endpoint.pd, &ah_attr);
	ASSERT_NE(ah, nullptr);
	fill(endpoint.buf(), 128, 7);
	ibv_sge sge = endpoint.sge(0, 128);
	ibv_send_wr wr{};
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud = {ah, remote.qpn, kQkey};
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(endpoint.qp, &wr, &bad), 0);
	const auto sent = poll_n(endpoint.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(child.wait_exit(), 0);
	EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

// The child connects, posts nothing more and waits to be killed.
int connect_and_wait(int channel)
{
	Endpoint endpoint;
	if (int failed = child_connect(endpoint, channel))
		return failed;
	transport_test::send_u64(channel, 1);
	uint64_t never = 0;
	(void)recv_value(channel, &never, 60000);
	return 0;
}

TEST(VerbsXproc, PeerKilledGivesQpFatalAndFailsTheQueuePair)
{
	Child child(connect_and_wait);
	Endpoint endpoint;
	Address remote;
	ASSERT_TRUE(parent_connect(endpoint, child, &remote));
	ASSERT_EQ(child.recv(), 1u);
	ASSERT_EQ(endpoint.post_recv({endpoint.sge(0, 64)}, 50), 0);
	// It works while the child lives.
	ASSERT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 8)}, remote.addr, remote.rkey), 0);
	ASSERT_EQ(poll_n(endpoint.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_FALSE(readable(endpoint.ctx->async_fd, 0)) << "no async event yet";

	child.kill9();
	ASSERT_TRUE(readable(endpoint.ctx->async_fd, verbs_test::kTimeoutMs)) << "no async event";
	ibv_async_event event{};
	ASSERT_EQ(ibv_get_async_event(endpoint.ctx, &event), 0);
	EXPECT_EQ(event.event_type, IBV_EVENT_QP_FATAL) << ibv_event_type_str(event.event_type);
	EXPECT_EQ(event.element.qp, endpoint.qp);
	ibv_ack_async_event(&event);

	// Whatever is posted now fails, the receive is flushed, the queue pair is in ERR.
	ASSERT_EQ(
	    endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 8)}, remote.addr, remote.rkey, IBV_SEND_SIGNALED, 7), 0);
	const auto done = poll_n(endpoint.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].wr_id, 7u);
	EXPECT_TRUE(done[0].status == IBV_WC_RETRY_EXC_ERR || done[0].status == IBV_WC_WR_FLUSH_ERR)
	    << ibv_wc_status_str(done[0].status);
	const auto flushed = poll_n(endpoint.recv_cq, 1);
	ASSERT_EQ(flushed.size(), 1u);
	EXPECT_EQ(flushed[0].wr_id, 50u);
	EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(endpoint.state(), IBV_QPS_ERR);
	// One event only; a non-blocking async fd says EAGAIN.
	const int flags = fcntl(endpoint.ctx->async_fd, F_GETFL);
	ASSERT_EQ(fcntl(endpoint.ctx->async_fd, F_SETFL, flags | O_NONBLOCK), 0);
	errno = 0;
	EXPECT_EQ(ibv_get_async_event(endpoint.ctx, &event), -1);
	EXPECT_EQ(errno, EAGAIN);
}

TEST(VerbsXproc, PeerKilledMidTransferCompletesEveryRequest)
{
	Child child(connect_and_wait);
	Options options;
	options.buffer_bytes = 1 << 20;
	options.max_send_wr = 32;
	Endpoint endpoint;
	Address remote;
	ASSERT_TRUE(parent_connect(endpoint, child, &remote, options));
	ASSERT_EQ(child.recv(), 1u);
	constexpr uint64_t kRequests = 32;
	const uint32_t size = 8192;
	for (uint64_t i = 0; i < kRequests; ++i)
		ASSERT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, size)}, remote.addr, remote.rkey,
					IBV_SEND_SIGNALED, i),
			  0);
	child.kill9();
	// Every request completes, in order: successes, then one failure, then flushes.
	const auto done = poll_n(endpoint.send_cq, kRequests);
	ASSERT_EQ(done.size(), kRequests);
	size_t i = 0;
	while (i < done.size() && done[i].status == IBV_WC_SUCCESS)
		++i;
	if (i < done.size()) {
		EXPECT_TRUE(done[i].status == IBV_WC_RETRY_EXC_ERR || done[i].status == IBV_WC_WR_FLUSH_ERR)
		    << ibv_wc_status_str(done[i].status);
		for (++i; i < done.size(); ++i)
			EXPECT_EQ(done[i].status, IBV_WC_WR_FLUSH_ERR) << i;
	}
	for (size_t k = 0; k < done.size(); ++k)
		EXPECT_EQ(done[k].wr_id, k);
	// The next request fails for sure.
	ASSERT_EQ(
	    endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 8)}, remote.addr, remote.rkey, IBV_SEND_SIGNALED, 99), 0);
	const auto last = poll_n(endpoint.send_cq, 1);
	ASSERT_EQ(last.size(), 1u);
	EXPECT_NE(last[0].status, IBV_WC_SUCCESS);
}

std::set<std::string> dev_shm()
{
	std::set<std::string> names;
	if (DIR *dir = opendir("/dev/shm")) {
		while (dirent *entry = readdir(dir))
			names.insert(entry->d_name);
		closedir(dir);
	}
	return names;
}

// Whether a queue pair's name (the transport binds "\0softdpu-rdma/<euid>/<fabric>/<qpn>") is
// bound on the machine.
bool bound(const std::string &fabric, uint32_t qpn)
{
	char name[128];
	std::snprintf(name, sizeof(name), "@softdpu-rdma/%u/%s/%06x", geteuid(), fabric.c_str(), qpn);
	std::ifstream table("/proc/net/unix");
	std::string line;
	while (std::getline(table, line)) {
		const size_t at = line.find(name);
		if (at != std::string::npos && at + std::strlen(name) == line.size())
			return true;
	}
	return false;
}

TEST(VerbsXproc, NothingIsLeftBehind)
{
	const std::set<std::string> before = dev_shm();
	uint32_t exited_qpn = 0;
	uint32_t killed_qpn = 0;
	{
		Child child([](int channel) {
			Endpoint endpoint;
			if (int failed = child_connect(endpoint, channel))
				return failed;
			return transport_test::recv_u64(channel) == 1 ? 0 : 6;
		});
		Endpoint endpoint;
		Address remote;
		ASSERT_TRUE(parent_connect(endpoint, child, &remote));
		exited_qpn = remote.qpn;
		EXPECT_TRUE(bound("host/pf1", exited_qpn));
		ASSERT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 8)}, remote.addr, remote.rkey), 0);
		ASSERT_EQ(poll_n(endpoint.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
		ASSERT_TRUE(child.send(1));
		EXPECT_EQ(child.wait_exit(), 0);
	}
	{
		Child child(connect_and_wait);
		Endpoint endpoint;
		Address remote;
		ASSERT_TRUE(parent_connect(endpoint, child, &remote));
		ASSERT_EQ(child.recv(), 1u);
		killed_qpn = remote.qpn;
		EXPECT_TRUE(bound("host/pf1", killed_qpn));
		child.kill9();
	}
	EXPECT_FALSE(bound("host/pf1", exited_qpn));
	EXPECT_FALSE(bound("host/pf1", killed_qpn));
	EXPECT_EQ(dev_shm(), before);
}

} // namespace
