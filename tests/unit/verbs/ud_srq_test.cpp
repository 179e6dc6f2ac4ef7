// UD queue pairs with address handles (the 40-byte GRH before the data, IBV_WC_GRH, src_qp,
// Q_Key matching, replying through ibv_create_ah_from_wc) and a shared receive queue serving two
// RC queue pairs, within one process.
#include "verbs_test_support.hpp"

#include <poll.h>

#include <vector>

namespace {

using verbs_test::Address;
using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_for;
using verbs_test::poll_n;

constexpr uint32_t kGrh = 40;

class VerbsUd : public ::testing::Test {
protected:
	void SetUp() override
	{
		Options options;
		options.type = IBV_QPT_UD;
		ASSERT_TRUE(a_.create("mlx5_0", options));
		ASSERT_TRUE(b_.create("mlx5_1", options));
		ASSERT_EQ(a_.connect(), 0);
		ASSERT_EQ(b_.connect(), 0);
		b_address_ = b_.address();
		a_address_ = a_.address();
		ibv_ah_attr attr{};
		attr.is_global = 1;
		attr.port_num = 1;
		attr.grh.dgid = b_address_.gid;
		attr.grh.sgid_index = 1;
		attr.grh.hop_limit = 64;
		ah_ = ibv_create_ah(a_.pd, &attr);
		ASSERT_NE(ah_, nullptr) << std::strerror(errno);
	}
	void TearDown() override
	{
		if (ah_ != nullptr) {
			EXPECT_EQ(ibv_destroy_ah(ah_), 0);
		}
	}

	int send(Endpoint &from, ibv_ah *ah, uint32_t qpn, uint32_t qkey, std::vector<ibv_sge> sges, uint64_t wr_id,
		 unsigned int flags = IBV_SEND_SIGNALED, ibv_wr_opcode opcode = IBV_WR_SEND, uint32_t imm = 0)
	{
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.opcode = opcode;
		wr.send_flags = flags;
		wr.sg_list = sges.data();
		wr.num_sge = static_cast<int>(sges.size());
		wr.imm_data = htobe32(imm);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qpn;
		wr.wr.ud.remote_qkey = qkey;
		ibv_send_wr *bad = nullptr;
		return ibv_post_send(from.qp, &wr, &bad);
	}

	Endpoint a_;
	Endpoint b_;
	Address a_address_;
	Address b_address_;
	ibv_ah *ah_ = nullptr;
	const uint32_t qkey_ = Options{}.qkey;
};

TEST_F(VerbsUd, SendArrivesAfterAGrh)
{
	std::memset(a_.buf(), 0x61, 100);
	ASSERT_EQ(b_.post_recv({b_.sge(0, kGrh + 100)}, 11), 0);
	ASSERT_EQ(
	    send(a_, ah_, b_address_.qpn, qkey_, {a_.sge(0, 100)}, 1, IBV_SEND_SIGNALED, IBV_WR_SEND_WITH_IMM, 77), 0);
	const auto sent = poll_n(a_.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
	const auto received = poll_n(b_.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	const ibv_wc &wc = received[0];
	EXPECT_EQ(wc.wr_id, 11u);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV);
	EXPECT_EQ(wc.byte_len, kGrh + 100);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(be32toh(wc.imm_data), 77u);
	EXPECT_EQ(wc.src_qp, a_address_.qpn);
	EXPECT_EQ(wc.qp_num, b_address_.qpn);
	// The GRH: IP version 6, the sender's GID as source, ours as destination.
	const auto *grh = reinterpret_cast<const ibv_grh *>(b_.buf());
	EXPECT_EQ(be32toh(grh->version_tclass_flow) >> 28, 6u);
	EXPECT_EQ(std::memcmp(grh->sgid.raw, a_address_.gid.raw, 16), 0);
	EXPECT_EQ(std::memcmp(grh->dgid.raw, b_address_.gid.raw, 16), 0);
	EXPECT_EQ(std::memcmp(b_.buf() + kGrh, a_.buf(), 100), 0);

	// Replying through an address handle made from the completion and its GRH.
	ibv_ah *reply = ibv_create_ah_from_wc(b_.pd, const_cast<ibv_wc *>(&wc), const_cast<ibv_grh *>(grh), 1);
	ASSERT_NE(reply, nullptr) << std::strerror(errno);
	ASSERT_EQ(a_.post_recv({a_.sge(1000, kGrh + 8)}, 21), 0);
	std::memset(b_.buf() + 2000, 0x62, 8);
	ASSERT_EQ(send(b_, reply, wc.src_qp, qkey_, {b_.sge(2000, 8)}, 2), 0);
	ASSERT_EQ(poll_n(b_.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	const auto back = poll_n(a_.recv_cq, 1);
	ASSERT_EQ(back.size(), 1u);
	EXPECT_EQ(back[0].wr_id, 21u);
	EXPECT_EQ(back[0].src_qp, b_address_.qpn);
	EXPECT_EQ(std::memcmp(a_.buf() + 1000 + kGrh, b_.buf() + 2000, 8), 0);
	EXPECT_EQ(ibv_destroy_ah(reply), 0);
}

TEST_F(VerbsUd, GrhAndDataSpreadOverSeveralElements)
{
	std::memset(a_.buf(), 0x71, 64);
	// 24 + 30 + 100 bytes of receive elements for 40 + 64.
	ASSERT_EQ(b_.post_recv({b_.sge(0, 24), b_.sge(100, 30), b_.sge(200, 100)}, 1), 0);
	ASSERT_EQ(send(a_, ah_, b_address_.qpn, qkey_, {a_.sge(0, 64)}, 1), 0);
	// Only the receiver polls: the device delivers without the sender's help.
	const auto received = poll_n(b_.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(received[0].byte_len, kGrh + 64);
	// The GRH takes the first element and 16 bytes of the second; the data the rest.
	EXPECT_EQ(std::memcmp(b_.buf() + 100 + 16, a_.buf(), 14), 0);
	EXPECT_EQ(std::memcmp(b_.buf() + 200, a_.buf() + 14, 50), 0);
}

TEST_F(VerbsUd, WrongQkeyIsDroppedSilently)
{
	ASSERT_EQ(b_.post_recv({b_.sge(0, 200)}, 1), 0);
	ASSERT_EQ(send(a_, ah_, b_address_.qpn, qkey_ + 1, {a_.sge(0, 16)}, 1), 0);
	const auto sent = poll_n(a_.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS) << "unreliable: the sender does not know";
	EXPECT_TRUE(poll_for(b_.recv_cq, 30).empty());
	// A Q_Key with the high bit set means the sender's own Q_Key (IB 10.2.5), which matches.
	ASSERT_EQ(send(a_, ah_, b_address_.qpn, 0x80000000u, {a_.sge(0, 16)}, 2), 0);
	ASSERT_EQ(poll_n(a_.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	const auto received = poll_n(b_.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 1u) << "the receive the dropped message did not take";
	EXPECT_EQ(received[0].byte_len, kGrh + 16);
}

TEST_F(VerbsUd, NoReceivePostedDropsTheMessage)
{
	ASSERT_EQ(send(a_, ah_, b_address_.qpn, qkey_, {a_.sge(0, 16)}, 1), 0);
	ASSERT_EQ(poll_n(a_.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	ASSERT_EQ(b_.post_recv({b_.sge(0, 200)}, 1), 0);
	EXPECT_TRUE(poll_for(b_.recv_cq, 30).empty()) << "UD does not wait for receives";
}

TEST_F(VerbsUd, MessageLongerThanTheMtuIsALocalLengthError)
{
	ASSERT_EQ(b_.post_recv({b_.sge(0, 8192)}, 1), 0);
	ASSERT_EQ(send(a_, ah_, b_address_.qpn, qkey_, {a_.sge(0, 4097)}, 1), 0);
	const auto sent = poll_n(a_.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_LOC_LEN_ERR) << ibv_wc_status_str(sent[0].status);
	EXPECT_TRUE(poll_for(b_.recv_cq, 20).empty());
}

class VerbsSrq : public ::testing::Test {
protected:
	void SetUp() override
	{
		ctx_ = verbs_test::open_device("mlx5_1");
		ASSERT_NE(ctx_, nullptr);
		pd_ = ibv_alloc_pd(ctx_);
		ASSERT_NE(pd_, nullptr);
		ibv_srq_init_attr init{};
		init.attr.max_wr = 16;
		init.attr.max_sge = 2;
		srq_ = ibv_create_srq(pd_, &init);
		ASSERT_NE(srq_, nullptr) << std::strerror(errno);
		Options shared;
		shared.srq = srq_;
		shared.shared_pd = pd_;
		for (int i = 0; i < 2; ++i) {
			ASSERT_TRUE(senders_[i].create("mlx5_0"));
			ASSERT_TRUE(receivers_[i].create(nullptr, shared));
			ASSERT_EQ(senders_[i].connect(receivers_[i].address()), 0);
			ASSERT_EQ(receivers_[i].connect(senders_[i].address()), 0);
		}
		memory_.assign(4096, 0);
		mr_ = verbs_test::reg_mr(pd_, memory_.data(), memory_.size(), IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(mr_, nullptr);
	}
	void TearDown() override
	{
		for (auto &endpoint : receivers_)
			endpoint.destroy();
		if (mr_ != nullptr) {
			EXPECT_EQ(ibv_dereg_mr(mr_), 0);
		}
		if (srq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_srq(srq_), 0);
		}
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		if (ctx_ != nullptr) {
			EXPECT_EQ(ibv_close_device(ctx_), 0);
		}
	}
	int post_srq(uint64_t wr_id, std::vector<ibv_sge> sges)
	{
		ibv_recv_wr wr{};
		wr.wr_id = wr_id;
		wr.sg_list = sges.data();
		wr.num_sge = static_cast<int>(sges.size());
		ibv_recv_wr *bad = nullptr;
		return ibv_post_srq_recv(srq_, &wr, &bad);
	}
	ibv_sge sge(size_t offset, uint32_t length)
	{
		return {reinterpret_cast<uint64_t>(memory_.data() + offset), length, mr_->lkey};
	}

	ibv_context *ctx_ = nullptr;
	ibv_pd *pd_ = nullptr;
	ibv_srq *srq_ = nullptr;
	ibv_mr *mr_ = nullptr;
	std::vector<uint8_t> memory_;
	Endpoint senders_[2];
	Endpoint receivers_[2];
};

TEST_F(VerbsSrq, TwoQueuePairsShareTheReceives)
{
	ASSERT_EQ(post_srq(1, {sge(0, 100)}), 0);
	ASSERT_EQ(post_srq(2, {sge(1000, 50), sge(2000, 50)}), 0);
	std::memset(senders_[0].buf(), 0xa0, 64);
	std::memset(senders_[1].buf(), 0xb1, 80);
	ASSERT_EQ(senders_[0].post(IBV_WR_SEND, {senders_[0].sge(0, 64)}), 0);
	ASSERT_EQ(poll_n(senders_[0].send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	ASSERT_EQ(senders_[1].post(IBV_WR_SEND_WITH_IMM, {senders_[1].sge(0, 80)}, 0, 0, IBV_SEND_SIGNALED, 1, 9), 0);
	ASSERT_EQ(poll_n(senders_[1].send_cq, 1).at(0).status, IBV_WC_SUCCESS);

	// Each completion goes to the receive CQ of the queue pair the message came to, in the order
	// the SRQ's receives were posted.
	const auto first = poll_n(receivers_[0].recv_cq, 1);
	ASSERT_EQ(first.size(), 1u);
	EXPECT_EQ(first[0].wr_id, 1u);
	EXPECT_EQ(first[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(first[0].qp_num, receivers_[0].qp->qp_num);
	EXPECT_EQ(first[0].byte_len, 64u);
	EXPECT_EQ(std::memcmp(memory_.data(), senders_[0].buf(), 64), 0);
	const auto second = poll_n(receivers_[1].recv_cq, 1);
	ASSERT_EQ(second.size(), 1u);
	EXPECT_EQ(second[0].wr_id, 2u);
	EXPECT_EQ(second[0].qp_num, receivers_[1].qp->qp_num);
	EXPECT_EQ(second[0].byte_len, 80u);
	EXPECT_EQ(be32toh(second[0].imm_data), 9u);
	EXPECT_EQ(std::memcmp(memory_.data() + 1000, senders_[1].buf(), 50), 0);
	EXPECT_EQ(std::memcmp(memory_.data() + 2000, senders_[1].buf() + 50, 30), 0);
	EXPECT_TRUE(poll_for(receivers_[0].recv_cq, 10).empty());
}

TEST_F(VerbsSrq, ErrorOnOneQueuePairLeavesTheSrqsReceives)
{
	ASSERT_EQ(post_srq(5, {sge(0, 100)}), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(receivers_[0].qp, &attr, IBV_QP_STATE), 0);
	EXPECT_TRUE(poll_for(receivers_[0].recv_cq, 20).empty()) << "the receive belongs to the SRQ";
	// The other queue pair still gets it.
	ASSERT_EQ(senders_[1].post(IBV_WR_SEND, {senders_[1].sge(0, 10)}), 0);
	ASSERT_EQ(poll_n(senders_[1].send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	const auto received = poll_n(receivers_[1].recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 5u);
}

// ibv_modify_srq's limit arms the SRQ: once fewer receives than the limit wait in it,
// IBV_EVENT_SRQ_LIMIT_REACHED comes once and the limit reads 0 again.
TEST_F(VerbsSrq, LimitReachedIsReportedOnceAndDisarms)
{
	for (uint64_t i = 0; i < 4; ++i) {
		ASSERT_EQ(post_srq(10 + i, {sge(100 * i, 64)}), 0);
	}
	ibv_srq_attr attr{};
	attr.srq_limit = 3;
	ASSERT_EQ(ibv_modify_srq(srq_, &attr, IBV_SRQ_LIMIT), 0);
	// One message: 3 receives left, not below the limit.
	ASSERT_EQ(senders_[0].post(IBV_WR_SEND, {senders_[0].sge(0, 8)}), 0);
	ASSERT_EQ(poll_n(receivers_[0].recv_cq, 1).size(), 1u);
	pollfd pfd{ctx_->async_fd, POLLIN, 0};
	EXPECT_EQ(poll(&pfd, 1, 20), 0) << "an event before the limit was crossed";
	// The second leaves 2: the event comes, for this SRQ.
	ASSERT_EQ(senders_[1].post(IBV_WR_SEND, {senders_[1].sge(0, 8)}), 0);
	ASSERT_EQ(poll_n(receivers_[1].recv_cq, 1).size(), 1u);
	ASSERT_EQ(poll(&pfd, 1, verbs_test::kTimeoutMs), 1);
	ibv_async_event event{};
	ASSERT_EQ(ibv_get_async_event(ctx_, &event), 0);
	EXPECT_EQ(event.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	EXPECT_EQ(event.element.srq, srq_);
	ibv_ack_async_event(&event);
	ASSERT_EQ(ibv_query_srq(srq_, &attr), 0);
	EXPECT_EQ(attr.srq_limit, 0u) << "the SRQ is disarmed";
	// Disarmed: the next message raises nothing.
	ASSERT_EQ(senders_[0].post(IBV_WR_SEND, {senders_[0].sge(0, 8)}), 0);
	ASSERT_EQ(poll_n(receivers_[0].recv_cq, 1).size(), 1u);
	EXPECT_EQ(poll(&pfd, 1, 20), 0);
}

} // namespace
