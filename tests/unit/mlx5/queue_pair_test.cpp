// mlx5dv_create_qp, mlx5dv_create_cq and mlx5dv_qp_ex_from_ibv_qp_ex on softdpu's device: QPs and
// CQs without mlx5-specific attributes are verbs ones; the mlx5 builders fail their batch.
#include "mlx5_fixture.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

class Mlx5QpTest : public mlx5_test::Mlx5Test {
protected:
	void SetUp() override
	{
		Mlx5Test::SetUp();
		if (HasFatalFailure())
			return;
		pd_ = ibv_alloc_pd(context_);
		ASSERT_NE(pd_, nullptr);
		cq_ = ibv_create_cq(context_, 64, nullptr, nullptr, 0);
		ASSERT_NE(cq_, nullptr);
	}

	void TearDown() override
	{
		for (ibv_qp *qp : qps_) {
			EXPECT_EQ(ibv_destroy_qp(qp), 0);
		}
		for (ibv_mr *mr : mrs_) {
			EXPECT_EQ(ibv_dereg_mr(mr), 0);
		}
		if (cq_ != nullptr) {
			EXPECT_EQ(ibv_destroy_cq(cq_), 0);
		}
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		Mlx5Test::TearDown();
	}

	ibv_qp_init_attr_ex rc_attr() const
	{
		ibv_qp_init_attr_ex attr{};
		attr.qp_type = IBV_QPT_RC;
		attr.send_cq = cq_;
		attr.recv_cq = cq_;
		attr.cap.max_send_wr = 16;
		attr.cap.max_recv_wr = 16;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.pd = pd_;
		attr.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
		return attr;
	}

	ibv_qp *keep(ibv_qp *qp)
	{
		if (qp != nullptr)
			qps_.push_back(qp);
		return qp;
	}

	ibv_mr *reg(void *addr, size_t length)
	{
		ibv_mr *mr = ibv_reg_mr(pd_, addr, length,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		if (mr != nullptr)
			mrs_.push_back(mr);
		return mr;
	}

	// Connects `qp` to itself (RoCE, GID index 0) and takes it to RTS.
	void connect_to_self(ibv_qp *qp) { mlx5_test::connect_rc(context_, qp, qp->qp_num); }

	// Polls for one completion within `limit`; false when none came.
	bool poll_one(ibv_wc *wc, std::chrono::milliseconds limit)
	{
		const auto deadline = std::chrono::steady_clock::now() + limit;
		while (std::chrono::steady_clock::now() < deadline) {
			const int n = ibv_poll_cq(cq_, 1, wc);
			if (n != 0)
				return n == 1;
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		}
		return false;
	}

	ibv_pd *pd_ = nullptr;
	ibv_cq *cq_ = nullptr;
	std::vector<ibv_qp *> qps_;
	std::vector<ibv_mr *> mrs_;
};

TEST_F(Mlx5QpTest, CreateQpWithoutMlx5AttributesIsAVerbsQp)
{
	ibv_qp_init_attr_ex attr = rc_attr();
	ibv_qp *plain = keep(mlx5dv_create_qp(context_, &attr, nullptr));
	ASSERT_NE(plain, nullptr) << "errno " << errno;
	EXPECT_EQ(plain->qp_type, IBV_QPT_RC);
	EXPECT_EQ(plain->pd, pd_);
	EXPECT_NE(ibv_qp_to_qp_ex(plain), nullptr);

	mlx5dv_qp_init_attr dv{};
	attr = rc_attr();
	ASSERT_NE(keep(mlx5dv_create_qp(context_, &attr, &dv)), nullptr) << "errno " << errno;

	// DISABLE_SCATTER_TO_CQE turns off an optimisation the device never makes: accepted.
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	dv.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
	dv.send_ops_flags = 0;
	attr = rc_attr();
	ASSERT_NE(keep(mlx5dv_create_qp(context_, &attr, &dv)), nullptr) << "errno " << errno;

	attr = rc_attr();
	attr.qp_type = IBV_QPT_UD;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ibv_qp *ud = keep(mlx5dv_create_qp(context_, &attr, nullptr));
	ASSERT_NE(ud, nullptr) << "errno " << errno;
	EXPECT_EQ(ud->qp_type, IBV_QPT_UD);
}

TEST_F(Mlx5QpTest, CreateQpRefusesMlx5Features)
{
	struct Case {
		const char *what;
		mlx5dv_qp_init_attr dv;
		int error;
	};
	std::vector<Case> cases;
	Case dc{"DC", {}, EOPNOTSUPP};
	dc.dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dc.dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	cases.push_back(dc);
	Case streams{"DCI streams", {}, EOPNOTSUPP};
	streams.dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	cases.push_back(streams);
	Case mkey{"mkey configure", {}, EOPNOTSUPP};
	mkey.dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	mkey.dv.send_ops_flags = MLX5DV_QP_EX_WITH_MKEY_CONFIGURE;
	cases.push_back(mkey);
	for (uint32_t flag : {MLX5DV_QP_CREATE_TUNNEL_OFFLOADS, MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE,
			      MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE, MLX5DV_QP_CREATE_SIG_PIPELINING}) {
		Case flags{"create flag", {}, EOPNOTSUPP};
		flags.dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
		flags.dv.create_flags = flag;
		cases.push_back(flags);
	}
	Case unknown{"unknown comp_mask bit", {}, EINVAL};
	unknown.dv.comp_mask = 1ull << 40;
	cases.push_back(unknown);
	for (Case &c : cases) {
		ibv_qp_init_attr_ex attr = rc_attr();
		errno = 0;
		EXPECT_EQ(keep(mlx5dv_create_qp(context_, &attr, &c.dv)), nullptr) << c.what;
		EXPECT_EQ(errno, c.error) << c.what;
	}
	ibv_qp_init_attr_ex attr = rc_attr();
	errno = 0;
	EXPECT_EQ(mlx5dv_create_qp(nullptr, &attr, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(mlx5dv_create_qp(context_, nullptr, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(Mlx5QpTest, CreateCqWithoutMlx5AttributesIsAVerbsCq)
{
	ibv_cq_init_attr_ex attr{};
	attr.cqe = 32;
	ibv_cq_ex *cq = mlx5dv_create_cq(context_, &attr, nullptr);
	ASSERT_NE(cq, nullptr) << "errno " << errno;
	EXPECT_GE(ibv_cq_ex_to_cq(cq)->cqe, 32);
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);

	mlx5dv_cq_init_attr dv{};
	cq = mlx5dv_create_cq(context_, &attr, &dv);
	ASSERT_NE(cq, nullptr) << "errno " << errno;
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);

	dv.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
	dv.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH;
	errno = 0;
	EXPECT_EQ(mlx5dv_create_cq(context_, &attr, &dv), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	dv.comp_mask = 1ull << 33;
	errno = 0;
	EXPECT_EQ(mlx5dv_create_cq(context_, &attr, &dv), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(mlx5dv_create_cq(nullptr, &attr, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(Mlx5QpTest, QpExIsStableForTheQpsLife)
{
	ibv_qp_init_attr_ex attr = rc_attr();
	ibv_qp *qp = keep(ibv_create_qp_ex(context_, &attr));
	ASSERT_NE(qp, nullptr);
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(qpx, nullptr);
	mlx5dv_qp_ex *first = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	ASSERT_NE(first, nullptr);
	EXPECT_EQ(mlx5dv_qp_ex_from_ibv_qp_ex(qpx), first);
	EXPECT_EQ(first->comp_mask, 0u);
	EXPECT_NE(first->wr_set_dc_addr, nullptr);
	EXPECT_NE(first->wr_mkey_configure, nullptr);
	EXPECT_NE(first->wr_raw_wqe, nullptr);
	EXPECT_NE(first->wr_memcpy, nullptr);

	// A second QP has its own.
	attr = rc_attr();
	ibv_qp *other = keep(ibv_create_qp_ex(context_, &attr));
	ASSERT_NE(other, nullptr);
	EXPECT_NE(mlx5dv_qp_ex_from_ibv_qp_ex(ibv_qp_to_qp_ex(other)), first);

	errno = 0;
	EXPECT_EQ(mlx5dv_qp_ex_from_ibv_qp_ex(nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(Mlx5QpTest, Mlx5BuildersFailTheBatchAndVerbsBatchesStillRun)
{
	ibv_qp_init_attr_ex attr = rc_attr();
	ibv_qp *qp = keep(mlx5dv_create_qp(context_, &attr, nullptr));
	ASSERT_NE(qp, nullptr) << "errno " << errno;
	connect_to_self(qp);
	if (HasFatalFailure())
		return;
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	mlx5dv_qp_ex *mqp = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	ASSERT_NE(mqp, nullptr);

	std::vector<uint8_t> source(256, 0x5a);
	std::vector<uint8_t> target(256, 0);
	ibv_mr *source_mr = reg(source.data(), source.size());
	ibv_mr *target_mr = reg(target.data(), target.size());
	ASSERT_NE(source_mr, nullptr);
	ASSERT_NE(target_mr, nullptr);

	const std::vector<std::pair<const char *, std::function<void()>>> builders = {
	    {"set_dc_addr", [&] { mlx5dv_wr_set_dc_addr(mqp, nullptr, 1, 2); }},
	    {"set_dc_addr_stream", [&] { mlx5dv_wr_set_dc_addr_stream(mqp, nullptr, 1, 2, 3); }},
	    {"mkey_configure", [&] { mlx5dv_wr_mkey_configure(mqp, nullptr, 1, nullptr); }},
	    {"set_mkey_access_flags", [&] { mlx5dv_wr_set_mkey_access_flags(mqp, IBV_ACCESS_LOCAL_WRITE); }},
	    {"set_mkey_layout_list", [&] { mlx5dv_wr_set_mkey_layout_list(mqp, 0, nullptr); }},
	    {"set_mkey_layout_interleaved", [&] { mlx5dv_wr_set_mkey_layout_interleaved(mqp, 1, 0, nullptr); }},
	    {"set_mkey_sig_block", [&] { mlx5dv_wr_set_mkey_sig_block(mqp, nullptr); }},
	    {"set_mkey_crypto", [&] { mlx5dv_wr_set_mkey_crypto(mqp, nullptr); }},
	    {"mr_interleaved", [&] { mlx5dv_wr_mr_interleaved(mqp, nullptr, 0, 1, 0, nullptr); }},
	    {"mr_list", [&] { mlx5dv_wr_mr_list(mqp, nullptr, 0, 0, nullptr); }},
	    {"raw_wqe", [&] { mlx5dv_wr_raw_wqe(mqp, source.data()); }},
	    {"memcpy",
	     [&] {
		     mlx5dv_wr_memcpy(mqp, target_mr->lkey, reinterpret_cast<uint64_t>(target.data()), source_mr->lkey,
				      reinterpret_cast<uint64_t>(source.data()), 64);
	     }},
	};
	for (const auto &[name, builder] : builders) {
		// A write, then the mlx5 builder: the whole batch fails and nothing of it runs.
		ibv_wr_start(qpx);
		qpx->wr_id = 1;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(qpx, target_mr->rkey, reinterpret_cast<uint64_t>(target.data()));
		ibv_wr_set_sge(qpx, source_mr->lkey, reinterpret_cast<uint64_t>(source.data()), 64);
		builder();
		EXPECT_EQ(ibv_wr_complete(qpx), EOPNOTSUPP) << name;
	}
	ibv_wc wc{};
	EXPECT_FALSE(poll_one(&wc, std::chrono::milliseconds(50))) << "a failed batch completed: wr_id " << wc.wr_id;
	EXPECT_EQ(target[0], 0) << "a failed batch wrote";

	// The same write alone runs.
	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, target_mr->rkey, reinterpret_cast<uint64_t>(target.data()));
	ibv_wr_set_sge(qpx, source_mr->lkey, reinterpret_cast<uint64_t>(source.data()), 64);
	ASSERT_EQ(ibv_wr_complete(qpx), 0);
	ASSERT_TRUE(poll_one(&wc, std::chrono::seconds(5)));
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
	EXPECT_EQ(wc.wr_id, 2u);
	EXPECT_EQ(std::memcmp(target.data(), source.data(), 64), 0);
	EXPECT_EQ(target[64], 0);
}

} // namespace
