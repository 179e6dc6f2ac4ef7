// The CQE codec of the work-queue engine: one completion written as a 64-byte mlx5 CQE (struct
// mlx5_cqe64, or struct mlx5_err_cqe for an error), owner bit and all. A pure function over the
// slot's bytes.
#pragma once

#include <cstdint>

namespace softdpu::mlx5::wq {

struct Completion {
	uint8_t opcode = 0;     // MLX5_CQE_REQ, MLX5_CQE_RESP_*, MLX5_CQE_REQ_ERR, MLX5_CQE_RESP_ERR
	uint8_t wqe_opcode = 0; // requester CQEs: the MLX5_OPCODE_* of the WQE
	uint8_t syndrome = 0;   // error CQEs: MLX5_CQE_SYNDROME_*
	uint8_t vendor_syndrome = 0;
	uint32_t qpn = 0;
	uint16_t wqe_counter = 0;
	uint32_t byte_cnt = 0;
	uint32_t imm = 0;        // RESP_WR_IMM, RESP_SEND_IMM: as the sender wrote it (network order)
	uint32_t user_index = 0; // the QP's qpc.user_index (CQE version 1: srqn_uidx), 24 bits
};

// Writes `completion` as CQE number `index` (a running counter) of a CQ of 2^log_size entries
// into `slot` (64 bytes): every field first, then op_own (opcode << 4 | owner bit, the owner bit
// (index >> log_size) & 1) with release ordering, so a consumer that sees the new owner bit sees
// the whole CQE.
void write_cqe(void *slot, const Completion &completion, uint32_t index, uint32_t log_size) noexcept;

// The owner bit and opcode a consumer reads (for tests and the fuzzer): op_own of `slot`.
uint8_t cqe_op_own(const void *slot) noexcept;

} // namespace softdpu::mlx5::wq
