#include "device/rdma/device_info.hpp"

#include <string>

namespace softdpu::device::rdma {

namespace {

// The 64-bit EUI of a MAC address: the universal/local bit flipped and ff:fe in the middle.
std::array<uint8_t, 8> eui64(const std::array<uint8_t, 6> &mac)
{
	return {static_cast<uint8_t>(mac[0] ^ 0x02), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

// The EUI-64 a function's node GUID and link-local GID come from: its MAC's, or for a function
// without one (InfiniBand, or none given) that of a locally administered address 0e:xx:xx:xx:xx:xx
// hashed from its fabric name (FNV-1a), so that no two devices of the machine share a GUID or a
// GID (names are unique in a topology).
std::array<uint8_t, 8> identity_eui(const Function &function)
{
	if (function.mac)
		return eui64(*function.mac);
	uint64_t hash = 0xcbf29ce484222325ull;
	const std::string fabric = std::string(to_string(function.side)) + "/" + function.name;
	for (const char c : fabric) {
		hash ^= static_cast<uint8_t>(c);
		hash *= 0x100000001b3ull;
	}
	std::array<uint8_t, 6> mac{0x0e};
	for (size_t i = 1; i < mac.size(); ++i)
		mac[i] = static_cast<uint8_t>(hash >> (8 * (i - 1)));
	return eui64(mac);
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
	const auto eui = identity_eui(function);
	for (uint8_t byte : eui)
		info.node_guid = (info.node_guid << 8) | byte;
	// The system image GUID is the PF's (every function of one card shares it).
	const Function *pf = function.parent ? function.parent : &function;
	for (uint8_t byte : identity_eui(*pf))
		info.sys_image_guid = (info.sys_image_guid << 8) | byte;
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
