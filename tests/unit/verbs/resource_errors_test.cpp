// The documented error returns of the resource verbs: destroying what is still used (EBUSY),
// registrations with bad access or length, CQs, QPs and SRQs with bad sizes or unsupported
// types.
#include "verbs_test_support.hpp"

#include <fcntl.h>

#include <vector>

namespace {

using verbs_test::open_device;

class VerbsResources : public ::testing::Test {
protected:
	void SetUp() override
	{
		ctx_ = open_device("mlx5_0");
		ASSERT_NE(ctx_, nullptr);
		pd_ = ibv_alloc_pd(ctx_);
		ASSERT_NE(pd_, nullptr);
		buffer_.assign(4096, 0);
	}
	void TearDown() override
	{
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		if (ctx_ != nullptr) {
			EXPECT_EQ(ibv_close_device(ctx_), 0);
		}
	}

	ibv_qp *make_qp(ibv_cq *cq, ibv_qp_type type = IBV_QPT_RC, ibv_srq *srq = nullptr)
	{
		ibv_qp_init_attr init{};
		init.send_cq = cq;
		init.recv_cq = cq;
		init.srq = srq;
		init.qp_type = type;
		init.cap.max_send_wr = 4;
		init.cap.max_recv_wr = srq != nullptr ? 0 : 4;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = srq != nullptr ? 0 : 1;
		return ibv_create_qp(pd_, &init);
	}

	ibv_context *ctx_ = nullptr;
	ibv_pd *pd_ = nullptr;
	std::vector<uint8_t> buffer_;
};

TEST_F(VerbsResources, DeallocPdInUseIsBusy)
{
	ibv_mr *mr = verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	EXPECT_EQ(mr->pd, pd_);
	EXPECT_EQ(mr->addr, buffer_.data());
	EXPECT_EQ(mr->length, buffer_.size());
	EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a PD with a memory region";
	EXPECT_EQ(ibv_dereg_mr(mr), 0);

	ibv_cq *cq = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	ibv_qp *qp = make_qp(cq);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a PD with a queue pair";
	EXPECT_EQ(ibv_destroy_qp(qp), 0);

	ibv_srq_init_attr srq_init{};
	srq_init.attr.max_wr = 4;
	srq_init.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(pd_, &srq_init);
	ASSERT_NE(srq, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a PD with an SRQ";
	EXPECT_EQ(ibv_destroy_srq(srq), 0);

	ibv_ah_attr ah_attr{};
	ah_attr.is_global = 1;
	ah_attr.port_num = 1;
	ASSERT_EQ(ibv_query_gid(ctx_, 1, 1, &ah_attr.grh.dgid), 0);
	ibv_ah *ah = ibv_create_ah(pd_, &ah_attr);
	ASSERT_NE(ah, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a PD with an address handle";
	EXPECT_EQ(ibv_destroy_ah(ah), 0);

	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	// Free now: a second PD comes and goes too.
	ibv_pd *other = ibv_alloc_pd(ctx_);
	ASSERT_NE(other, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(other), 0);
}

TEST_F(VerbsResources, DestroyCqWithQueuePairsIsBusy)
{
	ibv_cq *send = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
	ibv_cq *recv = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
	ASSERT_NE(send, nullptr);
	ASSERT_NE(recv, nullptr);
	ibv_qp_init_attr init{};
	init.send_cq = send;
	init.recv_cq = recv;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = init.cap.max_recv_wr = 2;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	ibv_qp *qp = ibv_create_qp(pd_, &init);
	ASSERT_NE(qp, nullptr);
	EXPECT_EQ(ibv_destroy_cq(send), EBUSY);
	EXPECT_EQ(ibv_destroy_cq(recv), EBUSY);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(send), 0);
	EXPECT_EQ(ibv_destroy_cq(recv), 0);
}

TEST_F(VerbsResources, DestroyCompChannelWithCqsIsBusy)
{
	ibv_comp_channel *channel = ibv_create_comp_channel(ctx_);
	ASSERT_NE(channel, nullptr);
	EXPECT_GE(channel->fd, 0);
	EXPECT_EQ(channel->context, ctx_);
	ibv_cq *cq = ibv_create_cq(ctx_, 8, nullptr, channel, 0);
	ASSERT_NE(cq, nullptr);
	EXPECT_EQ(cq->channel, channel);
	EXPECT_EQ(ibv_destroy_comp_channel(channel), EBUSY);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(channel), 0);
}

TEST_F(VerbsResources, DestroySrqInUseIsBusy)
{
	ibv_srq_init_attr srq_init{};
	srq_init.attr.max_wr = 8;
	srq_init.attr.max_sge = 2;
	ibv_srq *srq = ibv_create_srq(pd_, &srq_init);
	ASSERT_NE(srq, nullptr);
	EXPECT_GE(srq_init.attr.max_wr, 8u) << "the granted size";
	ibv_cq *cq = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	ibv_qp *qp = make_qp(cq, IBV_QPT_RC, srq);
	ASSERT_NE(qp, nullptr) << std::strerror(errno);
	EXPECT_EQ(qp->srq, srq);
	EXPECT_EQ(ibv_destroy_srq(srq), EBUSY);
	// A queue pair on an SRQ posts no receives of its own.
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp, &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(VerbsResources, SrqAttributesAndErrors)
{
	ibv_srq_init_attr srq_init{};
	srq_init.attr.max_wr = 0;
	srq_init.attr.max_sge = 1;
	EXPECT_EQ(ibv_create_srq(pd_, &srq_init), nullptr) << "no room";
	EXPECT_EQ(errno, EINVAL);
	ibv_device_attr device{};
	ASSERT_EQ(ibv_query_device(ctx_, &device), 0);
	srq_init.attr.max_wr = static_cast<uint32_t>(device.max_srq_wr) + 1;
	EXPECT_EQ(ibv_create_srq(pd_, &srq_init), nullptr);
	EXPECT_EQ(errno, EINVAL);
	srq_init.attr.max_wr = 4;
	srq_init.attr.max_sge = static_cast<uint32_t>(device.max_srq_sge) + 1;
	EXPECT_EQ(ibv_create_srq(pd_, &srq_init), nullptr);
	EXPECT_EQ(errno, EINVAL);

	srq_init.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(pd_, &srq_init);
	ASSERT_NE(srq, nullptr);
	ibv_srq_attr attr{};
	ASSERT_EQ(ibv_query_srq(srq, &attr), 0);
	EXPECT_EQ(attr.max_wr, srq_init.attr.max_wr);
	attr.srq_limit = 2;
	EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	ASSERT_EQ(ibv_query_srq(srq, &attr), 0);
	EXPECT_EQ(attr.srq_limit, 2u);
	attr.srq_limit = attr.max_wr + 1;
	EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), EINVAL);

	// More receives than it holds: ENOMEM at the first one that does not fit.
	std::vector<ibv_recv_wr> wrs(srq_init.attr.max_wr + 1);
	ibv_sge sge{reinterpret_cast<uint64_t>(buffer_.data()), 16, 0};
	ibv_mr *mr = verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	sge.lkey = mr->lkey;
	for (size_t i = 0; i < wrs.size(); ++i) {
		wrs[i].wr_id = i;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
	}
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(ibv_post_srq_recv(srq, wrs.data(), &bad), ENOMEM);
	EXPECT_EQ(bad, &wrs.back());
	// Too many elements.
	ibv_sge two[2] = {sge, sge};
	ibv_recv_wr wide{};
	wide.sg_list = two;
	wide.num_sge = 2;
	EXPECT_EQ(ibv_post_srq_recv(srq, &wide, &bad), EINVAL);
	EXPECT_EQ(bad, &wide);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(VerbsResources, RegMrChecksAccessAndLength)
{
	// Remote write or atomic without local write (IB 10.6.3.1).
	errno = 0;
	EXPECT_EQ(verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_REMOTE_WRITE), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_REMOTE_ATOMIC), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(verbs_test::reg_mr(pd_, buffer_.data(), 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), 1 << 30), nullptr) << "an unknown flag";
	EXPECT_EQ(errno, EINVAL);

	// Remote read alone needs no local write; keys differ between registrations.
	ibv_mr *read_only = verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(read_only, nullptr) << std::strerror(errno);
	ibv_mr *writable =
	    verbs_test::reg_mr(pd_, buffer_.data(), buffer_.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(writable, nullptr);
	EXPECT_NE(read_only->lkey, writable->lkey);
	EXPECT_NE(read_only->rkey, writable->rkey);
	// The same memory at another iova.
	const int local_write = IBV_ACCESS_LOCAL_WRITE; // an int: see verbs_test::reg_mr
	ibv_mr *moved = ibv_reg_mr_iova(pd_, buffer_.data(), buffer_.size(), 0x10000, local_write);
	ASSERT_NE(moved, nullptr);
	EXPECT_EQ(moved->addr, buffer_.data());
	EXPECT_EQ(ibv_dereg_mr(moved), 0);
	ibv_mr *moved2 = ibv_reg_mr_iova2(pd_, buffer_.data(), buffer_.size(), 0x20000, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(moved2, nullptr);
	EXPECT_EQ(ibv_dereg_mr(moved2), 0);
	EXPECT_EQ(ibv_dereg_mr(writable), 0);
	EXPECT_EQ(ibv_dereg_mr(read_only), 0);
}

TEST_F(VerbsResources, CreateCqChecksDepthAndVector)
{
	ibv_device_attr device{};
	ASSERT_EQ(ibv_query_device(ctx_, &device), 0);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 0, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, device.max_cqe + 1, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 8, nullptr, nullptr, ctx_->num_comp_vectors), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 8, nullptr, nullptr, -1), nullptr);
	EXPECT_EQ(errno, EINVAL);

	int tag = 0;
	ibv_cq *cq = ibv_create_cq(ctx_, 5, &tag, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	EXPECT_GE(cq->cqe, 5) << "at least what was asked";
	EXPECT_EQ(cq->cq_context, &tag);
	EXPECT_EQ(cq->context, ctx_);
	ibv_wc wc{};
	EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0) << "a fresh CQ is empty";
	EXPECT_EQ(ibv_destroy_cq(cq), 0);

	// A channel of another context.
	ibv_context *other = open_device("mlx5_1");
	ASSERT_NE(other, nullptr);
	ibv_comp_channel *foreign = ibv_create_comp_channel(other);
	ASSERT_NE(foreign, nullptr);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx_, 8, nullptr, foreign, 0), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ibv_destroy_comp_channel(foreign), 0);
	EXPECT_EQ(ibv_close_device(other), 0);
}

TEST_F(VerbsResources, CreateQpChecksCapsAndType)
{
	ibv_device_attr device{};
	ASSERT_EQ(ibv_query_device(ctx_, &device), 0);
	ibv_cq *cq = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr);
	auto attempt = [&](auto &&change) {
		ibv_qp_init_attr init{};
		init.send_cq = cq;
		init.recv_cq = cq;
		init.qp_type = IBV_QPT_RC;
		init.cap.max_send_wr = 4;
		init.cap.max_recv_wr = 4;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		change(init);
		errno = 0;
		ibv_qp *qp = ibv_create_qp(pd_, &init);
		const int error = errno;
		if (qp != nullptr) {
			EXPECT_EQ(ibv_destroy_qp(qp), 0);
			return 0;
		}
		return error;
	};
	EXPECT_EQ(attempt([](ibv_qp_init_attr &) {}), 0);
	EXPECT_EQ(attempt([&](ibv_qp_init_attr &a) { a.cap.max_send_wr = device.max_qp_wr + 1; }), EINVAL);
	EXPECT_EQ(attempt([&](ibv_qp_init_attr &a) { a.cap.max_recv_wr = device.max_qp_wr + 1; }), EINVAL);
	EXPECT_EQ(attempt([&](ibv_qp_init_attr &a) { a.cap.max_send_sge = device.max_sge + 1; }), EINVAL);
	EXPECT_EQ(attempt([&](ibv_qp_init_attr &a) { a.cap.max_recv_sge = device.max_sge + 1; }), EINVAL);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.cap.max_inline_data = 1u << 20; }), EINVAL);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.send_cq = nullptr; }), EINVAL);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.recv_cq = nullptr; }), EINVAL);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.qp_type = IBV_QPT_UC; }), EOPNOTSUPP);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.qp_type = IBV_QPT_RAW_PACKET; }), EOPNOTSUPP);
	EXPECT_EQ(attempt([](ibv_qp_init_attr &a) { a.qp_type = IBV_QPT_XRC_SEND; }), EOPNOTSUPP);

	// A CQ of another context.
	ibv_context *other = open_device("mlx5_1");
	ASSERT_NE(other, nullptr);
	ibv_cq *foreign = ibv_create_cq(other, 8, nullptr, nullptr, 0);
	ASSERT_NE(foreign, nullptr);
	EXPECT_EQ(attempt([&](ibv_qp_init_attr &a) { a.recv_cq = foreign; }), EINVAL);
	EXPECT_EQ(ibv_destroy_cq(foreign), 0);
	EXPECT_EQ(ibv_close_device(other), 0);

	// What the device granted comes back, and query_qp reports the same.
	ibv_qp_init_attr init{};
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.sq_sig_all = 1;
	init.cap.max_send_wr = 5;
	init.cap.max_recv_wr = 5;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 3;
	init.cap.max_inline_data = 40;
	int tag = 0;
	init.qp_context = &tag;
	ibv_qp *qp = ibv_create_qp(pd_, &init);
	ASSERT_NE(qp, nullptr);
	EXPECT_GE(init.cap.max_send_wr, 5u);
	EXPECT_GE(init.cap.max_recv_wr, 5u);
	EXPECT_GE(init.cap.max_send_sge, 2u);
	EXPECT_GE(init.cap.max_recv_sge, 3u);
	EXPECT_GE(init.cap.max_inline_data, 40u);
	EXPECT_EQ(qp->state, IBV_QPS_RESET);
	EXPECT_EQ(qp->qp_type, IBV_QPT_RC);
	EXPECT_EQ(qp->qp_context, &tag);
	EXPECT_EQ(qp->pd, pd_);
	EXPECT_NE(qp->qp_num, 0u);
	ibv_qp_attr attr{};
	ibv_qp_init_attr queried{};
	ASSERT_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &queried), 0);
	EXPECT_EQ(attr.qp_state, IBV_QPS_RESET);
	EXPECT_EQ(attr.cap.max_send_wr, init.cap.max_send_wr);
	EXPECT_EQ(queried.cap.max_recv_sge, init.cap.max_recv_sge);
	EXPECT_EQ(queried.send_cq, cq);
	EXPECT_EQ(queried.sq_sig_all, 1);
	EXPECT_EQ(queried.qp_type, IBV_QPT_RC);
	// ibv_qp_to_qp_ex needs IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
	EXPECT_EQ(ibv_qp_to_qp_ex(qp), nullptr);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(VerbsResources, CloseDeviceReleasesEveryDescriptor)
{
	// Counts this process's open descriptors.
	auto open_fds = [] {
		int count = 0;
		for (int fd = 0; fd < 4096; ++fd)
			if (fcntl(fd, F_GETFD) != -1)
				++count;
		return count;
	};
	verbs_test::Options options;
	options.channel = true;
	{
		// The first queue pair starts what lives as long as the process (the transport's agent
		// thread and its descriptors, the memory table's shared files).
		verbs_test::Endpoint warm_up;
		ASSERT_TRUE(warm_up.create("mlx5_1", options));
	}
	const int before = open_fds();
	{
		verbs_test::Endpoint endpoint;
		ASSERT_TRUE(endpoint.create("mlx5_1", options));
		EXPECT_GT(open_fds(), before);
	}
	EXPECT_EQ(open_fds(), before);
}

} // namespace
