// The work-queue engine of softdpu's mlx5 device: it executes mlx5 work-queue entries that an
// application writes into queue buffers, and writes mlx5 64-byte CQEs back, as a ConnectX does for
// DevX- and DV-driven queues (DPDK, UCX, DOCA).
//
// Shape: every mlx5 queue pair stands on a verbs queue pair of softdpu's libibverbs (its backing
// QP, same qpn), and every mlx5 completion queue on a verbs CQ (its backing CQ). The engine reads
// new WQEs when a doorbell record moves, turns each into a verbs work request on the backing QP
// (which validates keys and carries the data through softdpu's transport, so DevX QPs and verbs
// QPs interoperate across processes), and turns the backing CQ's work completions into CQEs in the
// mlx5 CQ buffer. Who owns what: the caller (the DevX object layer, or mlx5dv_init_obj) owns the
// buffers, doorbell records and backing verbs objects, and keeps them alive until remove_*
// returns; the engine owns only its own bookkeeping.
//
// Threading: one engine thread per process, started with the first queue and stopped with the
// last. It polls doorbell records and backing CQs; after a while without work it backs off to
// sleeping, so an idle device costs no core (docs/mlx5.md, "The work-queue engine").
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace softdpu::mlx5::wq {

class Cq;
class Qp;

// A completion queue: 2^log_size CQEs of 64 bytes (struct mlx5_cqe64), owner-bit convention of the
// PRM (the device writes CQE n with owner bit (n >> log_size) & 1; the application initialises the
// buffer with invalid CQEs, op_own 0xf1).
struct CqConfig {
	void *buffer = nullptr;
	uint32_t log_size = 0;
	// The CQ doorbell record: [0] the consumer counter (big-endian, 24 bits), [1] the arm word
	// (big-endian: arm_sn << 28 | cmd << 24 | consumer counter), as mlx5dv.h's MLX5_CQ_SET_CI and
	// MLX5_CQ_ARM_DB.
	volatile uint32_t *doorbell = nullptr;
	uint32_t cqn = 0;
	ibv_cq *backing = nullptr; // the verbs CQ the backing QPs complete on
	// Optional: the CQ doorbell of the UAR page the application arms through (UAR +
	// MLX5_CQ_DOORBELL, 8 bytes: the arm word then the cqn, both big-endian, as rdma-core's
	// mlx5dv arm writes them). A write naming this cqn arms the CQ even when the arm word in the
	// doorbell record keeps its value (the first arm of a fresh CQ writes 0 there). Null: only
	// changes of doorbell[1] arm it.
	const volatile uint64_t *uar_doorbell = nullptr;
	// Called (on the engine thread) when the CQ is armed and a CQE it was armed for has been
	// written; the arm is then consumed, as the device raises one completion event per arm. It
	// runs under the engine's lock: it must not call the Engine (nor block for long).
	void (*on_event)(void *arg) = nullptr;
	void *event_arg = nullptr;
};

// A reliable-connected queue pair. The send queue is 2^log_sq_size WQE basic blocks of 64 bytes;
// the receive queue 2^log_rq_size entries of (16 << log_rq_stride) bytes, each a list of data
// segments (struct mlx5_wqe_data_seg) ended by MLX5_INVALID_LKEY or the stride.
struct QpConfig {
	uint32_t qpn = 0;          // the backing QP's qp_num
	ibv_qp *backing = nullptr; // RC, created with sq_sig_all = 0 and send/recv CQs = the Cqs' backing
	void *sq = nullptr;        // null with log_sq_size 0: no send queue
	uint32_t log_sq_size = 0;
	void *rq = nullptr; // null: no receive queue (or an SRQ)
	uint32_t log_rq_size = 0;
	uint32_t log_rq_stride = 0;
	// The QP doorbell record: [0] the receive counter, [1] the send counter (big-endian, 16 bits
	// used), as mlx5dv.h's MLX5_RCV_DBR / MLX5_SND_DBR.
	volatile uint32_t *doorbell = nullptr;
	Cq *send_cq = nullptr;
	Cq *recv_cq = nullptr;
	// The QP's user index (qpc.user_index, 24 bits): CQEs carry it in srqn_uidx, as the device's
	// CQE version 1 does.
	uint32_t user_index = 0;
};

class Engine {
public:
	// The process's engine. Never null.
	static Engine &instance() noexcept;

	// Registers a queue; the engine starts serving it at once. Null with errno set (ENOMEM; EINVAL
	// for a config the engine cannot serve: sizes over the device's limits, null buffers).
	Cq *add_cq(const CqConfig &config) noexcept;
	Qp *add_qp(const QpConfig &config) noexcept;
	// Unregisters a queue; when it returns the engine thread no longer touches its buffers,
	// doorbells or backing objects. A CQ is removed after the QPs that use it.
	void remove_qp(Qp *qp) noexcept;
	void remove_cq(Cq *cq) noexcept;
	// Changes the event callback of a CQ (event channels subscribe after the CQ exists).
	void set_cq_event(Cq *cq, void (*on_event)(void *arg), void *arg) noexcept;
	// Sets the event callback of `cq` unless it has one: false (nothing changed) when it has, or
	// when `cq` is not registered.
	bool claim_cq_event(Cq *cq, void (*on_event)(void *arg), void *arg) noexcept;
	// The CQ's number (CqConfig::cqn).
	static uint32_t cq_number(const Cq *cq) noexcept;
	// Clears the event callback of `cq` if `cq` is still registered and its callback argument is
	// `arg` (an event channel going away while the CQ may already be gone). True when cleared.
	bool clear_cq_event(Cq *cq, void *arg) noexcept;
	// The QP's backing verbs QP moved to the error state by a command (2ERR), or back to reset
	// (2RST): the engine resets its send and receive positions for RST, as the device does, and
	// for ERR flushes every WQE read from then on. Call it after the backing QP's transition (the
	// engine reads the backing QP's state).
	void reset_qp(Qp *qp) noexcept;
};

} // namespace softdpu::mlx5::wq
