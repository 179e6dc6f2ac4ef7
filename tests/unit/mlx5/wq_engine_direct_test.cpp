// The work-queue engine (src/mlx5/wq/engine.hpp) driven directly, as the DevX object layer drives
// it: queue buffers and doorbell records of the test's own, verbs objects as backing. Covers what
// mlx5dv_init_obj's sizing never reaches: a CQ smaller than its backing CQ (completions held while
// it is full) and CQ arming with the event callback.
#include "wq_fixture.hpp"

#include "mlx5/wq/engine.hpp"
#include "mlx5/wq/event_channel.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <vector>

using namespace mlx5_test;
using softdpu::mlx5::wq::CqConfig;
using softdpu::mlx5::wq::Engine;
using softdpu::mlx5::wq::EventChannel;
using softdpu::mlx5::wq::QpConfig;

namespace {

struct Aligned {
	void *memory = nullptr;
	explicit Aligned(size_t bytes)
	{
		memory = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
		std::memset(memory, 0, (bytes + 4095) / 4096 * 4096);
	}
	~Aligned() { std::free(memory); }
	Aligned(const Aligned &) = delete;
	Aligned &operator=(const Aligned &) = delete;
};

class WqEngineTest : public Mlx5Test {
protected:
	static constexpr uint32_t kLogCq = 2; // 4 CQEs over a backing CQ of 64
	static constexpr uint32_t kLogSq = 6;
	static constexpr uint32_t kLogRq = 4;

	void SetUp() override
	{
		Mlx5Test::SetUp();
		if (HasFatalFailure())
			return;
		pd_ = ibv_alloc_pd(context_);
		ASSERT_NE(pd_, nullptr);
		backing_cq_ = ibv_create_cq(context_, 64, nullptr, nullptr, 0);
		peer_cq_ = ibv_create_cq(context_, 64, nullptr, nullptr, 0);
		ASSERT_NE(backing_cq_, nullptr);
		ASSERT_NE(peer_cq_, nullptr);
		ibv_qp_init_attr attr{};
		attr.qp_type = IBV_QPT_RC;
		attr.cap.max_send_wr = 32;
		attr.cap.max_recv_wr = 16;
		attr.cap.max_send_sge = 1;
		attr.cap.max_recv_sge = 1;
		attr.send_cq = attr.recv_cq = backing_cq_;
		qp_ = ibv_create_qp(pd_, &attr);
		attr.send_cq = attr.recv_cq = peer_cq_;
		peer_ = ibv_create_qp(pd_, &attr);
		ASSERT_NE(qp_, nullptr);
		ASSERT_NE(peer_, nullptr);
		connect_rc(context_, qp_, peer_->qp_num);
		connect_rc(context_, peer_, qp_->qp_num);
		local_.assign(4096, 0);
		remote_.assign(4096, 0);
		const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		local_mr_ = ibv_reg_mr(pd_, local_.data(), local_.size(), access);
		remote_mr_ = ibv_reg_mr(pd_, remote_.data(), remote_.size(), access);
		ASSERT_NE(local_mr_, nullptr);
		ASSERT_NE(remote_mr_, nullptr);

		for (uint32_t i = 0; i < (1u << kLogCq); ++i)
			static_cast<mlx5_cqe64 *>(cq_buffer_.memory)[i].op_own = 0xf1;
		*reinterpret_cast<uint64_t *>(static_cast<uint8_t *>(uar_.memory) + MLX5_CQ_DOORBELL) = ~uint64_t{0};
		CqConfig cq_config;
		cq_config.buffer = cq_buffer_.memory;
		cq_config.log_size = kLogCq;
		cq_config.doorbell = static_cast<uint32_t *>(cq_doorbell_.memory);
		cq_config.cqn = 77;
		cq_config.backing = backing_cq_;
		cq_config.uar_doorbell =
		    reinterpret_cast<uint64_t *>(static_cast<uint8_t *>(uar_.memory) + MLX5_CQ_DOORBELL);
		cq_config.on_event = [](void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); };
		cq_config.event_arg = &events_;
		cq_ = Engine::instance().add_cq(cq_config);
		ASSERT_NE(cq_, nullptr) << "errno " << errno;
		QpConfig qp_config;
		qp_config.qpn = qp_->qp_num;
		qp_config.backing = qp_;
		qp_config.sq = sq_.memory;
		qp_config.log_sq_size = kLogSq;
		qp_config.rq = rq_.memory;
		qp_config.log_rq_size = kLogRq;
		qp_config.log_rq_stride = 0;
		qp_config.doorbell = static_cast<uint32_t *>(qp_doorbell_.memory);
		qp_config.send_cq = cq_;
		qp_config.recv_cq = cq_;
		engine_qp_ = Engine::instance().add_qp(qp_config);
		ASSERT_NE(engine_qp_, nullptr) << "errno " << errno;

		dv_cq_.cq = backing_cq_;
		dv_cq_.dv.buf = cq_buffer_.memory;
		dv_cq_.dv.dbrec = static_cast<__be32 *>(cq_doorbell_.memory);
		dv_cq_.dv.cqe_cnt = 1u << kLogCq;
		dv_cq_.dv.cqe_size = 64;
		dv_cq_.dv.cq_uar = uar_.memory;
		dv_cq_.dv.cqn = 77;
		dv_qp_.qp = qp_;
		dv_qp_.dv.dbrec = static_cast<__be32 *>(qp_doorbell_.memory);
		dv_qp_.dv.sq = {sq_.memory, 1u << kLogSq, 64};
		dv_qp_.dv.rq = {rq_.memory, 1u << kLogRq, 16};
		dv_qp_.dv.bf = {bf_.memory, 256};
	}

	void TearDown() override
	{
		Engine::instance().remove_qp(engine_qp_);
		Engine::instance().remove_cq(cq_);
		for (ibv_qp *qp : {qp_, peer_})
			if (qp != nullptr) {
				EXPECT_EQ(ibv_destroy_qp(qp), 0);
			}
		for (ibv_mr *mr : {local_mr_, remote_mr_})
			if (mr != nullptr) {
				EXPECT_EQ(ibv_dereg_mr(mr), 0);
			}
		for (ibv_cq *cq : {backing_cq_, peer_cq_})
			if (cq != nullptr) {
				EXPECT_EQ(ibv_destroy_cq(cq), 0);
			}
		if (pd_ != nullptr) {
			EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
		}
		Mlx5Test::TearDown();
	}

	uint16_t write(size_t offset, bool signaled = true)
	{
		const uint16_t index = dv_qp_.pi;
		dv_qp_.write(MLX5_OPCODE_RDMA_WRITE, signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0,
			     {raddr_seg(reinterpret_cast<uintptr_t>(remote_.data() + offset), remote_mr_->rkey),
			      data_seg(local_.data() + offset, 8, local_mr_->lkey)});
		return index;
	}

	// Waits until `events_` reaches `count` (within `limit`).
	bool wait_events(int count, std::chrono::milliseconds limit = std::chrono::milliseconds(2000))
	{
		const auto deadline = std::chrono::steady_clock::now() + limit;
		while (events_.load() < count) {
			if (std::chrono::steady_clock::now() > deadline)
				return false;
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		}
		return true;
	}

	ibv_pd *pd_ = nullptr;
	ibv_cq *backing_cq_ = nullptr;
	ibv_cq *peer_cq_ = nullptr;
	ibv_qp *qp_ = nullptr;
	ibv_qp *peer_ = nullptr;
	std::vector<uint8_t> local_;
	std::vector<uint8_t> remote_;
	ibv_mr *local_mr_ = nullptr;
	ibv_mr *remote_mr_ = nullptr;
	Aligned cq_buffer_{64u << kLogCq};
	Aligned cq_doorbell_{64};
	Aligned uar_{4096};
	Aligned sq_{64u << kLogSq};
	Aligned rq_{16u << kLogRq};
	Aligned qp_doorbell_{64};
	Aligned bf_{4096};
	softdpu::mlx5::wq::Cq *cq_ = nullptr;
	softdpu::mlx5::wq::Qp *engine_qp_ = nullptr;
	DvCq dv_cq_;
	DvQp dv_qp_;
	std::atomic<int> events_{0};
};

TEST_F(WqEngineTest, AFullCqHoldsCompletionsUntilTheConsumerMoves)
{
	std::vector<uint16_t> indexes;
	for (int i = 0; i < 10; ++i)
		indexes.push_back(write(size_t(i) * 8));
	dv_qp_.ring();
	// The four CQEs arrive; the first is not overwritten while nobody consumes.
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
	while (__atomic_load_n(&dv_cq_.slot(3)->op_own, __ATOMIC_ACQUIRE) == 0xf1) {
		ASSERT_LT(std::chrono::steady_clock::now(), deadline);
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.peek(&cqe));
	EXPECT_EQ(be16toh(cqe.wqe_counter), indexes[0]);
	for (uint16_t index : indexes) {
		ASSERT_TRUE(dv_cq_.poll(&cqe));
		EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ);
		EXPECT_EQ(be16toh(cqe.wqe_counter), index);
	}
	EXPECT_FALSE(dv_cq_.poll(&cqe, std::chrono::milliseconds(30)));
}

TEST_F(WqEngineTest, AnIdleEngineTakesNoCore)
{
	// Work, then nothing: after its short spin the engine sleeps (up to 1 ms between passes).
	write(0);
	dv_qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	timespec start{};
	timespec end{};
	ASSERT_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start), 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(400));
	ASSERT_EQ(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end), 0);
	const double busy = double(end.tv_sec - start.tv_sec) + double(end.tv_nsec - start.tv_nsec) / 1e9;
	// A polling thread would use the whole 0.4 s; the engine (and the transport's 1 ms ticker)
	// use a few ms. The bound leaves room for slow sanitized builds.
	EXPECT_LT(busy, 0.1) << "CPU seconds used by an idle process with a registered QP and CQ";
	// And it still answers at once.
	write(8);
	dv_qp_.ring();
	ASSERT_TRUE(dv_cq_.poll(&cqe, std::chrono::milliseconds(100)));
}

TEST_F(WqEngineTest, AnArmRaisesOneEvent)
{
	// Not armed: no event.
	write(0);
	dv_qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	std::this_thread::sleep_for(std::chrono::milliseconds(10));
	EXPECT_EQ(events_.load(), 0);

	// Armed at the consumer index: the next CQE raises one event, the one after none.
	dv_cq_.arm(0, false);
	std::this_thread::sleep_for(std::chrono::milliseconds(10));
	EXPECT_EQ(events_.load(), 0);
	write(8);
	dv_qp_.ring();
	ASSERT_TRUE(wait_events(1));
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	write(16);
	dv_qp_.ring();
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	std::this_thread::sleep_for(std::chrono::milliseconds(10));
	EXPECT_EQ(events_.load(), 1);

	// Armed behind a CQE not yet consumed: the event comes at once.
	write(24);
	dv_qp_.ring();
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
	while (!dv_cq_.peek(&cqe))
		ASSERT_LT(std::chrono::steady_clock::now(), deadline);
	dv_cq_.arm(1, false);
	ASSERT_TRUE(wait_events(2));
	ASSERT_TRUE(dv_cq_.poll(&cqe));
}

TEST_F(WqEngineTest, TheFirstArmOfAFreshCqIsSeenThroughTheUar)
{
	// sn 0, "any", consumer 0: the doorbell record's word does not change (0), the UAR write does.
	dv_cq_.arm(0, false);
	EXPECT_EQ(dv_cq_.dv.dbrec[1], 0u);
	write(0);
	dv_qp_.ring();
	ASSERT_TRUE(wait_events(1));
}

TEST_F(WqEngineTest, ASolicitedArmWaitsForAReceive)
{
	dv_cq_.arm(0, true);
	write(0);
	dv_qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	std::this_thread::sleep_for(std::chrono::milliseconds(10));
	EXPECT_EQ(events_.load(), 0); // a requester CQE does not fire a solicited arm
	dv_qp_.post_recv({{reinterpret_cast<uintptr_t>(local_.data() + 1024), 64, local_mr_->lkey}});
	ibv_sge sge{reinterpret_cast<uintptr_t>(remote_.data()), 16, remote_mr_->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SOLICITED;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(peer_, &wr, &bad), 0);
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
	ASSERT_TRUE(wait_events(1));
}

TEST_F(WqEngineTest, ConfigsTheEngineCannotServeAreRefused)
{
	CqConfig cq;
	errno = 0;
	EXPECT_EQ(Engine::instance().add_cq(cq), nullptr);
	EXPECT_EQ(errno, EINVAL);
	cq.buffer = cq_buffer_.memory;
	cq.doorbell = static_cast<uint32_t *>(cq_doorbell_.memory);
	cq.backing = backing_cq_;
	cq.log_size = 23;
	EXPECT_EQ(Engine::instance().add_cq(cq), nullptr);
	QpConfig qp;
	qp.backing = qp_;
	qp.qpn = qp_->qp_num + 1; // not the backing QP's number
	qp.sq = sq_.memory;
	qp.doorbell = static_cast<uint32_t *>(qp_doorbell_.memory);
	qp.send_cq = qp.recv_cq = cq_;
	errno = 0;
	EXPECT_EQ(Engine::instance().add_qp(qp), nullptr);
	EXPECT_EQ(errno, EINVAL);
	qp.qpn = qp_->qp_num;
	qp.log_sq_size = 16; // past the 16-bit counters
	EXPECT_EQ(Engine::instance().add_qp(qp), nullptr);
}

TEST_F(WqEngineTest, ResetQpStartsTheQueuesOver)
{
	const uint16_t first = write(0);
	dv_qp_.ring();
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	EXPECT_EQ(be16toh(cqe.wqe_counter), first);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(ibv_modify_qp(qp_, &attr, IBV_QP_STATE), 0);
	Engine::instance().reset_qp(engine_qp_);
	std::memset(qp_doorbell_.memory, 0, 8);
	connect_rc(context_, qp_, peer_->qp_num);
	dv_qp_.pi = 0;
	std::iota(local_.begin(), local_.end(), 9);
	const uint16_t again = write(64);
	EXPECT_EQ(again, 0);
	dv_qp_.ring();
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ);
	EXPECT_EQ(be16toh(cqe.wqe_counter), 0);
	EXPECT_EQ(std::memcmp(remote_.data() + 64, local_.data() + 64, 8), 0);
}

// ---- DevX event channels on an engine CQ ----

TEST_F(WqEngineTest, AnEventChannelDeliversCookieAndEqe)
{
	Engine::instance().set_cq_event(cq_, nullptr, nullptr);
	EventChannel *channel = EventChannel::create(context_, false);
	ASSERT_NE(channel, nullptr);
	ASSERT_EQ(channel->subscribe(cq_, 77, 0x1122334455667788ull, -1), 0);
	EXPECT_EQ(channel->subscribe(cq_, 77, 1, -1), EBUSY); // one subscriber per CQ
	const int epoll = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(epoll, 0);
	epoll_event interest{};
	interest.events = EPOLLIN;
	ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, channel->dv.fd, &interest), 0);
	epoll_event ready{};
	EXPECT_EQ(epoll_wait(epoll, &ready, 1, 0), 0);

	dv_cq_.arm(0, false);
	write(0);
	dv_qp_.ring();
	ASSERT_EQ(epoll_wait(epoll, &ready, 1, 3000), 1);
	alignas(8) uint8_t record[72] = {};
	auto *header = reinterpret_cast<mlx5dv_devx_async_event_hdr *>(record);
	const uint8_t *eqe = record + 8;
	// A buffer too small for the record: ENOSPC, and the record stays.
	errno = 0;
	EXPECT_EQ(channel->get_event(header, 16), -1);
	EXPECT_EQ(errno, ENOSPC);
	ASSERT_EQ(channel->get_event(header, sizeof(record)), 72);
	EXPECT_EQ(header->cookie, 0x1122334455667788ull);
	EXPECT_EQ(eqe[1], 0x00); // MLX5_EVENT_TYPE_COMP
	uint32_t cqn = 0;
	std::memcpy(&cqn, eqe + 56, 4);
	EXPECT_EQ(be32toh(cqn) & 0xffffff, 77u);
	// One event per arm; nothing more is waiting.
	EXPECT_EQ(epoll_wait(epoll, &ready, 1, 20), 0);
	ASSERT_EQ(fcntl(channel->dv.fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	EXPECT_EQ(channel->get_event(header, sizeof(record)), -1);
	EXPECT_EQ(errno, EAGAIN);
	close(epoll);
	channel->destroy();
	// The CQ no longer reports to anyone: arming and completing is harmless.
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	dv_cq_.arm(1, false);
	write(8);
	dv_qp_.ring();
	ASSERT_TRUE(dv_cq_.poll(&cqe));
}

TEST_F(WqEngineTest, AnEventChannelWithoutDataAndAnFdSubscription)
{
	Engine::instance().set_cq_event(cq_, nullptr, nullptr);
	EventChannel *channel = EventChannel::create(context_, true);
	ASSERT_NE(channel, nullptr);
	ASSERT_EQ(channel->subscribe(cq_, 77, 42, -1), 0);
	dv_cq_.arm(0, false);
	write(0);
	dv_qp_.ring();
	mlx5dv_devx_async_event_hdr header{};
	ASSERT_EQ(channel->get_event(&header, sizeof(header)), 8);
	EXPECT_EQ(header.cookie, 42u);
	channel->destroy();

	// An eventfd subscription: each event adds 1 to it.
	EventChannel *other = EventChannel::create(context_, false);
	ASSERT_NE(other, nullptr);
	const int fd = eventfd(0, EFD_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(other->subscribe(cq_, 77, 0, fd), 0);
	mlx5_cqe64 cqe{};
	ASSERT_TRUE(dv_cq_.poll(&cqe));
	dv_cq_.arm(1, false);
	write(8);
	dv_qp_.ring();
	uint64_t count = 0;
	ASSERT_EQ(read(fd, &count, sizeof(count)), 8);
	EXPECT_EQ(count, 1u);
	other->destroy();
	close(fd);
}

} // namespace
