// The RDMA devices of the emulated system: one per function of this process's side that has an
// ibdev name (every PF, VF and SF of the topology). What verbs (libibverbs) and, later, DevX report
// about a device is derived here, once: the node GUID from the function's MAC (EUI-64, as mlx5
// firmware does), and a RoCE GID table from its MAC, IPv4 and IPv6 addresses, each address once
// as RoCE v1 and once as RoCE v2 (the order mlx5 devices show). A function without a MAC gets
// the EUI-64 of a locally administered address 0e:xx:xx:xx:xx:xx hashed from its fabric name, so
// GUIDs and GIDs stay distinct across the machine:
//
//   index 0/1  fe80::<EUI-64 of the MAC>   (link-local; v1, v2)
//   index 2/3  ::ffff:<IPv4>                (when the function has an IPv4 address; v1, v2)
//   index 4/5  <IPv6>                       (when the function has an IPv6 address; v1, v2)
//
// The "fabric name" names a device on the machine-local fabric ("host/pf0", "dpu/p0s0"): queue
// pairs are found by (fabric name, queue pair number); a destination GID leads to its device
// through the GID tables of every function of both sides.
#pragma once

#include "device/topology.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace softdpu::device::rdma {

enum class GidType : uint32_t { roce_v1 = 1, roce_v2 = 2 }; // enum ibv_gid_type values

using GidBytes = std::array<uint8_t, 16>;

struct GidEntry {
	GidBytes gid{};
	GidType type = GidType::roce_v1;
};

// What an RDMA device reports: identity, addresses and fixed capabilities.
struct DeviceInfo {
	const Function *function = nullptr;
	std::string name;        // the ibdev name ("mlx5_0")
	std::string fabric_name; // "<side>/<function name>"
	uint64_t node_guid = 0;  // host byte order; verbs reports it big-endian
	uint64_t sys_image_guid = 0;
	std::array<uint8_t, 6> mac{};
	std::vector<GidEntry> gids;
	uint32_t vendor_id = 0x02c9;      // Mellanox
	uint32_t vendor_part_id = 0xa2d6; // BlueField-2 integrated ConnectX-6 Dx (41686)
	uint32_t hw_ver = 0;
	std::string fw_ver = "24.39.1002";
};

// Fixed device limits (query_device); the engine enforces the same numbers.
struct Limits {
	static constexpr uint32_t max_qp = 1u << 16;
	static constexpr uint32_t max_qp_wr = 1u << 15;
	static constexpr uint32_t max_sge = 30;
	static constexpr uint32_t max_sge_rd = 30;
	static constexpr uint32_t max_cq = 1u << 16;
	static constexpr uint32_t max_cqe = (1u << 22) - 1;
	static constexpr uint32_t max_mr = 1u << 16;
	static constexpr uint32_t max_pd = 1u << 16;
	static constexpr uint32_t max_qp_rd_atom = 16;
	static constexpr uint32_t max_srq = 1u << 15;
	static constexpr uint32_t max_srq_wr = 1u << 15;
	static constexpr uint32_t max_srq_sge = 31;
	static constexpr uint32_t max_ah = 1u << 20;
	static constexpr uint32_t max_inline_data = 512;
	static constexpr uint64_t max_mr_size = ~0ull;
	static constexpr uint32_t max_msg_sz = 1u << 30;
	static constexpr uint32_t gid_table_len = 256;
	static constexpr uint32_t pkey_table_len = 1;
};

// The RDMA devices of the side the process runs as, in topology order; empty when the topology
// cannot be loaded (Topology::current_error() says why). May throw std::bad_alloc.
std::vector<DeviceInfo> local_devices();

// The device (of either side) that owns a GID; nullopt when no function of the topology has it.
// Returns the fabric name.
std::optional<std::string> fabric_name_of_gid(const GidBytes &gid);

// Builds the description of one function (exposed for tests).
DeviceInfo describe(const Function &function);

} // namespace softdpu::device::rdma
