// The work-queue engine (engine.hpp): one thread per process serves every registered queue.
//
// Locking: one mutex guards the queue lists and every Qp's and Cq's bookkeeping. The engine thread
// holds it for a whole pass over the queues and lets it go between passes (and while it sleeps),
// so add_*, remove_* and the other calls wait at most one pass, and a queue removed is never
// touched again. The callbacks (on_event) run on the engine thread with the mutex held: they must
// not call the engine.
//
// Send side: WQEs become verbs work requests on the backing QP, posted as chains of up to kChunk
// requests, each followed at once by a poll of the send CQ (which runs them in verbs). The last
// request of every chain is made signaled (a "fence" completion the application never sees):
// with it the engine knows how many requests the backing QP still holds (its send queue never
// overflows) and when everything posted before a point has completed. CQEs the engine makes itself
// (a signaled NOP, a malformed WQE's error, flushes) wait in the QP's deferred queue until the
// completions of the requests posted before them have been written, so CQEs come in WQE order.
//
// wr_id of a send request: [15:0] the WQE counter, [23:16] the mlx5 opcode, bit 24 the
// application asked for a CQE, bit 25 the engine's fence, [63:32] the message length. Of a receive:
// [15:0] the RQ WQE counter.
#include "mlx5/wq/engine.hpp"

#include "mlx5/wq/cqe.hpp"
#include "mlx5/wq/wqe.hpp"

#include <infiniband/mlx5dv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <endian.h>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace softdpu::mlx5::wq {

namespace {

constexpr int kPollBatch = 16;
// Send requests per chain: each chunk's requests run and their CQEs are written before the next
// chunk is read; a chunk ends at kChunk requests, or at a signaled one once it has kMinChunk (the
// application waits for that CQE: it should not wait for the WQEs it wrote after it as well); at
// most kMaxChunks chunks of a QP per pass.
constexpr uint32_t kChunk = 64;
constexpr uint32_t kMinChunk = 16;
constexpr uint32_t kMaxChunks = 64;
constexpr uint32_t kPrefetch = 16;    // basic blocks of WQEs asked for ahead of the one read
constexpr uint32_t kMaxLogCq = 22;    // 2^22 CQEs: verbs' max_cqe + 1
constexpr uint32_t kMaxLogQueue = 15; // 16-bit counters: the difference stays unambiguous
constexpr uint32_t kMaxLogStride = 5; // 512-byte receive WQEs: 32 data segments (within kMaxRecvStride)
constexpr uint64_t kMaxMessage = 1ull << 31;
constexpr uint64_t kAppSignaled = 1ull << 24;
constexpr uint64_t kFence = 1ull << 25;
// Polling: at once for kSpin after work (kSpinContended while the cores are oversubscribed: for
// kContended after a pass without work that took over kPreempted, i.e. this thread lost its core),
// then sleeping kMinSleep until kWarm after work, then sleeping twice as long each time up to
// kMaxSleep.
constexpr auto kSpin = std::chrono::microseconds(100);
constexpr auto kSpinContended = std::chrono::microseconds(0);
constexpr auto kPreempted = std::chrono::microseconds(20);
constexpr auto kContended = std::chrono::microseconds(10000);
constexpr auto kWarm = std::chrono::microseconds(2000);
constexpr auto kMinSleep = std::chrono::microseconds(1);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);

uint32_t load_be32(const volatile uint32_t *word) noexcept
{
	return be32toh(__atomic_load_n(const_cast<const uint32_t *>(word), __ATOMIC_ACQUIRE));
}

uint64_t send_wr_id(uint16_t index, uint8_t opcode, bool app_signaled, uint64_t length) noexcept
{
	return uint64_t{index} | uint64_t{opcode} << 16 | (app_signaled ? kAppSignaled : 0) |
	       (std::min<uint64_t>(length, 0xffffffffu) << 32);
}

uint8_t syndrome_of(ibv_wc_status status) noexcept
{
	switch (status) {
	case IBV_WC_LOC_LEN_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	case IBV_WC_LOC_QP_OP_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	case IBV_WC_LOC_PROT_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	case IBV_WC_MW_BIND_ERR:
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	case IBV_WC_BAD_RESP_ERR:
		return MLX5_CQE_SYNDROME_BAD_RESP_ERR;
	case IBV_WC_LOC_ACCESS_ERR:
		return MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR;
	case IBV_WC_REM_ACCESS_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	case IBV_WC_REM_OP_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
	case IBV_WC_RETRY_EXC_ERR:
		return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
	case IBV_WC_REM_ABORT_ERR:
		return MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR;
	default:
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	}
}

ibv_wr_opcode verbs_opcode(uint8_t opcode) noexcept
{
	switch (opcode) {
	case MLX5_OPCODE_RDMA_WRITE:
		return IBV_WR_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return IBV_WR_RDMA_WRITE_WITH_IMM;
	case MLX5_OPCODE_SEND_IMM:
		return IBV_WR_SEND_WITH_IMM;
	case MLX5_OPCODE_RDMA_READ:
		return IBV_WR_RDMA_READ;
	case MLX5_OPCODE_ATOMIC_CS:
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	case MLX5_OPCODE_ATOMIC_FA:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	default:
		return IBV_WR_SEND;
	}
}

// A CQE the engine makes itself for a send WQE, due once `mark` fenced requests have completed.
struct Deferred {
	uint64_t mark = 0;
	uint16_t index = 0;
	uint8_t opcode = 0;    // the WQE's MLX5_OPCODE_*
	uint8_t syndrome = 0;  // 0: a successful NOP
	bool fails_qp = false; // the first error: the backing QP goes to ERR when it is written
};

} // namespace

class Cq {
public:
	CqConfig config;
	uint32_t size = 0;
	uint32_t produced = 0; // CQEs written (the next CQE's index)
	std::vector<Qp *> qps; // the QPs completing here (send or receive)
	ibv_wc held[kPollBatch]{};
	int held_count = 0;
	int held_next = 0;
	// Arming (doorbell[1] and the UAR doorbell): the values last seen, and the arm in force.
	uint32_t arm_seen = 0;
	uint64_t uar_seen = 0;
	bool armed = false;
	bool armed_solicited = false;
	uint32_t arm_ci = 0;
	uint32_t solicited_produced = 0; // index + 1 of the last CQE a solicited arm fires for

	uint32_t consumer() const noexcept { return load_be32(&config.doorbell[0]) & 0xffffff; }
	bool full() const noexcept { return ((produced - consumer()) & 0xffffff) >= size; }

	// Writes a CQE; false (nothing written) while the CQ is full.
	bool emit(const Completion &completion, bool solicited) noexcept
	{
		if (full())
			return false;
		auto *slot = static_cast<uint8_t *>(config.buffer) + size_t{produced & (size - 1)} * 64;
		write_cqe(slot, completion, produced, config.log_size);
		++produced;
		if (solicited)
			solicited_produced = produced;
		return true;
	}
};

class Qp {
public:
	QpConfig config;
	uint32_t sq_bbs = 0;
	uint32_t rq_count = 0;
	uint32_t rq_stride = 0;
	uint32_t max_send_wr = 0;
	uint32_t max_send_sge = 0;
	uint32_t max_inline = 0;
	uint32_t max_recv_sge = 0;
	uint16_t sq_pos = 0; // next BB to read
	uint16_t rq_pos = 0; // next receive WQE to read
	bool error = false;  // WQEs read from now on are flushed, not executed

	// Scratch of the send side (sized at add_qp).
	std::vector<ibv_send_wr> wrs;
	std::vector<uint16_t> wr_pos; // the BB each request's WQE starts at
	std::vector<ibv_sge> sges;
	std::vector<uint8_t> inline_arena;
	std::unique_ptr<SendWqe> wqe;
	// Fenced (signaled) requests posted and not completed: the request count each one closes.
	std::vector<uint64_t> signaled;
	size_t signaled_head = 0;
	size_t signaled_count = 0;
	uint64_t wr_posted = 0;
	uint64_t wr_done = 0;
	uint64_t sig_posted = 0;
	uint64_t sig_done = 0;
	std::vector<Deferred> deferred;
	size_t deferred_head = 0;
	size_t deferred_count = 0;

	// Scratch of the receive side.
	std::vector<ibv_recv_wr> rwrs;
	std::vector<ibv_sge> rsges;
	std::unique_ptr<RecvWqe> rwqe;
	bool rq_error_pending = false; // a malformed receive WQE's error CQE waits for room
	uint16_t rq_error_index = 0;
	uint8_t rq_error_syndrome = 0;

	void reset() noexcept
	{
		sq_pos = 0;
		rq_pos = 0;
		error = false;
		signaled_head = signaled_count = 0;
		wr_posted = wr_done = sig_posted = sig_done = 0;
		deferred_head = deferred_count = 0;
		rq_error_pending = false;
	}

	bool defer(const Deferred &entry) noexcept
	{
		if (deferred_count == deferred.size())
			return false;
		deferred[(deferred_head + deferred_count) % deferred.size()] = entry;
		++deferred_count;
		return true;
	}
};

namespace {

class State {
public:
	std::mutex lifecycle; // starting and stopping the thread
	std::mutex mutex;     // everything below
	std::condition_variable wake;
	std::atomic<int> waiters{0}; // callers waiting for `mutex`: the thread lets it go between passes
	std::vector<Cq *> cqs;
	std::vector<Qp *> qps;
	std::thread thread;
	bool running = false;
	bool stop = false;

	~State() { halt(); }

	// Takes `mutex` from a caller's thread, making the engine let it go soon.
	std::unique_lock<std::mutex> lock() noexcept
	{
		waiters.fetch_add(1, std::memory_order_relaxed);
		std::unique_lock guard(mutex);
		waiters.fetch_sub(1, std::memory_order_relaxed);
		return guard;
	}

	// Starts the thread if it is not running (lifecycle held). errno value.
	int start() noexcept
	{
		std::lock_guard guard(mutex);
		if (running)
			return 0;
		stop = false;
		try {
			thread = std::thread([this] { run(); });
		} catch (const std::system_error &) {
			return EAGAIN;
		}
		running = true;
		return 0;
	}

	// Stops the thread when no queue is left (lifecycle held).
	void stop_if_idle() noexcept
	{
		{
			std::lock_guard guard(mutex);
			if (!running || !cqs.empty() || !qps.empty())
				return;
			stop = true;
		}
		wake.notify_all();
		thread.join();
		std::lock_guard guard(mutex);
		running = false;
	}

	void halt() noexcept
	{
		std::lock_guard life(lifecycle);
		{
			std::lock_guard guard(mutex);
			if (!running)
				return;
			stop = true;
		}
		wake.notify_all();
		thread.join();
		running = false;
	}

	void run() noexcept;
};

State &state() noexcept
{
	static State instance;
	return instance;
}

Qp *find_qp(const Cq &cq, uint32_t qpn) noexcept
{
	for (Qp *qp : cq.qps)
		if (qp->config.qpn == qpn)
			return qp;
	return nullptr;
}

// ---- Send side ----

// Posts the chain built so far (n requests). The last one is fenced. False when the backing QP
// refused the chain from its first request on (not ready: the WQEs are read again later).
bool post_chain(Qp &qp, uint32_t n) noexcept
{
	if (n == 0)
		return true;
	ibv_send_wr &last = qp.wrs[n - 1];
	last.send_flags |= IBV_SEND_SIGNALED;
	last.wr_id |= kFence;
	last.next = nullptr;
	ibv_send_wr *bad = nullptr;
	const int error = ibv_post_send(qp.config.backing, qp.wrs.data(), &bad);
	uint32_t posted = n;
	if (error != 0 && bad != nullptr)
		posted = static_cast<uint32_t>(bad - qp.wrs.data());
	for (uint32_t i = 0; i < posted; ++i) {
		++qp.wr_posted;
		if ((qp.wrs[i].send_flags & IBV_SEND_SIGNALED) != 0) {
			qp.signaled[(qp.signaled_head + qp.signaled_count) % qp.signaled.size()] = qp.wr_posted;
			++qp.signaled_count;
			++qp.sig_posted;
		}
	}
	if (posted < n)
		qp.sq_pos = qp.wr_pos[posted]; // read again from the refused one
	return posted > 0 || error == 0;
}

// Reads the WQEs the send doorbell covers. True when something was done.
bool serve_sq(Qp &qp) noexcept
{
	if (qp.config.sq == nullptr)
		return false;
	const auto doorbell = static_cast<uint16_t>(load_be32(&qp.config.doorbell[MLX5_SND_DBR]) & 0xffff);
	uint32_t available = static_cast<uint16_t>(doorbell - qp.sq_pos);
	if (available == 0)
		return false;
	const SendRing ring{static_cast<const uint8_t *>(qp.config.sq), qp.sq_bbs};
	if (available > qp.sq_bbs) {
		// A doorbell past the queue: the WQEs it names cannot all be there. The QP fails, once it
		// is in RTS: before, the doorbell is held as any other (a QP in RESET executes nothing,
		// and the application rewrites the record before it moves the QP up again).
		if (!qp.error) {
			ibv_qp_attr attr{};
			ibv_qp_init_attr init{};
			if (ibv_query_qp(qp.config.backing, &attr, IBV_QP_STATE, &init) != 0 ||
			    attr.qp_state == IBV_QPS_RESET || attr.qp_state == IBV_QPS_INIT ||
			    attr.qp_state == IBV_QPS_RTR)
				return false;
			if (!qp.defer({qp.sig_posted, qp.sq_pos, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, true}))
				return false;
			qp.error = true;
		}
		qp.sq_pos = doorbell;
		return true;
	}
	const uint32_t room = qp.max_send_wr - static_cast<uint32_t>(qp.wr_posted - qp.wr_done);
	const uint16_t start = qp.sq_pos;
	// The application wrote these WQEs on another core: ask for their cache lines (one per basic
	// block) kPrefetch ahead of the one parsed rather than missing on each in turn.
	for (uint32_t i = 0, ahead = std::min<uint32_t>(available, kPrefetch); i < ahead; ++i)
		__builtin_prefetch(ring.ring +
				   size_t{static_cast<uint16_t>(start + i) & (qp.sq_bbs - 1)} * kBasicBlock);
	uint32_t n = 0;
	size_t sge_used = 0;
	size_t arena_used = 0;
	SendWqe &wqe = *qp.wqe;
	while (available > 0) {
		if (qp.error) {
			// Flushed: each WQE gets a flush CQE, after everything before it.
			const uint32_t bbs = send_wqe_bbs(ring, qp.sq_pos, available);
			(void)parse_send_wqe(ring, qp.sq_pos, available, qp.config.qpn, 0, 0, 0, &wqe);
			if (!post_chain(qp, n) ||
			    !qp.defer({qp.sig_posted, wqe.index, wqe.opcode, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, false}))
				break;
			n = 0;
			qp.sq_pos = static_cast<uint16_t>(qp.sq_pos + bbs);
			available -= bbs;
			continue;
		}
		if (n == room || n == qp.wrs.size() || n == kChunk)
			break;
		if (available > kPrefetch)
			__builtin_prefetch(ring.ring +
					   size_t{static_cast<uint16_t>(qp.sq_pos + kPrefetch) & (qp.sq_bbs - 1)} *
					       kBasicBlock);
		const uint8_t syndrome = parse_send_wqe(ring, qp.sq_pos, available, qp.config.qpn, qp.max_send_sge,
							qp.max_inline, kMaxMessage, &wqe);
		if (syndrome != 0 || (wqe.opcode == MLX5_OPCODE_NOP && wqe.signaled)) {
			// A CQE of the engine's own, after the completions of what is posted before it.
			if (!post_chain(qp, n))
				break;
			n = 0;
			if (!qp.defer({qp.sig_posted, wqe.index, wqe.opcode, syndrome, syndrome != 0}))
				break;
			qp.error = syndrome != 0;
			qp.sq_pos = static_cast<uint16_t>(qp.sq_pos + wqe.bbs);
			available -= wqe.bbs;
			continue;
		}
		if (wqe.opcode == MLX5_OPCODE_NOP) {
			qp.sq_pos = static_cast<uint16_t>(qp.sq_pos + wqe.bbs);
			available -= wqe.bbs;
			continue;
		}
		ibv_send_wr &wr = qp.wrs[n];
		// Every member verbs reads for these opcodes, set one by one: `wr = {}` (a 128-byte
		// rep stos) cost more than the rest of the request's set-up.
		wr.wr_id = send_wr_id(wqe.index, wqe.opcode, wqe.signaled, wqe.length);
		wr.next = nullptr;
		wr.opcode = verbs_opcode(wqe.opcode);
		wr.send_flags = 0;
		wr.imm_data = wqe.imm;
		wr.wr.atomic = {}; // the largest of the rdma, atomic and ud members
		wr.qp_type.xrc.remote_srqn = 0;
		if (wqe.signaled)
			wr.send_flags |= IBV_SEND_SIGNALED;
		if (wqe.solicited)
			wr.send_flags |= IBV_SEND_SOLICITED;
		if (wqe.fence)
			wr.send_flags |= IBV_SEND_FENCE;
		if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = wqe.remote_addr;
			wr.wr.atomic.rkey = wqe.rkey;
			wr.wr.atomic.compare_add = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? wqe.compare : wqe.swap_add;
			wr.wr.atomic.swap = wqe.swap_add;
		} else {
			wr.wr.rdma.remote_addr = wqe.remote_addr;
			wr.wr.rdma.rkey = wqe.rkey;
		}
		ibv_sge *sges = qp.sges.data() + sge_used;
		if (wqe.inline_data) {
			wr.send_flags |= IBV_SEND_INLINE;
			if (wqe.num_sge > 1) {
				// Wrapped around the ring: one piece of the arena (verbs copies it at post).
				uint8_t *at = qp.inline_arena.data() + arena_used;
				for (uint32_t i = 0; i < wqe.num_sge; ++i) {
					std::memcpy(at, reinterpret_cast<const void *>(wqe.sge[i].addr),
						    wqe.sge[i].length);
					at += wqe.sge[i].length;
				}
				sges[0] = {reinterpret_cast<uintptr_t>(qp.inline_arena.data() + arena_used),
					   static_cast<uint32_t>(wqe.length), 0};
				arena_used += wqe.length;
				wr.num_sge = 1;
			} else {
				wr.num_sge = static_cast<int>(wqe.num_sge);
				if (wqe.num_sge == 1)
					sges[0] = {wqe.sge[0].addr, wqe.sge[0].length, 0};
			}
		} else {
			for (uint32_t i = 0; i < wqe.num_sge; ++i)
				sges[i] = {wqe.sge[i].addr, wqe.sge[i].length, wqe.sge[i].lkey};
			wr.num_sge = static_cast<int>(wqe.num_sge);
		}
		wr.sg_list = wr.num_sge > 0 ? sges : nullptr;
		sge_used += static_cast<size_t>(wr.num_sge);
		if (n > 0)
			qp.wrs[n - 1].next = &wr;
		qp.wr_pos[n] = qp.sq_pos;
		++n;
		qp.sq_pos = static_cast<uint16_t>(qp.sq_pos + wqe.bbs);
		available -= wqe.bbs;
		if (wqe.signaled && n >= kMinChunk)
			break; // the CQE the application waits for goes out before the next WQEs are read
	}
	(void)post_chain(qp, n);
	return qp.sq_pos != start;
}

// ---- Receive side ----

bool serve_rq(Qp &qp) noexcept
{
	if (qp.config.rq == nullptr || qp.rq_error_pending)
		return false;
	const auto doorbell = static_cast<uint16_t>(load_be32(&qp.config.doorbell[MLX5_RCV_DBR]) & 0xffff);
	uint32_t available = static_cast<uint16_t>(doorbell - qp.rq_pos);
	if (available == 0)
		return false;
	const uint16_t start = qp.rq_pos;
	uint32_t n = 0;
	size_t sge_used = 0;
	bool fail = false;
	available = std::min(available, qp.rq_count); // a doorbell past the queue posts one queue's worth
	while (available > 0 && n < qp.rwrs.size()) {
		const auto *wqe = static_cast<const uint8_t *>(qp.config.rq) +
				  size_t{static_cast<uint32_t>(qp.rq_pos) & (qp.rq_count - 1)} * qp.rq_stride;
		RecvWqe &parsed = *qp.rwqe;
		const uint8_t syndrome = parse_recv_wqe(wqe, qp.rq_stride, qp.max_recv_sge, &parsed);
		if (syndrome != 0) {
			qp.rq_error_pending = true;
			qp.rq_error_index = qp.rq_pos;
			qp.rq_error_syndrome = syndrome;
			qp.rq_pos = static_cast<uint16_t>(qp.rq_pos + 1);
			fail = true;
			break;
		}
		ibv_recv_wr &wr = qp.rwrs[n];
		wr = {};
		wr.wr_id = qp.rq_pos;
		ibv_sge *sges = qp.rsges.data() + sge_used;
		for (uint32_t i = 0; i < parsed.num_sge; ++i)
			sges[i] = {parsed.sge[i].addr, parsed.sge[i].length, parsed.sge[i].lkey};
		wr.sg_list = parsed.num_sge > 0 ? sges : nullptr;
		wr.num_sge = static_cast<int>(parsed.num_sge);
		sge_used += parsed.num_sge;
		if (n > 0)
			qp.rwrs[n - 1].next = &wr;
		++n;
		qp.rq_pos = static_cast<uint16_t>(qp.rq_pos + 1);
		--available;
	}
	if (n > 0) {
		qp.rwrs[n - 1].next = nullptr;
		ibv_recv_wr *bad = nullptr;
		if (ibv_post_recv(qp.config.backing, qp.rwrs.data(), &bad) != 0 && bad != nullptr) {
			// Not ready (RESET) or full: read again from the refused one.
			qp.rq_pos = static_cast<uint16_t>(bad->wr_id);
			if (fail) {
				qp.rq_error_pending = false;
				fail = false;
			}
		}
	}
	if (fail) {
		qp.error = true;
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_ERR;
		(void)ibv_modify_qp(qp.config.backing, &attr, IBV_QP_STATE);
	}
	return qp.rq_pos != start;
}

// ---- Completions ----

// Writes the QP's deferred CQEs that are due. False when the CQ is full before they are all out.
bool emit_due(Cq &cq, Qp &qp) noexcept
{
	while (qp.deferred_count > 0) {
		const Deferred &entry = qp.deferred[qp.deferred_head];
		if (entry.mark > qp.sig_done)
			return true;
		Completion completion;
		completion.qpn = qp.config.qpn;
		completion.user_index = qp.config.user_index;
		completion.wqe_counter = entry.index;
		completion.wqe_opcode = entry.opcode;
		if (entry.syndrome == 0) {
			completion.opcode = MLX5_CQE_REQ;
		} else {
			completion.opcode = MLX5_CQE_REQ_ERR;
			completion.syndrome = entry.syndrome;
		}
		if (!cq.emit(completion, entry.syndrome != 0))
			return false;
		if (entry.fails_qp) {
			ibv_qp_attr attr{};
			attr.qp_state = IBV_QPS_ERR;
			(void)ibv_modify_qp(qp.config.backing, &attr, IBV_QP_STATE);
		}
		qp.deferred_head = (qp.deferred_head + 1) % qp.deferred.size();
		--qp.deferred_count;
	}
	return true;
}

// One completion of the backing CQ. False when the CQ is full (the completion is held).
// The responder CQE of a receive work completion: opcode (with its immediate), byte count, WQE
// counter (the engine's receive wr_id), error syndrome.
void receive_completion(const ibv_wc &wc, Completion *completion) noexcept
{
	completion->wqe_counter = static_cast<uint16_t>(wc.wr_id);
	completion->byte_cnt = wc.byte_len;
	if (wc.status != IBV_WC_SUCCESS) {
		completion->opcode = MLX5_CQE_RESP_ERR;
		completion->syndrome = syndrome_of(wc.status);
		completion->vendor_syndrome = static_cast<uint8_t>(wc.vendor_err);
	} else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		completion->opcode = MLX5_CQE_RESP_WR_IMM;
		completion->imm = wc.imm_data;
	} else if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) {
		completion->opcode = MLX5_CQE_RESP_SEND_IMM;
		completion->imm = wc.imm_data;
	} else {
		completion->opcode = MLX5_CQE_RESP_SEND;
	}
}

// The MLX5_OPCODE_* of a requester work completion's verbs opcode.
uint8_t wqe_opcode_of(ibv_wc_opcode opcode) noexcept
{
	switch (opcode) {
	case IBV_WC_RDMA_WRITE:
		return MLX5_OPCODE_RDMA_WRITE;
	case IBV_WC_RDMA_READ:
		return MLX5_OPCODE_RDMA_READ;
	case IBV_WC_COMP_SWAP:
		return MLX5_OPCODE_ATOMIC_CS;
	case IBV_WC_FETCH_ADD:
		return MLX5_OPCODE_ATOMIC_FA;
	default:
		return MLX5_OPCODE_SEND;
	}
}

bool take_completion(Cq &cq, Qp &qp, const ibv_wc &wc) noexcept
{
	const bool send = (wc.opcode & IBV_WC_RECV) == 0;
	Completion completion;
	completion.qpn = qp.config.qpn;
	completion.user_index = qp.config.user_index;
	if (send) {
		if (qp.config.send_cq == &cq && !emit_due(cq, qp))
			return false;
		const bool app = (wc.wr_id & kAppSignaled) != 0;
		const bool fenced = (wc.wr_id & kFence) != 0;
		completion.wqe_counter = static_cast<uint16_t>(wc.wr_id);
		completion.wqe_opcode = static_cast<uint8_t>(wc.wr_id >> 16);
		completion.byte_cnt = static_cast<uint32_t>(wc.wr_id >> 32);
		if (wc.status == IBV_WC_SUCCESS) {
			completion.opcode = MLX5_CQE_REQ;
		} else {
			completion.opcode = MLX5_CQE_REQ_ERR;
			completion.syndrome = syndrome_of(wc.status);
			completion.vendor_syndrome = static_cast<uint8_t>(wc.vendor_err);
		}
		if ((app || wc.status != IBV_WC_SUCCESS) && !cq.emit(completion, wc.status != IBV_WC_SUCCESS))
			return false;
		if (wc.status != IBV_WC_SUCCESS)
			qp.error = true;
		if (app || fenced) {
			// A signaled request: everything posted up to it has completed.
			if (qp.signaled_count > 0) {
				qp.wr_done = qp.signaled[qp.signaled_head];
				qp.signaled_head = (qp.signaled_head + 1) % qp.signaled.size();
				--qp.signaled_count;
				++qp.sig_done;
			}
		}
		return true;
	}
	receive_completion(wc, &completion);
	if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR)
		qp.error = true;
	// A receive completion fires a solicited arm as well (verbs' completions do not say whether
	// the sender asked for an event).
	return cq.emit(completion, true);
}

// A completion of a verbs QP the engine does not serve, on a CQ that has its mlx5 view (a DevX QP
// completes into a verbs CQ that verbs QPs use too): a CQE as the device writes for any QP of the
// CQ. The verbs QP has no mlx5 send queue: wqe_counter is 0.
bool take_foreign_completion(Cq &cq, const ibv_wc &wc) noexcept
{
	Completion completion;
	completion.qpn = wc.qp_num;
	if ((wc.opcode & IBV_WC_RECV) != 0) {
		receive_completion(wc, &completion);
		return cq.emit(completion, true);
	}
	completion.byte_cnt = wc.byte_len;
	completion.wqe_opcode = wqe_opcode_of(wc.opcode);
	if (wc.status == IBV_WC_SUCCESS) {
		completion.opcode = MLX5_CQE_REQ;
	} else {
		completion.opcode = MLX5_CQE_REQ_ERR;
		completion.syndrome = syndrome_of(wc.status);
		completion.vendor_syndrome = static_cast<uint8_t>(wc.vendor_err);
	}
	return cq.emit(completion, wc.status != IBV_WC_SUCCESS);
}

void check_arm(Cq &cq) noexcept
{
	const uint32_t word = load_be32(&cq.config.doorbell[1]);
	if (word != cq.arm_seen) {
		cq.arm_seen = word;
		cq.armed = true;
		cq.armed_solicited = (word & MLX5_CQ_DB_REQ_NOT_SOL) != 0;
		cq.arm_ci = word & 0xffffff;
	}
	if (cq.config.uar_doorbell != nullptr) {
		const uint64_t raw =
		    __atomic_load_n(const_cast<const uint64_t *>(cq.config.uar_doorbell), __ATOMIC_ACQUIRE);
		if (raw != cq.uar_seen) {
			cq.uar_seen = raw;
			uint32_t words[2];
			std::memcpy(words, &raw, sizeof(words));
			if ((be32toh(words[1]) & 0xffffff) == cq.config.cqn) {
				const uint32_t arm = be32toh(words[0]);
				cq.armed = true;
				cq.armed_solicited = (arm & MLX5_CQ_DB_REQ_NOT_SOL) != 0;
				cq.arm_ci = arm & 0xffffff;
			}
		}
	}
	if (!cq.armed)
		return;
	// A CQE at or past the consumer index the arm named fires the event.
	const uint32_t last = cq.armed_solicited ? cq.solicited_produced : cq.produced;
	const uint32_t ahead = (last - cq.arm_ci) & 0xffffff;
	if (ahead == 0 || ahead > cq.size)
		return;
	cq.armed = false;
	if (cq.config.on_event != nullptr)
		cq.config.on_event(cq.config.event_arg);
}

bool serve_cq(Cq &cq) noexcept
{
	bool work = false;
	bool blocked = false;
	for (Qp *qp : cq.qps) {
		if (qp->config.send_cq == &cq && !emit_due(cq, *qp))
			blocked = true;
		if (qp->rq_error_pending && qp->config.recv_cq == &cq) {
			Completion completion;
			completion.opcode = MLX5_CQE_RESP_ERR;
			completion.syndrome = qp->rq_error_syndrome;
			completion.qpn = qp->config.qpn;
			completion.user_index = qp->config.user_index;
			completion.wqe_counter = qp->rq_error_index;
			if (cq.emit(completion, true))
				qp->rq_error_pending = false;
			else
				blocked = true;
		}
	}
	while (!blocked) {
		if (cq.held_next == cq.held_count) {
			const int n = ibv_poll_cq(cq.config.backing, kPollBatch, cq.held);
			cq.held_next = 0;
			cq.held_count = n > 0 ? n : 0;
			if (cq.held_count == 0)
				break;
		}
		while (cq.held_next < cq.held_count) {
			const ibv_wc &wc = cq.held[cq.held_next];
			Qp *qp = find_qp(cq, wc.qp_num);
			if (qp != nullptr ? !take_completion(cq, *qp, wc) : !take_foreign_completion(cq, wc)) {
				blocked = true;
				break;
			}
			++cq.held_next;
			work = true;
		}
	}
	for (Qp *qp : cq.qps) {
		if (qp->config.send_cq != &cq || qp->deferred_count == 0)
			continue;
		const size_t before = qp->deferred_count;
		(void)emit_due(cq, *qp);
		work |= qp->deferred_count != before;
	}
	check_arm(cq);
	return work;
}

void State::run() noexcept
{
	std::unique_lock guard(mutex);
	auto last_work = std::chrono::steady_clock::now();
	auto sleep = std::chrono::microseconds(0);
	auto contended_until = last_work;
	while (!stop) {
		const auto pass_start = std::chrono::steady_clock::now();
		bool work = false;
		for (Qp *qp : qps) {
			work |= serve_rq(*qp);
			// A chunk of send requests at a time, each followed at once by the send CQ: polling the
			// backing CQ runs the requests (verbs runs them at the poll) and writes their CQEs
			// while the application may already be writing the next WQEs.
			for (uint32_t chunk = 0; chunk < kMaxChunks && serve_sq(*qp); ++chunk) {
				work = true;
				(void)serve_cq(*qp->config.send_cq);
			}
		}
		for (Cq *cq : cqs)
			work |= serve_cq(*cq);
		const auto now = std::chrono::steady_clock::now();
		if (work) {
			last_work = now;
			sleep = std::chrono::microseconds(0);
		}
		const auto quiet = now - last_work;
		// A pass without work takes well under a microsecond: one that took longer was preempted.
		// Spinning would then keep the application (which may share this core) from running.
		if (!work && now - pass_start > kPreempted)
			contended_until = now + kContended;
		if (quiet < (now < contended_until ? kSpinContended : kSpin)) {
			// Busy a moment ago: poll again at once, letting a waiting caller in first.
			if (waiters.load(std::memory_order_relaxed) > 0) {
				guard.unlock();
				std::this_thread::yield();
				guard.lock();
			}
			continue;
		}
		// Warm (work within kWarm): the shortest sleep, which leaves the core to the application
		// (on a busy machine it may share this one) and sees its next doorbell within tens of µs
		// (the timer slack); then doubling up to kMaxSleep, so an idle engine takes no core.
		if (quiet < kWarm)
			sleep = kMinSleep;
		else
			sleep = std::min(kMaxSleep, sleep.count() == 0 ? kMinSleep : sleep * 2);
		wake.wait_for(guard, sleep);
	}
}

} // namespace

Engine &Engine::instance() noexcept
{
	static Engine engine;
	(void)state();
	return engine;
}

Cq *Engine::add_cq(const CqConfig &config) noexcept
{
	if (config.buffer == nullptr || config.doorbell == nullptr || config.backing == nullptr ||
	    config.log_size > kMaxLogCq || config.cqn > 0xffffff) {
		errno = EINVAL;
		return nullptr;
	}
	State &engine = state();
	std::unique_ptr<Cq> cq(new (std::nothrow) Cq());
	if (cq == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	cq->config = config;
	cq->size = 1u << config.log_size;
	cq->arm_seen = load_be32(&config.doorbell[1]);
	if (config.uar_doorbell != nullptr)
		cq->uar_seen = __atomic_load_n(const_cast<const uint64_t *>(config.uar_doorbell), __ATOMIC_ACQUIRE);
	std::lock_guard life(engine.lifecycle);
	{
		auto guard = engine.lock();
		try {
			engine.cqs.reserve(engine.cqs.size() + 1);
		} catch (const std::bad_alloc &) {
			errno = ENOMEM;
			return nullptr;
		}
		engine.cqs.push_back(cq.get());
	}
	const int error = engine.start();
	if (error != 0) {
		auto guard = engine.lock();
		std::erase(engine.cqs, cq.get());
		errno = error;
		return nullptr;
	}
	return cq.release();
}

Qp *Engine::add_qp(const QpConfig &config) noexcept
{
	if (config.backing == nullptr || config.doorbell == nullptr || config.send_cq == nullptr ||
	    config.recv_cq == nullptr || config.backing->qp_num != config.qpn || config.log_sq_size > kMaxLogQueue ||
	    config.log_rq_size > kMaxLogQueue || config.log_rq_stride > kMaxLogStride ||
	    (config.sq == nullptr && config.rq == nullptr)) {
		errno = EINVAL;
		return nullptr;
	}
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	const int queried = ibv_query_qp(config.backing, &attr, IBV_QP_CAP, &init);
	if (queried != 0) {
		errno = queried;
		return nullptr;
	}
	State &engine = state();
	std::unique_ptr<Qp> qp(new (std::nothrow) Qp());
	if (qp == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	qp->config = config;
	qp->sq_bbs = config.sq != nullptr ? 1u << config.log_sq_size : 0;
	qp->rq_count = config.rq != nullptr ? 1u << config.log_rq_size : 0;
	qp->rq_stride = 16u << config.log_rq_stride;
	qp->max_send_wr = std::max<uint32_t>(init.cap.max_send_wr, 1);
	qp->max_send_sge = init.cap.max_send_sge;
	qp->max_inline = init.cap.max_inline_data;
	qp->max_recv_sge = init.cap.max_recv_sge;
	try {
		qp->wqe = std::make_unique<SendWqe>();
		qp->rwqe = std::make_unique<RecvWqe>();
		const size_t chain = std::min<size_t>(qp->sq_bbs, qp->max_send_wr);
		qp->wrs.resize(chain);
		qp->wr_pos.resize(chain);
		qp->sges.resize(size_t{qp->sq_bbs} * 4);
		qp->inline_arena.resize(size_t{qp->sq_bbs} * kBasicBlock);
		qp->signaled.resize(size_t{qp->max_send_wr} + 1);
		qp->deferred.resize(std::max<size_t>(qp->sq_bbs, 1));
		const size_t rchain = std::min<size_t>(qp->rq_count, std::max<uint32_t>(init.cap.max_recv_wr, 1));
		qp->rwrs.resize(rchain);
		qp->rsges.resize(rchain * std::min<size_t>(qp->rq_stride / 16, kMaxWqeSges));
	} catch (const std::bad_alloc &) {
		errno = ENOMEM;
		return nullptr;
	}
	std::lock_guard life(engine.lifecycle);
	{
		auto guard = engine.lock();
		try {
			engine.qps.reserve(engine.qps.size() + 1);
			config.send_cq->qps.reserve(config.send_cq->qps.size() + 1);
			config.recv_cq->qps.reserve(config.recv_cq->qps.size() + 1);
		} catch (const std::bad_alloc &) {
			errno = ENOMEM;
			return nullptr;
		}
		engine.qps.push_back(qp.get());
		config.send_cq->qps.push_back(qp.get());
		if (config.recv_cq != config.send_cq)
			config.recv_cq->qps.push_back(qp.get());
	}
	const int error = engine.start();
	if (error != 0) {
		auto guard = engine.lock();
		std::erase(engine.qps, qp.get());
		std::erase(config.send_cq->qps, qp.get());
		std::erase(config.recv_cq->qps, qp.get());
		errno = error;
		return nullptr;
	}
	return qp.release();
}

void Engine::remove_qp(Qp *qp) noexcept
{
	if (qp == nullptr)
		return;
	State &engine = state();
	std::lock_guard life(engine.lifecycle);
	{
		auto guard = engine.lock();
		std::erase(engine.qps, qp);
		std::erase(qp->config.send_cq->qps, qp);
		std::erase(qp->config.recv_cq->qps, qp);
	}
	delete qp;
	engine.stop_if_idle();
}

void Engine::remove_cq(Cq *cq) noexcept
{
	if (cq == nullptr)
		return;
	State &engine = state();
	std::lock_guard life(engine.lifecycle);
	{
		auto guard = engine.lock();
		std::erase(engine.cqs, cq);
	}
	delete cq;
	engine.stop_if_idle();
}

void Engine::set_cq_event(Cq *cq, void (*on_event)(void *arg), void *arg) noexcept
{
	if (cq == nullptr)
		return;
	auto guard = state().lock();
	cq->config.on_event = on_event;
	cq->config.event_arg = arg;
}

bool Engine::claim_cq_event(Cq *cq, void (*on_event)(void *arg), void *arg) noexcept
{
	State &engine = state();
	auto guard = engine.lock();
	if (std::find(engine.cqs.begin(), engine.cqs.end(), cq) == engine.cqs.end() || cq->config.on_event != nullptr)
		return false;
	cq->config.on_event = on_event;
	cq->config.event_arg = arg;
	return true;
}

uint32_t Engine::cq_number(const Cq *cq) noexcept
{
	return cq->config.cqn; // set once at add_cq
}

bool Engine::clear_cq_event(Cq *cq, void *arg) noexcept
{
	State &engine = state();
	auto guard = engine.lock();
	if (std::find(engine.cqs.begin(), engine.cqs.end(), cq) == engine.cqs.end() || cq->config.event_arg != arg)
		return false;
	cq->config.on_event = nullptr;
	cq->config.event_arg = nullptr;
	return true;
}

void Engine::reset_qp(Qp *qp) noexcept
{
	if (qp == nullptr)
		return;
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	if (ibv_query_qp(qp->config.backing, &attr, IBV_QP_STATE, &init) != 0)
		return;
	auto guard = state().lock();
	if (attr.qp_state == IBV_QPS_RESET)
		qp->reset();
	else if (attr.qp_state == IBV_QPS_ERR)
		qp->error = true;
}

} // namespace softdpu::mlx5::wq
