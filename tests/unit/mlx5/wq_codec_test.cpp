// The work-queue engine's pure codec: send and receive WQEs parsed from bytes written with
// mlx5dv.h's helpers, CQEs written and read back through mlx5dv.h's structures.
#include "mlx5/wq/cqe.hpp"
#include "mlx5/wq/wqe.hpp"

#include <gtest/gtest.h>
#include <infiniband/mlx5dv.h>

#include <endian.h>

#include <array>
#include <cstring>
#include <numeric>
#include <vector>

using namespace softdpu::mlx5::wq;

namespace {

constexpr uint32_t kQpn = 0x1234;
constexpr uint32_t kMaxSge = 8;
constexpr uint32_t kMaxInline = 256;

// A send ring of `bbs` basic blocks and a writer of WQEs into it.
class Ring {
public:
	explicit Ring(uint32_t bbs) : bytes_(size_t{bbs} * 64, 0xee), bbs_(bbs) {}

	SendRing view() const { return {bytes_.data(), bbs_}; }

	uint8_t *seg(uint16_t start, uint32_t unit)
	{
		return bytes_.data() + (size_t{start & (bbs_ - 1)} * 64 + unit * 16) % bytes_.size();
	}

	void ctrl(uint16_t at, uint8_t opcode, uint8_t ds, uint8_t fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE,
		  uint32_t qpn = kQpn, uint8_t opmod = 0, uint32_t imm = 0)
	{
		mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(seg(at, 0)), at, opcode, opmod, qpn, fm_ce_se,
				    ds, 0, imm);
	}

	void raddr(uint16_t at, uint32_t unit, uint64_t addr, uint32_t rkey)
	{
		auto *s = reinterpret_cast<mlx5_wqe_raddr_seg *>(seg(at, unit));
		s->raddr = htobe64(addr);
		s->rkey = htobe32(rkey);
		s->reserved = 0;
	}

	void data(uint16_t at, uint32_t unit, uint64_t addr, uint32_t length, uint32_t lkey)
	{
		mlx5dv_set_data_seg(reinterpret_cast<mlx5_wqe_data_seg *>(seg(at, unit)), length, lkey, addr);
	}

	// Inline bytes from unit `unit` on (header, data, wrapping with the ring). Returns the units.
	uint32_t inline_data(uint16_t at, uint32_t unit, const std::vector<uint8_t> &payload)
	{
		std::vector<uint8_t> all(4 + payload.size());
		const uint32_t header = htobe32(static_cast<uint32_t>(payload.size()) | MLX5_INLINE_SEG);
		std::memcpy(all.data(), &header, 4);
		std::memcpy(all.data() + 4, payload.data(), payload.size());
		const uint32_t units = static_cast<uint32_t>((all.size() + 15) / 16);
		for (uint32_t u = 0; u < units; ++u) {
			uint8_t *s = seg(at, unit + u);
			const size_t n = std::min<size_t>(16, all.size() - size_t{u} * 16);
			std::memcpy(s, all.data() + size_t{u} * 16, n);
		}
		return units;
	}

private:
	std::vector<uint8_t> bytes_;
	uint32_t bbs_;
};

uint8_t parse(const Ring &ring, uint16_t at, uint32_t available, SendWqe *out)
{
	return parse_send_wqe(ring.view(), at, available, kQpn, kMaxSge, kMaxInline, 1ull << 31, out);
}

TEST(WqCodecTest, ParsesAnRdmaWrite)
{
	Ring ring(8);
	ring.ctrl(3, MLX5_OPCODE_RDMA_WRITE, 4, MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED);
	ring.raddr(3, 1, 0x1000200030004000ull, 0xabcd);
	ring.data(3, 2, 0x7000, 100, 0x11);
	ring.data(3, 3, 0x9000, 28, 0x22);
	SendWqe wqe;
	ASSERT_EQ(parse(ring, 3, 1, &wqe), 0);
	EXPECT_EQ(wqe.index, 3);
	EXPECT_EQ(wqe.opcode, MLX5_OPCODE_RDMA_WRITE);
	EXPECT_EQ(wqe.qpn, kQpn);
	EXPECT_EQ(wqe.ds, 4);
	EXPECT_EQ(wqe.bbs, 1u);
	EXPECT_TRUE(wqe.signaled);
	EXPECT_TRUE(wqe.solicited);
	EXPECT_FALSE(wqe.fence);
	EXPECT_EQ(wqe.remote_addr, 0x1000200030004000ull);
	EXPECT_EQ(wqe.rkey, 0xabcdu);
	ASSERT_EQ(wqe.num_sge, 2u);
	EXPECT_EQ(wqe.sge[0].addr, 0x7000u);
	EXPECT_EQ(wqe.sge[0].length, 100u);
	EXPECT_EQ(wqe.sge[0].lkey, 0x11u);
	EXPECT_EQ(wqe.sge[1].addr, 0x9000u);
	EXPECT_EQ(wqe.length, 128u);
	EXPECT_FALSE(wqe.inline_data);
}

TEST(WqCodecTest, AWqeSpansBasicBlocksAndWrapsTheRing)
{
	Ring ring(4);
	// ds 6: two BBs, starting at the ring's last one.
	ring.ctrl(7, MLX5_OPCODE_SEND, 6);
	for (uint32_t unit = 1; unit < 6; ++unit)
		ring.data(7, unit, 0x1000 * unit, unit, unit);
	SendWqe wqe;
	EXPECT_EQ(parse(ring, 7, 1, &wqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR) << "only its first BB was rung";
	EXPECT_EQ(wqe.bbs, 1u);
	ASSERT_EQ(parse(ring, 7, 2, &wqe), 0);
	EXPECT_EQ(wqe.bbs, 2u);
	ASSERT_EQ(wqe.num_sge, 5u);
	for (uint32_t i = 0; i < 5; ++i) {
		EXPECT_EQ(wqe.sge[i].addr, 0x1000u * (i + 1));
		EXPECT_EQ(wqe.sge[i].length, i + 1);
	}
	EXPECT_EQ(send_wqe_bbs(ring.view(), 7, 5), 2u);
}

TEST(WqCodecTest, InlineDataAcrossTheRingEndComesInTwoPieces)
{
	Ring ring(2);
	std::vector<uint8_t> payload(70);
	std::iota(payload.begin(), payload.end(), 1);
	ring.ctrl(1, MLX5_OPCODE_RDMA_WRITE, 0);
	ring.raddr(1, 1, 0x5000, 9);
	const uint32_t units = ring.inline_data(1, 2, payload);
	ring.ctrl(1, MLX5_OPCODE_RDMA_WRITE, static_cast<uint8_t>(2 + units), MLX5_WQE_CTRL_CQ_UPDATE);
	SendWqe wqe;
	ASSERT_EQ(parse(ring, 1, 2, &wqe), 0);
	EXPECT_TRUE(wqe.inline_data);
	EXPECT_EQ(wqe.length, 70u);
	ASSERT_EQ(wqe.num_sge, 2u);
	std::vector<uint8_t> joined;
	for (uint32_t i = 0; i < wqe.num_sge; ++i) {
		const auto *bytes = reinterpret_cast<const uint8_t *>(wqe.sge[i].addr);
		joined.insert(joined.end(), bytes, bytes + wqe.sge[i].length);
	}
	EXPECT_EQ(joined, payload);
}

TEST(WqCodecTest, AtomicsAndNop)
{
	Ring ring(4);
	ring.ctrl(0, MLX5_OPCODE_ATOMIC_CS, 4);
	ring.raddr(0, 1, 0x8000, 5);
	auto *args = reinterpret_cast<mlx5_wqe_atomic_seg *>(ring.seg(0, 2));
	args->swap_add = htobe64(7);
	args->compare = htobe64(3);
	ring.data(0, 3, 0x100, 8, 6);
	SendWqe wqe;
	ASSERT_EQ(parse(ring, 0, 1, &wqe), 0);
	EXPECT_EQ(wqe.swap_add, 7u);
	EXPECT_EQ(wqe.compare, 3u);
	EXPECT_EQ(wqe.num_sge, 1u);
	ring.data(0, 3, 0x100, 16, 6); // an atomic returns 8 bytes
	EXPECT_EQ(parse(ring, 0, 1, &wqe), MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	ring.ctrl(0, MLX5_OPCODE_ATOMIC_FA, 3);
	EXPECT_EQ(parse(ring, 0, 1, &wqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	ring.ctrl(1, MLX5_OPCODE_NOP, 1, 0);
	ASSERT_EQ(parse(ring, 1, 1, &wqe), 0);
	EXPECT_EQ(wqe.opcode, MLX5_OPCODE_NOP);
	EXPECT_FALSE(wqe.signaled);
}

TEST(WqCodecTest, MalformedWqesGetTheirSyndrome)
{
	Ring ring(4);
	SendWqe wqe;
	struct Case {
		const char *what;
		uint8_t opcode;
		uint8_t ds;
		uint32_t qpn;
		uint8_t opmod;
		uint8_t syndrome;
	};
	const Case cases[] = {
	    {"unsupported opcode", MLX5_OPCODE_TSO, 3, kQpn, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"UMR", MLX5_OPCODE_UMR, 3, kQpn, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"ds 0", MLX5_OPCODE_SEND, 0, kQpn, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"another QP", MLX5_OPCODE_SEND, 2, kQpn + 1, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"opmod", MLX5_OPCODE_SEND, 2, kQpn, 1, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"write without raddr", MLX5_OPCODE_RDMA_WRITE, 1, kQpn, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	    {"larger than the ring", MLX5_OPCODE_SEND, 63, kQpn, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR},
	};
	for (const Case &c : cases) {
		ring.ctrl(0, c.opcode, c.ds, MLX5_WQE_CTRL_CQ_UPDATE, c.qpn, c.opmod);
		ring.raddr(0, 1, 0, 0);
		ring.data(0, 1, 0x100, 8, 1);
		EXPECT_EQ(parse(ring, 0, 4, &wqe), c.syndrome) << c.what;
		EXPECT_GE(wqe.bbs, 1u) << c.what;
	}
	// More data segments than the QP takes.
	Ring big(16);
	big.ctrl(0, MLX5_OPCODE_SEND, 1 + kMaxSge + 1);
	for (uint32_t unit = 1; unit <= kMaxSge + 1; ++unit)
		big.data(0, unit, 0x100, 1, 1);
	EXPECT_EQ(parse(big, 0, 16, &wqe), MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	// Inline data longer than the QP's inline size, or a READ with inline data.
	std::vector<uint8_t> payload(kMaxInline + 1, 7);
	const uint32_t units = big.inline_data(0, 1, payload);
	big.ctrl(0, MLX5_OPCODE_SEND, static_cast<uint8_t>(1 + units));
	EXPECT_EQ(parse(big, 0, 16, &wqe), MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	big.inline_data(0, 2, {1, 2, 3});
	big.ctrl(0, MLX5_OPCODE_RDMA_READ, 3);
	EXPECT_EQ(parse(big, 0, 16, &wqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	// Inline data running past the WQE's ds.
	big.inline_data(0, 1, std::vector<uint8_t>(40, 1));
	big.ctrl(0, MLX5_OPCODE_SEND, 2);
	EXPECT_EQ(parse(big, 0, 16, &wqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	// A list ended by MLX5_INVALID_LKEY: the rest is padding.
	big.ctrl(0, MLX5_OPCODE_SEND, 4);
	big.data(0, 1, 0x100, 10, 1);
	big.data(0, 2, 0, 0, MLX5_INVALID_LKEY);
	big.data(0, 3, 0x300, 10, 3);
	ASSERT_EQ(parse(big, 0, 16, &wqe), 0);
	EXPECT_EQ(wqe.num_sge, 1u);
	// Nothing rung.
	EXPECT_EQ(parse(big, 0, 0, &wqe), MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}

TEST(WqCodecTest, ReceiveWqes)
{
	std::array<uint8_t, 64> wqe{};
	auto *segs = reinterpret_cast<mlx5_wqe_data_seg *>(wqe.data());
	mlx5dv_set_data_seg(&segs[0], 100, 1, 0x1000);
	mlx5dv_set_data_seg(&segs[1], 50, 2, 0x2000);
	mlx5dv_set_data_seg(&segs[2], 0, MLX5_INVALID_LKEY, 0);
	mlx5dv_set_data_seg(&segs[3], 70, 4, 0x4000);
	RecvWqe parsed;
	ASSERT_EQ(parse_recv_wqe(wqe.data(), 64, 4, &parsed), 0);
	ASSERT_EQ(parsed.num_sge, 2u);
	EXPECT_EQ(parsed.sge[1].addr, 0x2000u);
	EXPECT_EQ(parsed.sge[1].lkey, 2u);
	EXPECT_EQ(parsed.length, 150u);
	// Without the terminator the stride ends the list.
	mlx5dv_set_data_seg(&segs[2], 5, 3, 0x3000);
	ASSERT_EQ(parse_recv_wqe(wqe.data(), 64, 4, &parsed), 0);
	EXPECT_EQ(parsed.num_sge, 4u);
	EXPECT_EQ(parse_recv_wqe(wqe.data(), 64, 3, &parsed), MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	EXPECT_EQ(parse_recv_wqe(wqe.data(), 32, 3, &parsed), 0);
	EXPECT_EQ(parsed.num_sge, 2u);
}

TEST(WqCodecTest, CqesCarryOwnerBitOpcodeAndFields)
{
	std::array<mlx5_cqe64, 4> cq{};
	Completion req;
	req.opcode = MLX5_CQE_REQ;
	req.wqe_opcode = MLX5_OPCODE_RDMA_READ;
	req.qpn = 0xabcdef;
	req.wqe_counter = 0x1234;
	req.byte_cnt = 4096;
	write_cqe(&cq[1], req, 1, 2);
	EXPECT_EQ(cq[1].op_own, MLX5_CQE_REQ << 4 | 0);
	EXPECT_EQ(cqe_op_own(&cq[1]), cq[1].op_own);
	EXPECT_EQ(be32toh(cq[1].sop_drop_qpn), uint32_t{MLX5_OPCODE_RDMA_READ} << 24 | 0xabcdef);
	EXPECT_EQ(be16toh(cq[1].wqe_counter), 0x1234);
	EXPECT_EQ(be32toh(cq[1].byte_cnt), 4096u);
	write_cqe(&cq[1], req, 5, 2); // the second pass: owner bit 1
	EXPECT_EQ(cq[1].op_own, MLX5_CQE_REQ << 4 | 1);

	Completion recv;
	recv.opcode = MLX5_CQE_RESP_SEND_IMM;
	recv.qpn = 7;
	recv.imm = htobe32(0xfeedbeef);
	recv.byte_cnt = 12;
	write_cqe(&cq[2], recv, 2, 2);
	EXPECT_EQ(cq[2].op_own >> 4, MLX5_CQE_RESP_SEND_IMM);
	EXPECT_EQ(be32toh(cq[2].imm_inval_pkey), 0xfeedbeefu);
	EXPECT_EQ(be32toh(cq[2].sop_drop_qpn), 7u);

	Completion error;
	error.opcode = MLX5_CQE_REQ_ERR;
	error.wqe_opcode = MLX5_OPCODE_SEND;
	error.syndrome = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	error.vendor_syndrome = 0x88;
	error.qpn = 0x55;
	error.wqe_counter = 9;
	write_cqe(&cq[3], error, 7, 2);
	const auto *err = reinterpret_cast<const mlx5_err_cqe *>(&cq[3]);
	EXPECT_EQ(err->op_own, MLX5_CQE_REQ_ERR << 4 | 1);
	EXPECT_EQ(err->syndrome, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	EXPECT_EQ(err->vendor_err_synd, 0x88);
	EXPECT_EQ(be32toh(err->s_wqe_opcode_qpn), uint32_t{MLX5_OPCODE_SEND} << 24 | 0x55);
	EXPECT_EQ(be16toh(err->wqe_counter), 9);
}

} // namespace
