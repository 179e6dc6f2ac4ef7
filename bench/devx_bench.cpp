// DevX on softdpu's device (docs/performance.md, "DevX"), Google Benchmark:
//
//   BM_Write64/devx     64-byte RDMA WRITEs posted as raw WQEs through a DevX queue pair
//                       (samples/devx/devx_rc.c): 64 per doorbell, only the last signaled, its
//                       CQE polled from the CQ buffer by the owner bit; two batches in flight.
//   BM_Write64/verbs    the same through verbs: a list of 64 work requests per ibv_post_send,
//                       only the last signaled, ibv_poll_cq; two batches in flight.
//   BM_Write64Ratio     both, alternating runs of 16 batches in the same run: counters devx_per_s,
//                       verbs_per_s and devx_over_verbs.
//   BM_QueryHcaCap      QUERY_HCA_CAP (general capabilities, 4112-byte outbox) through
//                       mlx5dv_devx_general_cmd, commands per second.
//
// Every queue pair's peer is a verbs queue pair in the same process on the same device (the
// transport is the one two processes use). Linked against softdpu's libibverbs.so.1 and
// libmlx5.so.1 (build tree run path).
#include <benchmark/benchmark.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "devx_rc.h"

namespace {

constexpr int kBatch = 64;
constexpr int kInFlight = 2;       // batches in flight
constexpr int kBatchesPerRun = 16; // batches per benchmark iteration
constexpr size_t kBufferBytes = 1 << 20;
constexpr int kCqeTimeoutMs = 10000;

[[noreturn]] void die(const char *what)
{
	std::fprintf(stderr, "bench_devx: %s\n", what);
	std::exit(1);
}

// A verbs RC queue pair with a registered buffer.
struct VerbsQp {
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	void *buffer = nullptr;
};

void make_verbs_qp(ibv_context *context, VerbsQp &q)
{
	q.pd = ibv_alloc_pd(context);
	q.cq = ibv_create_cq(context, 4 * kBatch, nullptr, nullptr, 0);
	if (q.pd == nullptr || q.cq == nullptr || posix_memalign(&q.buffer, 4096, kBufferBytes) != 0)
		die("verbs PD/CQ");
	std::memset(q.buffer, 0, kBufferBytes);
	q.mr = ibv_reg_mr(q.pd, q.buffer, kBufferBytes,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ibv_qp_init_attr init{};
	init.send_cq = q.cq;
	init.recv_cq = q.cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 2 * kBatch;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	q.qp = ibv_create_qp(q.pd, &init);
	if (q.mr == nullptr || q.qp == nullptr)
		die("verbs MR/QP");
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(q.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		die("verbs QP to INIT");
}

void connect_verbs_qp(VerbsQp &q, const devx_conn_info &local, const devx_conn_info &remote)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = remote.qpn;
	attr.rq_psn = remote.psn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.grh.sgid_index = 0;
	std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
	if (ibv_modify_qp(q.qp, &attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		die("verbs QP to RTR");
	attr = {};
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = local.psn;
	attr.max_rd_atomic = 16;
	if (ibv_modify_qp(q.qp, &attr,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			      IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		die("verbs QP to RTS");
}

devx_conn_info verbs_info(ibv_context *context, const VerbsQp &q, uint32_t psn)
{
	devx_conn_info info{};
	info.qpn = q.qp->qp_num;
	info.psn = psn;
	ibv_gid gid{};
	if (ibv_query_gid(context, 1, 0, &gid) != 0)
		die("ibv_query_gid");
	std::memcpy(info.gid, gid.raw, 16);
	info.addr = reinterpret_cast<uintptr_t>(q.buffer);
	info.rkey = q.mr->rkey;
	info.length = kBufferBytes;
	return info;
}

// The process's set-up, made once: a DevX QP -> verbs target, and a verbs QP -> verbs target.
struct Setup {
	devx_rc rc{};
	ibv_context *verbs = nullptr;
	VerbsQp devx_target, initiator, verbs_target;
	devx_conn_info target_info{};       // where the DevX QP writes
	devx_conn_info verbs_target_info{}; // where the verbs initiator writes
	bool ok = false;
};

Setup &setup()
{
	static Setup s = [] {
		Setup s;
		devx_rc_attr attr{};
		attr.log_sq_size = 8;
		attr.log_rq_size = 2;
		attr.log_cq_size = 8;
		attr.buffer_size = kBufferBytes;
		attr.gid_index = 0;
		attr.ack_timeout = 14;
		attr.retry_count = 7;
		if (devx_open(&s.rc, "mlx5_0", &attr) != 0 || devx_create_objects(&s.rc) != 0)
			return s;
		int count = 0;
		ibv_device **list = ibv_get_device_list(&count);
		for (int i = 0; list != nullptr && i < count; i++)
			if (std::strcmp(ibv_get_device_name(list[i]), "mlx5_0") == 0)
				s.verbs = ibv_open_device(list[i]);
		ibv_free_device_list(list);
		if (s.verbs == nullptr)
			die("ibv_open_device(mlx5_0)");
		make_verbs_qp(s.verbs, s.devx_target);
		make_verbs_qp(s.verbs, s.initiator);
		make_verbs_qp(s.verbs, s.verbs_target);

		devx_conn_info devx_info{};
		devx_info.qpn = s.rc.qpn;
		devx_info.psn = 1;
		std::memcpy(devx_info.gid, s.rc.gid, 16);
		s.target_info = verbs_info(s.verbs, s.devx_target, 2);
		if (devx_connect(&s.rc, &devx_info, &s.target_info) != 0)
			return s;
		connect_verbs_qp(s.devx_target, s.target_info, devx_info);

		const devx_conn_info initiator_info = verbs_info(s.verbs, s.initiator, 3);
		s.verbs_target_info = verbs_info(s.verbs, s.verbs_target, 4);
		connect_verbs_qp(s.initiator, initiator_info, s.verbs_target_info);
		connect_verbs_qp(s.verbs_target, s.verbs_target_info, initiator_info);
		s.ok = true;
		return s;
	}();
	return s;
}

// Posts one batch through DevX: 64 WQEs, the last signaled, one doorbell.
void devx_post_batch(Setup &s, uint64_t round)
{
	for (int i = 0; i < kBatch; i++) {
		const size_t offset = static_cast<size_t>((round * kBatch + i) % (kBufferBytes / 64)) * 64;
		devx_build_wqe(&s.rc, MLX5_OPCODE_RDMA_WRITE, i == kBatch - 1, offset, 64, s.target_info.addr + offset,
			       s.target_info.rkey);
	}
	devx_ring_sq(&s.rc);
}

// Waits for the CQE of the oldest batch in flight.
bool devx_wait_batch(Setup &s)
{
	devx_cqe cqe{};
	return devx_wait_cqe(&s.rc, &cqe, kCqeTimeoutMs) == 0 && cqe.opcode == MLX5_CQE_REQ;
}

// The same through verbs: one list of 64 work requests per ibv_post_send, the last signaled.
bool verbs_post_batch(Setup &s, uint64_t round)
{
	ibv_sge sge[kBatch];
	ibv_send_wr wr[kBatch];
	auto *base = static_cast<uint8_t *>(s.initiator.buffer);
	for (int i = 0; i < kBatch; i++) {
		const size_t offset = static_cast<size_t>((round * kBatch + i) % (kBufferBytes / 64)) * 64;
		sge[i] = {reinterpret_cast<uintptr_t>(base + offset), 64, s.initiator.mr->lkey};
		wr[i] = {};
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = i == kBatch - 1 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = s.verbs_target_info.addr + offset;
		wr[i].wr.rdma.rkey = s.verbs_target_info.rkey;
		wr[i].next = i == kBatch - 1 ? nullptr : &wr[i + 1];
	}
	ibv_send_wr *bad = nullptr;
	return ibv_post_send(s.initiator.qp, wr, &bad) == 0;
}

bool verbs_wait_batch(Setup &s)
{
	ibv_wc wc{};
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCqeTimeoutMs);
	for (;;) {
		const int n = ibv_poll_cq(s.initiator.cq, 1, &wc);
		if (n == 1)
			return wc.status == IBV_WC_SUCCESS;
		if (n < 0 || std::chrono::steady_clock::now() > deadline)
			return false;
	}
}

// Runs `batches` batches with two in flight (128 WQEs, one signaled in 64, as bench_verbs's
// write_rate), then drains: every write of the run has completed when it returns.
bool run_batches(Setup &s, bool devx, int batches, uint64_t &round)
{
	int in_flight = 0;
	for (int b = 0; b < batches; b++) {
		if (devx)
			devx_post_batch(s, round);
		else if (!verbs_post_batch(s, round))
			return false;
		round++;
		if (++in_flight == kInFlight) {
			if (!(devx ? devx_wait_batch(s) : verbs_wait_batch(s)))
				return false;
			in_flight--;
		}
	}
	for (; in_flight > 0; in_flight--)
		if (!(devx ? devx_wait_batch(s) : verbs_wait_batch(s)))
			return false;
	return true;
}

void BM_Write64(benchmark::State &state, bool devx)
{
	Setup &s = setup();
	if (!s.ok) {
		state.SkipWithError("DevX set-up failed (see stderr)");
		return;
	}
	state.SetLabel(devx ? "devx raw WQEs" : "verbs ibv_post_send");
	uint64_t round = 0;
	for (auto _ : state) {
		if (!run_batches(s, devx, kBatchesPerRun, round)) {
			state.SkipWithError("a batch failed");
			return;
		}
	}
	state.SetItemsProcessed(static_cast<int64_t>(round) * kBatch);
}
BENCHMARK_CAPTURE(BM_Write64, devx, true)->UseRealTime();
BENCHMARK_CAPTURE(BM_Write64, verbs, false)->UseRealTime();

void BM_Write64Ratio(benchmark::State &state)
{
	Setup &s = setup();
	if (!s.ok) {
		state.SkipWithError("DevX set-up failed (see stderr)");
		return;
	}
	using clock = std::chrono::steady_clock;
	clock::duration devx_time{}, verbs_time{};
	uint64_t devx_round = 0, verbs_round = 0;
	for (auto _ : state) {
		const auto t0 = clock::now();
		const bool a = run_batches(s, true, kBatchesPerRun, devx_round);
		const auto t1 = clock::now();
		const bool b = run_batches(s, false, kBatchesPerRun, verbs_round);
		const auto t2 = clock::now();
		if (!a || !b) {
			state.SkipWithError("a batch failed");
			return;
		}
		devx_time += t1 - t0;
		verbs_time += t2 - t1;
	}
	const double writes = static_cast<double>(devx_round) * kBatch;
	const double devx_rate = writes / std::chrono::duration<double>(devx_time).count();
	const double verbs_rate = writes / std::chrono::duration<double>(verbs_time).count();
	state.counters["devx_per_s"] = devx_rate;
	state.counters["verbs_per_s"] = verbs_rate;
	state.counters["devx_over_verbs"] = devx_rate / verbs_rate;
}
BENCHMARK(BM_Write64Ratio)->UseRealTime();

void BM_QueryHcaCap(benchmark::State &state)
{
	Setup &s = setup();
	if (s.rc.context == nullptr) {
		state.SkipWithError("no DevX context");
		return;
	}
	// QUERY_HCA_CAP (opcode 0x100, big-endian at byte 0), op_mod 1 (general, current) at byte 6.
	uint8_t in[16] = {0x01, 0x00, 0, 0, 0, 0, 0x00, 0x01};
	static uint8_t out[16 + 4096];
	for (auto _ : state) {
		const int err = mlx5dv_devx_general_cmd(s.rc.context, in, sizeof(in), out, sizeof(out));
		if (err != 0) {
			state.SkipWithError("QUERY_HCA_CAP failed");
			return;
		}
		benchmark::DoNotOptimize(out);
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueryHcaCap);

} // namespace

BENCHMARK_MAIN();
