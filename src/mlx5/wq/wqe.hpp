// The WQE codec of the work-queue engine: one mlx5 send WQE or one receive WQE, as an application
// wrote it into a queue buffer, parsed into a plain structure or refused with the CQE syndrome a
// ConnectX gives it. Pure functions over the bytes (no state, no allocation): the engine and the
// fuzzer (fuzz/mlx5_wqe_fuzz.cpp) call them on memory the application may still be writing.
//
// Send WQE (PRM "Send WQE Format", mlx5dv.h's segments): 64-byte basic blocks (BBs) in a ring of
// 2^n BBs; the control segment's ds gives the WQE's size in 16-byte units, so one WQE spans
// ceil(ds / 4) BBs and may wrap around the end of the ring. Segments by opcode:
//   SEND, SEND_IMM                 ctrl, then data or inline segments
//   RDMA_WRITE, RDMA_WRITE_IMM     ctrl, raddr, then data or inline segments
//   RDMA_READ                      ctrl, raddr, then data segments
//   ATOMIC_CS, ATOMIC_FA           ctrl, raddr, atomic, one data segment of 8 bytes
//   NOP                            ctrl (ds >= 1; the rest is ignored)
// A data segment with lkey MLX5_INVALID_LKEY ends the list (the rest of the WQE is padding), as in
// a receive WQE. An inline segment (byte_count | MLX5_INLINE_SEG) carries its bytes after its
// 4-byte header, padded to 16 bytes; they may wrap around the ring too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace softdpu::mlx5::wq {

// Limits of one WQE: ds is 6 bits (63 units of 16 bytes, under 1 KiB), so at most 61 data segments
// follow a ctrl and raddr segment; inline data at most 63 * 16 bytes.
constexpr uint32_t kMaxWqeSges = 62;
constexpr uint32_t kMaxDs = 63;
constexpr uint32_t kBasicBlock = 64;

// A piece of the WQE's data: a local buffer (addr, length, lkey), or, for inline data, bytes of the
// ring itself (addr points into the ring, lkey unused).
struct WqeSge {
	uint64_t addr = 0;
	uint32_t length = 0;
	uint32_t lkey = 0;
};

struct SendWqe {
	uint16_t index = 0; // the WQE counter of the ctrl segment (echoed in the CQE)
	uint8_t opcode = 0; // MLX5_OPCODE_*
	uint8_t opmod = 0;
	uint32_t qpn = 0;
	uint8_t ds = 0;
	uint32_t bbs = 0;       // basic blocks the WQE spans: ceil(ds / 4), at least 1
	bool signaled = false;  // fm_ce_se has MLX5_WQE_CTRL_CQ_UPDATE
	bool solicited = false; // MLX5_WQE_CTRL_SOLICITED
	bool fence = false;     // MLX5_WQE_CTRL_FENCE or the initiator small fence
	uint32_t imm = 0;       // the ctrl segment's imm as written (network order)
	uint64_t remote_addr = 0;
	uint32_t rkey = 0;
	uint64_t compare = 0;  // ATOMIC_CS
	uint64_t swap_add = 0; // ATOMIC_CS: swap; ATOMIC_FA: add
	bool inline_data = false;
	uint32_t num_sge = 0;
	uint64_t length = 0; // total bytes of the data or inline segments
	WqeSge sge[kMaxWqeSges];
};

// The send ring as the engine sees it: `bbs` (a power of two) basic blocks at `ring`.
struct SendRing {
	const uint8_t *ring = nullptr;
	uint32_t bbs = 0;
};

// Parses the WQE starting at basic block `position` (a 16-bit counter; the slot is position & (bbs
// - 1)); `available` BBs from there are the application's (doorbell counter - position).
// Returns 0 with *out filled, or the CQE syndrome the WQE gets: MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR
// for an opcode the device does not execute, a ds that cannot hold the opcode's segments or runs
// past the doorbell, a qpn other than `qpn`; MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR for an atomic's
// data segment other than 8 bytes, a message longer than `max_message`, inline data longer than
// `max_inline`, more data segments than `max_sge`. On an error, out->index, opcode and bbs are
// still set as far as the ctrl segment tells (bbs at least 1), so the caller can skip the WQE.
uint8_t parse_send_wqe(const SendRing &ring, uint16_t position, uint32_t available, uint32_t qpn, uint32_t max_sge,
		       uint32_t max_inline, uint64_t max_message, SendWqe *out) noexcept;

// The basic blocks of the WQE at `position` by its ctrl segment alone (ceil(ds / 4), at least 1,
// at most `available`): how far to skip a WQE that is flushed without being parsed.
uint32_t send_wqe_bbs(const SendRing &ring, uint16_t position, uint32_t available) noexcept;

// A receive WQE: `stride` bytes (16 << log_stride) of data segments, ended by MLX5_INVALID_LKEY
// or the stride.
struct RecvWqe {
	uint32_t num_sge = 0;
	uint64_t length = 0;
	WqeSge sge[kMaxWqeSges];
};

constexpr uint32_t kMaxRecvStride = kMaxWqeSges * 16;

// Parses a receive WQE. 0, or MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR for more segments than `max_sge`
// (or a stride over kMaxRecvStride).
uint8_t parse_recv_wqe(const uint8_t *wqe, uint32_t stride, uint32_t max_sge, RecvWqe *out) noexcept;

} // namespace softdpu::mlx5::wq
