// The work-queue engine's fast path (src/mlx5/wq): once a QP and CQ are registered, reading WQEs,
// posting them, polling the backing CQ and writing CQEs make no heap allocation on the engine
// thread. The engine thread's own count is read where it runs: in the CQ's event callback, at an
// event before the work and at one after it.
#include "support/alloc_counter.h"
#include "unit/mlx5/mlx5_fixture.hpp"

#include "mlx5/wq/engine.hpp"

#include <gtest/gtest.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <endian.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace softdpu::mlx5::wq;

constexpr uint32_t kLogCq = 4;
constexpr uint32_t kLogSq = 6;
constexpr uint32_t kLogRq = 4;

struct Events {
	std::atomic<int> count{0};
	std::atomic<size_t> allocations{0};
};

void on_event(void *arg)
{
	auto *events = static_cast<Events *>(arg);
	events->allocations.store(softdpu_test::thread_allocation_count());
	events->count.fetch_add(1);
}

void *zeroed(size_t bytes)
{
	void *memory = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	std::memset(memory, 0, (bytes + 4095) / 4096 * 4096);
	return memory;
}

TEST(Mlx5WqAlloc, TheEngineDataPathMakesNoAllocation)
{
	int count = 0;
	ibv_device **list = ibv_get_device_list(&count);
	ASSERT_NE(list, nullptr);
	ibv_context *context = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	ASSERT_NE(context, nullptr);
	ibv_pd *pd = ibv_alloc_pd(context);
	ibv_cq *cq = ibv_create_cq(context, 64, nullptr, nullptr, 0);
	ibv_qp_init_attr init{};
	init.send_cq = init.recv_cq = cq;
	init.cap = {32, 16, 1, 1, 64};
	init.qp_type = IBV_QPT_RC;
	ibv_qp *a = ibv_create_qp(pd, &init);
	ibv_qp *b = ibv_create_qp(pd, &init);
	ASSERT_NE(a, nullptr);
	ASSERT_NE(b, nullptr);
	std::vector<uint64_t> memory(4096);
	ibv_mr *mr = ibv_reg_mr(pd, memory.data(), memory.size() * 8,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr);
	mlx5_test::connect_rc(context, a, b->qp_num);
	mlx5_test::connect_rc(context, b, a->qp_num);

	auto *cqes = static_cast<mlx5_cqe64 *>(zeroed(64u << kLogCq));
	for (uint32_t i = 0; i < (1u << kLogCq); ++i)
		cqes[i].op_own = 0xf1;
	auto *cq_doorbell = static_cast<uint32_t *>(zeroed(64));
	auto *sq = static_cast<uint8_t *>(zeroed(64u << kLogSq));
	auto *rq = static_cast<uint8_t *>(zeroed(16u << kLogRq));
	auto *qp_doorbell = static_cast<uint32_t *>(zeroed(64));
	Events events;
	CqConfig cq_config;
	cq_config.buffer = cqes;
	cq_config.log_size = kLogCq;
	cq_config.doorbell = cq_doorbell;
	cq_config.cqn = 1;
	cq_config.backing = cq;
	cq_config.on_event = on_event;
	cq_config.event_arg = &events;
	Cq *engine_cq = Engine::instance().add_cq(cq_config);
	ASSERT_NE(engine_cq, nullptr);
	QpConfig qp_config;
	qp_config.qpn = a->qp_num;
	qp_config.backing = a;
	qp_config.sq = sq;
	qp_config.log_sq_size = kLogSq;
	qp_config.rq = rq;
	qp_config.log_rq_size = kLogRq;
	qp_config.doorbell = qp_doorbell;
	qp_config.send_cq = qp_config.recv_cq = engine_cq;
	Qp *engine_qp = Engine::instance().add_qp(qp_config);
	ASSERT_NE(engine_qp, nullptr);

	uint16_t pi = 0;
	uint32_t ci = 0;
	uint32_t sn = 0;
	// A batch of signaled WRITEs (one inline) and a NOP, then their CQEs consumed.
	auto round = [&](int writes) {
		for (int i = 0; i < writes; ++i) {
			uint8_t *wqe = sq + size_t{pi & ((1u << kLogSq) - 1)} * 64;
			const bool inline_data = i == 0;
			mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(wqe), pi, MLX5_OPCODE_RDMA_WRITE, 0,
					    a->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0, 0);
			auto *raddr = reinterpret_cast<mlx5_wqe_raddr_seg *>(wqe + 16);
			raddr->raddr = htobe64(reinterpret_cast<uintptr_t>(&memory[512 + i]));
			raddr->rkey = htobe32(mr->rkey);
			if (inline_data) {
				const uint32_t header = htobe32(8 | MLX5_INLINE_SEG);
				std::memcpy(wqe + 32, &header, 4);
				std::memcpy(wqe + 36, &memory[i], 8);
			} else {
				mlx5dv_set_data_seg(reinterpret_cast<mlx5_wqe_data_seg *>(wqe + 32), 8, mr->lkey,
						    reinterpret_cast<uintptr_t>(&memory[i]));
			}
			++pi;
		}
		__atomic_store_n(&qp_doorbell[MLX5_SND_DBR], htobe32(pi), __ATOMIC_RELEASE);
		for (int seen = 0; seen < writes;) {
			mlx5_cqe64 *cqe = &cqes[ci & ((1u << kLogCq) - 1)];
			const uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
			if ((op_own >> 4) == MLX5_CQE_INVALID || ((op_own & 1) != 0) != ((ci >> kLogCq) & 1)) {
				std::this_thread::sleep_for(std::chrono::microseconds(50));
				continue;
			}
			EXPECT_EQ(op_own >> 4, MLX5_CQE_REQ);
			++ci;
			++seen;
			__atomic_store_n(&cq_doorbell[0], htobe32(ci & 0xffffff), __ATOMIC_RELEASE);
		}
	};
	auto arm_and_wait = [&](int expected) {
		const uint32_t word = (++sn & 3) << 28 | (ci & 0xffffff);
		__atomic_store_n(&cq_doorbell[1], htobe32(word), __ATOMIC_RELEASE);
		round(1);
		for (int i = 0; i < 20000 && events.count.load() < expected; ++i)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
		return events.count.load() == expected;
	};
	round(8); // warm up
	ASSERT_TRUE(arm_and_wait(1));
	const size_t before = events.allocations.load();
	for (int i = 0; i < 10; ++i)
		round(12);
	ASSERT_TRUE(arm_and_wait(2));
	EXPECT_EQ(events.allocations.load(), before) << "allocations on the engine thread's data path";

	Engine::instance().remove_qp(engine_qp);
	Engine::instance().remove_cq(engine_cq);
	std::free(cqes);
	std::free(cq_doorbell);
	std::free(sq);
	std::free(rq);
	std::free(qp_doorbell);
	EXPECT_EQ(ibv_destroy_qp(a), 0);
	EXPECT_EQ(ibv_destroy_qp(b), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(context), 0);
}

} // namespace
