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

namespace {

TEST(VerbsChannelShared, TwoCqsOnOneChannelAreTold)
{
	// Two receivers of one context whose receive CQs share a channel.
	Endpoint a1;
	Endpoint a2;
	ASSERT_TRUE(a1.create("mlx5_0"));
	ASSERT_TRUE(a2.create("mlx5_0"));
	ibv_context *ctx = verbs_test::open_device("mlx5_1");
	ASSERT_NE(ctx, nullptr);
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr);
	ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	ASSERT_NE(channel, nullptr);
	int tags[2] = {};
	ibv_cq *cqs[2] = {};
	{
		Endpoint receivers[2];
		Options options;
		options.shared_pd = pd;
		for (int i = 0; i < 2; ++i) {
			ASSERT_TRUE(receivers[i].create(nullptr, options));
			// Replace the receive CQ by one on the shared channel (before any use).
			cqs[i] = ibv_create_cq(ctx, 16, &tags[i], channel, 0);
			ASSERT_NE(cqs[i], nullptr);
		}
		ASSERT_EQ(ibv_destroy_qp(receivers[0].qp), 0);
		ASSERT_EQ(ibv_destroy_qp(receivers[1].qp), 0);
		for (int i = 0; i < 2; ++i) {
			ibv_qp_init_attr init{};
			init.send_cq = receivers[i].send_cq;
			init.recv_cq = cqs[i];
			init.qp_type = IBV_QPT_RC;
			init.cap.max_send_wr = init.cap.max_recv_wr = 4;
			init.cap.max_send_sge = init.cap.max_recv_sge = 1;
			receivers[i].qp = ibv_create_qp(pd, &init);
			ASSERT_NE(receivers[i].qp, nullptr);
		}
		Endpoint *senders[2] = {&a1, &a2};
		for (int i = 0; i < 2; ++i) {
			ASSERT_EQ(senders[i]->connect(receivers[i].address()), 0);
			ASSERT_EQ(receivers[i].connect(senders[i]->address()), 0);
			ASSERT_EQ(receivers[i].post_recv({receivers[i].sge(0, 16)}, 10 + i), 0);
			ASSERT_EQ(ibv_req_notify_cq(cqs[i], 0), 0);
		}
		// Only the second pair talks: the event names the second CQ.
		ASSERT_EQ(a2.post(IBV_WR_SEND, {a2.sge(0, 8)}), 0);
		ASSERT_TRUE(readable(channel->fd, verbs_test::kTimeoutMs));
		ibv_cq *cq = nullptr;
		void *context = nullptr;
		ASSERT_EQ(ibv_get_cq_event(channel, &cq, &context), 0);
		EXPECT_EQ(cq, cqs[1]);
		EXPECT_EQ(context, &tags[1]);
		ibv_ack_cq_events(cq, 1);
		EXPECT_EQ(poll_n(cqs[1], 1).size(), 1u);
		EXPECT_FALSE(readable(channel->fd, 20));
		// Then the first.
		ASSERT_EQ(a1.post(IBV_WR_SEND, {a1.sge(0, 8)}), 0);
		ASSERT_TRUE(readable(channel->fd, verbs_test::kTimeoutMs));
		ASSERT_EQ(ibv_get_cq_event(channel, &cq, &context), 0);
		EXPECT_EQ(cq, cqs[0]);
		EXPECT_EQ(context, &tags[0]);
		ibv_ack_cq_events(cq, 1);
		EXPECT_EQ(poll_n(cqs[0], 1).size(), 1u);
		for (auto &receiver : receivers) {
			EXPECT_EQ(ibv_destroy_qp(receiver.qp), 0);
			receiver.qp = nullptr;
		}
	}
	EXPECT_EQ(ibv_destroy_cq(cqs[0]), 0);
	EXPECT_EQ(ibv_destroy_cq(cqs[1]), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(channel), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

} // namespace
