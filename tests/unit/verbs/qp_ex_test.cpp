// The extended send API (ibv_qp_to_qp_ex, ibv_wr_start ... ibv_wr_complete / ibv_wr_abort), as
// perftest drives it, within one process.
#include "verbs_test_support.hpp"

#include <vector>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_for;
using verbs_test::poll_n;
using verbs_test::RcPair;

class VerbsQpEx : public ::testing::Test {
protected:
	void SetUp() override
	{
		Options options;
		options.send_ops = true;
		ASSERT_TRUE(pair_.connect(options));
		qpx_ = ibv_qp_to_qp_ex(pair_.a.qp);
		ASSERT_NE(qpx_, nullptr);
		EXPECT_EQ(&qpx_->qp_base, pair_.a.qp);
	}
	RcPair pair_;
	ibv_qp_ex *qpx_ = nullptr;
};

TEST_F(VerbsQpEx, BatchOfWriteSendAndReadCompletes)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	for (int i = 0; i < 256; ++i)
		a.buf()[i] = static_cast<uint8_t>(i);
	std::memset(b.buf() + 4000, 0x7e, 32);
	ASSERT_EQ(b.post_recv({b.sge(2000, 100)}, 50), 0);

	ibv_wr_start(qpx_);
	qpx_->wr_id = 1;
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(100));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 64);
	qpx_->wr_id = 2;
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qpx_, htobe32(0x55));
	const ibv_sge list[2] = {a.sge(64, 16), a.sge(128, 16)};
	ibv_wr_set_sge_list(qpx_, 2, list);
	qpx_->wr_id = 3;
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx_, b.mr->rkey, b.addr(4000));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(3000), 32);
	ASSERT_EQ(ibv_wr_complete(qpx_), 0);

	const auto done = poll_n(a.send_cq, 3);
	ASSERT_EQ(done.size(), 3u);
	const ibv_wc_opcode opcodes[3] = {IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ};
	for (size_t i = 0; i < 3; ++i) {
		EXPECT_EQ(done[i].wr_id, i + 1);
		EXPECT_EQ(done[i].status, IBV_WC_SUCCESS);
		EXPECT_EQ(done[i].opcode, opcodes[i]);
	}
	EXPECT_EQ(std::memcmp(b.buf() + 100, a.buf(), 64), 0);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 50u);
	EXPECT_EQ(received[0].byte_len, 32u);
	EXPECT_EQ(be32toh(received[0].imm_data), 0x55u);
	EXPECT_EQ(std::memcmp(b.buf() + 2000, a.buf() + 64, 16), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 2016, a.buf() + 128, 16), 0);
	EXPECT_EQ(std::memcmp(a.buf() + 3000, b.buf() + 4000, 32), 0);
}

TEST_F(VerbsQpEx, AtomicsInlineAndWriteWithImm)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	auto *word = reinterpret_cast<uint64_t *>(b.buf() + 8);
	*word = 40;
	ASSERT_EQ(b.post_recv({b.sge(0, 8)}, 60), 0);
	char text[] = "inline through wr_set_inline_data";

	ibv_wr_start(qpx_);
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	qpx_->wr_id = 1;
	ibv_wr_atomic_fetch_add(qpx_, b.mr->rkey, b.addr(8), 2);
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 8);
	qpx_->wr_id = 2;
	ibv_wr_atomic_cmp_swp(qpx_, b.mr->rkey, b.addr(8), 42, 1000);
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(8), 8);
	qpx_->wr_id = 3;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(500));
	ibv_wr_set_inline_data(qpx_, text, sizeof(text));
	qpx_->wr_id = 4;
	ibv_wr_rdma_write_imm(qpx_, b.mr->rkey, b.addr(600), htobe32(0x99));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 8);
	ASSERT_EQ(ibv_wr_complete(qpx_), 0);
	std::memset(text, 0, sizeof(text)); // inline data was copied

	const auto done = poll_n(a.send_cq, 4);
	ASSERT_EQ(done.size(), 4u);
	for (size_t i = 0; i < 4; ++i) {
		EXPECT_EQ(done[i].wr_id, i + 1);
		EXPECT_EQ(done[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(done[i].status);
	}
	EXPECT_EQ(done[0].opcode, IBV_WC_FETCH_ADD);
	EXPECT_EQ(done[1].opcode, IBV_WC_COMP_SWAP);
	EXPECT_EQ(reinterpret_cast<uint64_t *>(a.buf())[0], 40u);
	EXPECT_EQ(reinterpret_cast<uint64_t *>(a.buf())[1], 42u);
	EXPECT_EQ(*word, 1000u);
	EXPECT_STREQ(reinterpret_cast<const char *>(b.buf() + 500), "inline through wr_set_inline_data");
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(be32toh(received[0].imm_data), 0x99u);
}

TEST_F(VerbsQpEx, AbortDropsTheBatch)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	std::memset(a.buf(), 0x11, 16);
	ibv_wr_start(qpx_);
	qpx_->wr_id = 1;
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(0));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 16);
	ibv_wr_abort(qpx_);
	EXPECT_TRUE(poll_for(a.send_cq, 20).empty());
	EXPECT_EQ(b.buf()[0], 0);

	// The queue pair is usable after an abort.
	ibv_wr_start(qpx_);
	qpx_->wr_id = 2;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(0));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 16);
	ASSERT_EQ(ibv_wr_complete(qpx_), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].wr_id, 2u);
	EXPECT_EQ(b.buf()[0], 0x11);
}

TEST_F(VerbsQpEx, BadRequestFailsTheWholeBatch)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(a.qp, &attr, IBV_QP_CAP, &init), 0);
	std::vector<ibv_sge> too_many(init.cap.max_send_sge + 1, a.sge(0, 4));
	std::memset(a.buf(), 0x22, 16);
	ibv_wr_start(qpx_);
	qpx_->wr_id = 1;
	qpx_->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(0));
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 16);
	qpx_->wr_id = 2;
	ibv_wr_rdma_write(qpx_, b.mr->rkey, b.addr(100));
	ibv_wr_set_sge_list(qpx_, too_many.size(), too_many.data());
	EXPECT_EQ(ibv_wr_complete(qpx_), EINVAL);
	EXPECT_TRUE(poll_for(a.send_cq, 20).empty()) << "nothing of the batch was queued";
	EXPECT_EQ(b.buf()[0], 0);

	// A malformed atomic too.
	ibv_wr_start(qpx_);
	ibv_wr_atomic_fetch_add(qpx_, b.mr->rkey, b.addr(8), 1);
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 4);
	EXPECT_EQ(ibv_wr_complete(qpx_), EINVAL);
	// And an operation the device does not offer.
	ibv_wr_start(qpx_);
	ibv_wr_send_inv(qpx_, 5);
	ibv_wr_set_sge(qpx_, a.mr->lkey, a.addr(0), 4);
	EXPECT_NE(ibv_wr_complete(qpx_), 0);
	EXPECT_TRUE(poll_for(a.send_cq, 20).empty());
	EXPECT_EQ(a.state(), IBV_QPS_RTS);
}

} // namespace
