// The mlx5 work queues of verbs objects (mlx5dv_init_obj) executed by softdpu's work-queue engine:
// WQEs written into the send queue with mlx5dv.h's helpers, the doorbell rung, CQEs polled by hand.
// Loopback on the first device: queue pair `a` (mlx5) talks to `b` (mlx5 or plain verbs).
#include "wq_fixture.hpp"

#include <dlfcn.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <vector>

using namespace mlx5_test;

namespace {

constexpr size_t kBuffer = 8192;

class WqTest : public Mlx5Test {
protected:
	void SetUp() override
	{
		*this->state() = {};
		Mlx5Test::SetUp();
		if (HasFatalFailure())
			return;
		pd_ = ibv_alloc_pd(context_);
		ASSERT_NE(pd_, nullptr);
		cq_a_.cq = ibv_create_cq(context_, 63, nullptr, nullptr, 0);
		cq_b_.cq = ibv_create_cq(context_, 63, nullptr, nullptr, 0);
		ASSERT_NE(cq_a_.cq, nullptr);
		ASSERT_NE(cq_b_.cq, nullptr);
		a_.qp = create_qp(cq_a_.cq);
		b_.qp = create_qp(cq_b_.cq);
		ASSERT_NE(a_.qp, nullptr);
		ASSERT_NE(b_.qp, nullptr);
		connect_rc(context_, a_.qp, b_.qp->qp_num);
		connect_rc(context_, b_.qp, a_.qp->qp_num);
		local_.assign(kBuffer, 0);
		remote_.assign(kBuffer, 0);
		local_mr_ = reg(local_.data(), local_.size());
		remote_mr_ = reg(remote_.data(), remote_.size());
		ASSERT_NE(local_mr_, nullptr);
		ASSERT_NE(remote_mr_, nullptr);
	}

	void TearDown() override
	{
		for (ibv_qp *qp : {a_.qp, b_.qp})
			if (qp != nullptr) {
				EXPECT_EQ(ibv_destroy_qp(qp), 0);
			}
		for (ibv_mr *mr : {local_mr_, remote_mr_})
			if (mr != nullptr) {
				EXPECT_EQ(ibv_dereg_mr(mr), 0);
			}
		for (ibv_cq *cq : {cq_a_.cq, cq_b_.cq})
			if (cq != nullptr) {
				EXPECT_EQ(ibv_destroy_cq(cq), 0);
			}
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		Mlx5Test::TearDown();
		context_ = nullptr;
		list_ = nullptr;
		devices_.clear();
	}

	ibv_qp *create_qp(ibv_cq *cq, uint32_t max_send_wr = 64)
	{
		ibv_qp_init_attr attr{};
		attr.qp_type = IBV_QPT_RC;
		attr.send_cq = cq;
		attr.recv_cq = cq;
		attr.cap.max_send_wr = max_send_wr;
		attr.cap.max_recv_wr = 64;
		attr.cap.max_send_sge = 2;
		attr.cap.max_recv_sge = 2;
		attr.cap.max_inline_data = 128;
		return ibv_create_qp(pd_, &attr);
	}

	ibv_mr *reg(void *addr, size_t length)
	{
		return ibv_reg_mr(pd_, addr, length,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC);
	}

	// The mlx5 view of `qp` and its CQ.
	void init(DvQp &qp, DvCq &cq)
	{
		mlx5dv_obj obj{};
		obj.qp.in = qp.qp;
		obj.qp.out = &qp.dv;
		obj.cq.in = cq.cq;
		obj.cq.out = &cq.dv;
		ASSERT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ), 0);
	}

	// A requester CQE for WQE `index` of opcode `opcode` on `qp`.
	void expect_req(const mlx5_cqe64 &cqe, uint16_t index, uint8_t opcode, const DvQp &qp)
	{
		EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ) << "syndrome " << int(cqe_syndrome(cqe));
		EXPECT_EQ(be16toh(cqe.wqe_counter), index);
		EXPECT_EQ(be32toh(cqe.sop_drop_qpn) & 0xffffff, qp.qp->qp_num);
		EXPECT_EQ(be32toh(cqe.sop_drop_qpn) >> 24, opcode);
	}

	void expect_error(const mlx5_cqe64 &cqe, uint8_t opcode, uint16_t index, uint8_t syndrome)
	{
		EXPECT_EQ(cqe_opcode(cqe), opcode);
		EXPECT_EQ(be16toh(cqe.wqe_counter), index);
		EXPECT_EQ(cqe_syndrome(cqe), syndrome);
	}

	uint16_t write_rdma(DvQp &qp, uint8_t opcode, size_t offset, size_t length, bool signaled = true,
			    uint32_t imm = 0)
	{
		const uint16_t index = qp.pi;
		qp.write(opcode, signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0,
			 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + offset), remote_mr_->rkey),
			  data_seg(local_.data() + offset, static_cast<uint32_t>(length), local_mr_->lkey)},
			 imm);
		return index;
	}

	// Everything SetUp makes, forgotten by the next SetUp (tests that start over call TearDown and
	// SetUp).
	struct State {
		ibv_pd *pd = nullptr;
		DvCq cq_a;
		DvCq cq_b;
		DvQp a;
		DvQp b;
		ibv_mr *local_mr = nullptr;
		ibv_mr *remote_mr = nullptr;
	};
	State *state() { return &state_; }

	State state_;
	ibv_pd *&pd_ = state_.pd;
	DvCq &cq_a_ = state_.cq_a;
	DvCq &cq_b_ = state_.cq_b;
	DvQp &a_ = state_.a;
	DvQp &b_ = state_.b;
	ibv_mr *&local_mr_ = state_.local_mr;
	ibv_mr *&remote_mr_ = state_.remote_mr;
	std::vector<uint8_t> local_;
	std::vector<uint8_t> remote_;
};

TEST_F(WqTest, InitObjDescribesTheQueues)
{
	init(a_, cq_a_);
	EXPECT_NE(a_.dv.dbrec, nullptr);
	EXPECT_NE(a_.dv.sq.buf, nullptr);
	EXPECT_EQ(a_.dv.sq.stride, 64u);
	EXPECT_GE(a_.dv.sq.wqe_cnt, 64u);
	EXPECT_EQ(a_.dv.sq.wqe_cnt & (a_.dv.sq.wqe_cnt - 1), 0u);
	EXPECT_GE(a_.dv.rq.wqe_cnt, 64u);
	EXPECT_EQ(a_.dv.rq.stride, 32u); // max_recv_sge 2: 2 data segments
	EXPECT_NE(a_.dv.bf.reg, nullptr);
	EXPECT_GT(a_.dv.bf.size, 0u);
	EXPECT_EQ(cq_a_.dv.cqe_size, 64u);
	EXPECT_GE(cq_a_.dv.cqe_cnt, 64u);
	EXPECT_EQ(cq_a_.dv.cqe_cnt & (cq_a_.dv.cqe_cnt - 1), 0u);
	EXPECT_NE(cq_a_.dv.cq_uar, nullptr);
	EXPECT_EQ(cq_a_.dv.cqn, cq_a_.cq->handle);
	// Every CQE starts invalid and owned by software.
	for (uint32_t i = 0; i < cq_a_.dv.cqe_cnt; ++i)
		EXPECT_EQ(cq_a_.slot(i)->op_own, 0xf1);
	// Asked again: the same queues.
	DvQp again{a_.qp, {}, 0, 0};
	DvCq cq_again{cq_a_.cq, {}, 0};
	init(again, cq_again);
	EXPECT_EQ(again.dv.sq.buf, a_.dv.sq.buf);
	EXPECT_EQ(cq_again.dv.buf, cq_a_.dv.buf);

	mlx5dv_pd pd{};
	mlx5dv_obj obj{};
	obj.pd.in = pd_;
	obj.pd.out = &pd;
	ASSERT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD), 0);
	EXPECT_EQ(pd.pdn, pd_->handle);
}

TEST_F(WqTest, InitObjRefusesWhatHasNoMlx5Layout)
{
	mlx5dv_obj obj{};
	EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD), EINVAL); // no PD given
	EXPECT_EQ(mlx5dv_init_obj(nullptr, MLX5DV_OBJ_PD), EINVAL);
	mlx5dv_srq srq{};
	obj.srq.out = &srq;
	EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_DM), EOPNOTSUPP);
	// A UD QP: its WQE format is not executed.
	ibv_qp_init_attr attr{};
	attr.qp_type = IBV_QPT_UD;
	attr.send_cq = cq_a_.cq;
	attr.recv_cq = cq_a_.cq;
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 4;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	ibv_qp *ud = ibv_create_qp(pd_, &attr);
	ASSERT_NE(ud, nullptr);
	mlx5dv_qp dv{};
	obj.qp.in = ud;
	obj.qp.out = &dv;
	EXPECT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), EOPNOTSUPP);
	EXPECT_EQ(ibv_destroy_qp(ud), 0);
	// Both versions of the symbol answer.
	using InitObj = int (*)(mlx5dv_obj *, uint64_t);
	for (const char *version : {"MLX5_1.0", "MLX5_1.2"}) {
		void *symbol = dlvsym(RTLD_DEFAULT, "mlx5dv_init_obj", version);
		ASSERT_NE(symbol, nullptr) << version << ": " << dlerror();
		mlx5dv_obj some{};
		mlx5dv_cq cq{};
		some.cq.in = cq_b_.cq;
		some.cq.out = &cq;
		EXPECT_EQ(reinterpret_cast<InitObj>(symbol)(&some, MLX5DV_OBJ_CQ), 0) << version;
		EXPECT_EQ(cq.cqn, cq_b_.cq->handle) << version;
	}
}

TEST_F(WqTest, RdmaWriteToAVerbsPeer)
{
	init(a_, cq_a_);
	std::iota(local_.begin(), local_.end(), 1);
	const uint16_t index = write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, 0, 4096);
	a_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, index, MLX5_OPCODE_RDMA_WRITE, a_);
	EXPECT_EQ(std::memcmp(remote_.data(), local_.data(), 4096), 0);
	EXPECT_EQ(remote_[4096], 0); // nothing past the message
	// The verbs CQ behind it reports nothing: its completions became CQEs.
	ibv_wc wc{};
	EXPECT_EQ(ibv_poll_cq(cq_a_.cq, 1, &wc), 0);
}

TEST_F(WqTest, UnsignaledRunCompletesWithItsLastWqe)
{
	init(a_, cq_a_);
	std::iota(local_.begin(), local_.end(), 7);
	for (int i = 0; i < 9; ++i)
		write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, size_t(i) * 64, 64, false);
	const uint16_t last = write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, 9 * 64, 64, true);
	a_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, last, MLX5_OPCODE_RDMA_WRITE, a_);
	EXPECT_EQ(std::memcmp(remote_.data(), local_.data(), 640), 0);
	EXPECT_FALSE(cq_a_.poll(&cqe, std::chrono::milliseconds(50))); // one CQE for the run
}

TEST_F(WqTest, SendAndWriteWithImmediateBetweenMlx5Queues)
{
	init(a_, cq_a_);
	init(b_, cq_b_);
	std::iota(local_.begin(), local_.end(), 3);
	b_.post_recv({{reinterpret_cast<uintptr_t>(remote_.data()), 256, remote_mr_->lkey}});
	b_.post_recv({{reinterpret_cast<uintptr_t>(remote_.data() + 1024), 16, remote_mr_->lkey},
		      {reinterpret_cast<uintptr_t>(remote_.data() + 2048), 16, remote_mr_->lkey}});
	b_.post_recv({{reinterpret_cast<uintptr_t>(remote_.data() + 4096), 64, remote_mr_->lkey}});

	const uint16_t send = a_.pi;
	a_.write(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, {data_seg(local_.data(), 200, local_mr_->lkey)});
	const uint16_t send_imm = a_.pi;
	a_.write(MLX5_OPCODE_SEND_IMM, MLX5_WQE_CTRL_CQ_UPDATE, {data_seg(local_.data() + 300, 24, local_mr_->lkey)},
		 htobe32(0x12345678));
	const uint16_t write_imm = write_rdma(a_, MLX5_OPCODE_RDMA_WRITE_IMM, 6000, 100, true, htobe32(0xabcdef01));
	a_.ring();

	mlx5_cqe64 cqe{};
	for (auto [index, opcode] : {std::pair{send, MLX5_OPCODE_SEND}, std::pair{send_imm, MLX5_OPCODE_SEND_IMM},
				     std::pair{write_imm, MLX5_OPCODE_RDMA_WRITE_IMM}}) {
		ASSERT_TRUE(cq_a_.poll(&cqe));
		expect_req(cqe, index, static_cast<uint8_t>(opcode), a_);
	}
	ASSERT_TRUE(cq_b_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
	EXPECT_EQ(be32toh(cqe.byte_cnt), 200u);
	EXPECT_EQ(be16toh(cqe.wqe_counter), 0);
	EXPECT_EQ(be32toh(cqe.sop_drop_qpn) & 0xffffff, b_.qp->qp_num);
	EXPECT_EQ(std::memcmp(remote_.data(), local_.data(), 200), 0);
	ASSERT_TRUE(cq_b_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND_IMM);
	EXPECT_EQ(be32toh(cqe.byte_cnt), 24u);
	EXPECT_EQ(be16toh(cqe.wqe_counter), 1);
	EXPECT_EQ(be32toh(cqe.imm_inval_pkey), 0x12345678u);
	EXPECT_EQ(std::memcmp(remote_.data() + 1024, local_.data() + 300, 16), 0); // scattered over two
	EXPECT_EQ(std::memcmp(remote_.data() + 2048, local_.data() + 316, 8), 0);
	ASSERT_TRUE(cq_b_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_WR_IMM);
	EXPECT_EQ(be16toh(cqe.wqe_counter), 2);
	EXPECT_EQ(be32toh(cqe.imm_inval_pkey), 0xabcdef01u);
	EXPECT_EQ(std::memcmp(remote_.data() + 6000, local_.data() + 6000, 100), 0);
}

TEST_F(WqTest, VerbsPeerSendsToAnMlx5ReceiveQueue)
{
	init(a_, cq_a_);
	a_.post_recv({{reinterpret_cast<uintptr_t>(local_.data()), 512, local_mr_->lkey}});
	std::iota(remote_.begin(), remote_.end(), 11);
	ibv_sge sge{reinterpret_cast<uintptr_t>(remote_.data()), 300, remote_mr_->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(b_.qp, &wr, &bad), 0);
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_a_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
	EXPECT_EQ(be32toh(cqe.byte_cnt), 300u);
	EXPECT_EQ(std::memcmp(local_.data(), remote_.data(), 300), 0);
	ibv_wc wc{};
	for (int i = 0; i < 1000 && ibv_poll_cq(cq_b_.cq, 1, &wc) == 0; ++i)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST_F(WqTest, RdmaReadAndAtomics)
{
	init(a_, cq_a_);
	std::iota(remote_.begin(), remote_.end(), 5);
	const uint16_t read = a_.pi;
	a_.write(MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 100), remote_mr_->rkey),
		  data_seg(local_.data() + 8, 1000, local_mr_->lkey)});
	uint64_t counter = 40;
	std::memcpy(remote_.data() + 4096, &counter, 8);
	const uint16_t fa = a_.pi;
	a_.write(MLX5_OPCODE_ATOMIC_FA, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 4096), remote_mr_->rkey), atomic_seg(2, 0),
		  data_seg(local_.data() + 4096, 8, local_mr_->lkey)});
	const uint16_t cs = a_.pi;
	a_.write(MLX5_OPCODE_ATOMIC_CS, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 4096), remote_mr_->rkey), atomic_seg(99, 42),
		  data_seg(local_.data() + 4104, 8, local_mr_->lkey)});
	a_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, read, MLX5_OPCODE_RDMA_READ, a_);
	EXPECT_EQ(be32toh(cqe.byte_cnt), 1000u);
	EXPECT_EQ(std::memcmp(local_.data() + 8, remote_.data() + 100, 1000), 0);
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, fa, MLX5_OPCODE_ATOMIC_FA, a_);
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, cs, MLX5_OPCODE_ATOMIC_CS, a_);
	uint64_t fetched = 0;
	uint64_t compared = 0;
	std::memcpy(&fetched, local_.data() + 4096, 8);
	std::memcpy(&compared, local_.data() + 4104, 8);
	std::memcpy(&counter, remote_.data() + 4096, 8);
	EXPECT_EQ(fetched, 40u);  // before the add
	EXPECT_EQ(compared, 42u); // after the add, before the swap
	EXPECT_EQ(counter, 99u);  // swapped
}

TEST_F(WqTest, InlineWritesIncludingOneAcrossTheRingEnd)
{
	init(a_, cq_a_);
	const uint32_t ring = a_.dv.sq.wqe_cnt;
	// Fill the ring up to its last BB with signaled NOPs, so the next WQE wraps.
	mlx5_cqe64 cqe{};
	while (a_.pi != ring - 1) {
		const uint16_t index = a_.pi;
		a_.write(MLX5_OPCODE_NOP, MLX5_WQE_CTRL_CQ_UPDATE, {});
		a_.ring();
		ASSERT_TRUE(cq_a_.poll(&cqe));
		expect_req(cqe, index, MLX5_OPCODE_NOP, a_);
	}
	std::vector<uint8_t> text(100);
	std::iota(text.begin(), text.end(), 33);
	auto segments = inline_segs(text.data(), static_cast<uint32_t>(text.size()));
	segments.insert(segments.begin(),
			raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 10), remote_mr_->rkey));
	const uint16_t wrapped = a_.pi;
	a_.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, segments);
	EXPECT_GT(a_.pi, ring); // it spans the end of the ring
	a_.ring();
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_req(cqe, wrapped, MLX5_OPCODE_RDMA_WRITE, a_);
	EXPECT_EQ(std::memcmp(remote_.data() + 10, text.data(), text.size()), 0);
	EXPECT_EQ(remote_[9], 0);
	EXPECT_EQ(remote_[110], 0);
}

TEST_F(WqTest, RingWrapsManyTimes)
{
	init(a_, cq_a_);
	std::iota(local_.begin(), local_.end(), 1);
	const uint32_t total = a_.dv.sq.wqe_cnt * 3 + 5;
	mlx5_cqe64 cqe{};
	uint32_t done = 0;
	while (done < total) {
		const uint32_t batch = std::min<uint32_t>(total - done, 16);
		std::vector<uint16_t> indexes;
		for (uint32_t i = 0; i < batch; ++i)
			indexes.push_back(write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, ((done + i) % 64) * 64, 64,
						     i % 3 == 2 || i + 1 == batch));
		a_.ring();
		for (uint32_t i = 0; i < batch; ++i) {
			if (!(i % 3 == 2 || i + 1 == batch))
				continue;
			ASSERT_TRUE(cq_a_.poll(&cqe)) << "at " << done + i;
			expect_req(cqe, indexes[i], MLX5_OPCODE_RDMA_WRITE, a_);
		}
		done += batch;
	}
	EXPECT_EQ(std::memcmp(remote_.data(), local_.data(), 4096), 0);
}

TEST_F(WqTest, MalformedWqesFailTheQueueAfterTheWorkBeforeThem)
{
	struct Case {
		const char *what;
		uint8_t opcode;
		uint32_t qpn;
		int ds;
		uint8_t syndrome;
	};
	const Case cases[] = {
	    {"unknown opcode", 0x3f, ~0u, -1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"SEND_INVAL", MLX5_OPCODE_SEND_INVAL, ~0u, -1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"another QP's number", MLX5_OPCODE_RDMA_WRITE, 0x123456, -1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"ds 0", MLX5_OPCODE_RDMA_WRITE, ~0u, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"ds without the raddr segment", MLX5_OPCODE_RDMA_WRITE, ~0u, 1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"ds past the doorbell", MLX5_OPCODE_RDMA_WRITE, ~0u, 40, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.what);
		TearDown();
		SetUp();
		init(a_, cq_a_);
		std::iota(local_.begin(), local_.end(), 1);
		const uint16_t good = write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, 0, 512, false);
		const uint16_t bad = a_.pi;
		a_.write(c.opcode, MLX5_WQE_CTRL_CQ_UPDATE,
			 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 1024), remote_mr_->rkey),
			  data_seg(local_.data() + 1024, 512, local_mr_->lkey)},
			 0, c.qpn, c.ds);
		if (c.ds == 40)
			a_.pi = static_cast<uint16_t>(bad + 1); // rung over its first BB only
		const uint16_t after = write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, 2048, 512, true);
		a_.ring();
		mlx5_cqe64 cqe{};
		ASSERT_TRUE(cq_a_.poll(&cqe));
		expect_error(cqe, MLX5_CQE_REQ_ERR, bad, c.syndrome);
		EXPECT_EQ(be32toh(reinterpret_cast<mlx5_err_cqe *>(&cqe)->s_wqe_opcode_qpn) & 0xffffff, a_.qp->qp_num);
		EXPECT_EQ(std::memcmp(remote_.data(), local_.data(), 512), 0) << "the WQE before ran";
		(void)good;
		if (c.ds != 40) {
			ASSERT_TRUE(cq_a_.poll(&cqe));
			expect_error(cqe, MLX5_CQE_REQ_ERR, after, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		}
		EXPECT_EQ(remote_[1024], 0) << "the malformed WQE did not run";
		EXPECT_EQ(remote_[2048], 0) << "the flushed WQE did not run";
		ibv_qp_attr attr{};
		ibv_qp_init_attr init_attr{};
		ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_STATE, &init_attr), 0);
		EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
	}
}

TEST_F(WqTest, BadKeysGiveErrorCqesAndTouchNothing)
{
	init(a_, cq_a_);
	std::iota(local_.begin(), local_.end(), 1);
	// A remote key the target never registered: remote access error.
	const uint16_t bad_rkey = a_.pi;
	a_.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data()), remote_mr_->rkey ^ 0x5a5a00),
		  data_seg(local_.data(), 64, local_mr_->lkey)});
	a_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_error(cqe, MLX5_CQE_REQ_ERR, bad_rkey, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	EXPECT_EQ(std::count(remote_.begin(), remote_.end(), 0), static_cast<long>(remote_.size()));

	// A range past the registration: the same, nothing written.
	TearDown();
	SetUp();
	init(a_, cq_a_);
	const uint16_t past = a_.pi;
	a_.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + kBuffer - 32), remote_mr_->rkey),
		  data_seg(local_.data(), 64, local_mr_->lkey)});
	a_.ring();
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_error(cqe, MLX5_CQE_REQ_ERR, past, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	EXPECT_EQ(std::count(remote_.begin(), remote_.end(), 0), static_cast<long>(remote_.size()));

	// A local key this process never registered: local protection error.
	TearDown();
	SetUp();
	init(a_, cq_a_);
	const uint16_t bad_lkey = a_.pi;
	a_.write(MLX5_OPCODE_RDMA_READ, MLX5_WQE_CTRL_CQ_UPDATE,
		 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data()), remote_mr_->rkey),
		  data_seg(local_.data(), 64, local_mr_->lkey ^ 0x5a5a00)});
	a_.ring();
	ASSERT_TRUE(cq_a_.poll(&cqe));
	expect_error(cqe, MLX5_CQE_REQ_ERR, bad_lkey, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	EXPECT_EQ(std::count(local_.begin(), local_.end(), 0), static_cast<long>(local_.size()));
}

TEST_F(WqTest, AnMlx5ArmRaisesTheVerbsCompletionChannelsEvent)
{
	ibv_comp_channel *channel = ibv_create_comp_channel(context_);
	ASSERT_NE(channel, nullptr);
	ibv_cq *cq = ibv_create_cq(context_, 15, this, channel, 0);
	ASSERT_NE(cq, nullptr);
	ibv_qp *qp = create_qp(cq);
	ibv_qp *peer = create_qp(cq_b_.cq);
	ASSERT_NE(qp, nullptr);
	ASSERT_NE(peer, nullptr);
	connect_rc(context_, qp, peer->qp_num);
	connect_rc(context_, peer, qp->qp_num);
	{
		DvQp dv{qp, {}, 0, 0};
		DvCq dv_cq{cq, {}, 0};
		init(dv, dv_cq);
		ASSERT_EQ(fcntl(channel->fd, F_SETFL, O_NONBLOCK), 0);
		// The first arm of the CQ (sn 0, consumer 0), as UCX arms an mlx5 CQ, then a CQE.
		dv_cq.arm(0, false);
		dv.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
			 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data()), remote_mr_->rkey),
			  data_seg(local_.data(), 8, local_mr_->lkey)});
		dv.ring();
		mlx5_cqe64 cqe{};
		ASSERT_TRUE(dv_cq.poll(&cqe));
		ibv_cq *event_cq = nullptr;
		void *event_context = nullptr;
		int got = -1;
		for (int i = 0; i < 2000 && got != 0; ++i) {
			got = ibv_get_cq_event(channel, &event_cq, &event_context);
			if (got != 0)
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		ASSERT_EQ(got, 0);
		EXPECT_EQ(event_cq, cq);
		EXPECT_EQ(event_context, this);
		ibv_ack_cq_events(cq, 1);
		// The arm is spent: another CQE raises nothing until the next arm.
		dv.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
			 {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data()), remote_mr_->rkey),
			  data_seg(local_.data(), 8, local_mr_->lkey)});
		dv.ring();
		ASSERT_TRUE(dv_cq.poll(&cqe));
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		EXPECT_NE(ibv_get_cq_event(channel, &event_cq, &event_context), 0);
	}
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_qp(peer), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(channel), 0);
}

// The engine thread serves queues while the test's thread destroys them (the TSan pass runs the
// *Concurrent* suites).
using WqConcurrentTest = WqTest;

TEST_F(WqConcurrentTest, DestroyWhileTheEngineServesTheQueues)
{
	// Queues destroyed with work in flight: the engine lets go of them first (ASan/TSan clean).
	for (int round = 0; round < 5; ++round) {
		TearDown();
		SetUp();
		init(a_, cq_a_);
		init(b_, cq_b_);
		for (int i = 0; i < 20; ++i)
			write_rdma(a_, MLX5_OPCODE_RDMA_WRITE, size_t(i) * 64, 64, i % 2 == 0);
		b_.post_recv({{reinterpret_cast<uintptr_t>(remote_.data()), 64, remote_mr_->lkey}});
		a_.ring();
	}
}

TEST_F(Mlx5Test, DevxEventChannelsCheckTheirArguments)
{
	mlx5dv_devx_event_channel *channel =
	    mlx5dv_devx_create_event_channel(context_, MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);
	ASSERT_NE(channel, nullptr) << "errno " << errno;
	EXPECT_GE(channel->fd, 0);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_create_event_channel(context_, static_cast<mlx5dv_devx_create_event_channel_flags>(2)),
		  nullptr);
	EXPECT_EQ(errno, EINVAL);
	// A context opened without DevX has no DevX objects to report on.
	ibv_context *plain = ibv_open_device(devices_[0]);
	ASSERT_NE(plain, nullptr);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_create_event_channel(plain, static_cast<mlx5dv_devx_create_event_channel_flags>(0)),
		  nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	EXPECT_EQ(ibv_close_device(plain), 0);

	uint16_t comp[] = {0};
	uint16_t other[] = {0x5};
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event(channel, nullptr, sizeof(comp), comp, 1), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event(channel, nullptr, 0, comp, 1), EINVAL);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event(channel, nullptr, sizeof(other), other, 1), EINVAL);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event(nullptr, nullptr, sizeof(comp), comp, 1), EINVAL);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event_fd(channel, 0, nullptr, 0), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event_fd(channel, -1, nullptr, 0), EINVAL);

	ASSERT_EQ(fcntl(channel->fd, F_SETFL, O_NONBLOCK), 0);
	mlx5dv_devx_async_event_hdr header{};
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_get_event(channel, &header, sizeof(header)), -1);
	EXPECT_EQ(errno, EAGAIN);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_get_event(nullptr, &header, sizeof(header)), -1);
	EXPECT_EQ(errno, EINVAL);
	mlx5dv_devx_destroy_event_channel(channel);
	mlx5dv_devx_destroy_event_channel(nullptr);
}

} // namespace
