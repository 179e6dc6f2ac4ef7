// After a queue pair is connected, the verbs data path (post_send of every opcode, post_recv,
// poll_cq, the device executing the requests and delivering receives) makes no heap allocation.
#include "support/alloc_counter.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <vector>

namespace {

struct Pair {
	ibv_context *context = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *a = nullptr;
	ibv_qp *b = nullptr;
	ibv_mr *mr = nullptr;
	std::vector<uint64_t> memory = std::vector<uint64_t>(4096);

	Pair()
	{
		int count = 0;
		ibv_device **list = ibv_get_device_list(&count);
		context = ibv_open_device(list[0]);
		ibv_free_device_list(list);
		pd = ibv_alloc_pd(context);
		cq = ibv_create_cq(context, 256, nullptr, nullptr, 0);
		ibv_qp_init_attr init{};
		init.send_cq = cq;
		init.recv_cq = cq;
		init.cap = {128, 128, 2, 2, 64};
		init.qp_type = IBV_QPT_RC;
		a = ibv_create_qp(pd, &init);
		b = ibv_create_qp(pd, &init);
		mr = ibv_reg_mr(pd, memory.data(), memory.size() * 8,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC);
		connect(a, b->qp_num);
		connect(b, a->qp_num);
	}
	~Pair()
	{
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		ibv_dereg_mr(mr);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		ibv_close_device(context);
	}
	void connect(ibv_qp *qp, uint32_t remote)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		ASSERT_EQ(
		    ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
		attr = {};
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_4096;
		attr.dest_qp_num = remote;
		attr.max_dest_rd_atomic = 4;
		attr.ah_attr.is_global = 1;
		attr.ah_attr.port_num = 1;
		ASSERT_EQ(ibv_query_gid(context, 1, 0, &attr.ah_attr.grh.dgid), 0);
		ASSERT_EQ(ibv_modify_qp(qp, &attr,
					IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
			  0);
		attr = {};
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 4;
		ASSERT_EQ(ibv_modify_qp(qp, &attr,
					IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
			  0);
	}
	uint64_t address(size_t word) { return reinterpret_cast<uintptr_t>(&memory[word]); }
	// Posts one request of `opcode` from a to b's memory and waits for its completion (and for the
	// receive's, for sends).
	bool run(ibv_wr_opcode opcode, bool inline_data)
	{
		if (opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM || opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			ibv_sge sge{address(1024), 64, mr->lkey};
			ibv_recv_wr recv{};
			recv.sg_list = &sge;
			recv.num_sge = 1;
			ibv_recv_wr *bad_recv = nullptr;
			if (ibv_post_recv(b, &recv, &bad_recv) != 0)
				return false;
		}
		const bool atomic = opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
		ibv_sge sge{address(0), atomic ? 8u : 32u, mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = opcode;
		wr.send_flags = IBV_SEND_SIGNALED | (inline_data ? IBV_SEND_INLINE : 0);
		if (atomic) {
			wr.wr.atomic.remote_addr = address(2048);
			wr.wr.atomic.rkey = mr->rkey;
			wr.wr.atomic.compare_add = 1;
		} else {
			wr.wr.rdma.remote_addr = address(512);
			wr.wr.rdma.rkey = mr->rkey;
		}
		ibv_send_wr *bad = nullptr;
		if (ibv_post_send(a, &wr, &bad) != 0)
			return false;
		const int expected =
		    opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM || opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? 2
														    : 1;
		std::array<ibv_wc, 4> wc{};
		int seen = 0;
		while (seen < expected) {
			const int n = ibv_poll_cq(cq, 4, wc.data());
			if (n < 0)
				return false;
			for (int i = 0; i < n; ++i)
				if (wc[static_cast<size_t>(i)].status != IBV_WC_SUCCESS)
					return false;
			seen += n;
		}
		return true;
	}
};

TEST(VerbsDataPath, EveryOpcodeAllocatesNothingOnceConnected)
{
	Pair pair;
	const std::array opcodes = {IBV_WR_RDMA_WRITE,          IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
				    IBV_WR_SEND_WITH_IMM,       IBV_WR_RDMA_READ,           IBV_WR_ATOMIC_CMP_AND_SWP,
				    IBV_WR_ATOMIC_FETCH_AND_ADD};
	for (ibv_wr_opcode opcode : opcodes) { // warm up: the connection is made on first use
		ASSERT_TRUE(pair.run(opcode, false));
	}

	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 50; ++round) {
		for (ibv_wr_opcode opcode : opcodes) {
			ASSERT_TRUE(pair.run(opcode, false)) << opcode;
			if (opcode == IBV_WR_RDMA_WRITE || opcode == IBV_WR_SEND) {
				ASSERT_TRUE(pair.run(opcode, true)) << opcode;
			}
		}
	}
	EXPECT_EQ(scope.count(), 0u) << "allocations in the verbs data path";
}

TEST(VerbsDataPath, BatchedWritesAllocateNothing)
{
	Pair pair;
	ASSERT_TRUE(pair.run(IBV_WR_RDMA_WRITE, false));
	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 20; ++round) {
		std::array<ibv_sge, 64> sges{};
		std::array<ibv_send_wr, 64> wrs{};
		for (size_t i = 0; i < wrs.size(); ++i) {
			sges[i] = {pair.address(i), 8, pair.mr->lkey};
			wrs[i].sg_list = &sges[i];
			wrs[i].num_sge = 1;
			wrs[i].opcode = IBV_WR_RDMA_WRITE;
			wrs[i].send_flags = i + 1 == wrs.size() ? IBV_SEND_SIGNALED : 0;
			wrs[i].wr.rdma = {pair.address(512 + i), pair.mr->rkey};
			wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
		}
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(ibv_post_send(pair.a, wrs.data(), &bad), 0);
		ibv_wc wc{};
		while (ibv_poll_cq(pair.cq, 1, &wc) == 0) {
		}
		ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
	}
	EXPECT_EQ(scope.count(), 0u) << "allocations in batched RDMA WRITEs";
}

} // namespace
