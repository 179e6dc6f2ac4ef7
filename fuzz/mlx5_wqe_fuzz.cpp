// Fuzz target: the work-queue engine's codec (src/mlx5/wq/wqe.hpp, cqe.hpp) on a send ring and
// doorbell counters as an application may leave them. The engine's reading loop: from the
// consumed position to the doorbell, one WQE at a time. Whatever the bytes, every WQE is parsed or
// refused with a syndrome, its size stays within what was rung, every inline piece lies inside the
// ring, the loop ends, and each WQE's CQE is written with the right owner bit.
//
// Input: [0] log2 of the ring's basic blocks (mod 7), [1..2] the doorbell counter, [3..4] the
// consumed position, [5] the QP's data-segment limit, [6] its inline limit / 4, [7] log2 of the
// receive stride (mod 7), then the ring's bytes (zero-padded).
#include "mlx5/wq/cqe.hpp"
#include "mlx5/wq/wqe.hpp"

#include <infiniband/mlx5dv.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

using namespace softdpu::mlx5::wq;

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

constexpr size_t kHeader = 8;
constexpr uint32_t kQpn = 0x000abc;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < kHeader)
		return 0;
	const uint32_t bbs = 1u << (data[0] % 7);
	const auto doorbell = static_cast<uint16_t>(data[1] | data[2] << 8);
	auto position = static_cast<uint16_t>(data[3] | data[4] << 8);
	const uint32_t max_sge = data[5] % (kMaxWqeSges + 2);
	const uint32_t max_inline = data[6] * 4u;
	const uint32_t stride = 16u << (data[7] % 7);
	std::vector<uint8_t> ring(size_t{bbs} * kBasicBlock, 0);
	std::memcpy(ring.data(), data + kHeader, std::min(ring.size(), size - kHeader));
	const uint8_t *begin = ring.data();
	const uint8_t *end = ring.data() + ring.size();
	const SendRing view{begin, bbs};

	std::vector<mlx5_cqe64> cq(4);
	uint32_t produced = 0;
	auto wqe = std::make_unique<SendWqe>();
	uint32_t available = static_cast<uint16_t>(doorbell - position);
	if (available > bbs)
		available = bbs; // the engine refuses a doorbell past the queue; parse one ring's worth
	uint32_t steps = 0;
	while (available > 0) {
		require(++steps <= bbs);
		const uint8_t syndrome =
		    parse_send_wqe(view, position, available, kQpn, max_sge, max_inline, 1ull << 31, wqe.get());
		require(wqe->bbs >= 1 && wqe->bbs <= available);
		require(send_wqe_bbs(view, position, available) == wqe->bbs);
		require(wqe->num_sge <= kMaxWqeSges);
		if (syndrome == 0) {
			require(wqe->qpn == kQpn && wqe->ds > 0);
			uint64_t total = 0;
			for (uint32_t i = 0; i < wqe->num_sge; ++i) {
				total += wqe->sge[i].length;
				if (wqe->inline_data) {
					const auto *piece = reinterpret_cast<const uint8_t *>(wqe->sge[i].addr);
					require(piece >= begin && piece + wqe->sge[i].length <= end);
				}
			}
			require(total == wqe->length);
			require(!wqe->inline_data || wqe->length <= max_inline);
			require(wqe->inline_data || wqe->num_sge <= max_sge);
		} else {
			require(syndrome == MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR ||
				syndrome == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
		}
		Completion completion;
		completion.opcode = syndrome == 0 ? MLX5_CQE_REQ : MLX5_CQE_REQ_ERR;
		completion.syndrome = syndrome;
		completion.wqe_opcode = wqe->opcode;
		completion.wqe_counter = wqe->index;
		completion.qpn = kQpn;
		write_cqe(&cq[produced % cq.size()], completion, produced, 2);
		require((cqe_op_own(&cq[produced % cq.size()]) & 1) == ((produced >> 2) & 1));
		require(cqe_op_own(&cq[produced % cq.size()]) >> 4 == completion.opcode);
		++produced;
		position = static_cast<uint16_t>(position + wqe->bbs);
		available -= wqe->bbs;
	}

	// The same bytes as a receive queue of `stride`-byte WQEs.
	auto recv = std::make_unique<RecvWqe>();
	for (size_t offset = 0; offset + stride <= ring.size(); offset += stride) {
		const uint8_t syndrome = parse_recv_wqe(ring.data() + offset, stride, max_sge, recv.get());
		require(syndrome == 0 || syndrome == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
		require(recv->num_sge <= std::min(max_sge, stride / 16));
	}
	return 0;
}
