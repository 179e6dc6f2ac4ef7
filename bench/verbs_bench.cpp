// softdpu's RDMA device between two processes, each on its own core, against the baselines the
// issue names, measured in the same run (docs/performance.md, "RDMA device"):
//
//   write_bw     RDMA WRITE of 64 KiB messages (128 in flight) vs process_vm_writev of 64 KiB
//                into the same process's memory: bandwidth ratio.
//   write_rate   64-byte RDMA WRITEs (128 in flight, one signaled in 64): messages per second.
//   write_lat    2-byte RDMA WRITE ping-pong, each side polling its memory (ib_write_lat's way):
//                median one-way latency, next to a futex ping-pong and a shared-memory spin
//                ping-pong between the same two processes.
//   send_lat     2-byte SEND/RECV ping-pong (ib_send_lat's way): median one-way latency.
//
// Usage: bench_verbs [--iterations N] [--json FILE]. Run with softdpu's libibverbs (it links the
// static archives, so it does by construction). Prints one line per figure and, with --json, the
// figures for bench/plot.py.
#include <infiniband/verbs.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kBigMessage = size_t{64} * 1024;
constexpr size_t kTargetBytes = 64ull << 20;
constexpr int kDepth = 128;

uint64_t now_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

[[noreturn]] void die(const char *what)
{
	std::fprintf(stderr, "bench_verbs: %s: %s\n", what, std::strerror(errno));
	std::exit(1);
}

// What the two processes share: the control words of the baselines and each side's QP address.
struct Shared {
	std::atomic<uint32_t> futex_word;
	std::atomic<uint32_t> spin_word;
	std::atomic<uint32_t> stage;
	uint32_t qpn[2];
	uint64_t addr[2];
	uint32_t rkey[2];
	int pid[2];
};

struct Endpoint {
	ibv_context *context = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	char *memory = nullptr;
	size_t length = 0;
};

void open_endpoint(Endpoint &e, size_t length)
{
	int count = 0;
	ibv_device **list = ibv_get_device_list(&count);
	if (list == nullptr || count == 0)
		die("no RDMA device");
	e.context = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	e.pd = ibv_alloc_pd(e.context);
	e.cq = ibv_create_cq(e.context, 4 * kDepth, nullptr, nullptr, 0);
	ibv_qp_init_attr init{};
	init.send_cq = e.cq;
	init.recv_cq = e.cq;
	init.cap = {kDepth * 2, kDepth * 2, 1, 1, 64};
	init.qp_type = IBV_QPT_RC;
	e.qp = ibv_create_qp(e.pd, &init);
	e.length = length;
	e.memory =
	    static_cast<char *>(mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	std::memset(e.memory, 0, length);
	e.mr = ibv_reg_mr(e.pd, e.memory, length,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (e.qp == nullptr || e.mr == nullptr)
		die("set up");
}

void connect_endpoint(Endpoint &e, uint32_t remote_qpn)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(e.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		die("INIT");
	attr = {};
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_4096;
	attr.dest_qp_num = remote_qpn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	ibv_query_gid(e.context, 1, 0, &attr.ah_attr.grh.dgid);
	if (ibv_modify_qp(e.qp, &attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		die("RTR");
	attr = {};
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	if (ibv_modify_qp(e.qp, &attr,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			      IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS");
}

void wait_stage(Shared &shared, uint32_t stage)
{
	while (shared.stage.load(std::memory_order_acquire) < stage)
		usleep(200);
}

int post_write(Endpoint &e, const char *source, uint32_t length, uint64_t remote, uint32_t rkey, bool signaled,
	       bool inline_data)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(source), length, e.mr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inline_data ? IBV_SEND_INLINE : 0);
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	return ibv_post_send(e.qp, &wr, &bad);
}

void wait_completions(Endpoint &e, int count)
{
	ibv_wc wc[16];
	while (count > 0) {
		const int n = ibv_poll_cq(e.cq, std::min(count, 16), wc);
		if (n < 0)
			die("poll");
		for (int i = 0; i < n; ++i)
			if (wc[i].status != IBV_WC_SUCCESS) {
				std::fprintf(stderr, "bench_verbs: completion %s\n", ibv_wc_status_str(wc[i].status));
				std::exit(1);
			}
		count -= n;
	}
}

// Throughput: `messages` writes of `size` bytes, kDepth in flight, one signaled every `every`.
double write_throughput(Endpoint &e, const Shared &shared, int peer, size_t size, long messages, int every)
{
	const uint64_t start = now_ns();
	long posted = 0;
	int outstanding_signals = 0;
	const long slots = static_cast<long>(kTargetBytes / size);
	while (posted < messages) {
		const bool signaled = (posted + 1) % every == 0 || posted + 1 == messages;
		const uint64_t remote = shared.addr[peer] + static_cast<uint64_t>(posted % slots) * size;
		if (post_write(e, e.memory, static_cast<uint32_t>(size), remote, shared.rkey[peer], signaled, false) !=
		    0) {
			wait_completions(e, 1);
			--outstanding_signals;
			continue;
		}
		++posted;
		if (signaled)
			++outstanding_signals;
		if (outstanding_signals >= kDepth / every) {
			wait_completions(e, 1);
			--outstanding_signals;
		}
	}
	wait_completions(e, outstanding_signals);
	return static_cast<double>(now_ns() - start) / 1e9;
}

double cma_throughput(const Endpoint &e, const Shared &shared, int peer, size_t size, long messages)
{
	const long slots = static_cast<long>(kTargetBytes / size);
	const uint64_t start = now_ns();
	for (long i = 0; i < messages; ++i) {
		iovec local{e.memory, size};
		iovec remote{reinterpret_cast<void *>(shared.addr[peer] + static_cast<uint64_t>(i % slots) * size),
			     size};
		if (process_vm_writev(shared.pid[peer], &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size))
			die("process_vm_writev");
	}
	return static_cast<double>(now_ns() - start) / 1e9;
}

long futex(std::atomic<uint32_t> *word, int op, uint32_t value)
{
	return syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, value, nullptr, nullptr, 0);
}

double median(std::vector<double> values)
{
	std::sort(values.begin(), values.end());
	return values.empty() ? 0 : values[values.size() / 2];
}

// The target side: answers the ping-pongs, then sleeps until told to go.
void target(Shared &shared, int iterations)
{
	pin(0);
	Endpoint e;
	open_endpoint(e, kTargetBytes);
	shared.qpn[1] = e.qp->qp_num;
	shared.addr[1] = reinterpret_cast<uintptr_t>(e.memory);
	shared.rkey[1] = e.mr->rkey;
	shared.stage.store(1, std::memory_order_release);
	wait_stage(shared, 2);
	connect_endpoint(e, shared.qpn[0]);
	shared.stage.store(3, std::memory_order_release);
	// The throughput runs need nothing of this process: it sleeps in a futex.
	wait_stage(shared, 4);

	// Futex ping-pong: even values are the initiator's, odd ones ours.
	for (int i = 0; i < iterations; ++i) {
		const auto ping = static_cast<uint32_t>(2 * i + 1);
		while (shared.futex_word.load(std::memory_order_acquire) != ping)
			futex(&shared.futex_word, FUTEX_WAIT, ping - 1);
		shared.futex_word.store(ping + 1, std::memory_order_release);
		futex(&shared.futex_word, FUTEX_WAKE, 1);
	}
	// Spin ping-pong.
	for (int i = 0; i < iterations; ++i) {
		const auto ping = static_cast<uint32_t>(2 * i + 1);
		while (shared.spin_word.load(std::memory_order_acquire) != ping) {
		}
		shared.spin_word.store(ping + 1, std::memory_order_release);
	}
	// RDMA WRITE ping-pong: the initiator writes i into our byte 0; we write i back into its.
	auto *flag = reinterpret_cast<volatile uint16_t *>(e.memory);
	for (int i = 1; i <= iterations; ++i) {
		while (*flag != static_cast<uint16_t>(i)) {
		}
		const auto value = static_cast<uint16_t>(i);
		if (post_write(e, reinterpret_cast<const char *>(&value), 2, shared.addr[0], shared.rkey[0], true,
			       true) != 0)
			die("post");
		wait_completions(e, 1);
	}
	// SEND ping-pong.
	ibv_sge sge{reinterpret_cast<uintptr_t>(e.memory + 64), 64, e.mr->lkey};
	ibv_recv_wr recv{};
	recv.sg_list = &sge;
	recv.num_sge = 1;
	ibv_recv_wr *bad_recv = nullptr;
	for (int i = 0; i < kDepth; ++i)
		ibv_post_recv(e.qp, &recv, &bad_recv);
	shared.stage.store(5, std::memory_order_release);
	for (int i = 0; i < iterations; ++i) {
		ibv_wc wc{};
		while (ibv_poll_cq(e.cq, 1, &wc) == 0) {
		}
		ibv_post_recv(e.qp, &recv, &bad_recv);
		ibv_sge out{reinterpret_cast<uintptr_t>(e.memory + 128), 2, e.mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &out;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		ibv_send_wr *bad = nullptr;
		if (ibv_post_send(e.qp, &wr, &bad) != 0)
			die("post send");
		wait_completions(e, 1);
	}
	wait_stage(shared, 6);
	ibv_destroy_qp(e.qp);
	ibv_dereg_mr(e.mr);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.context);
	std::_Exit(0);
}

} // namespace

int main(int argc, char **argv)
{
	int iterations = 20000;
	const char *json = nullptr;
	for (int i = 1; i < argc; ++i) {
		if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
			iterations = std::atoi(argv[++i]);
		else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			json = argv[++i];
	}
	auto *shared = static_cast<Shared *>(
	    mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	new (shared) Shared();
	const pid_t child = fork();
	if (child == 0)
		target(*shared, iterations);
	shared->pid[1] = child;
	shared->pid[0] = getpid();
	pin(1);
	Endpoint e;
	open_endpoint(e, kTargetBytes);
	shared->qpn[0] = e.qp->qp_num;
	shared->addr[0] = reinterpret_cast<uintptr_t>(e.memory);
	shared->rkey[0] = e.mr->rkey;
	wait_stage(*shared, 1);
	connect_endpoint(e, shared->qpn[1]);
	shared->stage.store(2, std::memory_order_release);
	wait_stage(*shared, 3);

	// Throughput (the target is parked; nothing of it runs).
	const long big = std::max(2000L, iterations / 4L);
	double cma = 1e30, rdma = 1e30;
	for (int round = 0; round < 3; ++round) { // best of three, alternating
		cma = std::min(cma, cma_throughput(e, *shared, 1, kBigMessage, big));
		rdma = std::min(rdma, write_throughput(e, *shared, 1, kBigMessage, big, 16));
	}
	const double cma_gbs = static_cast<double>(big) * kBigMessage / cma / 1e9;
	const double rdma_gbs = static_cast<double>(big) * kBigMessage / rdma / 1e9;
	const long small = static_cast<long>(iterations) * 50;
	double rate_seconds = 1e30;
	for (int round = 0; round < 3; ++round)
		rate_seconds = std::min(rate_seconds, write_throughput(e, *shared, 1, 64, small, 64));
	const double rate = static_cast<double>(small) / rate_seconds;
	std::printf("write_bw   64 KiB RDMA WRITE %.2f GB/s, process_vm_writev %.2f GB/s: ratio %.2f\n", rdma_gbs,
		    cma_gbs, rdma_gbs / cma_gbs);
	std::printf("write_rate 64 B RDMA WRITE %.2f million messages/s\n", rate / 1e6);

	shared->stage.store(4, std::memory_order_release);
	std::vector<double> futex_ns, spin_ns, write_ns, send_ns;
	futex_ns.reserve(iterations);
	for (int i = 0; i < iterations; ++i) {
		const uint64_t start = now_ns();
		const auto ping = static_cast<uint32_t>(2 * i + 1);
		shared->futex_word.store(ping, std::memory_order_release);
		futex(&shared->futex_word, FUTEX_WAKE, 1);
		while (shared->futex_word.load(std::memory_order_acquire) != ping + 1)
			futex(&shared->futex_word, FUTEX_WAIT, ping);
		futex_ns.push_back(static_cast<double>(now_ns() - start) / 2);
	}
	for (int i = 0; i < iterations; ++i) {
		const uint64_t start = now_ns();
		const auto ping = static_cast<uint32_t>(2 * i + 1);
		shared->spin_word.store(ping, std::memory_order_release);
		while (shared->spin_word.load(std::memory_order_acquire) != ping + 1) {
		}
		spin_ns.push_back(static_cast<double>(now_ns() - start) / 2);
	}
	auto *flag = reinterpret_cast<volatile uint16_t *>(e.memory);
	for (int i = 1; i <= iterations; ++i) {
		const uint64_t start = now_ns();
		const auto value = static_cast<uint16_t>(i);
		if (post_write(e, reinterpret_cast<const char *>(&value), 2, shared->addr[1], shared->rkey[1], true,
			       true) != 0)
			die("post");
		wait_completions(e, 1);
		while (*flag != value) {
		}
		write_ns.push_back(static_cast<double>(now_ns() - start) / 2);
	}
	wait_stage(*shared, 5);
	ibv_sge sge{reinterpret_cast<uintptr_t>(e.memory + 64), 64, e.mr->lkey};
	ibv_recv_wr recv{};
	recv.sg_list = &sge;
	recv.num_sge = 1;
	ibv_recv_wr *bad_recv = nullptr;
	for (int i = 0; i < kDepth; ++i)
		ibv_post_recv(e.qp, &recv, &bad_recv);
	for (int i = 0; i < iterations; ++i) {
		const uint64_t start = now_ns();
		ibv_sge out{reinterpret_cast<uintptr_t>(e.memory + 128), 2, e.mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &out;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		ibv_send_wr *bad = nullptr;
		if (ibv_post_send(e.qp, &wr, &bad) != 0)
			die("post send");
		// The send's completion and the reply's receive.
		int seen = 0;
		bool received = false;
		while (seen < 2) {
			ibv_wc wc{};
			if (ibv_poll_cq(e.cq, 1, &wc) == 1) {
				++seen;
				received = received || wc.opcode == IBV_WC_RECV;
			}
		}
		(void)received;
		ibv_post_recv(e.qp, &recv, &bad_recv);
		send_ns.push_back(static_cast<double>(now_ns() - start) / 2);
	}
	shared->stage.store(6, std::memory_order_release);
	int status = 0;
	waitpid(child, &status, 0);

	const double futex_median = median(futex_ns) / 1000, spin_median = median(spin_ns) / 1000;
	const double write_median = median(write_ns) / 1000, send_median = median(send_ns) / 1000;
	std::printf("write_lat  2 B RDMA WRITE %.2f us one way (median); futex ping-pong %.2f us, spin ping-pong "
		    "%.2f us\n",
		    write_median, futex_median, spin_median);
	std::printf("send_lat   2 B SEND %.2f us one way (median)\n", send_median);
	if (json != nullptr) {
		FILE *out = std::fopen(json, "w");
		if (out == nullptr)
			die(json);
		std::fprintf(out,
			     "{\"write_bw_gbs\": %.3f, \"cma_bw_gbs\": %.3f, \"write_bw_ratio\": %.3f, "
			     "\"write_rate_mps\": %.3f, \"write_lat_us\": %.3f, \"send_lat_us\": %.3f, "
			     "\"futex_pingpong_us\": %.3f, \"spin_pingpong_us\": %.3f}\n",
			     rdma_gbs, cma_gbs, rdma_gbs / cma_gbs, rate / 1e6, write_median, send_median, futex_median,
			     spin_median);
		std::fclose(out);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
