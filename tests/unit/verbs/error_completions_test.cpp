// Error completions of the RC data path within one process: remote key errors (deregistered,
// out of range, missing access) with the queue pair going to ERR and flushing what follows,
// local key errors, a receive too small, RNR retries running out, a queue pair moved to ERR
// flushing its receives, and a destination queue pair that does not exist.
#include "verbs_test_support.hpp"

#include <cstring>
#include <vector>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_for;
using verbs_test::poll_n;
using verbs_test::RcPair;

class VerbsErrorCompletions : public ::testing::Test {
protected:
	void SetUp() override
	{
		options_.rnr_retry = 2;
		options_.timeout = 1;
		options_.retry_cnt = 1;
		ASSERT_TRUE(pair_.connect(options_));
	}

	// Posts one signaled request on A and returns its completion's status (after which A must
	// be in ERR and flush the next request).
	void expect_error(ibv_wr_opcode opcode, std::vector<ibv_sge> sges, uint64_t remote_addr, uint32_t rkey,
			  ibv_wc_status expected)
	{
		Endpoint &a = pair_.a;
		ASSERT_EQ(a.post(opcode, std::move(sges), remote_addr, rkey, IBV_SEND_SIGNALED, 1), 0);
		const auto done = poll_n(a.send_cq, 1);
		ASSERT_EQ(done.size(), 1u);
		EXPECT_EQ(done[0].wr_id, 1u);
		EXPECT_EQ(done[0].status, expected)
		    << ibv_wc_status_str(done[0].status) << " instead of " << ibv_wc_status_str(expected);
		EXPECT_EQ(a.state(), IBV_QPS_ERR);
		expect_flushed();
	}

	// A is in ERR: what is posted now completes with IBV_WC_WR_FLUSH_ERR, signaled or not.
	void expect_flushed()
	{
		Endpoint &a = pair_.a;
		ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, pair_.b.addr(), pair_.b.mr->rkey, 0, 2), 0);
		ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 8)}, 0, 0, IBV_SEND_SIGNALED, 3), 0);
		const auto flushed = poll_n(a.send_cq, 2);
		ASSERT_EQ(flushed.size(), 2u);
		EXPECT_EQ(flushed[0].wr_id, 2u);
		EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
		EXPECT_EQ(flushed[1].wr_id, 3u);
		EXPECT_EQ(flushed[1].status, IBV_WC_WR_FLUSH_ERR);
		EXPECT_EQ(std::memcmp(pair_.b.buf(), std::vector<uint8_t>(8, 0).data(), 8), 0) << "nothing was written";
	}

	Options options_;
	RcPair pair_;
};

TEST_F(VerbsErrorCompletions, DeregisteredRkeyIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	std::vector<uint8_t> other(4096, 0);
	ibv_mr *mr =
	    verbs_test::reg_mr(b.pd, other.data(), other.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(mr, nullptr);
	const uint32_t rkey = mr->rkey;
	ASSERT_EQ(ibv_dereg_mr(mr), 0);
	std::memset(pair_.a.buf(), 0x5c, 64);
	expect_error(IBV_WR_RDMA_WRITE, {pair_.a.sge(0, 64)}, reinterpret_cast<uint64_t>(other.data()), rkey,
		     IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(other[0], 0);
}

TEST_F(VerbsErrorCompletions, WriteBeyondTheRegistrationIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	// 8 bytes that end one byte past the registration.
	expect_error(IBV_WR_RDMA_WRITE, {pair_.a.sge(0, 8)}, b.addr(b.mr->length - 7), b.mr->rkey,
		     IBV_WC_REM_ACCESS_ERR);
}

TEST_F(VerbsErrorCompletions, ReadBeforeTheRegistrationIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	expect_error(IBV_WR_RDMA_READ, {pair_.a.sge(0, 8)}, b.addr() - 8, b.mr->rkey, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(VerbsErrorCompletions, MissingRemoteWriteIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	std::vector<uint64_t> memory(512, 0);
	ibv_mr *mr = verbs_test::reg_mr(b.pd, memory.data(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_RDMA_WRITE, {pair_.a.sge(0, 8)}, reinterpret_cast<uint64_t>(memory.data()), mr->rkey,
		     IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(memory[0], 0u);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(VerbsErrorCompletions, MissingRemoteReadIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	std::vector<uint64_t> memory(512, 0);
	ibv_mr *mr = verbs_test::reg_mr(b.pd, memory.data(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_RDMA_READ, {pair_.a.sge(0, 8)}, reinterpret_cast<uint64_t>(memory.data()), mr->rkey,
		     IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(VerbsErrorCompletions, MissingRemoteAtomicIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	std::vector<uint64_t> memory(512, 7);
	ibv_mr *mr = verbs_test::reg_mr(b.pd, memory.data(), 4096,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_ATOMIC_FETCH_AND_ADD, {pair_.a.sge(0, 8)}, reinterpret_cast<uint64_t>(memory.data()),
		     mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(memory[0], 7u);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(VerbsErrorCompletions, RkeyOfAnotherProtectionDomainIsRemoteAccessError)
{
	Endpoint &b = pair_.b;
	ibv_pd *other_pd = ibv_alloc_pd(b.ctx);
	ASSERT_NE(other_pd, nullptr);
	std::vector<uint64_t> memory(512, 0);
	ibv_mr *mr =
	    verbs_test::reg_mr(other_pd, memory.data(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_RDMA_WRITE, {pair_.a.sge(0, 8)}, reinterpret_cast<uint64_t>(memory.data()), mr->rkey,
		     IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(memory[0], 0u);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(other_pd), 0);
}

TEST_F(VerbsErrorCompletions, MisalignedAtomicIsRemoteInvalidRequest)
{
	Endpoint &b = pair_.b;
	expect_error(IBV_WR_ATOMIC_CMP_AND_SWP, {pair_.a.sge(0, 8)}, b.addr(4), b.mr->rkey, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(VerbsErrorCompletions, BadLkeyIsLocalProtectionError)
{
	Endpoint &a = pair_.a;
	ibv_sge bad = a.sge(0, 8);
	bad.lkey ^= 0x5a5a00;
	expect_error(IBV_WR_RDMA_WRITE, {bad}, pair_.b.addr(), pair_.b.mr->rkey, IBV_WC_LOC_PROT_ERR);
}

TEST_F(VerbsErrorCompletions, LocalElementBeyondItsRegistrationIsLocalProtectionError)
{
	Endpoint &a = pair_.a;
	expect_error(IBV_WR_RDMA_WRITE, {a.sge(a.mr->length - 4, 8)}, pair_.b.addr(), pair_.b.mr->rkey,
		     IBV_WC_LOC_PROT_ERR);
}

TEST_F(VerbsErrorCompletions, LkeyOfAnotherProtectionDomainIsLocalProtectionError)
{
	Endpoint &a = pair_.a;
	ibv_pd *other_pd = ibv_alloc_pd(a.ctx);
	ASSERT_NE(other_pd, nullptr);
	std::vector<uint8_t> memory(64, 1);
	ibv_mr *mr = verbs_test::reg_mr(other_pd, memory.data(), memory.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_RDMA_WRITE, {{reinterpret_cast<uint64_t>(memory.data()), 8, mr->lkey}}, pair_.b.addr(),
		     pair_.b.mr->rkey, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(other_pd), 0);
}

TEST_F(VerbsErrorCompletions, ReadIntoMemoryWithoutLocalWriteIsLocalProtectionError)
{
	Endpoint &a = pair_.a;
	std::vector<uint8_t> memory(64, 1);
	ibv_mr *mr = verbs_test::reg_mr(a.pd, memory.data(), memory.size(), IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr);
	expect_error(IBV_WR_RDMA_READ, {{reinterpret_cast<uint64_t>(memory.data()), 8, mr->lkey}}, pair_.b.addr(),
		     pair_.b.mr->rkey, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(memory[0], 1);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(VerbsErrorCompletions, ReceiveTooSmallFailsBothSides)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	ASSERT_EQ(b.post_recv({b.sge(0, 16)}, 7), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 100)}, 0, 0, IBV_SEND_SIGNALED, 1), 0);
	const auto sent = poll_n(a.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_REM_INV_REQ_ERR) << ibv_wc_status_str(sent[0].status);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 7u);
	EXPECT_EQ(received[0].status, IBV_WC_LOC_LEN_ERR) << ibv_wc_status_str(received[0].status);
	EXPECT_EQ(a.state(), IBV_QPS_ERR);
	expect_flushed();
}

TEST_F(VerbsErrorCompletions, RnrRetriesRunOut)
{
	Endpoint &a = pair_.a;
	// rnr_retry 2: B never posts a receive.
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 8)}, 0, 0, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 8)}, 0, 0, IBV_SEND_SIGNALED, 2), 0);
	const auto done = poll_n(a.send_cq, 2);
	ASSERT_EQ(done.size(), 2u);
	EXPECT_EQ(done[0].wr_id, 1u);
	EXPECT_EQ(done[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(done[0].status);
	EXPECT_EQ(done[1].wr_id, 2u);
	EXPECT_EQ(done[1].status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(a.state(), IBV_QPS_ERR);
}

TEST_F(VerbsErrorCompletions, WriteWithImmWithoutReceiveRunsOutOfRnrRetries)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	std::memset(a.buf(), 0x33, 16);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE_WITH_IMM, {a.sge(0, 16)}, b.addr(), b.mr->rkey, IBV_SEND_SIGNALED, 1, 5), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(done[0].status);
}

TEST_F(VerbsErrorCompletions, ModifyToErrorFlushesReceives)
{
	Endpoint &b = pair_.b;
	for (uint64_t i = 0; i < 3; ++i)
		ASSERT_EQ(b.post_recv({b.sge(0, 8)}, 100 + i), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	const auto flushed = poll_n(b.recv_cq, 3);
	ASSERT_EQ(flushed.size(), 3u);
	for (uint64_t i = 0; i < 3; ++i) {
		EXPECT_EQ(flushed[i].wr_id, 100 + i);
		EXPECT_EQ(flushed[i].status, IBV_WC_WR_FLUSH_ERR);
		EXPECT_EQ(flushed[i].qp_num, b.qp->qp_num);
	}
	// Receives posted in ERR are flushed too.
	ASSERT_EQ(b.post_recv({b.sge(0, 8)}, 200), 0);
	const auto late = poll_n(b.recv_cq, 1);
	ASSERT_EQ(late.size(), 1u);
	EXPECT_EQ(late[0].wr_id, 200u);
	EXPECT_EQ(late[0].status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_TRUE(poll_for(b.recv_cq, 10).empty());

	// A's requests to a queue pair in ERR are retried, then fail.
	Endpoint &a = pair_.a;
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, b.addr(), b.mr->rkey, IBV_SEND_SIGNALED, 1), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(done[0].status);

	// RESET brings B back; after reconnecting, the pair works again.
	attr.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	ASSERT_EQ(ibv_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
	EXPECT_TRUE(poll_for(b.recv_cq, 10).empty());
	ASSERT_EQ(a.connect(b.address()), 0);
	ASSERT_EQ(b.connect(a.address()), 0);
	std::memset(a.buf(), 0x42, 8);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, b.addr(), b.mr->rkey, IBV_SEND_SIGNALED, 9), 0);
	const auto again = poll_n(a.send_cq, 1);
	ASSERT_EQ(again.size(), 1u);
	EXPECT_EQ(again[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(b.buf()[7], 0x42);
}

TEST(VerbsErrorCompletionsNoPeer, MissingDestinationQpRunsOutOfRetries)
{
	Options options;
	options.timeout = 1;
	options.retry_cnt = 1;
	Endpoint a;
	ASSERT_TRUE(a.create("mlx5_0", options));
	verbs_test::Address nowhere = a.address();
	nowhere.qpn = 0xfffff0; // bound by nobody
	ASSERT_EQ(a.connect(nowhere), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, 0x1000, 1, IBV_SEND_SIGNALED, 1), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(done[0].status);
	EXPECT_EQ(a.state(), IBV_QPS_ERR);
}

TEST(VerbsErrorCompletionsAccess, QueuePairWithoutRemoteWriteAccessRefusesWrites)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect({}));
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	// B's queue pair allows remote reads only (RTS -> RTS may change the access flags).
	ibv_qp_attr attr{};
	attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_ACCESS_FLAGS), 0);
	std::memset(a.buf(), 0x11, 8);
	ASSERT_EQ(a.post(IBV_WR_RDMA_READ, {a.sge(0, 8)}, b.addr(), b.mr->rkey, IBV_SEND_SIGNALED, 1), 0);
	auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, b.addr(), b.mr->rkey, IBV_SEND_SIGNALED, 2), 0);
	done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(done[0].status);
	EXPECT_EQ(b.buf()[0], 0);
}

} // namespace

namespace {

TEST(VerbsCqOverrun, OverrunIsAnAsyncCqError)
{
	Options options;
	options.cqe = 1;
	RcPair pair;
	ASSERT_TRUE(pair.connect(options));
	Endpoint &a = pair.a;
	ASSERT_GE(a.send_cq->cqe, 1);
	const int depth = a.send_cq->cqe;
	// More signaled completions than the CQ holds, never polled.
	for (int i = 0; i < depth + 2; ++i)
		ASSERT_EQ(
		    a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, pair.b.addr(), pair.b.mr->rkey, IBV_SEND_SIGNALED, i), 0);
	pollfd pfd{a.ctx->async_fd, POLLIN, 0};
	ASSERT_EQ(poll(&pfd, 1, verbs_test::kTimeoutMs), 1) << "no async event";
	ibv_async_event event{};
	ASSERT_EQ(ibv_get_async_event(a.ctx, &event), 0);
	EXPECT_EQ(event.event_type, IBV_EVENT_CQ_ERR) << ibv_event_type_str(event.event_type);
	EXPECT_EQ(event.element.cq, a.send_cq);
	ibv_ack_async_event(&event);
}

} // namespace

namespace {

// The responder fails too, as on hardware: a remote access violation puts the responder's queue
// pair in ERR with IBV_EVENT_QP_ACCESS_ERR (IB spec 9.9.3.1.3), and a receive too small for the
// message (IBV_WC_LOC_LEN_ERR) puts it in ERR as any receive completed in error does. The
// requester marks the responder's queue pair; the responder acts at its next poll or tick.
TEST(VerbsResponderErrors, RemoteAccessErrorFailsTheResponderToo)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, b.addr(b.mr->length), b.mr->rkey, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_REM_ACCESS_ERR);
	pollfd pfd{b.ctx->async_fd, POLLIN, 0};
	ASSERT_EQ(poll(&pfd, 1, verbs_test::kTimeoutMs), 1) << "no async event at the responder";
	ibv_async_event event{};
	ASSERT_EQ(ibv_get_async_event(b.ctx, &event), 0);
	EXPECT_EQ(event.event_type, IBV_EVENT_QP_ACCESS_ERR);
	EXPECT_EQ(event.element.qp, b.qp);
	ibv_ack_async_event(&event);
	EXPECT_EQ(b.state(), IBV_QPS_ERR);
}

TEST(VerbsResponderErrors, ReceiveTooSmallFailsTheResponderQueuePair)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	ASSERT_EQ(b.post_recv({b.sge(0, 16)}, 1), 0);
	ASSERT_EQ(b.post_recv({b.sge(0, 16)}, 2), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 100)}, 0, 0, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_REM_INV_REQ_ERR);
	const auto received = poll_n(b.recv_cq, 2);
	ASSERT_EQ(received.size(), 2u);
	EXPECT_EQ(received[0].status, IBV_WC_LOC_LEN_ERR);
	EXPECT_EQ(received[1].status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(b.state(), IBV_QPS_ERR);
}

} // namespace

namespace {

TEST(VerbsFlushOrder, ReceivesCompleteInOrderAcrossAFlush)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	ASSERT_EQ(b.post_recv({b.sge(0, 64)}, 1), 0);
	ASSERT_EQ(b.post_recv({b.sge(64, 64)}, 2), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 16)}, 0, 0, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	// B has not polled: the first receive's completion waits when the queue pair fails.
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(b.qp, &attr, IBV_QP_STATE), 0);
	const auto received = poll_n(b.recv_cq, 2);
	ASSERT_EQ(received.size(), 2u);
	EXPECT_EQ(received[0].wr_id, 1u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(received[1].wr_id, 2u);
	EXPECT_EQ(received[1].status, IBV_WC_WR_FLUSH_ERR);
}

// Requests run in order and stop at the first error: of three RDMA WRITEs run in one batch, the
// one with a bad key fails, the one after it is flushed and its data never lands.
TEST(VerbsErrorCompletionsOrder, AWriteAfterAFailedOneInTheSameBatchDoesNotLand)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	std::memset(a.buf(), 0x5a, 64);
	// Queued without a poll in between, they go out as one batch.
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 16)}, b.addr(0), b.mr->rkey, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 16)}, b.addr(64), b.mr->rkey ^ 0xff, IBV_SEND_SIGNALED, 2), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 16)}, b.addr(128), b.mr->rkey, IBV_SEND_SIGNALED, 3), 0);
	const auto done = poll_n(a.send_cq, 3);
	ASSERT_EQ(done.size(), 3u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(done[1].status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(done[2].status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_EQ(b.buf()[0], 0x5a);
	EXPECT_EQ(b.buf()[64], 0);
	EXPECT_EQ(b.buf()[128], 0) << "a write after the failed one landed";
}

} // namespace
