// The CQE codec (cqe.hpp).
#include "mlx5/wq/cqe.hpp"

#include <infiniband/mlx5dv.h>

#include <atomic>
#include <cstring>
#include <endian.h>

namespace softdpu::mlx5::wq {

namespace {

constexpr size_t kOpOwn = offsetof(mlx5_cqe64, op_own);
static_assert(sizeof(mlx5_cqe64) == 64 && sizeof(mlx5_err_cqe) == 64 && kOpOwn == 63);
static_assert(offsetof(mlx5_err_cqe, syndrome) == 55 && offsetof(mlx5_err_cqe, vendor_err_synd) == 54);

void put32(uint8_t *at, uint32_t host) noexcept
{
	const uint32_t value = htobe32(host);
	std::memcpy(at, &value, sizeof(value));
}

void put16(uint8_t *at, uint16_t host) noexcept
{
	const uint16_t value = htobe16(host);
	std::memcpy(at, &value, sizeof(value));
}

} // namespace

void write_cqe(void *slot, const Completion &completion, uint32_t index, uint32_t log_size) noexcept
{
	uint8_t bytes[64] = {};
	// CQE version 1: the QP's user index where version 0 had the SRQ number (both CQE formats).
	put32(bytes + offsetof(mlx5_cqe64, srqn_uidx), completion.user_index & 0xffffff);
	const bool error = completion.opcode == MLX5_CQE_REQ_ERR || completion.opcode == MLX5_CQE_RESP_ERR;
	if (error) {
		bytes[offsetof(mlx5_err_cqe, vendor_err_synd)] = completion.vendor_syndrome;
		bytes[offsetof(mlx5_err_cqe, syndrome)] = completion.syndrome;
		put32(bytes + offsetof(mlx5_err_cqe, s_wqe_opcode_qpn),
		      uint32_t{completion.wqe_opcode} << 24 | (completion.qpn & 0xffffff));
		put16(bytes + offsetof(mlx5_err_cqe, wqe_counter), completion.wqe_counter);
	} else {
		put32(bytes + offsetof(mlx5_cqe64, byte_cnt), completion.byte_cnt);
		if (completion.opcode == MLX5_CQE_RESP_WR_IMM || completion.opcode == MLX5_CQE_RESP_SEND_IMM)
			std::memcpy(bytes + offsetof(mlx5_cqe64, imm_inval_pkey), &completion.imm,
				    sizeof(completion.imm));
		// A requester CQE carries the WQE's opcode in sop_drop_qpn's top byte (rdma-core reads it).
		const uint32_t top = completion.opcode == MLX5_CQE_REQ ? uint32_t{completion.wqe_opcode} << 24 : 0;
		put32(bytes + offsetof(mlx5_cqe64, sop_drop_qpn), top | (completion.qpn & 0xffffff));
		put16(bytes + offsetof(mlx5_cqe64, wqe_counter), completion.wqe_counter);
	}
	auto *out = static_cast<uint8_t *>(slot);
	std::memcpy(out, bytes, kOpOwn);
	const auto op_own = static_cast<uint8_t>(completion.opcode << 4 | ((index >> log_size) & 1));
	std::atomic_ref<uint8_t>(out[kOpOwn]).store(op_own, std::memory_order_release);
}

uint8_t cqe_op_own(const void *slot) noexcept
{
	auto *bytes = const_cast<uint8_t *>(static_cast<const uint8_t *>(slot)); // atomic_ref needs non-const
	return std::atomic_ref<uint8_t>(bytes[kOpOwn]).load(std::memory_order_acquire);
}

} // namespace softdpu::mlx5::wq
