// Device queries: QUERY_HCA_CAP (general and RoCE capabilities), QUERY_NIC_VPORT_CONTEXT,
// QUERY_HCA_VPORT_CONTEXT, QUERY_HCA_VPORT_GID; answered from the context's verbs queries.
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"
#include "verbs/softdpu_api.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace softdpu::mlx5::devx {

namespace {

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

// The MTU of the PRM (and of verbs' enum ibv_mtu: the same numbers) in bytes.
uint32_t mtu_bytes(uint32_t mtu) noexcept
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

} // namespace

int CommandProcessor::query_hca_cap(Command &command)
{
	if (command.inlen < prm::query_hca_cap_in::kBytes)
		return EINVAL;
	const uint32_t cap_type = command.op_mod >> 1; // bit 0: maximum (0) or current (1), the same here
	if (cap_type != prm::kCapGeneral && cap_type != prm::kCapRoce)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownCapType);
	if (prm::get(command.in, prm::query_hca_cap_in::other_function) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeOtherFunction);

	std::vector<uint8_t> answer(prm::query_hca_cap_out::kBytes);
	uint8_t *capability = answer.data() + prm::query_hca_cap_out::kCapabilityBit / 8;
	if (cap_type == prm::kCapGeneral)
		fill_general_caps(caps_, capability);
	else
		fill_roce_caps(caps_, capability);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::query_nic_vport_context(Command &command)
{
	if (command.inlen < prm::query_nic_vport_context_in::kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	if (prm::get(command.in, prm::query_nic_vport_context_in::other_vport) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeOtherVport);
	ibv_device_attr device{};
	ibv_port_attr port{};
	std::array<uint8_t, 6> mac{};
	if (ibv_query_device(context_, &device) != 0 || ibv_query_port(context_, 1, &port) != 0 ||
	    softdpu_verbs_device_mac(context_->device, mac.data()) != 0)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);

	std::array<uint8_t, prm::query_nic_vport_context_out::kBytes> answer{};
	uint8_t *vport = answer.data() + prm::query_nic_vport_context_out::kContext / 8;
	using namespace prm::nic_vport_context;
	prm::set(vport, roce_en, 1);
	prm::set(vport, mtu, mtu_bytes(port.active_mtu));
	prm::set64(vport, system_image_guid, be64toh(device.sys_image_guid));
	prm::set64(vport, port_guid, be64toh(device.node_guid));
	prm::set64(vport, node_guid, be64toh(device.node_guid));
	prm::set(vport, mac_47_32, uint32_t{mac[0]} << 8 | mac[1]);
	prm::set(vport, mac_31_0, uint32_t{mac[2]} << 24 | uint32_t{mac[3]} << 16 | uint32_t{mac[4]} << 8 | mac[5]);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::query_hca_vport_context(Command &command)
{
	if (command.inlen < prm::query_hca_vport_context_in::kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	if (prm::get(command.in, prm::query_hca_vport_context_in::other_vport) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeOtherVport);
	uint32_t port_num = prm::get(command.in, prm::query_hca_vport_context_in::port_num);
	if (port_num == 0)
		port_num = 1; // a single-port function answers for its port
	if (port_num > caps_.num_ports)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromePortNum);
	ibv_device_attr device{};
	ibv_port_attr port{};
	if (ibv_query_device(context_, &device) != 0 ||
	    ibv_query_port(context_, static_cast<uint8_t>(port_num), &port) != 0)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);

	std::array<uint8_t, prm::query_hca_vport_context_out::kBytes> answer{};
	uint8_t *vport = answer.data() + prm::query_hca_vport_context_out::kContext / 8;
	using namespace prm::hca_vport_context;
	prm::set(vport, port_physical_state, port.phys_state);
	prm::set(vport, port_state, port.state);
	prm::set(vport, vport_state, port.state);
	prm::set64(vport, system_image_guid, be64toh(device.sys_image_guid));
	prm::set64(vport, port_guid, be64toh(device.node_guid));
	prm::set64(vport, node_guid, be64toh(device.node_guid));
	prm::set(vport, lid, port.lid);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::query_hca_vport_gid(Command &command)
{
	if (command.inlen < prm::query_hca_vport_gid_in::kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	if (prm::get(command.in, prm::query_hca_vport_gid_in::other_vport) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeOtherVport);
	uint32_t port_num = prm::get(command.in, prm::query_hca_vport_gid_in::port_num);
	if (port_num == 0)
		port_num = 1;
	if (port_num > caps_.num_ports)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromePortNum);
	const uint32_t index = prm::get(command.in, prm::query_hca_vport_gid_in::gid_index);
	const bool all = index == prm::query_hca_vport_gid_in::kAllGids;
	if (!all && index >= caps_.gid_table_len)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeGidIndex);
	const uint32_t first = all ? 0 : index;
	const uint32_t count = all ? caps_.gid_table_len : 1;
	std::vector<uint8_t> answer(prm::query_hca_vport_gid_out::kGids / 8 + size_t{count} * 16);
	prm::set(answer.data(), prm::query_hca_vport_gid_out::gids_num, count);
	for (uint32_t i = 0; i < count; ++i) {
		ibv_gid gid{};
		// An empty slot of the table reads as zeros, as the device's table holds it.
		if (ibv_query_gid(context_, static_cast<uint8_t>(port_num), static_cast<int>(first + i), &gid) != 0)
			gid = {};
		std::memcpy(answer.data() + prm::query_hca_vport_gid_out::kGids / 8 + size_t{i} * 16, gid.raw, 16);
	}
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

} // namespace softdpu::mlx5::devx
