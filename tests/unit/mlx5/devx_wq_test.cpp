// A QP and CQ made entirely through DevX commands (PD, umems, mkey, UAR, CQ, QP, RST2INIT /
// INIT2RTR / RTR2RTS) executing WQEs against a verbs peer QP in the same process (loopback): RDMA
// WRITE, READ and SEND with the DevX mkey as lkey, a SEND into the DevX receive queue, CQEs polled
// from the DevX CQ's buffer; a bad lkey, a doorbell past the queue; completion events of the DevX
// CQ through a DevX event channel. Outboxes decoded with the fixture's prm_bits.
#include "devx_support.hpp"
#include "wq_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cstring>

using namespace mlx5_test;

namespace {

constexpr uint32_t kLogCq = 4;        // 16 CQEs at byte 0 of the queue umem
constexpr uint32_t kLogSq = 4;        // 16 send basic blocks
constexpr uint32_t kLogRq = 2;        // 4 receive WQEs of 64 bytes
constexpr uint64_t kWqOffset = 4096;  // the RQ (256 bytes) then the SQ (1024 bytes)
constexpr uint64_t kDoorbells = 8192; // CQ doorbell record; the QP's at + 64
constexpr size_t kData = 8192;        // the data umem: local buffer under the DevX mkey
constexpr uint8_t kVariant = 0x5a;
constexpr uint32_t kUserIndex = 0x12345; // qpc.user_index: every CQE of the QP carries it

class DevxWqTest : public DevxTest {
protected:
	void SetUp() override
	{
		DevxTest::SetUp();
		if (HasFatalFailure())
			return;
		queues_ = std::make_unique<Pages>(16384);
		data_ = std::make_unique<Pages>(kData);
		queue_umem_ = reg_umem(queues_->data, queues_->size);
		data_umem_ = reg_umem(data_->data, data_->size);
		ASSERT_NE(queue_umem_, nullptr);
		ASSERT_NE(data_umem_, nullptr);
		uar_ = alloc_uar();
		ASSERT_NE(uar_, nullptr);
		ASSERT_NE(alloc_pd(&pdn_), nullptr);

		Mailbox out(16);
		mlx5dv_devx_obj *mkey = create(
		    mkey_in(pdn_, data_umem_->umem_id, 0, reinterpret_cast<uintptr_t>(data_->data), kData, kVariant),
		    &out);
		ASSERT_NE(mkey, nullptr) << errno << " status " << int(status_of(out));
		keep(mkey);
		lkey_ = id_of(out) << 8 | kVariant;

		// The CQ: buffer of invalid CQEs, doorbell record zeroed.
		auto *cqes = reinterpret_cast<mlx5_cqe64 *>(queues_->data);
		for (uint32_t i = 0; i < (1u << kLogCq); ++i)
			cqes[i].op_own = MLX5_CQE_INVALID << 4 | MLX5_CQE_OWNER_MASK;
		cq_obj_ =
		    create(cq_in(kLogCq, queue_umem_->umem_id, queue_umem_->umem_id, kDoorbells, uar_->page_id), &out);
		ASSERT_NE(cq_obj_, nullptr) << errno << " status " << int(status_of(out));
		keep(cq_obj_);
		cq_.dv.buf = cqes;
		cq_.dv.cqe_cnt = 1u << kLogCq;
		cq_.dv.cqe_size = 64;
		cq_.dv.dbrec = reinterpret_cast<__be32 *>(queues_->data + kDoorbells);
		cq_.dv.cq_uar = uar_->reg_addr;
		cq_.dv.cqn = id_of(out);

		Mailbox qp_box = qp_in(pdn_, cq_.dv.cqn, kLogSq, kLogRq, queue_umem_->umem_id, queue_umem_->umem_id,
				       kDoorbells + 64, uar_->page_id);
		prm_set_bits(qp_box.data(), 0x800, 64, kWqOffset);
		prm_set_bits(qp_box.data(), kQpcIn + 0x88, 24, kUserIndex);
		qp_obj_ = create(qp_box, &out);
		ASSERT_NE(qp_obj_, nullptr) << errno << " status " << int(status_of(out));
		keep(qp_obj_);
		qpn_ = id_of(out);
		fake_qp_.qp_num = qpn_;
		qp_.qp = &fake_qp_;
		qp_.dv.dbrec = reinterpret_cast<__be32 *>(queues_->data + kDoorbells + 64);
		qp_.dv.rq.buf = queues_->data + kWqOffset;
		qp_.dv.rq.wqe_cnt = 1u << kLogRq;
		qp_.dv.rq.stride = 64;
		qp_.dv.sq.buf = queues_->data + kWqOffset + (64u << kLogRq);
		qp_.dv.sq.wqe_cnt = 1u << kLogSq;
		qp_.dv.sq.stride = 64;
		qp_.dv.bf.reg = uar_->reg_addr;
		qp_.dv.bf.size = 256;

		// The verbs peer.
		peer_pd_ = ibv_alloc_pd(context_);
		ASSERT_NE(peer_pd_, nullptr);
		peer_cq_ = ibv_create_cq(context_, 31, nullptr, nullptr, 0);
		ASSERT_NE(peer_cq_, nullptr);
		ibv_qp_init_attr attr{};
		attr.qp_type = IBV_QPT_RC;
		attr.send_cq = peer_cq_;
		attr.recv_cq = peer_cq_;
		attr.cap.max_send_wr = 16;
		attr.cap.max_recv_wr = 16;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		peer_ = ibv_create_qp(peer_pd_, &attr);
		ASSERT_NE(peer_, nullptr);
		remote_.assign(kData, 0);
		remote_mr_ = ibv_reg_mr(peer_pd_, remote_.data(), remote_.size(),
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		ASSERT_NE(remote_mr_, nullptr);
		connect_devx(peer_->qp_num);
		connect_rc(context_, peer_, qpn_);
	}

	void TearDown() override
	{
		if (peer_ != nullptr) {
			EXPECT_EQ(ibv_destroy_qp(peer_), 0);
		}
		if (remote_mr_ != nullptr) {
			EXPECT_EQ(ibv_dereg_mr(remote_mr_), 0);
		}
		if (peer_cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(peer_cq_), 0);
		}
		if (peer_pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(peer_pd_), 0);
		}
		DevxTest::TearDown();
	}

	static Mailbox transition(uint16_t opcode, uint32_t qpn)
	{
		Mailbox in = inbox(opcode, opcode == kOp2Err || opcode == kOp2Rst ? 16 : 272);
		prm_set_bits(in.data(), 0x48, 24, qpn);
		return in;
	}

	int modify(const Mailbox &in)
	{
		Mailbox out(16, 0xee);
		const int error = mlx5dv_devx_obj_modify(qp_obj_, in.data(), in.size(), out.data(), out.size());
		last_status_ = status_of(out);
		last_syndrome_ = syndrome_of(out);
		return error;
	}

	// A verbs RC QP in the peer's PD completing into `cq`, `depth` requests each way.
	ibv_qp *verbs_rc(ibv_cq *cq, uint32_t depth)
	{
		ibv_qp_init_attr init{};
		init.qp_type = IBV_QPT_RC;
		init.send_cq = cq;
		init.recv_cq = cq;
		init.cap.max_send_wr = depth;
		init.cap.max_recv_wr = depth;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		return ibv_create_qp(peer_pd_, &init);
	}

	uint32_t qp_state()
	{
		Mailbox in = inbox(0x50b);
		prm_set_bits(in.data(), 0x48, 24, qpn_);
		Mailbox out(272, 0xee);
		EXPECT_EQ(mlx5dv_devx_obj_query(qp_obj_, in.data(), in.size(), out.data(), out.size()), 0);
		return static_cast<uint32_t>(prm_bits(out.data(), kQpcIn, 4));
	}

	// RST2INIT, INIT2RTR, RTR2RTS of the DevX QP towards `remote_qpn`, all through DevX.
	void connect_devx(uint32_t remote_qpn)
	{
		Mailbox init = transition(kOpRst2Init, qpn_);
		prm_set_bits(init.data(), kQpcIn + 0x490, 3, 0x7); // rre, rwe, rae
		prm_set_bits(init.data(), kAds + 0x128, 8, 1);
		ASSERT_EQ(modify(init), 0) << int(last_status_);
		ibv_gid gid{};
		ASSERT_EQ(ibv_query_gid(context_, 1, 0, &gid), 0);
		Mailbox rtr = transition(kOpInit2Rtr, qpn_);
		prm_set_bits(rtr.data(), kQpcIn + 0x40, 3, IBV_MTU_1024);
		prm_set_bits(rtr.data(), kQpcIn + 0xa8, 24, remote_qpn);
		prm_set_bits(rtr.data(), kQpcIn + 0x4a3, 5, 12); // min_rnr_nak
		prm_set_bits(rtr.data(), kQpcIn + 0x488, 3, 2);  // log_rra_max: 4
		std::memcpy(rtr.data() + (kAds + 0x80) / 8, gid.raw, 16);
		prm_set_bits(rtr.data(), kAds + 0x58, 8, 1); // hop_limit
		prm_set_bits(rtr.data(), kAds + 0x128, 8, 1);
		ASSERT_EQ(modify(rtr), 0) << int(last_status_) << std::hex << " " << last_syndrome_;
		Mailbox rts = transition(kOpRtr2Rts, qpn_);
		prm_set_bits(rts.data(), kQpcIn + 0x38d, 3, 7); // retry_count
		prm_set_bits(rts.data(), kQpcIn + 0x390, 3, 7); // rnr_retry
		prm_set_bits(rts.data(), kQpcIn + 0x3c8, 24, 0);
		prm_set_bits(rts.data(), kQpcIn + 0x38, 3, 2); // log_sra_max: 4
		prm_set_bits(rts.data(), kAds + 0x40, 5, 14);  // ack_timeout
		ASSERT_EQ(modify(rts), 0) << int(last_status_);
		ASSERT_EQ(qp_state(), 3u);
	}

	uint16_t write_rdma(uint8_t opcode, size_t offset, size_t length, uint32_t lkey)
	{
		const uint16_t index = qp_.pi;
		qp_.write(opcode, MLX5_WQE_CTRL_CQ_UPDATE,
			  {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + offset), remote_mr_->rkey),
			   data_seg(data_->data + offset, static_cast<uint32_t>(length), lkey)});
		return index;
	}

	void expect_req(const mlx5_cqe64 &cqe, uint16_t index, uint8_t opcode)
	{
		EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ) << "syndrome " << int(cqe_syndrome(cqe));
		EXPECT_EQ(be16toh(cqe.wqe_counter), index);
		EXPECT_EQ(be32toh(cqe.sop_drop_qpn) & 0xffffff, qpn_);
		EXPECT_EQ(be32toh(cqe.sop_drop_qpn) >> 24, opcode);
		EXPECT_EQ(be32toh(cqe.srqn_uidx) & 0xffffff, kUserIndex) << "CQE version 1: the QP's user index";
	}

	std::unique_ptr<Pages> queues_;
	std::unique_ptr<Pages> data_;
	mlx5dv_devx_umem *queue_umem_ = nullptr;
	mlx5dv_devx_umem *data_umem_ = nullptr;
	mlx5dv_devx_uar *uar_ = nullptr;
	uint32_t pdn_ = 0;
	uint32_t lkey_ = 0;
	mlx5dv_devx_obj *cq_obj_ = nullptr;
	mlx5dv_devx_obj *qp_obj_ = nullptr;
	uint32_t qpn_ = 0;
	ibv_qp fake_qp_{}; // carries the DevX qpn for DvQp's control segments
	DvCq cq_;
	DvQp qp_;
	ibv_pd *peer_pd_ = nullptr;
	ibv_cq *peer_cq_ = nullptr;
	ibv_qp *peer_ = nullptr;
	ibv_mr *remote_mr_ = nullptr;
	std::vector<uint8_t> remote_;
	uint8_t last_status_ = 0;
	uint32_t last_syndrome_ = 0;
};

TEST_F(DevxWqTest, WriteReadAndSendWithTheDevxMkeyAsLkey)
{
	for (size_t i = 0; i < 256; ++i)
		data_->data[i] = static_cast<uint8_t>(i ^ 0x3c);
	const uint16_t write = write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 256, lkey_);
	qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, write, MLX5_OPCODE_RDMA_WRITE);
	EXPECT_EQ(std::memcmp(remote_.data(), data_->data, 256), 0);

	// READ: the peer's bytes into the DevX mkey's memory.
	for (size_t i = 0; i < 128; ++i)
		remote_[1024 + i] = static_cast<uint8_t>(0xa0 + i);
	const uint16_t read = write_rdma(MLX5_OPCODE_RDMA_READ, 1024, 128, lkey_);
	qp_.ring();
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, read, MLX5_OPCODE_RDMA_READ);
	EXPECT_EQ(be32toh(cqe.byte_cnt), 128u);
	EXPECT_EQ(std::memcmp(data_->data + 1024, remote_.data() + 1024, 128), 0);

	// SEND into a receive the peer posted.
	ibv_sge sge{reinterpret_cast<uintptr_t>(remote_.data() + 4096), 512, remote_mr_->lkey};
	ibv_recv_wr recv{};
	recv.wr_id = 77;
	recv.sg_list = &sge;
	recv.num_sge = 1;
	ibv_recv_wr *bad_recv = nullptr;
	ASSERT_EQ(ibv_post_recv(peer_, &recv, &bad_recv), 0);
	std::memcpy(data_->data + 2048, "hello from a DevX QP", 20);
	const uint16_t send = qp_.pi;
	qp_.write(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, {data_seg(data_->data + 2048, 20, lkey_)});
	qp_.ring();
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, send, MLX5_OPCODE_SEND);
	ibv_wc wc{};
	for (int i = 0; i < 3000 && ibv_poll_cq(peer_cq_, 1, &wc) == 0; ++i)
		usleep(1000);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.wr_id, 77u);
	EXPECT_EQ(wc.byte_len, 20u);
	EXPECT_EQ(std::memcmp(remote_.data() + 4096, "hello from a DevX QP", 20), 0);

	// The peer SENDs into the DevX receive queue: a RESP_SEND CQE in the DevX CQ.
	qp_.post_recv({{reinterpret_cast<uintptr_t>(data_->data + 3072), 256, lkey_}});
	std::memcpy(remote_.data() + 6000, "and back", 8);
	ibv_sge out_sge{reinterpret_cast<uintptr_t>(remote_.data() + 6000), 8, remote_mr_->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 5;
	wr.sg_list = &out_sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(peer_, &wr, &bad), 0);
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND) << "syndrome " << int(cqe_syndrome(cqe));
	EXPECT_EQ(be32toh(cqe.byte_cnt), 8u);
	EXPECT_EQ(be16toh(cqe.wqe_counter), 0u);
	EXPECT_EQ(be32toh(cqe.srqn_uidx) & 0xffffff, kUserIndex);
	EXPECT_EQ(std::memcmp(data_->data + 3072, "and back", 8), 0);
	EXPECT_EQ(qp_state(), 3u);
}

TEST_F(DevxWqTest, ABadLkeyGivesALocalProtectionErrorAndTheQpFails)
{
	std::memset(remote_.data(), 0x11, 64);
	const uint16_t bad = write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 64, lkey_ ^ 0x100); // another mkey index
	const uint16_t after = write_rdma(MLX5_OPCODE_RDMA_WRITE, 64, 64, lkey_);
	qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ_ERR);
	EXPECT_EQ(be16toh(cqe.wqe_counter), bad);
	EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ_ERR);
	EXPECT_EQ(be16toh(cqe.wqe_counter), after);
	EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	EXPECT_EQ(remote_[0], 0x11) << "nothing written";
	EXPECT_EQ(remote_[64], 0u);
	EXPECT_EQ(qp_state(), 6u); // ERR
}

// A doorbell record moved past the queue (more WQEs claimed than the ring holds): the engine
// writes one error CQE (LOCAL_QP_OP_ERR, at the first WQE it did not read) and the QP goes to ERR;
// nothing is executed.
TEST_F(DevxWqTest, ADoorbellPastTheQueueFailsTheQp)
{
	std::memset(data_->data, 0x77, 64);
	const uint16_t first = write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 64, lkey_);
	__atomic_store_n(&qp_.dv.dbrec[MLX5_SND_DBR], htobe32(first + (1u << kLogSq) + 1), __ATOMIC_RELEASE);
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ_ERR);
	EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	EXPECT_EQ(be16toh(cqe.wqe_counter), first);
	EXPECT_EQ(remote_[0], 0u) << "no WQE of that doorbell ran";
	for (int i = 0; i < 100 && qp_state() != 6u; ++i)
		usleep(1000);
	EXPECT_EQ(qp_state(), 6u);
	EXPECT_FALSE(cq_.poll(&cqe, std::chrono::milliseconds(50))) << "one CQE only";

	// 2RST and back to RTS: the queue starts over at 0 and works again. In RESET the stale
	// doorbell is not read; the application rewrites it before it moves the QP up.
	ASSERT_EQ(modify(transition(kOp2Rst, qpn_)), 0);
	EXPECT_EQ(qp_state(), 0u);
	usleep(20000);
	EXPECT_EQ(qp_state(), 0u) << "a QP in RESET ignores its doorbell";
	EXPECT_FALSE(cq_.poll(&cqe, std::chrono::milliseconds(20)));
	__atomic_store_n(&qp_.dv.dbrec[MLX5_SND_DBR], 0, __ATOMIC_RELEASE);
	qp_.pi = 0;
	ASSERT_EQ(ibv_destroy_qp(peer_), 0);
	peer_ = nullptr;
	ibv_qp_init_attr attr{};
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = peer_cq_;
	attr.recv_cq = peer_cq_;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	peer_ = ibv_create_qp(peer_pd_, &attr);
	ASSERT_NE(peer_, nullptr);
	connect_devx(peer_->qp_num);
	connect_rc(context_, peer_, qpn_);
	const uint16_t again = write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 64, lkey_);
	EXPECT_EQ(again, 0u);
	qp_.ring();
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, again, MLX5_OPCODE_RDMA_WRITE);
	EXPECT_EQ(remote_[0], 0x77);
}

// ---- Completion events of the DevX CQ through a DevX event channel ----

constexpr uint16_t kEventComp = 0x00; // MLX5_EVENT_TYPE_COMP

struct EventRecord {
	uint64_t cookie;
	uint8_t eqe[64];
};

TEST_F(DevxWqTest, AnEventChannelDeliversTheDevxCqsCompletionEvent)
{
	mlx5dv_devx_event_channel *channel =
	    mlx5dv_devx_create_event_channel(context_, static_cast<mlx5_ib_uapi_devx_create_event_channel_flags>(0));
	ASSERT_NE(channel, nullptr) << errno;
	uint16_t types[] = {kEventComp};
	ASSERT_EQ(mlx5dv_devx_subscribe_devx_event(channel, cq_obj_, sizeof(types), types, 0xc00c1e), 0);
	EXPECT_EQ(mlx5dv_devx_subscribe_devx_event(channel, cq_obj_, sizeof(types), types, 1), EBUSY);
	const int epoll = epoll_create1(0);
	ASSERT_GE(epoll, 0);
	epoll_event want{};
	want.events = EPOLLIN;
	ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, channel->fd, &want), 0);

	// Nothing before an arm, nor after an arm without a completion.
	const uint16_t unarmed = write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 8, lkey_);
	qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, unarmed, MLX5_OPCODE_RDMA_WRITE);
	cq_.arm(0, false); // the arm word and the UAR doorbell, as rdma-core arms
	epoll_event got{};
	EXPECT_EQ(epoll_wait(epoll, &got, 1, 50), 0);

	const uint16_t armed = write_rdma(MLX5_OPCODE_RDMA_WRITE, 8, 8, lkey_);
	qp_.ring();
	ASSERT_EQ(epoll_wait(epoll, &got, 1, 3000), 1);
	EventRecord record{};
	ASSERT_EQ(
	    mlx5dv_devx_get_event(channel, reinterpret_cast<mlx5dv_devx_async_event_hdr *>(&record), sizeof(record)),
	    static_cast<ssize_t>(sizeof(record)));
	EXPECT_EQ(record.cookie, 0xc00c1eu);
	EXPECT_EQ(record.eqe[1], kEventComp); // the EQE's event type
	uint32_t cqn_word = 0;
	std::memcpy(&cqn_word, record.eqe + 0x38, 4); // the last data word: the cqn
	EXPECT_EQ(be32toh(cqn_word) & 0xffffff, cq_.dv.cqn);
	ASSERT_TRUE(cq_.poll(&cqe));
	expect_req(cqe, armed, MLX5_OPCODE_RDMA_WRITE);
	// The arm is spent: the next completion raises nothing.
	write_rdma(MLX5_OPCODE_RDMA_WRITE, 16, 8, lkey_);
	qp_.ring();
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(epoll_wait(epoll, &got, 1, 50), 0);

	// A CQ with a subscription may be destroyed (after its QP); the channel stays quiet.
	ASSERT_EQ(mlx5dv_devx_obj_destroy(qp_obj_), 0);
	forget(qp_obj_);
	ASSERT_EQ(mlx5dv_devx_obj_destroy(cq_obj_), 0);
	forget(cq_obj_);
	EXPECT_EQ(epoll_wait(epoll, &got, 1, 20), 0);
	close(epoll);
	mlx5dv_devx_destroy_event_channel(channel);
}

TEST_F(DevxWqTest, AnEventChannelWithoutEventData)
{
	mlx5dv_devx_event_channel *channel =
	    mlx5dv_devx_create_event_channel(context_, MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);
	ASSERT_NE(channel, nullptr) << errno;
	uint16_t types[] = {kEventComp};
	ASSERT_EQ(mlx5dv_devx_subscribe_devx_event(channel, cq_obj_, sizeof(types), types, 42), 0);
	cq_.arm(0, false);
	write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 8, lkey_);
	qp_.ring();
	pollfd pfd{channel->fd, POLLIN, 0};
	ASSERT_EQ(poll(&pfd, 1, 3000), 1);
	EventRecord record{};
	std::memset(&record, 0xee, sizeof(record));
	ASSERT_EQ(
	    mlx5dv_devx_get_event(channel, reinterpret_cast<mlx5dv_devx_async_event_hdr *>(&record), sizeof(record)),
	    static_cast<ssize_t>(sizeof(uint64_t)));
	EXPECT_EQ(record.cookie, 42u);
	EXPECT_EQ(record.eqe[0], 0xee) << "no event data";
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	// Destroying the channel first, then the CQ.
	mlx5dv_devx_destroy_event_channel(channel);
	cq_.arm(1, false);
	write_rdma(MLX5_OPCODE_RDMA_WRITE, 8, 8, lkey_);
	qp_.ring();
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ);
}

// A UAR freed while a CQ arms through it: the page_id is gone for new commands, the page stays
// mapped (the engine watches its CQ doorbell) until the CQ is destroyed.
TEST_F(DevxWqTest, AUarFreedUnderACqStaysMappedUntilTheCqGoes)
{
	mlx5dv_devx_free_uar(uar_);
	uars_.clear();
	Mailbox out(16);
	EXPECT_EQ(
	    create(cq_in(kLogCq, queue_umem_->umem_id, queue_umem_->umem_id, kDoorbells + 128, uar_->page_id), &out),
	    nullptr);
	EXPECT_EQ(status_of(out), kBadParam);
	EXPECT_EQ(syndrome_of(out), 0x5d000016u);
	mlx5dv_devx_event_channel *channel =
	    mlx5dv_devx_create_event_channel(context_, MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);
	ASSERT_NE(channel, nullptr);
	uint16_t types[] = {kEventComp};
	ASSERT_EQ(mlx5dv_devx_subscribe_devx_event(channel, cq_obj_, sizeof(types), types, 9), 0);
	cq_.arm(0, false); // the first arm (arm word 0): seen through the UAR page only
	write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 8, lkey_);
	qp_.ring();
	pollfd pfd{channel->fd, POLLIN, 0};
	EXPECT_EQ(poll(&pfd, 1, 3000), 1);
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ);
	ASSERT_EQ(mlx5dv_devx_obj_destroy(qp_obj_), 0);
	forget(qp_obj_);
	ASSERT_EQ(mlx5dv_devx_obj_destroy(cq_obj_), 0);
	forget(cq_obj_);
	mlx5dv_devx_destroy_event_channel(channel);
}

// Events nobody reads fill the channel; one that does not fit is lost and the next read says so
// once (EOVERFLOW), then the queued events come.
TEST_F(DevxWqTest, AFullEventChannelReportsOverflowOnce)
{
	mlx5dv_devx_event_channel *channel =
	    mlx5dv_devx_create_event_channel(context_, MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);
	ASSERT_NE(channel, nullptr);
	uint16_t types[] = {kEventComp};
	ASSERT_EQ(mlx5dv_devx_subscribe_devx_event(channel, cq_obj_, sizeof(types), types, 3), 0);
	mlx5_cqe64 cqe{};
	constexpr int kEvents = 4000; // more than the channel's socket holds
	for (int i = 0; i < kEvents; ++i) {
		cq_.arm(static_cast<uint32_t>(i), false);
		write_rdma(MLX5_OPCODE_RDMA_WRITE, 0, 8, lkey_);
		qp_.ring();
		ASSERT_TRUE(cq_.poll(&cqe)) << i;
	}
	const int flags = fcntl(channel->fd, F_GETFL);
	ASSERT_EQ(fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK), 0);
	EventRecord record{};
	auto *header = reinterpret_cast<mlx5dv_devx_async_event_hdr *>(&record);
	errno = 0;
	EXPECT_EQ(mlx5dv_devx_get_event(channel, header, sizeof(record)), -1);
	EXPECT_EQ(errno, EOVERFLOW);
	int queued = 0;
	while (mlx5dv_devx_get_event(channel, header, sizeof(record)) == static_cast<ssize_t>(sizeof(uint64_t))) {
		EXPECT_EQ(record.cookie, 3u);
		++queued;
	}
	EXPECT_EQ(errno, EAGAIN) << "the overflow is reported once";
	EXPECT_GT(queued, 0);
	EXPECT_LT(queued, kEvents);
	mlx5dv_devx_destroy_event_channel(channel);
}

// A verbs QP and CQ given their mlx5 view (mlx5dv_init_obj), moved through their states with
// mlx5dv_devx_qp_modify, queried with mlx5dv_devx_{qp,cq}_query, then driven by WQEs; back to RST
// and up again with DevX commands, the queue starts over at 0.
TEST_F(DevxWqTest, AVerbsQpMovedByDevxCommandsRunsWqes)
{
	ibv_cq *cq = ibv_create_cq(context_, 15, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	ibv_qp *qp = verbs_rc(cq, 8);
	ASSERT_NE(qp, nullptr);
	ibv_qp *target = verbs_rc(cq, 8);
	ASSERT_NE(target, nullptr);
	std::vector<uint8_t> local(256, 0);
	ibv_mr *local_mr = ibv_reg_mr(peer_pd_, local.data(), local.size(), static_cast<int>(IBV_ACCESS_LOCAL_WRITE));
	ASSERT_NE(local_mr, nullptr);
	DvQp dv_qp;
	DvCq dv_cq;
	dv_qp.qp = qp;
	dv_cq.cq = cq;
	mlx5dv_obj obj{};
	obj.qp.in = qp;
	obj.qp.out = &dv_qp.dv;
	obj.cq.in = cq;
	obj.cq.out = &dv_cq.dv;
	ASSERT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ), 0);

	Mailbox cq_query = inbox(0x402);
	prm_set_bits(cq_query.data(), 0x48, 24, dv_cq.dv.cqn);
	Mailbox out(272, 0xee);
	ASSERT_EQ(mlx5dv_devx_cq_query(cq, cq_query.data(), cq_query.size(), out.data(), out.size()), 0);
	EXPECT_EQ(1u << prm_bits(out.data(), kCqcIn + 0x63, 5), dv_cq.dv.cqe_cnt);
	Mailbox moderate = inbox(kOpModifyCq, 272);
	prm_set_bits(moderate.data(), 0x48, 24, dv_cq.dv.cqn);
	prm_set_bits(moderate.data(), 0x60, 32, 0x3);         // period and count
	prm_set_bits(moderate.data(), kCqcIn + 0x84, 12, 8);  // cq_period
	prm_set_bits(moderate.data(), kCqcIn + 0x90, 16, 32); // cq_max_count
	Mailbox moderated(16);
	ASSERT_EQ(mlx5dv_devx_cq_modify(cq, moderate.data(), moderate.size(), moderated.data(), moderated.size()), 0)
	    << std::hex << syndrome_of(moderated);
	// (Moderation is accepted on a verbs CQ and not recorded: docs/mlx5.md.) Resizing is not offered.
	prm_set_bits(moderate.data(), 0x30, 16, 1);
	EXPECT_EQ(mlx5dv_devx_cq_modify(cq, moderate.data(), moderate.size(), moderated.data(), moderated.size()),
		  EREMOTEIO);
	EXPECT_EQ(status_of(moderated), kBadOp);

	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(context_, 1, 0, &gid), 0);
	const auto devx_connect = [&](uint32_t remote_qpn) {
		Mailbox result(16);
		const auto run = [&](const Mailbox &in) {
			return mlx5dv_devx_qp_modify(qp, in.data(), in.size(), result.data(), result.size());
		};
		Mailbox rst2init = transition(kOpRst2Init, qp->qp_num);
		prm_set_bits(rst2init.data(), kQpcIn + 0x490, 3, 0x7);
		prm_set_bits(rst2init.data(), kAds + 0x128, 8, 1);
		ASSERT_EQ(run(rst2init), 0);
		Mailbox rtr = transition(kOpInit2Rtr, qp->qp_num);
		prm_set_bits(rtr.data(), kQpcIn + 0x40, 3, IBV_MTU_1024);
		prm_set_bits(rtr.data(), kQpcIn + 0xa8, 24, remote_qpn);
		prm_set_bits(rtr.data(), kQpcIn + 0x4a3, 5, 12);
		std::memcpy(rtr.data() + (kAds + 0x80) / 8, gid.raw, 16);
		prm_set_bits(rtr.data(), kAds + 0x58, 8, 1);
		prm_set_bits(rtr.data(), kAds + 0x128, 8, 1);
		ASSERT_EQ(run(rtr), 0) << std::hex << syndrome_of(result);
		Mailbox rts = transition(kOpRtr2Rts, qp->qp_num);
		prm_set_bits(rts.data(), kQpcIn + 0x38d, 3, 7);
		prm_set_bits(rts.data(), kQpcIn + 0x390, 3, 7);
		prm_set_bits(rts.data(), kAds + 0x40, 5, 14);
		ASSERT_EQ(run(rts), 0) << std::hex << syndrome_of(result);
	};
	devx_connect(target->qp_num);
	connect_rc(context_, target, qp->qp_num);
	Mailbox qp_query = inbox(0x50b);
	prm_set_bits(qp_query.data(), 0x48, 24, qp->qp_num);
	ASSERT_EQ(mlx5dv_devx_qp_query(qp, qp_query.data(), qp_query.size(), out.data(), out.size()), 0);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn, 4), 3u);
	EXPECT_EQ(prm_bits(out.data(), kQpcIn + 0xa8, 24), target->qp_num);

	const auto write_once = [&](uint8_t fill, uint16_t expected_index) {
		std::memset(local.data(), fill, 64);
		const uint16_t index = dv_qp.pi;
		EXPECT_EQ(index, expected_index);
		dv_qp.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
			    {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + 512), remote_mr_->rkey),
			     data_seg(local.data(), 64, local_mr->lkey)});
		dv_qp.ring();
		mlx5_cqe64 cqe{};
		ASSERT_TRUE(dv_cq.poll(&cqe));
		EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ) << "syndrome " << int(cqe_syndrome(cqe));
		EXPECT_EQ(be16toh(cqe.wqe_counter), index);
		EXPECT_EQ(remote_[512], fill);
	};
	write_once(0x21, 0);
	write_once(0x22, 1);

	// 2RST through DevX: the application starts its queue over (producer and doorbell record 0),
	// as after a reset on hardware; the engine does too.
	Mailbox result(16);
	Mailbox to_rst = transition(kOp2Rst, qp->qp_num);
	ASSERT_EQ(mlx5dv_devx_qp_modify(qp, to_rst.data(), to_rst.size(), result.data(), result.size()), 0);
	dv_qp.pi = 0;
	__atomic_store_n(&dv_qp.dv.dbrec[MLX5_SND_DBR], 0, __ATOMIC_RELEASE);
	ASSERT_EQ(ibv_destroy_qp(target), 0);
	target = verbs_rc(cq, 8);
	ASSERT_NE(target, nullptr);
	devx_connect(target->qp_num);
	connect_rc(context_, target, qp->qp_num);
	write_once(0x23, 0);

	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_qp(target), 0);
	EXPECT_EQ(ibv_dereg_mr(local_mr), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// A DevX QP naming a verbs CQ completes into the CQ's mlx5 view, as every ConnectX CQ has one;
// from then on the completions of the plain verbs QPs on that CQ are CQEs there too (none lost),
// with their qpn and the WQE opcode, and ibv_poll_cq returns none.
TEST_F(DevxWqTest, AVerbsCqNamedByADevxQpTakesEveryQpsCompletionsAsCqes)
{
	ibv_cq *shared = ibv_create_cq(context_, 15, nullptr, nullptr, 0);
	ASSERT_NE(shared, nullptr);
	// A plain verbs QP on the shared CQ, connected to a second verbs QP.
	ibv_qp *plain = verbs_rc(shared, 4);
	ASSERT_NE(plain, nullptr);
	ibv_qp *target = verbs_rc(peer_cq_, 4);
	ASSERT_NE(target, nullptr);
	connect_rc(context_, plain, target->qp_num);
	connect_rc(context_, target, plain->qp_num);

	// A DevX QP (never connected) whose CQs are the verbs CQ.
	Mailbox out(16);
	Mailbox box = qp_in(pdn_, shared->handle, kLogSq, kLogRq, queue_umem_->umem_id, queue_umem_->umem_id,
			    kDoorbells + 128, uar_->page_id);
	prm_set_bits(box.data(), 0x800, 64, kWqOffset + 4096);
	mlx5dv_devx_obj *devx_qp = create(box, &out);
	ASSERT_NE(devx_qp, nullptr) << errno << " status " << int(status_of(out));

	DvCq view;
	view.cq = shared;
	mlx5dv_obj obj{};
	obj.cq.in = shared;
	obj.cq.out = &view.dv;
	ASSERT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	EXPECT_EQ(view.dv.cqn, shared->handle);

	std::vector<uint8_t> local(64, 0x6b);
	ibv_mr *local_mr = ibv_reg_mr(peer_pd_, local.data(), local.size(), static_cast<int>(IBV_ACCESS_LOCAL_WRITE));
	ASSERT_NE(local_mr, nullptr);
	ibv_sge sge{reinterpret_cast<uintptr_t>(local.data()), 64, local_mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 41;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(remote_.data() + 512);
	wr.wr.rdma.rkey = remote_mr_->rkey;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(plain, &wr, &bad), 0);
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(view.poll(&cqe)) << "the plain QP's completion is a CQE of the shared CQ";
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ) << "syndrome " << int(cqe_syndrome(cqe));
	EXPECT_EQ(be32toh(cqe.sop_drop_qpn) & 0xffffff, plain->qp_num);
	EXPECT_EQ(be32toh(cqe.sop_drop_qpn) >> 24, MLX5_OPCODE_RDMA_WRITE);
	EXPECT_EQ(remote_[512], 0x6b);
	ibv_wc wc{};
	EXPECT_EQ(ibv_poll_cq(shared, 1, &wc), 0) << "the CQ's completions are CQEs now";

	EXPECT_EQ(mlx5dv_devx_obj_destroy(devx_qp), 0);
	EXPECT_EQ(ibv_destroy_qp(plain), 0);
	EXPECT_EQ(ibv_destroy_qp(target), 0);
	EXPECT_EQ(ibv_dereg_mr(local_mr), 0);
	EXPECT_EQ(ibv_destroy_cq(shared), 0);
}

} // namespace
