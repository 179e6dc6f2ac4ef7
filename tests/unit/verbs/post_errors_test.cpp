// What ibv_post_send and ibv_post_recv refuse, with the error and bad_wr rdma-core documents:
// the wrong state, too many elements, a full queue, malformed atomics, inline data beyond
// max_inline_data, opcodes a UD queue pair cannot carry.
#include "verbs_test_support.hpp"

#include <vector>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::RcPair;

TEST(VerbsPostErrors, PostSendBeforeRtsIsRefused)
{
	Endpoint endpoint;
	ASSERT_TRUE(endpoint.create("mlx5_0"));
	const verbs_test::Address self = endpoint.address();
	auto refused_in = [&](const char *state) {
		SCOPED_TRACE(state);
		ibv_sge sge = endpoint.sge(0, 8);
		ibv_send_wr wr{};
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		ibv_send_wr *bad = nullptr;
		EXPECT_EQ(ibv_post_send(endpoint.qp, &wr, &bad), EINVAL);
		EXPECT_EQ(bad, &wr);
	};
	refused_in("RESET");
	// Receives may not be posted in RESET either, and may from INIT on.
	ibv_sge sge = endpoint.sge(0, 8);
	ibv_recv_wr recv{};
	recv.sg_list = &sge;
	recv.num_sge = 1;
	ibv_recv_wr *bad_recv = nullptr;
	EXPECT_EQ(ibv_post_recv(endpoint.qp, &recv, &bad_recv), EINVAL);
	EXPECT_EQ(bad_recv, &recv);
	ASSERT_EQ(endpoint.to_init(), 0);
	refused_in("INIT");
	EXPECT_EQ(endpoint.post_recv({endpoint.sge(0, 8)}), 0);
	ibv_qp_attr rtr = endpoint.rtr_attr(self);
	ASSERT_EQ(ibv_modify_qp(endpoint.qp, &rtr, Endpoint::kRtrMask), 0);
	refused_in("RTR");
}

class VerbsPostErrorsRts : public ::testing::Test {
protected:
	void SetUp() override
	{
		Options options;
		options.max_send_wr = 8;
		options.max_send_sge = 2;
		options.max_recv_sge = 2;
		options.max_recv_wr = 4;
		options.max_inline_data = 32;
		options.rnr_retry = 7; // a SEND without a receive waits forever
		ASSERT_TRUE(pair_.connect(options));
		ibv_qp_attr attr{};
		ibv_qp_init_attr init{};
		ASSERT_EQ(ibv_query_qp(pair_.a.qp, &attr, IBV_QP_CAP, &init), 0);
		cap_ = init.cap;
	}
	int post_chain(std::vector<ibv_send_wr> &wrs, ibv_send_wr **bad)
	{
		for (size_t i = 0; i + 1 < wrs.size(); ++i)
			wrs[i].next = &wrs[i + 1];
		return ibv_post_send(pair_.a.qp, wrs.data(), bad);
	}

	RcPair pair_;
	ibv_qp_cap cap_{};
};

TEST_F(VerbsPostErrorsRts, TooManyElementsIsEinvalAtThatRequest)
{
	Endpoint &a = pair_.a;
	std::vector<ibv_sge> sges(cap_.max_send_sge + 1, a.sge(0, 4));
	std::vector<ibv_send_wr> wrs(2);
	wrs[0].wr_id = 1;
	wrs[0].opcode = IBV_WR_RDMA_WRITE;
	wrs[0].sg_list = sges.data();
	wrs[0].num_sge = 1;
	wrs[0].send_flags = IBV_SEND_SIGNALED;
	wrs[0].wr.rdma = {pair_.b.addr(), pair_.b.mr->rkey};
	wrs[1] = wrs[0];
	wrs[1].wr_id = 2;
	wrs[1].num_sge = static_cast<int>(sges.size());
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_chain(wrs, &bad), EINVAL);
	EXPECT_EQ(bad, &wrs[1]);
	// The request before the bad one was posted and completes.
	const auto done = verbs_test::poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].wr_id, 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_TRUE(verbs_test::poll_for(a.send_cq, 20).empty());

	// Receives with too many elements.
	std::vector<ibv_sge> recv_sges(cap_.max_recv_sge + 1, pair_.b.sge(0, 4));
	EXPECT_EQ(pair_.b.post_recv(recv_sges), EINVAL);
	ibv_recv_wr negative{};
	negative.num_sge = -1;
	ibv_recv_wr *bad_recv = nullptr;
	EXPECT_EQ(ibv_post_recv(pair_.b.qp, &negative, &bad_recv), EINVAL);
	EXPECT_EQ(bad_recv, &negative);
}

TEST_F(VerbsPostErrorsRts, FullSendQueueIsEnomem)
{
	Endpoint &a = pair_.a;
	// B posts no receive: the first SEND waits (RNR, retried forever), so nothing drains.
	std::vector<ibv_send_wr> wrs(cap_.max_send_wr + 1);
	ibv_sge sge = a.sge(0, 8);
	for (size_t i = 0; i < wrs.size(); ++i) {
		wrs[i].wr_id = i;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
	}
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_chain(wrs, &bad), ENOMEM);
	EXPECT_EQ(bad, &wrs.back());
	ibv_send_wr more = wrs[0];
	more.next = nullptr;
	bad = nullptr;
	EXPECT_EQ(ibv_post_send(a.qp, &more, &bad), ENOMEM);
	EXPECT_EQ(bad, &more);
	EXPECT_TRUE(verbs_test::poll_for(a.send_cq, 20).empty()) << "the SENDs wait for a receive";
}

TEST_F(VerbsPostErrorsRts, FullReceiveQueueIsEnomem)
{
	Endpoint &b = pair_.b;
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(b.qp, &attr, IBV_QP_CAP, &init), 0);
	for (uint32_t i = 0; i < init.cap.max_recv_wr; ++i)
		ASSERT_EQ(b.post_recv({b.sge(0, 8)}, i), 0) << i;
	EXPECT_EQ(b.post_recv({b.sge(0, 8)}), ENOMEM);
}

TEST_F(VerbsPostErrorsRts, MalformedAtomicsAreEinval)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	for (ibv_wr_opcode opcode : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
		SCOPED_TRACE(opcode);
		EXPECT_EQ(a.post(opcode, {a.sge(0, 4)}, b.addr(), b.mr->rkey), EINVAL) << "4 bytes";
		EXPECT_EQ(a.post(opcode, {a.sge(0, 16)}, b.addr(), b.mr->rkey), EINVAL) << "16 bytes";
		EXPECT_EQ(a.post(opcode, {a.sge(0, 0)}, b.addr(), b.mr->rkey), EINVAL) << "zero length";
		EXPECT_EQ(a.post(opcode, {a.sge(0, 4), a.sge(8, 4)}, b.addr(), b.mr->rkey), EINVAL) << "two elements";
		EXPECT_EQ(a.post(opcode, {}, b.addr(), b.mr->rkey), EINVAL) << "no element";
	}
	EXPECT_TRUE(verbs_test::poll_for(a.send_cq, 20).empty()) << "nothing was queued";
	EXPECT_EQ(a.state(), IBV_QPS_RTS);
}

TEST_F(VerbsPostErrorsRts, InlineBeyondMaxInlineDataIsEinval)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	const uint32_t max = cap_.max_inline_data;
	ASSERT_GE(max, 32u);
	EXPECT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, max + 1)}, b.addr(), b.mr->rkey, IBV_SEND_INLINE), EINVAL);
	EXPECT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, max), a.sge(0, 1)}, b.addr(), b.mr->rkey, IBV_SEND_INLINE),
		  EINVAL)
	    << "the total counts";
	// Inline READs make no sense: the data comes back.
	EXPECT_EQ(a.post(IBV_WR_RDMA_READ, {a.sge(0, 8)}, b.addr(), b.mr->rkey, IBV_SEND_INLINE), EINVAL);
	// Exactly max_inline_data is fine, and needs no lkey.
	ibv_sge sge{a.addr(), max, 0xdeadbeef};
	EXPECT_EQ(a.post(IBV_WR_RDMA_WRITE, {sge}, b.addr(), b.mr->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED), 0);
	const auto done = verbs_test::poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
}

TEST_F(VerbsPostErrorsRts, UnsupportedOpcodesAreEinval)
{
	// Opcodes of verbs.h the device does not offer (no memory windows, no TSO, no invalidation).
	Endpoint &a = pair_.a;
	for (ibv_wr_opcode opcode : {IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO})
		EXPECT_EQ(a.post(opcode, {a.sge(0, 8)}), EINVAL) << opcode;
	EXPECT_TRUE(verbs_test::poll_for(a.send_cq, 20).empty());
	EXPECT_EQ(a.state(), IBV_QPS_RTS);
}

TEST(VerbsPostErrors, UdRefusesOneSidedOpcodesAndMissingAddressHandles)
{
	Options options;
	options.type = IBV_QPT_UD;
	Endpoint endpoint;
	ASSERT_TRUE(endpoint.create("mlx5_0", options));
	ASSERT_EQ(endpoint.connect(), 0);
	EXPECT_EQ(endpoint.state(), IBV_QPS_RTS);
	EXPECT_EQ(endpoint.post(IBV_WR_RDMA_WRITE, {endpoint.sge(0, 8)}, endpoint.addr(), endpoint.mr->rkey), EINVAL);
	EXPECT_EQ(endpoint.post(IBV_WR_RDMA_READ, {endpoint.sge(0, 8)}, endpoint.addr(), endpoint.mr->rkey), EINVAL);
	EXPECT_EQ(endpoint.post(IBV_WR_ATOMIC_FETCH_AND_ADD, {endpoint.sge(0, 8)}, endpoint.addr(), endpoint.mr->rkey),
		  EINVAL);
	// A SEND without an address handle.
	EXPECT_EQ(endpoint.post(IBV_WR_SEND, {endpoint.sge(0, 8)}), EINVAL);
	// An address handle without a GRH cannot be made on RoCE.
	ibv_ah_attr ah_attr{};
	ah_attr.port_num = 1;
	errno = 0;
	EXPECT_EQ(ibv_create_ah(endpoint.pd, &ah_attr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	ah_attr.is_global = 1;
	ah_attr.port_num = 2;
	EXPECT_EQ(ibv_create_ah(endpoint.pd, &ah_attr), nullptr);
}

} // namespace
