#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace softdpu::mlx5::devx {

namespace {

// Copies the device's answer into the caller's outbox: what fits, the rest zeroed.
void copy_out(const uint8_t *answer, size_t answer_bytes, void *out, size_t outlen) noexcept
{
	const size_t copied = std::min(answer_bytes, outlen);
	std::memcpy(out, answer, copied);
	std::memset(static_cast<uint8_t *>(out) + copied, 0, outlen - copied);
}

// A command the device refused: the outbox header carries status and syndrome.
int fail(void *out, size_t outlen, prm::Status status, uint32_t syndrome) noexcept
{
	std::array<uint8_t, prm::kOutboxHeaderBytes> header{};
	prm::set(header.data(), prm::outbox::status, status);
	prm::set(header.data(), prm::outbox::syndrome, syndrome);
	copy_out(header.data(), header.size(), out, outlen);
	return EREMOTEIO;
}

void fill_general_caps(const DeviceCaps &caps, uint8_t *capability) noexcept
{
	using namespace prm::cmd_hca_cap;
	prm::set(capability, vhca_id, caps.vhca_id);
	prm::set(capability, log_max_srq_sz, log2_floor(caps.max_srq_wr));
	prm::set(capability, log_max_qp_sz, log2_floor(caps.max_qp_wr));
	prm::set(capability, log_max_qp, log2_floor(caps.max_qp));
	prm::set(capability, log_max_srq, log2_floor(caps.max_srq));
	// A CQ of 2^n entries reports n as log_max_cq_sz and 2^n - 1 as verbs' max_cqe.
	prm::set(capability, log_max_cq_sz, log2_floor(uint64_t{caps.max_cqe} + 1));
	prm::set(capability, log_max_cq, log2_floor(caps.max_cq));
	prm::set(capability, log_max_mkey, log2_floor(caps.max_mr));
	// No DC transport: the DC limits stay 0 (dct is 0).
	prm::set(capability, log_max_ra_req_qp, log2_floor(caps.max_qp_init_rd_atom));
	prm::set(capability, log_max_ra_res_qp, log2_floor(caps.max_qp_rd_atom));
	prm::set(capability, gid_table_size, caps.gid_table_len);
	prm::set(capability, pkey_table_size, caps.pkey_table_len);
	if (caps.ethernet)
		prm::set(capability, port_type, kPortTypeEthernet);
	prm::set(capability, num_ports, caps.num_ports);
	prm::set(capability, log_max_msg, log2_floor(caps.max_msg_sz));
	prm::set(capability, cqe_version, 1);
	prm::set(capability, roce, caps.ethernet ? 1 : 0);
	prm::set(capability, atomic, caps.atomic ? 1 : 0);
	prm::set(capability, rc, 1);
	prm::set(capability, ud, 1);
	prm::set(capability, log_pg_sz, 12); // 4 KiB pages
	prm::set(capability, log_max_pd, log2_floor(caps.max_pd));
	if (caps.atomic)
		prm::set(capability, log_max_atomic_size_qp, 3); // 8-byte atomics
}

void fill_roce_caps(const DeviceCaps &caps, uint8_t *capability) noexcept
{
	using namespace prm::roce_cap;
	prm::set(capability, l3_type, kL3TypeIpv4 | kL3TypeIpv6);
	prm::set(capability, roce_version, kVersion1 | kVersion2);
	prm::set(capability, r_roce_dest_udp_port, 4791); // the IANA RoCE v2 port
	prm::set(capability, r_roce_max_src_udp_port, 0xffff);
	prm::set(capability, r_roce_min_src_udp_port, 0xc000);
	prm::set(capability, roce_address_table_size, caps.gid_table_len);
}

} // namespace

int CommandProcessor::execute(const void *in, size_t inlen, void *out, size_t outlen, bool devx) const noexcept
{
	if (in == nullptr || out == nullptr || inlen < prm::kInboxHeaderBytes || outlen < prm::kOutboxHeaderBytes)
		return EINVAL;
	if (prm::get(in, prm::inbox::vhca_tunnel_id) != 0)
		return EINVAL;
	const uint32_t opcode = prm::get(in, prm::inbox::opcode);
	if (opcode == prm::kQueryHcaCap)
		return query_hca_cap(in, inlen, out, outlen);
	if (!devx)
		return EOPNOTSUPP;
	return fail(out, outlen, prm::kStatusBadOp, kSyndromeUnknownOpcode);
}

int CommandProcessor::query_hca_cap(const void *in, size_t inlen, void *out, size_t outlen) const noexcept
{
	if (inlen < prm::query_hca_cap_in::kBytes)
		return EINVAL;
	const uint32_t op_mod = prm::get(in, prm::inbox::op_mod);
	const uint32_t cap_type = op_mod >> 1; // bit 0: maximum (0) or current (1), the same here
	if (cap_type != prm::kCapGeneral && cap_type != prm::kCapRoce)
		return fail(out, outlen, prm::kStatusBadOp, kSyndromeUnknownCapType);
	if (prm::get(in, prm::query_hca_cap_in::other_function) != 0)
		return fail(out, outlen, prm::kStatusBadParam, kSyndromeOtherFunction);

	std::array<uint8_t, prm::query_hca_cap_out::kBytes> answer{};
	uint8_t *capability = answer.data() + prm::query_hca_cap_out::kCapabilityBit / 8;
	if (cap_type == prm::kCapGeneral)
		fill_general_caps(caps_, capability);
	else
		fill_roce_caps(caps_, capability);
	copy_out(answer.data(), answer.size(), out, outlen);
	return 0;
}

} // namespace softdpu::mlx5::devx
