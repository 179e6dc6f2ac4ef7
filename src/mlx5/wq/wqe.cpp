// The WQE codec (wqe.hpp): segments read by 16-byte units from the ring, big-endian fields.
#include "mlx5/wq/wqe.hpp"

#include <infiniband/mlx5dv.h>

#include <algorithm>
#include <cstring>
#include <endian.h>

namespace softdpu::mlx5::wq {

namespace {

constexpr uint32_t kSegment = 16;

struct Segment {
	uint8_t bytes[kSegment];
};

// Segment `unit` (16-byte units from the WQE's first byte) of the WQE at BB `position`.
Segment read_segment(const SendRing &ring, uint16_t position, uint32_t unit) noexcept
{
	const size_t ring_bytes = size_t{ring.bbs} * kBasicBlock;
	const size_t offset =
	    (size_t{position & (ring.bbs - 1)} * kBasicBlock + size_t{unit} * kSegment) & (ring_bytes - 1);
	Segment segment;
	std::memcpy(segment.bytes, ring.ring + offset, kSegment);
	return segment;
}

uint32_t be32_at(const uint8_t *bytes) noexcept
{
	uint32_t value = 0;
	std::memcpy(&value, bytes, sizeof(value));
	return be32toh(value);
}

uint64_t be64_at(const uint8_t *bytes) noexcept
{
	uint64_t value = 0;
	std::memcpy(&value, bytes, sizeof(value));
	return be64toh(value);
}

uint32_t bbs_of(uint8_t ds) noexcept
{
	const uint32_t bbs = (uint32_t{ds} * kSegment + kBasicBlock - 1) / kBasicBlock;
	return bbs == 0 ? 1 : bbs;
}

bool has_raddr(uint8_t opcode) noexcept
{
	return opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	       opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS || opcode == MLX5_OPCODE_ATOMIC_FA;
}

bool executes(uint8_t opcode) noexcept
{
	switch (opcode) {
	case MLX5_OPCODE_NOP:
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
	case MLX5_OPCODE_RDMA_READ:
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		return true;
	default:
		return false;
	}
}

// Adds the inline bytes [unit * 16 + 4, + count) of the WQE as one or two pieces (the ring may wrap
// inside them).
void add_inline(const SendRing &ring, uint16_t position, uint32_t unit, uint32_t count, SendWqe *out) noexcept
{
	const size_t ring_bytes = size_t{ring.bbs} * kBasicBlock;
	size_t offset =
	    (size_t{position & (ring.bbs - 1)} * kBasicBlock + size_t{unit} * kSegment + 4) & (ring_bytes - 1);
	while (count > 0 && out->num_sge < kMaxWqeSges) {
		const auto piece = static_cast<uint32_t>(std::min<size_t>(count, ring_bytes - offset));
		WqeSge &sge = out->sge[out->num_sge++];
		sge.addr = reinterpret_cast<uintptr_t>(ring.ring + offset); // NOLINT(performance-no-int-to-ptr)
		sge.length = piece;
		sge.lkey = 0;
		count -= piece;
		offset = 0;
	}
}

} // namespace

uint32_t send_wqe_bbs(const SendRing &ring, uint16_t position, uint32_t available) noexcept
{
	if (available == 0 || ring.bbs == 0)
		return 0;
	const Segment ctrl = read_segment(ring, position, 0);
	const uint32_t bbs = bbs_of(static_cast<uint8_t>(be32_at(ctrl.bytes + 4) & 0x3f));
	return bbs > available ? available : bbs;
}

uint8_t parse_send_wqe(const SendRing &ring, uint16_t position, uint32_t available, uint32_t qpn, uint32_t max_sge,
		       uint32_t max_inline, uint64_t max_message, SendWqe *out) noexcept
{
	out->num_sge = 0;
	out->length = 0;
	out->inline_data = false;
	out->bbs = 1;
	if (available == 0 || ring.bbs == 0)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	const Segment ctrl = read_segment(ring, position, 0);
	const uint32_t opmod_idx_opcode = be32_at(ctrl.bytes);
	const uint32_t qpn_ds = be32_at(ctrl.bytes + 4);
	const uint8_t fm_ce_se = ctrl.bytes[11];
	out->opcode = static_cast<uint8_t>(opmod_idx_opcode & 0xff);
	out->index = static_cast<uint16_t>(opmod_idx_opcode >> 8);
	out->opmod = static_cast<uint8_t>(opmod_idx_opcode >> 24);
	out->qpn = qpn_ds >> 8;
	out->ds = static_cast<uint8_t>(qpn_ds & 0x3f);
	out->signaled = (fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE) != 0;
	out->solicited = (fm_ce_se & MLX5_WQE_CTRL_SOLICITED) != 0;
	out->fence = (fm_ce_se & (MLX5_WQE_CTRL_FENCE | MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE)) != 0;
	std::memcpy(&out->imm, ctrl.bytes + 12, sizeof(out->imm));
	out->remote_addr = 0;
	out->rkey = 0;
	out->compare = 0;
	out->swap_add = 0;
	const uint32_t bbs = bbs_of(out->ds);
	out->bbs = bbs > available ? available : bbs;

	// The ctrl segment itself: a WQE that is empty, bigger than the ring or than what the doorbell
	// covers, or meant for another QP, is not executed.
	if (out->ds == 0 || bbs > available || bbs > ring.bbs || out->qpn != qpn)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (!executes(out->opcode) || out->opmod != 0)
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (out->opcode == MLX5_OPCODE_NOP)
		return 0;

	uint32_t unit = 1;
	if (has_raddr(out->opcode)) {
		if (out->ds < 2)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		const Segment raddr = read_segment(ring, position, unit++);
		out->remote_addr = be64_at(raddr.bytes);
		out->rkey = be32_at(raddr.bytes + 8);
	}
	const bool atomic = out->opcode == MLX5_OPCODE_ATOMIC_CS || out->opcode == MLX5_OPCODE_ATOMIC_FA;
	if (atomic) {
		if (out->ds != 4)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		const Segment args = read_segment(ring, position, unit++);
		out->swap_add = be64_at(args.bytes);
		out->compare = be64_at(args.bytes + 8);
	}
	const bool may_inline = out->opcode != MLX5_OPCODE_RDMA_READ && !atomic;
	bool data = false;
	while (unit < out->ds) {
		const Segment segment = read_segment(ring, position, unit);
		const uint32_t byte_count = be32_at(segment.bytes);
		if ((byte_count & MLX5_INLINE_SEG) != 0) {
			// Inline data: its bytes follow the 4-byte header, padded to whole segments.
			if (!may_inline || data)
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
			const uint32_t count = byte_count & ~MLX5_INLINE_SEG;
			const uint32_t units = (4 + count + kSegment - 1) / kSegment;
			if (unit + units > out->ds)
				return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR; // the data runs past the WQE
			out->inline_data = true;
			out->length += count;
			if (out->length > max_inline)
				return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			add_inline(ring, position, unit, count, out);
			unit += units;
			continue;
		}
		const uint32_t lkey = be32_at(segment.bytes + 4);
		if (lkey == MLX5_INVALID_LKEY)
			break; // the list ends here; the rest is padding
		if (out->inline_data)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR; // data and inline segments mixed
		data = true;
		if (out->num_sge >= max_sge || out->num_sge >= kMaxWqeSges)
			return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		WqeSge &sge = out->sge[out->num_sge++];
		sge.length = byte_count;
		sge.lkey = lkey;
		sge.addr = be64_at(segment.bytes + 8);
		out->length += byte_count;
		++unit;
	}
	if (atomic && (out->num_sge != 1 || out->sge[0].length != 8))
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (out->length > max_message)
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	return 0;
}

uint8_t parse_recv_wqe(const uint8_t *wqe, uint32_t stride, uint32_t max_sge, RecvWqe *out) noexcept
{
	out->num_sge = 0;
	out->length = 0;
	if (stride > kMaxRecvStride)
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	for (uint32_t offset = 0; offset + kSegment <= stride; offset += kSegment) {
		const uint32_t lkey = be32_at(wqe + offset + 4);
		if (lkey == MLX5_INVALID_LKEY)
			break;
		if (out->num_sge >= max_sge || out->num_sge >= kMaxWqeSges)
			return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		WqeSge &sge = out->sge[out->num_sge++];
		sge.length = be32_at(wqe + offset);
		sge.lkey = lkey;
		sge.addr = be64_at(wqe + offset + 8);
		out->length += sge.length;
	}
	return 0;
}

} // namespace softdpu::mlx5::wq
