#include "device/rdma/device_info.hpp"

namespace softdpu::device::rdma {

namespace {

// The 64-bit EUI of a MAC address: the universal/local bit flipped and ff:fe in the middle.
std::array<uint8_t, 8> eui64(const std::array<uint8_t, 6> &mac)
{
	return {static_cast<uint8_t>(mac[0] ^ 0x02), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

void add_both_versions(std::vector<GidEntry> &table, const GidBytes &gid)
{
	table.push_back({gid, GidType::roce_v1});
	table.push_back({gid, GidType::roce_v2});
}

} // namespace

DeviceInfo describe(const Function &function)
{
	DeviceInfo info;
	info.function = &function;
	info.name = function.ibdev;
	info.fabric_name = std::string(to_string(function.side)) + "/" + function.name;
	if (function.mac)
		info.mac = *function.mac;
	const auto eui = eui64(info.mac);
	for (uint8_t byte : eui)
		info.node_guid = (info.node_guid << 8) | byte;
	// The system image GUID is the PF's (every function of one card shares it).
	const Function *pf = function.parent ? function.parent : &function;
	if (pf->mac) {
		uint64_t guid = 0;
		for (uint8_t byte : eui64(*pf->mac))
			guid = (guid << 8) | byte;
		info.sys_image_guid = guid;
	} else {
		info.sys_image_guid = info.node_guid;
	}
	if (function.type == FuncType::vf)
		info.vendor_part_id = 0x101e; // ConnectX Family mlx5Gen Virtual Function (4126)

	GidBytes link_local{};
	link_local[0] = 0xfe;
	link_local[1] = 0x80;
	for (size_t i = 0; i < eui.size(); ++i)
		link_local[8 + i] = eui[i];
	add_both_versions(info.gids, link_local);
	if (function.ipv4) {
		GidBytes mapped{};
		mapped[10] = 0xff;
		mapped[11] = 0xff;
		for (size_t i = 0; i < 4; ++i)
			mapped[12 + i] = (*function.ipv4)[i];
		add_both_versions(info.gids, mapped);
	}
	if (function.ipv6)
		add_both_versions(info.gids, *function.ipv6);
	return info;
}

std::vector<DeviceInfo> local_devices()
{
	std::vector<DeviceInfo> list;
	const Topology *topology = Topology::current();
	if (topology == nullptr)
		return list;
	for (const Function *function : topology->local_functions())
		if (!function->ibdev.empty())
			list.push_back(describe(*function));
	return list;
}

std::optional<std::string> fabric_name_of_gid(const GidBytes &gid)
{
	const Topology *topology = Topology::current();
	if (topology == nullptr)
		return std::nullopt;
	for (const auto &function : topology->all_functions()) {
		if (function->ibdev.empty())
			continue;
		const DeviceInfo info = describe(*function);
		for (const GidEntry &entry : info.gids)
			if (entry.gid == gid)
				return info.fabric_name;
	}
	return std::nullopt;
}

} // namespace softdpu::device::rdma
