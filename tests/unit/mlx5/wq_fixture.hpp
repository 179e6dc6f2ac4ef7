// Test support for the mlx5 work queues softdpu's libmlx5 exposes through mlx5dv_init_obj: verbs
// RC queue pairs on the default topology's first device, their mlx5 view, WQEs written with
// mlx5dv.h's inline helpers, the doorbell rung, and CQEs polled by hand, as DPDK and UCX do.
#pragma once

#include "mlx5_fixture.hpp"

#include <endian.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace mlx5_test {

// The CQ doorbell record's words (rdma-core's MLX5_CQ_SET_CI and MLX5_CQ_ARM_DB, not in mlx5dv.h).
constexpr int kCqSetCi = 0;
constexpr int kCqArmDb = 1;

// The mlx5 view of a CQ and a consumer of its CQEs.
struct DvCq {
	ibv_cq *cq = nullptr;
	mlx5dv_cq dv{};
	uint32_t ci = 0;

	mlx5_cqe64 *slot(uint32_t index) const
	{
		return static_cast<mlx5_cqe64 *>(dv.buf) + (index & (dv.cqe_cnt - 1));
	}

	// The next CQE if the device has written it.
	bool peek(mlx5_cqe64 *out) const
	{
		mlx5_cqe64 *cqe = slot(ci);
		const uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
		if ((op_own >> 4) == MLX5_CQE_INVALID ||
		    ((op_own & MLX5_CQE_OWNER_MASK) != 0) != ((ci & dv.cqe_cnt) != 0))
			return false;
		std::memcpy(out, cqe, sizeof(*out));
		return true;
	}

	void advance()
	{
		++ci;
		__atomic_store_n(&dv.dbrec[kCqSetCi], htobe32(ci & 0xffffff), __ATOMIC_RELEASE);
	}

	// Waits for the next CQE (up to `limit`); false when none came.
	bool poll(mlx5_cqe64 *out, std::chrono::milliseconds limit = std::chrono::milliseconds(3000))
	{
		const auto deadline = std::chrono::steady_clock::now() + limit;
		while (!peek(out)) {
			if (std::chrono::steady_clock::now() > deadline)
				return false;
			std::this_thread::sleep_for(std::chrono::microseconds(20));
		}
		advance();
		return true;
	}

	// Arms the CQ as rdma-core's mlx5 does: the arm word in the doorbell record, then the UAR.
	void arm(uint32_t sn, bool solicited)
	{
		const uint32_t cmd = solicited ? MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT;
		const uint32_t word = (sn & 3) << 28 | cmd | (ci & 0xffffff);
		__atomic_store_n(&dv.dbrec[kCqArmDb], htobe32(word), __ATOMIC_RELEASE);
		uint32_t doorbell[2] = {htobe32(word), htobe32(dv.cqn)};
		uint64_t value = 0;
		std::memcpy(&value, doorbell, sizeof(value));
		__atomic_store_n(reinterpret_cast<uint64_t *>(static_cast<uint8_t *>(dv.cq_uar) + MLX5_CQ_DOORBELL),
				 value, __ATOMIC_RELEASE);
	}
};

inline uint8_t cqe_opcode(const mlx5_cqe64 &cqe)
{
	return cqe.op_own >> 4;
}

inline uint8_t cqe_syndrome(const mlx5_cqe64 &cqe)
{
	return reinterpret_cast<const mlx5_err_cqe *>(&cqe)->syndrome;
}

// The mlx5 view of a QP and a producer of its WQEs.
struct DvQp {
	ibv_qp *qp = nullptr;
	mlx5dv_qp dv{};
	uint16_t pi = 0;    // send queue: next BB
	uint16_t rq_pi = 0; // receive queue: next WQE

	// The 16-byte segment `unit` of the WQE starting at BB `start` (wrapping around the ring).
	void *seg(uint16_t start, uint32_t unit) const
	{
		const size_t ring = size_t{dv.sq.wqe_cnt} * MLX5_SEND_WQE_BB;
		const size_t offset = (size_t{start & (dv.sq.wqe_cnt - 1)} * MLX5_SEND_WQE_BB + unit * 16) % ring;
		return static_cast<uint8_t *>(dv.sq.buf) + offset;
	}

	// Writes one WQE of `ds` units at pi: ctrl from the arguments, then `segments` (16 bytes each,
	// ds - 1 of them) and advances pi. Does not ring.
	void write(uint8_t opcode, uint8_t fm_ce_se, const std::vector<std::array<uint8_t, 16>> &segments,
		   uint32_t imm = 0, uint32_t qpn_override = ~0u, int ds_override = -1)
	{
		const auto ds = static_cast<uint8_t>(ds_override >= 0 ? ds_override : 1 + segments.size());
		auto *ctrl = static_cast<mlx5_wqe_ctrl_seg *>(seg(pi, 0));
		mlx5dv_set_ctrl_seg(ctrl, pi, opcode, 0, qpn_override != ~0u ? qpn_override : qp->qp_num, fm_ce_se, ds,
				    0, imm);
		for (size_t i = 0; i < segments.size(); ++i)
			std::memcpy(seg(pi, static_cast<uint32_t>(1 + i)), segments[i].data(), 16);
		pi = static_cast<uint16_t>(pi + (ds * 16 + 63) / 64 + (ds == 0 ? 1 : 0));
	}

	void ring()
	{
		__atomic_store_n(&dv.dbrec[MLX5_SND_DBR], htobe32(pi), __ATOMIC_RELEASE);
		// The blue-flame register gets the first 8 bytes of the last WQE, as rdma-core writes them.
		uint64_t first = 0;
		__atomic_store_n(static_cast<uint64_t *>(dv.bf.reg), first, __ATOMIC_RELAXED);
	}

	// Posts a receive WQE of the given (addr, length, lkey) elements.
	void post_recv(const std::vector<ibv_sge> &sges)
	{
		auto *wqe = reinterpret_cast<mlx5_wqe_data_seg *>(static_cast<uint8_t *>(dv.rq.buf) +
								  size_t{rq_pi & (dv.rq.wqe_cnt - 1)} * dv.rq.stride);
		const size_t slots = dv.rq.stride / sizeof(mlx5_wqe_data_seg);
		for (size_t i = 0; i < slots; ++i) {
			if (i < sges.size())
				mlx5dv_set_data_seg(&wqe[i], sges[i].length, sges[i].lkey, sges[i].addr);
			else
				mlx5dv_set_data_seg(&wqe[i], 0, MLX5_INVALID_LKEY, 0);
		}
		++rq_pi;
		__atomic_store_n(&dv.dbrec[MLX5_RCV_DBR], htobe32(rq_pi), __ATOMIC_RELEASE);
	}
};

inline std::array<uint8_t, 16> raddr_seg(uint64_t addr, uint32_t rkey)
{
	std::array<uint8_t, 16> bytes{};
	auto *seg = reinterpret_cast<mlx5_wqe_raddr_seg *>(bytes.data());
	seg->raddr = htobe64(addr);
	seg->rkey = htobe32(rkey);
	return bytes;
}

inline std::array<uint8_t, 16> data_seg(const void *addr, uint32_t length, uint32_t lkey)
{
	std::array<uint8_t, 16> bytes{};
	mlx5dv_set_data_seg(reinterpret_cast<mlx5_wqe_data_seg *>(bytes.data()), length, lkey,
			    reinterpret_cast<uintptr_t>(addr));
	return bytes;
}

inline std::array<uint8_t, 16> atomic_seg(uint64_t swap_add, uint64_t compare)
{
	std::array<uint8_t, 16> bytes{};
	auto *seg = reinterpret_cast<mlx5_wqe_atomic_seg *>(bytes.data());
	seg->swap_add = htobe64(swap_add);
	seg->compare = htobe64(compare);
	return bytes;
}

// Inline data segments: the 4-byte header and the bytes, padded to 16.
inline std::vector<std::array<uint8_t, 16>> inline_segs(const void *data, uint32_t length)
{
	std::vector<uint8_t> bytes(size_t{4} + length); // size_t: 4 + a uint32_t could wrap
	const uint32_t header = htobe32(length | MLX5_INLINE_SEG);
	std::memcpy(bytes.data(), &header, 4);
	std::memcpy(bytes.data() + 4, data, length);
	std::vector<std::array<uint8_t, 16>> segments((bytes.size() + 15) / 16);
	for (size_t i = 0; i < bytes.size(); ++i)
		segments[i / 16][i % 16] = bytes[i];
	return segments;
}

} // namespace mlx5_test
