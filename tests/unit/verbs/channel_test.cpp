// Completion channels within one process: ibv_req_notify_cq, ibv_get_cq_event and
// ibv_ack_cq_events; the channel's fd in epoll is readable exactly while an event waits;
// solicited-only arming; a non-blocking channel; ibv_destroy_cq waiting for the acks.
#include "verbs_test_support.hpp"

#include <fcntl.h>
#include <sys/epoll.h>

#include <atomic>
#include <thread>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_n;
using verbs_test::RcPair;

// Whether `fd` becomes readable within timeout_ms, through epoll as applications wait.
bool readable(int fd, int timeout_ms)
{
	const int epoll = epoll_create1(EPOLL_CLOEXEC);
	if (epoll < 0)
		return false;
	epoll_event event{};
	event.events = EPOLLIN;
	event.data.fd = fd;
	epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
	epoll_event out{};
	const int n = epoll_wait(epoll, &out, 1, timeout_ms);
	close(epoll);
	return n == 1 && (out.events & EPOLLIN) != 0;
}

class VerbsChannel : public ::testing::Test {
protected:
	void SetUp() override
	{
		Options options;
		options.channel = true; // B's receive CQ reports to a channel
		ASSERT_TRUE(pair_.connect(options));
		channel_ = pair_.b.channel;
		ASSERT_NE(channel_, nullptr);
	}
	void send(unsigned int flags = IBV_SEND_SIGNALED, uint64_t wr_id = 1)
	{
		Endpoint &a = pair_.a;
		ASSERT_EQ(pair_.b.post_recv({pair_.b.sge(0, 64)}, wr_id), 0);
		ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 16)}, 0, 0, flags | IBV_SEND_SIGNALED, wr_id), 0);
		ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	}
	RcPair pair_;
	ibv_comp_channel *channel_ = nullptr;
};

TEST_F(VerbsChannel, EventWaitsExactlyWhileOneIsDue)
{
	Endpoint &b = pair_.b;
	EXPECT_FALSE(readable(channel_->fd, 0));
	ASSERT_EQ(ibv_req_notify_cq(b.recv_cq, 0), 0);
	EXPECT_FALSE(readable(channel_->fd, 20)) << "armed, nothing completed";
	send();
	ASSERT_TRUE(readable(channel_->fd, verbs_test::kTimeoutMs));
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	ASSERT_EQ(ibv_get_cq_event(channel_, &cq, &context), 0);
	EXPECT_EQ(cq, b.recv_cq);
	EXPECT_EQ(context, &b);
	EXPECT_FALSE(readable(channel_->fd, 0)) << "the event was taken";
	ibv_ack_cq_events(cq, 1);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);

	// Not re-armed: the next completion raises no event.
	send(IBV_SEND_SIGNALED, 2);
	EXPECT_EQ(poll_n(b.recv_cq, 1).size(), 1u);
	EXPECT_FALSE(readable(channel_->fd, 30));

	// Re-armed: one event for two completions that come before it is taken.
	ASSERT_EQ(ibv_req_notify_cq(b.recv_cq, 0), 0);
	send(IBV_SEND_SIGNALED, 3);
	send(IBV_SEND_SIGNALED, 4);
	ASSERT_TRUE(readable(channel_->fd, verbs_test::kTimeoutMs));
	ASSERT_EQ(ibv_get_cq_event(channel_, &cq, &context), 0);
	EXPECT_FALSE(readable(channel_->fd, 20));
	EXPECT_EQ(poll_n(b.recv_cq, 2).size(), 2u);
	ibv_ack_cq_events(cq, 1);
}

TEST_F(VerbsChannel, SolicitedOnlyWaitsForASolicitedMessage)
{
	Endpoint &b = pair_.b;
	ASSERT_EQ(ibv_req_notify_cq(b.recv_cq, 1), 0);
	send(0, 1);
	EXPECT_EQ(poll_n(b.recv_cq, 1).size(), 1u) << "the completion is there";
	EXPECT_FALSE(readable(channel_->fd, 50)) << "an unsolicited message raises no event";
	send(IBV_SEND_SOLICITED, 2);
	ASSERT_TRUE(readable(channel_->fd, verbs_test::kTimeoutMs));
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	ASSERT_EQ(ibv_get_cq_event(channel_, &cq, &context), 0);
	EXPECT_EQ(cq, b.recv_cq);
	ibv_ack_cq_events(cq, 1);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 2u);

	// An error completion fires a solicited-only CQ too (flushed receives).
	ASSERT_EQ(ibv_req_notify_cq(b.recv_cq, 1), 0);
	ASSERT_EQ(b.post_recv({b.sge(0, 8)}, 9), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	ASSERT_TRUE(readable(channel_->fd, verbs_test::kTimeoutMs));
	ASSERT_EQ(ibv_get_cq_event(channel_, &cq, &context), 0);
	ibv_ack_cq_events(cq, 1);
	const auto flushed = poll_n(b.recv_cq, 1);
	ASSERT_EQ(flushed.size(), 1u);
	EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsChannel, NonBlockingChannelSaysEagain)
{
	const int flags = fcntl(channel_->fd, F_GETFL);
	ASSERT_EQ(fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK), 0);
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	errno = 0;
	EXPECT_EQ(ibv_get_cq_event(channel_, &cq, &context), -1);
	EXPECT_EQ(errno, EAGAIN);
	ASSERT_EQ(ibv_req_notify_cq(pair_.b.recv_cq, 0), 0);
	send();
	const uint64_t deadline = verbs_test::now_ms() + verbs_test::kTimeoutMs;
	int result = -1;
	while ((result = ibv_get_cq_event(channel_, &cq, &context)) != 0 && errno == EAGAIN &&
	       verbs_test::now_ms() < deadline)
		usleep(500);
	ASSERT_EQ(result, 0);
	EXPECT_EQ(cq, pair_.b.recv_cq);
	ibv_ack_cq_events(cq, 1);
	EXPECT_EQ(poll_n(pair_.b.recv_cq, 1).size(), 1u);
}

TEST_F(VerbsChannel, DestroyCqWaitsForTheAcks)
{
	Endpoint &b = pair_.b;
	ASSERT_EQ(ibv_req_notify_cq(b.recv_cq, 0), 0);
	send();
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	ASSERT_EQ(ibv_get_cq_event(channel_, &cq, &context), 0);
	ASSERT_EQ(poll_n(b.recv_cq, 1).size(), 1u);
	ASSERT_EQ(ibv_destroy_qp(b.qp), 0);
	b.qp = nullptr;
	// The event is not acknowledged yet: ibv_destroy_cq waits.
	std::atomic<bool> destroyed{false};
	std::atomic<int> result{-1};
	std::thread destroyer([&] {
		result = ibv_destroy_cq(cq);
		destroyed = true;
	});
	usleep(50000);
	EXPECT_FALSE(destroyed.load());
	ibv_ack_cq_events(cq, 1);
	destroyer.join();
	EXPECT_EQ(result.load(), 0);
	b.recv_cq = nullptr;
	EXPECT_EQ(ibv_destroy_comp_channel(channel_), 0);
	b.channel = nullptr;
}

TEST(VerbsChannelAlone, ChannelWithoutCqsHasNoEvent)
{
	Endpoint endpoint;
	ASSERT_TRUE(endpoint.create("mlx5_0"));
	ibv_cq *cq = nullptr;
	void *context = nullptr;
	ibv_comp_channel *channel = ibv_create_comp_channel(endpoint.ctx);
	ASSERT_NE(channel, nullptr);
	const int flags = fcntl(channel->fd, F_GETFL);
	ASSERT_EQ(fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK), 0);
	EXPECT_EQ(ibv_get_cq_event(channel, &cq, &context), -1) << "a channel without CQs has no event";
	EXPECT_EQ(ibv_destroy_comp_channel(channel), 0);
}

} // namespace
