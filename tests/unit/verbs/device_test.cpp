// Devices through the C API: the list (names, GUIDs, indexes) against the topology of the host
// side, open/close, query_device(_ex), query_port and the GID table (query_gid, query_gid_ex,
// query_gid_table) against the MAC, IPv4 and IPv6 addresses of each function, and their errors.
#include "verbs_test_support.hpp"

#include "device/topology.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace {

using softdpu::device::Function;
using softdpu::device::Topology;

// The functions of this side with an ibdev name, in topology order.
std::vector<const Function *> rdma_functions()
{
	std::vector<const Function *> out;
	const Topology *topology = Topology::current();
	if (topology == nullptr)
		return out;
	for (const Function *function : topology->local_functions())
		if (!function->ibdev.empty())
			out.push_back(function);
	return out;
}

std::array<uint8_t, 8> eui64_of(const std::array<uint8_t, 6> &mac)
{
	return {static_cast<uint8_t>(mac[0] ^ 2), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

uint64_t guid_of(const std::array<uint8_t, 6> &mac)
{
	uint64_t guid = 0;
	for (uint8_t byte : eui64_of(mac))
		guid = (guid << 8) | byte;
	return guid;
}

// The GIDs RoCE derives from a function's addresses: link-local from the MAC, the IPv4-mapped
// address, the IPv6 address; each as RoCE v1 then v2.
std::vector<std::array<uint8_t, 16>> expected_gids(const Function &function)
{
	std::vector<std::array<uint8_t, 16>> gids;
	std::array<uint8_t, 16> link_local{0xfe, 0x80};
	const auto eui = eui64_of(*function.mac);
	std::memcpy(link_local.data() + 8, eui.data(), 8);
	gids.push_back(link_local);
	if (function.ipv4) {
		std::array<uint8_t, 16> mapped{};
		mapped[10] = mapped[11] = 0xff;
		std::memcpy(mapped.data() + 12, function.ipv4->data(), 4);
		gids.push_back(mapped);
	}
	if (function.ipv6)
		gids.push_back(*function.ipv6);
	return gids;
}

class VerbsDevice : public ::testing::Test {
protected:
	void SetUp() override
	{
		list_ = ibv_get_device_list(&count_);
		ASSERT_NE(list_, nullptr) << std::strerror(errno);
		functions_ = rdma_functions();
		ASSERT_FALSE(functions_.empty());
	}
	void TearDown() override { ibv_free_device_list(list_); }

	ibv_device **list_ = nullptr;
	int count_ = 0;
	std::vector<const Function *> functions_;
};

TEST_F(VerbsDevice, ListNamesGuidsAndIndexesFollowTheTopology)
{
	ASSERT_EQ(static_cast<size_t>(count_), functions_.size());
	EXPECT_EQ(list_[count_], nullptr) << "the list ends with NULL";
	for (int i = 0; i < count_; ++i) {
		SCOPED_TRACE(functions_[i]->name);
		EXPECT_STREQ(ibv_get_device_name(list_[i]), functions_[i]->ibdev.c_str());
		EXPECT_STREQ(list_[i]->name, functions_[i]->ibdev.c_str());
		EXPECT_EQ(list_[i]->node_type, IBV_NODE_CA);
		EXPECT_EQ(list_[i]->transport_type, IBV_TRANSPORT_IB);
		EXPECT_EQ(be64toh(ibv_get_device_guid(list_[i])), guid_of(*functions_[i]->mac));
		EXPECT_EQ(ibv_get_device_index(list_[i]), i);
	}
	// A second list holds the same devices.
	int again = 0;
	ibv_device **second = ibv_get_device_list(&again);
	ASSERT_NE(second, nullptr);
	ASSERT_EQ(again, count_);
	for (int i = 0; i < count_; ++i)
		EXPECT_STREQ(ibv_get_device_name(second[i]), ibv_get_device_name(list_[i]));
	ibv_free_device_list(second);
	// Without num_devices the list still comes back, NULL-terminated.
	ibv_device **plain = ibv_get_device_list(nullptr);
	ASSERT_NE(plain, nullptr);
	int n = 0;
	while (plain[n] != nullptr)
		++n;
	EXPECT_EQ(n, count_);
	ibv_free_device_list(plain);
}

TEST_F(VerbsDevice, ForeignDevicePointersAreRefused)
{
	ibv_device foreign{};
	std::strcpy(foreign.name, "mlx5_0");
	errno = 0;
	EXPECT_EQ(ibv_open_device(&foreign), nullptr);
	EXPECT_NE(errno, 0);
	EXPECT_EQ(ibv_get_device_guid(&foreign), 0u);
	EXPECT_EQ(ibv_get_device_index(&foreign), -1);
	EXPECT_EQ(ibv_open_device(nullptr), nullptr);
}

TEST_F(VerbsDevice, OpenQueryAndClose)
{
	for (int i = 0; i < count_; ++i) {
		SCOPED_TRACE(ibv_get_device_name(list_[i]));
		ibv_context *ctx = ibv_open_device(list_[i]);
		ASSERT_NE(ctx, nullptr) << std::strerror(errno);
		EXPECT_EQ(ctx->device, list_[i]);
		EXPECT_GE(ctx->async_fd, 0);
		EXPECT_GE(ctx->num_comp_vectors, 1);

		ibv_device_attr attr{};
		ASSERT_EQ(ibv_query_device(ctx, &attr), 0);
		EXPECT_EQ(attr.node_guid, ibv_get_device_guid(list_[i]));
		EXPECT_EQ(attr.phys_port_cnt, 1);
		EXPECT_NE(attr.fw_ver[0], '\0');
		EXPECT_GT(attr.max_qp, 0);
		EXPECT_GT(attr.max_qp_wr, 0);
		EXPECT_GT(attr.max_sge, 0);
		EXPECT_GT(attr.max_cqe, 0);
		EXPECT_GT(attr.max_mr, 0);
		EXPECT_GT(attr.max_pd, 0);
		EXPECT_GT(attr.max_srq, 0);
		EXPECT_NE(attr.atomic_cap, IBV_ATOMIC_NONE);
		// The system image GUID is the card's: the PF's for a VF.
		const Function *pf = functions_[i]->parent != nullptr ? functions_[i]->parent : functions_[i];
		EXPECT_EQ(be64toh(attr.sys_image_guid), guid_of(*pf->mac));

		ibv_device_attr_ex ex{};
		ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &ex), 0);
		// query_device_ex extends query_device.
		EXPECT_STREQ(ex.orig_attr.fw_ver, attr.fw_ver);
		EXPECT_EQ(ex.orig_attr.node_guid, attr.node_guid);
		EXPECT_EQ(ex.orig_attr.sys_image_guid, attr.sys_image_guid);
		EXPECT_EQ(ex.orig_attr.vendor_part_id, attr.vendor_part_id);
		EXPECT_EQ(ex.orig_attr.max_qp_wr, attr.max_qp_wr);
		EXPECT_EQ(ex.orig_attr.max_sge, attr.max_sge);
		EXPECT_EQ(ex.orig_attr.max_cqe, attr.max_cqe);
		EXPECT_EQ(ex.orig_attr.device_cap_flags, attr.device_cap_flags);
		EXPECT_EQ(ex.orig_attr.atomic_cap, attr.atomic_cap);
		EXPECT_EQ(ex.phys_port_cnt_ex, attr.phys_port_cnt);
		ibv_query_device_ex_input input{};
		input.comp_mask = 1; // no input field is defined
		EXPECT_EQ(ibv_query_device_ex(ctx, &input, &ex), EINVAL);

		ibv_port_attr port{};
		ASSERT_EQ(ibv_query_port(ctx, 1, &port), 0);
		EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
		EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
		EXPECT_GE(port.active_mtu, IBV_MTU_1024);
		EXPECT_LE(port.active_mtu, port.max_mtu);
		EXPECT_GE(port.gid_tbl_len, 6);
		EXPECT_EQ(port.pkey_tbl_len, attr.max_pkeys);
		EXPECT_GT(port.max_msg_sz, 0u);
		EXPECT_EQ(ibv_query_port(ctx, 0, &port), EINVAL);
		EXPECT_EQ(ibv_query_port(ctx, 2, &port), EINVAL);

		__be16 pkey = 0;
		EXPECT_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
		EXPECT_EQ(be16toh(pkey), 0xffff);
		EXPECT_EQ(ibv_close_device(ctx), 0);
	}
}

TEST_F(VerbsDevice, GidTableIsDerivedFromTheFunctionsAddresses)
{
	for (int i = 0; i < count_; ++i) {
		const Function &function = *functions_[i];
		SCOPED_TRACE(function.name);
		ibv_context *ctx = ibv_open_device(list_[i]);
		ASSERT_NE(ctx, nullptr);
		const auto gids = expected_gids(function);
		const size_t valid = gids.size() * 2;

		for (size_t g = 0; g < gids.size(); ++g) {
			for (uint32_t version = 0; version < 2; ++version) {
				const auto index = static_cast<uint32_t>(2 * g + version);
				ibv_gid gid{};
				ASSERT_EQ(ibv_query_gid(ctx, 1, static_cast<int>(index), &gid), 0);
				EXPECT_EQ(std::memcmp(gid.raw, gids[g].data(), 16), 0) << "index " << index;
				ibv_gid_entry entry{};
				ASSERT_EQ(ibv_query_gid_ex(ctx, 1, index, &entry, 0), 0);
				EXPECT_EQ(std::memcmp(entry.gid.raw, gids[g].data(), 16), 0);
				EXPECT_EQ(entry.gid_index, index);
				EXPECT_EQ(entry.port_num, 1u);
				EXPECT_EQ(entry.gid_type, version == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2);
			}
		}

		std::vector<ibv_gid_entry> table(64);
		const ssize_t n = ibv_query_gid_table(ctx, table.data(), table.size(), 0);
		ASSERT_EQ(n, static_cast<ssize_t>(valid));
		for (size_t e = 0; e < valid; ++e) {
			EXPECT_EQ(table[e].gid_index, e);
			EXPECT_EQ(std::memcmp(table[e].gid.raw, gids[e / 2].data(), 16), 0);
			EXPECT_EQ(table[e].gid_type, e % 2 == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2);
		}
		// A table too small for the valid entries.
		EXPECT_EQ(ibv_query_gid_table(ctx, table.data(), valid - 1, 0), -EINVAL);
		EXPECT_EQ(ibv_query_gid_table(ctx, table.data(), table.size(), 1), -EINVAL);

		// An empty slot of the table: the zero GID from ibv_query_gid, ENODATA from _ex.
		ibv_port_attr port{};
		ASSERT_EQ(ibv_query_port(ctx, 1, &port), 0);
		ibv_gid gid{};
		std::memset(gid.raw, 0xaa, sizeof(gid.raw));
		ASSERT_EQ(ibv_query_gid(ctx, 1, static_cast<int>(valid), &gid), 0);
		EXPECT_EQ(gid.global.subnet_prefix, 0u);
		EXPECT_EQ(gid.global.interface_id, 0u);
		ibv_gid_entry entry{};
		EXPECT_EQ(ibv_query_gid_ex(ctx, 1, static_cast<uint32_t>(valid), &entry, 0), ENODATA);
		// Beyond the table, a bad port, bad flags.
		EXPECT_EQ(ibv_query_gid_ex(ctx, 1, static_cast<uint32_t>(port.gid_tbl_len), &entry, 0), EINVAL);
		EXPECT_EQ(ibv_query_gid(ctx, 1, port.gid_tbl_len, &gid), -1);
		EXPECT_EQ(ibv_query_gid(ctx, 2, 0, &gid), -1);
		EXPECT_EQ(ibv_query_gid(ctx, 1, -1, &gid), -1);
		EXPECT_EQ(ibv_query_gid_ex(ctx, 2, 0, &entry, 0), EINVAL);
		EXPECT_EQ(ibv_query_gid_ex(ctx, 1, 0, &entry, 1), EINVAL);
		EXPECT_EQ(ibv_close_device(ctx), 0);
	}
}

TEST_F(VerbsDevice, OpeningTwiceGivesIndependentContexts)
{
	ibv_context *first = ibv_open_device(list_[0]);
	ibv_context *second = ibv_open_device(list_[0]);
	ASSERT_NE(first, nullptr);
	ASSERT_NE(second, nullptr);
	EXPECT_NE(first, second);
	EXPECT_NE(first->async_fd, second->async_fd);
	ibv_pd *pd = ibv_alloc_pd(first);
	ASSERT_NE(pd, nullptr);
	EXPECT_EQ(pd->context, first);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(first), 0);
	// The other context still works.
	ibv_device_attr attr{};
	EXPECT_EQ(ibv_query_device(second, &attr), 0);
	EXPECT_EQ(ibv_close_device(second), 0);
}

} // namespace
