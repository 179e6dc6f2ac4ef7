// doca_dev.h through the C API: listing, opening, representors, getters, and every error return
// that the emulation can produce.
#include "core/dev/dev.hpp"

#include <doca_dev.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using softdpu::device::Side;
using softdpu::device::Topology;
namespace device_testing = softdpu::device::testing;

namespace {

std::shared_ptr<const Topology> load(const std::string &file, Side side)
{
	auto result = Topology::load_file(std::string(SOFTDPU_SOURCE_DIR) + "/tests/data/topology/" + file, side);
	EXPECT_TRUE(result.topology) << result.error;
	return result.topology;
}

std::shared_ptr<const Topology> builtin(Side side)
{
	auto result = Topology::builtin_default(side);
	EXPECT_TRUE(result.topology) << result.error;
	return result.topology;
}

// Runs a test against one topology and side; lists and devices are released by the test itself.
class DevApi : public ::testing::Test {
protected:
	void use(std::shared_ptr<const Topology> topology)
	{
		if (list_ != nullptr) {
			EXPECT_EQ(doca_devinfo_destroy_list(list_), DOCA_SUCCESS);
			list_ = nullptr;
		}
		scoped_.reset();
		scoped_ = std::make_unique<device_testing::ScopedTopology>(std::move(topology));
		ASSERT_EQ(doca_devinfo_create_list(&list_, &count_), DOCA_SUCCESS);
	}

	void TearDown() override
	{
		softdpu::dev::testing::fail_next_allocations(0);
		if (list_ != nullptr) {
			EXPECT_EQ(doca_devinfo_destroy_list(list_), DOCA_SUCCESS);
		}
	}

	// The listed devinfo whose IB device name is `ibdev`, found through the C API.
	doca_devinfo *by_ibdev(const char *ibdev)
	{
		for (uint32_t i = 0; i < count_; ++i) {
			char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
			EXPECT_EQ(doca_devinfo_get_ibdev_name(list_[i], name, sizeof(name)), DOCA_SUCCESS);
			if (std::strcmp(name, ibdev) == 0)
				return list_[i];
		}
		ADD_FAILURE() << "no device " << ibdev;
		return nullptr;
	}

	doca_devinfo *by_pci(const char *pci)
	{
		for (uint32_t i = 0; i < count_; ++i) {
			uint8_t equal = 0;
			EXPECT_EQ(doca_devinfo_is_equal_pci_addr(list_[i], pci, &equal), DOCA_SUCCESS);
			if (equal)
				return list_[i];
		}
		ADD_FAILURE() << "no device at " << pci;
		return nullptr;
	}

	doca_dev *open(doca_devinfo *devinfo)
	{
		doca_dev *dev = nullptr;
		EXPECT_EQ(doca_dev_open(devinfo, &dev), DOCA_SUCCESS);
		return dev;
	}

	std::vector<std::string> rep_names(doca_dev *dev, int filter)
	{
		doca_devinfo_rep **reps = nullptr;
		uint32_t n = 0;
		std::vector<std::string> names;
		EXPECT_EQ(doca_devinfo_rep_create_list(dev, filter, &reps, &n), DOCA_SUCCESS);
		for (uint32_t i = 0; i < n; ++i)
			names.push_back(reps[i]->representor().name);
		EXPECT_EQ(reps[n], nullptr);
		EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
		return names;
	}

	std::unique_ptr<device_testing::ScopedTopology> scoped_;
	doca_devinfo **list_ = nullptr;
	uint32_t count_ = 0;
};

using Names = std::vector<std::string>;

} // namespace

TEST_F(DevApi, HostListsItsFiveFunctionsWithTheirProperties)
{
	use(builtin(Side::host));
	ASSERT_EQ(count_, 5u);
	EXPECT_EQ(list_[count_], nullptr);
	doca_devinfo *vf0 = by_pci("0b:00.2");
	ASSERT_NE(vf0, nullptr);
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	ASSERT_EQ(doca_devinfo_get_pci_addr_str(vf0, pci), DOCA_SUCCESS);
	EXPECT_STREQ(pci, "0000:0b:00.2");
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	ASSERT_EQ(doca_devinfo_get_iface_name(vf0, iface, sizeof(iface)), DOCA_SUCCESS);
	EXPECT_STREQ(iface, "enp11s0f0v0");
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	ASSERT_EQ(doca_devinfo_get_ibdev_name(vf0, ibdev, sizeof(ibdev)), DOCA_SUCCESS);
	EXPECT_STREQ(ibdev, "mlx5_2");
	std::array<uint8_t, DOCA_DEVINFO_MAC_ADDR_SIZE> mac{};
	ASSERT_EQ(doca_devinfo_get_mac_addr(vf0, mac.data(), mac.size()), DOCA_SUCCESS);
	EXPECT_EQ(mac, (std::array<uint8_t, 6>{0x02, 0x5d, 0x00, 0x0b, 0x00, 0x02}));
	std::array<uint8_t, DOCA_DEVINFO_IPV4_ADDR_SIZE> ipv4{};
	ASSERT_EQ(doca_devinfo_get_ipv4_addr(vf0, ipv4.data(), ipv4.size()), DOCA_SUCCESS);
	EXPECT_EQ(ipv4, (std::array<uint8_t, 4>{192, 168, 100, 2}));
	std::array<uint8_t, DOCA_DEVINFO_IPV6_ADDR_SIZE> ipv6{};
	ASSERT_EQ(doca_devinfo_get_ipv6_addr(vf0, ipv6.data(), ipv6.size()), DOCA_SUCCESS);
	EXPECT_EQ(ipv6[0], 0xfd);
	EXPECT_EQ(ipv6[15], 0x02);
	uint8_t flag = 1;
	ASSERT_EQ(doca_devinfo_cap_is_hotplug_manager_supported(vf0, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
}

TEST_F(DevApi, PciComparisonAcceptsBothFormsAndRejectsMalformed)
{
	use(builtin(Side::dpu));
	doca_devinfo *p1 = by_ibdev("mlx5_1");
	uint8_t equal = 0;
	for (const char *same : {"0000:03:00.1", "03:00.1", "0000:03:00.1"}) {
		equal = 0;
		ASSERT_EQ(doca_devinfo_is_equal_pci_addr(p1, same, &equal), DOCA_SUCCESS) << same;
		EXPECT_EQ(equal, 1) << same;
	}
	for (const char *other : {"0000:03:00.0", "03:00.2", "0001:03:00.1"}) {
		equal = 1;
		ASSERT_EQ(doca_devinfo_is_equal_pci_addr(p1, other, &equal), DOCA_SUCCESS) << other;
		EXPECT_EQ(equal, 0) << other;
	}
	for (const char *bad :
	     {"", "03:00", "3:00.1", "03:00.1x", "0000:03:00.1:", "zz:00.0", "03:00.8", "0000:03:00.1 trailing"})
		EXPECT_EQ(doca_devinfo_is_equal_pci_addr(p1, bad, &equal), DOCA_ERROR_INVALID_VALUE) << bad;
	EXPECT_EQ(doca_devinfo_is_equal_pci_addr(nullptr, "03:00.1", &equal), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_is_equal_pci_addr(p1, nullptr, &equal), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_is_equal_pci_addr(p1, "03:00.1", nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(DevApi, DmaSamplesDefaultAddressOpensTheFirstDpuPf)
{
	use(builtin(Side::dpu));
	// Like the DMA samples: the first listed device at 03:00.0 is p0, not its SF.
	doca_devinfo *found = by_pci("03:00.0");
	EXPECT_EQ(found, list_[0]);
	EXPECT_EQ(found->function().name, "p0");
	EXPECT_TRUE(found->caps().dma_memcpy);
}

TEST_F(DevApi, OpenTwiceReturnsTheSameDeviceAndNeedsTwoCloses)
{
	use(builtin(Side::dpu));
	doca_devinfo *p0 = by_ibdev("mlx5_0");
	doca_dev *first = open(p0);
	doca_dev *second = open(p0);
	ASSERT_NE(first, nullptr);
	EXPECT_EQ(first, second);
	EXPECT_EQ(doca_dev_as_devinfo(first), p0);
	EXPECT_EQ(&first->function(), &p0->function());
	EXPECT_EQ(first->caps().dma_max_num_tasks, p0->caps().dma_max_num_tasks);
	auto &table = p0->table();
	EXPECT_EQ(table.open_devices(), 1u);
	EXPECT_EQ(doca_dev_close(first), DOCA_SUCCESS);
	EXPECT_EQ(table.open_devices(), 1u);
	EXPECT_EQ(doca_dev_close(second), DOCA_SUCCESS);
	EXPECT_EQ(table.open_devices(), 0u);
}

TEST_F(DevApi, DevinfoOfAnOpenDeviceOutlivesItsList)
{
	use(builtin(Side::dpu));
	doca_dev *dev = open(by_ibdev("mlx5_1"));
	ASSERT_EQ(doca_devinfo_destroy_list(list_), DOCA_SUCCESS);
	list_ = nullptr;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	ASSERT_EQ(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dev), pci), DOCA_SUCCESS);
	EXPECT_STREQ(pci, "0000:03:00.1");
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST_F(DevApi, CloseIsRefusedWhileTheDeviceHasUsers)
{
	use(builtin(Side::dpu));
	doca_dev *dev = open(by_ibdev("mlx5_0"));
	doca_dev *again = open(doca_dev_as_devinfo(dev));
	dev->add_user();
	// Closing one of two opens is fine; the last one is refused while the user exists.
	EXPECT_EQ(doca_dev_close(again), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	EXPECT_EQ(dev->users(), 1u);
	dev->remove_user();
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST_F(DevApi, DpuPfListsItsRepresentorsWithEveryFilter)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(by_ibdev("mlx5_0"));
	doca_dev *p1 = open(by_ibdev("mlx5_1"));
	const Names p0_all{"hpf0", "hpf0vf0", "hpf0vf1", "pf0sf0"};
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_ALL), p0_all);
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_NET), p0_all);
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_EMULATED), Names{});
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED), p0_all);
	EXPECT_EQ(rep_names(p1, DOCA_DEVINFO_REP_FILTER_ALL), (Names{"hpf1", "hpf1vf0", "pf1sf0"}));
	uint8_t flag = 0;
	for (auto *query : {doca_devinfo_rep_cap_is_filter_all_supported, doca_devinfo_rep_cap_is_filter_net_supported,
			    doca_devinfo_rep_cap_is_filter_emulated_supported}) {
		flag = 0;
		ASSERT_EQ(query(doca_dev_as_devinfo(p0), &flag), DOCA_SUCCESS);
		EXPECT_EQ(flag, 1);
	}
	ASSERT_EQ(doca_devinfo_cap_is_hotplug_manager_supported(doca_dev_as_devinfo(p0), &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 1);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p1), DOCA_SUCCESS);
}

TEST_F(DevApi, RepresentorMatchesTheHostFunctionByVuidAndAddress)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(by_pci("03:00.0"));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n), DOCA_SUCCESS);
	// Like samples/common.c: find the representor of host VF0 by VUID, then by PCI address.
	doca_devinfo_rep *found = nullptr;
	for (uint32_t i = 0; i < n; ++i) {
		char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
		ASSERT_EQ(doca_devinfo_rep_get_vuid(reps[i], vuid, sizeof(vuid)), DOCA_SUCCESS);
		if (std::strcmp(vuid, "SDPU0001HPF0VF0") == 0)
			found = reps[i];
	}
	ASSERT_NE(found, nullptr);
	uint8_t equal = 0;
	ASSERT_EQ(doca_devinfo_rep_is_equal_pci_addr(found, "0b:00.2", &equal), DOCA_SUCCESS);
	EXPECT_EQ(equal, 1);
	ASSERT_EQ(doca_devinfo_rep_is_equal_pci_addr(found, "0000:0b:00.3", &equal), DOCA_SUCCESS);
	EXPECT_EQ(equal, 0);
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	ASSERT_EQ(doca_devinfo_rep_get_pci_addr_str(found, pci), DOCA_SUCCESS);
	EXPECT_STREQ(pci, "0000:0b:00.2");
	enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_PF;
	ASSERT_EQ(doca_devinfo_rep_get_pci_func_type(found, &type), DOCA_SUCCESS);
	EXPECT_EQ(type, DOCA_PCI_FUNC_TYPE_VF);
	uint8_t hotplug = 1;
	ASSERT_EQ(doca_devinfo_rep_get_is_hotplug(found, &hotplug), DOCA_SUCCESS);
	EXPECT_EQ(hotplug, 0);

	doca_dev_rep *rep = nullptr;
	ASSERT_EQ(doca_dev_rep_open(found, &rep), DOCA_SUCCESS);
	ASSERT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	// The representor's devinfo stays valid while it is open.
	EXPECT_EQ(doca_dev_rep_as_devinfo(rep), found);
	EXPECT_EQ(&rep->manager(), p0);
	doca_dev_rep *again = nullptr;
	ASSERT_EQ(doca_dev_rep_open(found, &again), DOCA_SUCCESS);
	EXPECT_EQ(again, rep);
	EXPECT_EQ(doca_dev_rep_close(again), DOCA_SUCCESS);
	// An open representor keeps its device in use.
	EXPECT_EQ(doca_dev_close(p0), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_dev_rep_close(rep), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(DevApi, SfRepresentorsHaveTypeSfAndTheDpuAddress)
{
	use(builtin(Side::dpu));
	doca_dev *p1 = open(by_ibdev("mlx5_1"));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p1, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 3u);
	enum doca_pci_func_type types[3];
	for (uint32_t i = 0; i < n; ++i)
		ASSERT_EQ(doca_devinfo_rep_get_pci_func_type(reps[i], &types[i]), DOCA_SUCCESS);
	EXPECT_EQ(types[0], DOCA_PCI_FUNC_TYPE_PF);
	EXPECT_EQ(types[1], DOCA_PCI_FUNC_TYPE_VF);
	EXPECT_EQ(types[2], DOCA_PCI_FUNC_TYPE_SF);
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	ASSERT_EQ(doca_devinfo_rep_get_pci_addr_str(reps[2], pci), DOCA_SUCCESS);
	EXPECT_STREQ(pci, "0000:03:00.1");
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p1), DOCA_SUCCESS);
}

TEST_F(DevApi, RepresentorListKeepsItsDeviceInUse)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(by_ibdev("mlx5_0"));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &n), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(DevApi, EmulatedRepresentorsComeFromTheTopologyFile)
{
	use(load("rich.json", Side::dpu));
	doca_dev *p0 = open(by_ibdev("mlx5_0"));
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_ALL), (Names{"hpf0", "hpf0vf0", "pf0sf0", "virtio0", "nvme0"}));
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_NET), (Names{"hpf0", "hpf0vf0", "pf0sf0"}));
	EXPECT_EQ(rep_names(p0, DOCA_DEVINFO_REP_FILTER_EMULATED), (Names{"virtio0", "nvme0"}));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, DOCA_DEVINFO_REP_FILTER_EMULATED, &reps, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2u);
	uint8_t hotplug[2] = {0, 1};
	ASSERT_EQ(doca_devinfo_rep_get_is_hotplug(reps[0], &hotplug[0]), DOCA_SUCCESS);
	ASSERT_EQ(doca_devinfo_rep_get_is_hotplug(reps[1], &hotplug[1]), DOCA_SUCCESS);
	EXPECT_EQ(hotplug[0], 1);
	EXPECT_EQ(hotplug[1], 0);
	enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_PF;
	ASSERT_EQ(doca_devinfo_rep_get_pci_func_type(reps[1], &type), DOCA_SUCCESS);
	EXPECT_EQ(type, DOCA_PCI_FUNC_TYPE_VF);
	uint8_t equal = 0;
	ASSERT_EQ(doca_devinfo_rep_is_equal_pci_addr(reps[1], "0c:00.3", &equal), DOCA_SUCCESS);
	EXPECT_EQ(equal, 1);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(DevApi, FiltersWithoutTheCapabilityAreNotSupported)
{
	use(load("rich.json", Side::dpu));
	doca_dev *p1 = open(by_ibdev("mlx5_1")); // net representors only
	uint8_t flag = 1;
	ASSERT_EQ(doca_devinfo_rep_cap_is_filter_all_supported(doca_dev_as_devinfo(p1), &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	ASSERT_EQ(doca_devinfo_rep_cap_is_filter_emulated_supported(doca_dev_as_devinfo(p1), &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	ASSERT_EQ(doca_devinfo_rep_cap_is_filter_net_supported(doca_dev_as_devinfo(p1), &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 1);
	ASSERT_EQ(doca_devinfo_cap_is_hotplug_manager_supported(doca_dev_as_devinfo(p1), &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	EXPECT_EQ(rep_names(p1, DOCA_DEVINFO_REP_FILTER_NET), (Names{"hib0"}));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	for (int filter : {int(DOCA_DEVINFO_REP_FILTER_ALL), int(DOCA_DEVINFO_REP_FILTER_EMULATED),
			   DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED})
		EXPECT_EQ(doca_devinfo_rep_create_list(p1, filter, &reps, &n), DOCA_ERROR_NOT_SUPPORTED) << filter;
	EXPECT_EQ(p1->users(), 0u); // failed lists hold nothing
	EXPECT_EQ(doca_dev_close(p1), DOCA_SUCCESS);
}

TEST_F(DevApi, DevicesWithoutRepresentorsReportNotSupported)
{
	use(builtin(Side::host));
	doca_devinfo *pf0 = by_ibdev("mlx5_0");
	uint8_t flag = 0;
	EXPECT_EQ(doca_devinfo_rep_cap_is_filter_all_supported(pf0, &flag), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_devinfo_rep_cap_is_filter_net_supported(pf0, &flag), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_devinfo_rep_cap_is_filter_emulated_supported(pf0, &flag), DOCA_ERROR_NOT_SUPPORTED);
	doca_dev *dev = open(pf0);
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	EXPECT_EQ(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);

	// A DPU SF is a local device but not an eswitch manager either.
	use(builtin(Side::dpu));
	doca_dev *sf = open(by_ibdev("mlx5_2"));
	EXPECT_EQ(doca_devinfo_rep_create_list(sf, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_dev_close(sf), DOCA_SUCCESS);
}

TEST_F(DevApi, CreateListErrors)
{
	use(builtin(Side::dpu));
	doca_devinfo **list = nullptr;
	uint32_t n = 0;
	EXPECT_EQ(doca_devinfo_create_list(nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_create_list(&list, nullptr), DOCA_ERROR_INVALID_VALUE);
	softdpu::dev::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_devinfo_create_list(&list, &n), DOCA_ERROR_NO_MEMORY);
	{
		device_testing::ScopedTopologyError failing("bad.json: $.dpu: broken");
		EXPECT_EQ(doca_devinfo_create_list(&list, &n), DOCA_ERROR_NOT_FOUND);
	}
	ASSERT_EQ(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 4u);
	EXPECT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
}

TEST_F(DevApi, DestroyListErrors)
{
	use(builtin(Side::host));
	doca_devinfo **second = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_create_list(&second, &n), DOCA_SUCCESS);
	EXPECT_NE(second, list_);       // every call makes its own list
	EXPECT_EQ(second[0], list_[0]); // of the same devinfos
	EXPECT_EQ(doca_devinfo_destroy_list(second), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_destroy_list(second), DOCA_ERROR_INVALID_VALUE); // already destroyed
	EXPECT_EQ(doca_devinfo_destroy_list(nullptr), DOCA_ERROR_INVALID_VALUE);
	doca_devinfo *not_a_list[2] = {list_[0], nullptr};
	EXPECT_EQ(doca_devinfo_destroy_list(not_a_list), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(DevApi, RepListErrors)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(by_ibdev("mlx5_0"));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	EXPECT_EQ(doca_devinfo_rep_create_list(nullptr, 0, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_create_list(p0, 0, nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_create_list(p0, 0, &reps, nullptr), DOCA_ERROR_INVALID_VALUE);
	for (int filter : {1, 1 << 3, -1, DOCA_DEVINFO_REP_FILTER_NET | 1})
		EXPECT_EQ(doca_devinfo_rep_create_list(p0, filter, &reps, &n), DOCA_ERROR_INVALID_VALUE) << filter;
	softdpu::dev::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_devinfo_rep_create_list(p0, 0, &reps, &n), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(p0->users(), 0u);
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, 0, &reps, &n), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(nullptr), DOCA_ERROR_INVALID_VALUE);
	doca_devinfo_rep *not_a_list[2] = {reps[0], nullptr};
	EXPECT_EQ(doca_devinfo_rep_destroy_list(not_a_list), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(DevApi, OpenAndCloseErrors)
{
	use(load("rich.json", Side::host));
	doca_dev *dev = nullptr;
	EXPECT_EQ(doca_dev_open(nullptr, &dev), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dev_open(list_[0], nullptr), DOCA_ERROR_INVALID_VALUE);
	// Closing nothing succeeds, like free(NULL): NVIDIA's DMA samples close a NULL device on their
	// clean-up path and count an error as a failed run.
	EXPECT_EQ(doca_dev_close(nullptr), DOCA_SUCCESS);
	softdpu::dev::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_dev_open(list_[0], &dev), DOCA_ERROR_NO_MEMORY);
	// "available": false models a function whose driver cannot open it.
	EXPECT_EQ(doca_dev_open(by_ibdev("mlx5_ib0"), &dev), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_EQ(doca_dev_as_devinfo(nullptr), nullptr);
	EXPECT_EQ(doca_dev_rep_as_devinfo(nullptr), nullptr);
}

TEST_F(DevApi, OpeningMoreDevicesThanTheLimitFailsWithInitialization)
{
	auto limited = Topology::parse(R"({ "limits": { "max_open_devices": 2 }, "host": { "functions": [
		{ "name": "a", "type": "pf", "pci": "01:00.0", "ibdev": "mlx5_0", "vuid": "A" },
		{ "name": "b", "type": "pf", "pci": "01:00.1", "ibdev": "mlx5_1", "vuid": "B" },
		{ "name": "c", "type": "pf", "pci": "02:00.0", "ibdev": "mlx5_2", "vuid": "C" } ] } })",
				       "limited", Side::host);
	ASSERT_TRUE(limited.topology) << limited.error;
	use(limited.topology);
	ASSERT_EQ(count_, 3u);
	doca_dev *a = open(list_[0]);
	doca_dev *b = open(list_[1]);
	EXPECT_EQ(open(list_[0]), a); // re-opening an open device does not count against the limit
	doca_dev *c = nullptr;
	EXPECT_EQ(doca_dev_open(list_[2], &c), DOCA_ERROR_INITIALIZATION);
	EXPECT_EQ(doca_dev_close(b), DOCA_SUCCESS);
	ASSERT_EQ(doca_dev_open(list_[2], &c), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(c), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(a), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(a), DOCA_SUCCESS);
}

TEST_F(DevApi, RepOpenAndCloseErrors)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(by_ibdev("mlx5_0"));
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, 0, &reps, &n), DOCA_SUCCESS);
	doca_devinfo_rep *hpf0 = reps[0];
	doca_dev_rep *rep = nullptr;
	EXPECT_EQ(doca_dev_rep_open(nullptr, &rep), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dev_rep_open(hpf0, nullptr), DOCA_ERROR_INVALID_VALUE);
	softdpu::dev::testing::fail_next_allocations(1);
	EXPECT_EQ(doca_dev_rep_open(hpf0, &rep), DOCA_ERROR_NO_MEMORY);
	ASSERT_EQ(doca_dev_rep_open(hpf0, &rep), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_rep_close(nullptr), DOCA_ERROR_INVALID_VALUE);
	rep->add_user();
	EXPECT_EQ(doca_dev_rep_close(rep), DOCA_ERROR_IN_USE);
	rep->remove_user();
	EXPECT_EQ(doca_dev_rep_close(rep), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
	// Its list destroyed and its device closed, the element is stale.
	EXPECT_EQ(doca_dev_rep_open(hpf0, &rep), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(DevApi, GetterArgumentErrors)
{
	use(builtin(Side::dpu));
	doca_devinfo *p0 = list_[0];
	char text[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t bytes[DOCA_DEVINFO_IPV6_ADDR_SIZE];
	uint8_t flag = 0;
	uint16_t lid = 0;
	EXPECT_EQ(doca_devinfo_get_pci_addr_str(nullptr, text), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_pci_addr_str(p0, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ibdev_name(nullptr, text, DOCA_DEVINFO_IBDEV_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ibdev_name(p0, nullptr, DOCA_DEVINFO_IBDEV_NAME_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ibdev_name(p0, text, DOCA_DEVINFO_IBDEV_NAME_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_iface_name(nullptr, text, sizeof(text)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_iface_name(p0, nullptr, sizeof(text)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_iface_name(p0, text, DOCA_DEVINFO_IFACE_NAME_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_mac_addr(nullptr, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_mac_addr(p0, nullptr, DOCA_DEVINFO_MAC_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_mac_addr(p0, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv4_addr(nullptr, bytes, DOCA_DEVINFO_IPV4_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv4_addr(p0, nullptr, DOCA_DEVINFO_IPV4_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv4_addr(p0, bytes, DOCA_DEVINFO_IPV4_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv6_addr(nullptr, bytes, DOCA_DEVINFO_IPV6_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv6_addr(p0, nullptr, DOCA_DEVINFO_IPV6_ADDR_SIZE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_ipv6_addr(p0, bytes, DOCA_DEVINFO_IPV6_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_lid(nullptr, &lid), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_get_lid(p0, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_cap_is_hotplug_manager_supported(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_cap_is_hotplug_manager_supported(p0, nullptr), DOCA_ERROR_INVALID_VALUE);
	for (auto *query : {doca_devinfo_rep_cap_is_filter_all_supported, doca_devinfo_rep_cap_is_filter_net_supported,
			    doca_devinfo_rep_cap_is_filter_emulated_supported}) {
		EXPECT_EQ(query(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
		EXPECT_EQ(query(p0, nullptr), DOCA_ERROR_INVALID_VALUE);
	}
	// Failed calls leave caller buffers untouched where the API promises nothing else.
	std::memset(text, 'x', sizeof(text));
	EXPECT_EQ(doca_devinfo_get_ibdev_name(p0, text, 8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(text[0], 'x');
}

TEST_F(DevApi, RepGetterArgumentErrors)
{
	use(builtin(Side::dpu));
	doca_dev *p0 = open(list_[0]);
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p0, 0, &reps, &n), DOCA_SUCCESS);
	doca_devinfo_rep *rep = reps[0];
	char text[DOCA_DEVINFO_REP_VUID_SIZE];
	uint8_t flag = 0;
	enum doca_pci_func_type type;
	EXPECT_EQ(doca_devinfo_rep_get_vuid(nullptr, text, sizeof(text)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_vuid(rep, nullptr, sizeof(text)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_vuid(rep, text, DOCA_DEVINFO_REP_VUID_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_pci_addr_str(nullptr, text), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_pci_addr_str(rep, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_pci_func_type(nullptr, &type), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_pci_func_type(rep, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_is_hotplug(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_get_is_hotplug(rep, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_is_equal_pci_addr(nullptr, "0b:00.0", &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_is_equal_pci_addr(rep, nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_is_equal_pci_addr(rep, "0b:00.0", nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_is_equal_pci_addr(rep, "0b:00", &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_is_equal_pci_addr(rep, "0000:0b:00.0.", &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(DevApi, MissingPropertiesReportTheDocumentedErrors)
{
	use(load("rich.json", Side::host));
	doca_devinfo *vf0 = by_ibdev("mlx5_2"); // no iface, MAC or IP addresses
	doca_devinfo *ib0 = by_ibdev("mlx5_ib0");
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t bytes[DOCA_DEVINFO_IPV6_ADDR_SIZE];
	uint16_t lid = 0;
	EXPECT_EQ(doca_devinfo_get_iface_name(vf0, iface, sizeof(iface)), DOCA_ERROR_OPERATING_SYSTEM);
	EXPECT_EQ(doca_devinfo_get_ipv4_addr(vf0, bytes, DOCA_DEVINFO_IPV4_ADDR_SIZE), DOCA_ERROR_OPERATING_SYSTEM);
	EXPECT_EQ(doca_devinfo_get_ipv6_addr(vf0, bytes, DOCA_DEVINFO_IPV6_ADDR_SIZE), DOCA_ERROR_OPERATING_SYSTEM);
	// The MAC is an Ethernet (RoCE) property, the LID an InfiniBand one.
	EXPECT_EQ(doca_devinfo_get_mac_addr(ib0, bytes, DOCA_DEVINFO_MAC_ADDR_SIZE), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_devinfo_get_lid(vf0, &lid), DOCA_ERROR_NOT_SUPPORTED);
	ASSERT_EQ(doca_devinfo_get_lid(ib0, &lid), DOCA_SUCCESS);
	EXPECT_EQ(lid, 42);
	EXPECT_FALSE(vf0->caps().dma_memcpy);
}

TEST_F(DevApi, EthernetFunctionWithoutMacReportsNotSupported)
{
	// A MAC is optional on Ethernet: without one the getter says NOT_SUPPORTED, as on InfiniBand.
	auto parsed = Topology::parse(R"({ "host": { "functions": [
		{ "name": "a", "type": "pf", "pci": "01:00.0", "ibdev": "mlx5_0", "vuid": "A",
		  "link_layer": "ethernet" } ] } })",
				      "no-mac", Side::host);
	ASSERT_TRUE(parsed.topology) << parsed.error;
	use(parsed.topology);
	std::array<uint8_t, DOCA_DEVINFO_MAC_ADDR_SIZE> mac{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
	EXPECT_EQ(doca_devinfo_get_mac_addr(list_[0], mac.data(), mac.size()), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(mac[0], 0xaa); // untouched
}

// The process topology is loaded once, so a bad SOFTDPU_SIDE is tried in a fresh process: the
// "threadsafe" death test style re-runs this test alone in a new one. The reason reaches stderr
// through the SDK log, which a fresh process writes there until it creates an SDK backend.
TEST(DevProcessTopology, InvalidSideLeavesNoDevicesAndSaysWhy)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(
	    {
		    setenv("SOFTDPU_SIDE", "sideways", 1);
		    doca_devinfo **list = nullptr;
		    uint32_t n = 0;
		    const doca_error_t result = doca_devinfo_create_list(&list, &n);
		    std::exit(result == DOCA_ERROR_NOT_FOUND && Topology::current() == nullptr ? 0 : 1);
	    },
	    ::testing::ExitedWithCode(0),
	    "failed to load the emulated device topology: SOFTDPU_SIDE: expected \"host\" or \"dpu\", got "
	    "\"sideways\"");
}

TEST_F(DevApi, ConcurrentOpensShareOneDevice)
{
	use(builtin(Side::dpu));
	doca_devinfo *p0 = list_[0];
	// One long-lived open keeps the instance alive, so every open must return it.
	doca_dev *anchor = open(p0);
	std::atomic<doca_dev *> seen{anchor};
	std::atomic<int> mismatches{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < 4; ++t)
		threads.emplace_back([&] {
			for (int i = 0; i < 500; ++i) {
				doca_dev *dev = nullptr;
				if (doca_dev_open(p0, &dev) != DOCA_SUCCESS) {
					++mismatches;
					continue;
				}
				if (dev != seen.load())
					++mismatches;
				dev->add_user();
				dev->remove_user();
				if (doca_dev_close(dev) != DOCA_SUCCESS)
					++mismatches;
			}
		});
	for (auto &thread : threads)
		thread.join();
	EXPECT_EQ(mismatches.load(), 0);
	EXPECT_EQ(anchor->users(), 0u);
	EXPECT_EQ(doca_dev_close(anchor), DOCA_SUCCESS);
	EXPECT_EQ(p0->table().open_devices(), 0u);
}

TEST(DevConcurrent, FirstUseFromManyThreadsLoadsOneTopology)
{
	// ctest runs each test in its own process, so these threads race for the first load.
	std::vector<std::thread> threads;
	std::vector<doca_devinfo *> first(8, nullptr);
	std::vector<const Topology *> seen(8, nullptr);
	for (size_t t = 0; t < first.size(); ++t)
		threads.emplace_back([&, t] {
			doca_devinfo **list = nullptr;
			uint32_t n = 0;
			if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
				return;
			seen[t] = Topology::current();
			first[t] = n > 0 ? list[0] : nullptr;
			doca_devinfo_destroy_list(list);
		});
	for (auto &thread : threads)
		thread.join();
	for (size_t t = 0; t < first.size(); ++t) {
		ASSERT_NE(seen[t], nullptr);
		EXPECT_EQ(seen[t], seen[0]);
		EXPECT_EQ(first[t], first[0]); // one device table, so the same devinfo objects
	}
	EXPECT_NE(first[0], nullptr);
}
