// doca_mmap.h with real (emulated) devices: add, remove, limits, duplicates, device users.
#include "core/mem/mmap.hpp"
#include "device/topology.hpp"
#include "support/devices.hpp"
#include "support/topology_with_caps.hpp"

#include <doca_dev.h>
#include <doca_mmap.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace {

class MmapDevices : public ::testing::Test {
protected:
	void SetUp() override
	{
		doca_devinfo **list = nullptr;
		uint32_t count = 0;
		ASSERT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
		for (uint32_t i = 0; i < count && devs.size() < 2; ++i) {
			doca_dev *dev = nullptr;
			ASSERT_EQ(doca_dev_open(list[i], &dev), DOCA_SUCCESS);
			devs.push_back(dev);
		}
		ASSERT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
		ASSERT_GE(devs.size(), 2u) << "the default topology has at least two host devices";
		ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		if (mmap != nullptr) {
			EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
		}
		for (doca_dev *dev : devs)
			EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	}
	std::array<uint8_t, 256> memory{};
	std::vector<doca_dev *> devs;
	doca_mmap *mmap = nullptr;
};

TEST_F(MmapDevices, AddAndRemove)
{
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_TRUE(mmap->has_device(devs[0]));
	EXPECT_FALSE(mmap->has_device(devs[1]));
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[1]), DOCA_SUCCESS);
	EXPECT_TRUE(mmap->has_device(devs[1]));
	ASSERT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_FALSE(mmap->has_device(devs[0]));
	EXPECT_TRUE(mmap->has_device(devs[1]));
}

TEST_F(MmapDevices, DuplicateIsAlreadyExist)
{
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_ERROR_ALREADY_EXIST);
}

TEST_F(MmapDevices, RemovingAnAbsentDeviceIsNotFound)
{
	EXPECT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_ERROR_NOT_FOUND);
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_ERROR_NOT_FOUND);
}

TEST_F(MmapDevices, MaxDevicesReachedIsNoMemory)
{
	ASSERT_EQ(doca_mmap_set_max_num_devices(mmap, 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_add_dev(mmap, devs[1]), DOCA_ERROR_NO_MEMORY);
	// The limit cannot drop below the devices already added.
	ASSERT_EQ(doca_mmap_set_max_num_devices(mmap, 2), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[1]), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 1), DOCA_ERROR_INVALID_VALUE);
}

// The topology's mmap_max_devices capability of any device in the mmap caps it, whichever device
// is added first.
TEST(MmapDeviceCapability, SmallestMaxDevicesOfItsDevicesApplies)
{
	auto topology =
	    softdpu_test::default_topology_with_caps(softdpu::device::Side::host, "pf0", {{"mmap_max_devices", 1}});
	ASSERT_TRUE(topology);
	softdpu::device::testing::ScopedTopology scoped(topology);
	doca_dev *pf0 = softdpu_test::open_by_pci("0b:00.0");
	doca_dev *pf1 = softdpu_test::open_by_pci("0b:00.1");
	ASSERT_NE(pf0, nullptr);
	ASSERT_NE(pf1, nullptr);
	std::array<uint8_t, 64> memory{};
	for (const bool pf0_first : {true, false}) {
		doca_mmap *mmap = nullptr;
		ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_add_dev(mmap, pf0_first ? pf0 : pf1), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_add_dev(mmap, pf0_first ? pf1 : pf0), DOCA_ERROR_NO_MEMORY);
		EXPECT_EQ(mmap->has_device(pf0), pf0_first);
		EXPECT_EQ(mmap->has_device(pf1), !pf0_first);
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}
	EXPECT_EQ(doca_dev_close(pf1), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(pf0), DOCA_SUCCESS);
}

TEST_F(MmapDevices, NoDeviceChangesWhileStarted)
{
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_add_dev(mmap, devs[1]), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_SUCCESS);
}

TEST_F(MmapDevices, AddedDeviceCannotBeClosed)
{
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(devs[0]), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_mmap_rm_dev(mmap, devs[0]), DOCA_SUCCESS);
	// Destroying the mmap lets go of its devices too.
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[1]), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(devs[1]), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	mmap = nullptr;
}

TEST_F(MmapDevices, ExportChecksThenExports)
{
	const void *desc = nullptr;
	size_t len = 0;
	ASSERT_EQ(doca_mmap_add_dev(mmap, devs[0]), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
	// Not started.
	EXPECT_EQ(doca_mmap_export_pci(mmap, devs[0], &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, devs[0], &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	// Started, but without PCI or RDMA access.
	EXPECT_EQ(doca_mmap_export_pci(mmap, devs[0], &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, devs[0], &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_export_pci(mmap, devs[1], &desc, &len), DOCA_ERROR_NOT_FOUND);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE |
						      DOCA_ACCESS_FLAG_RDMA_READ),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	// Host functions export (cross-process use: tests/integration/xproc/).
	EXPECT_EQ(doca_mmap_export_pci(mmap, devs[0], &desc, &len), DOCA_SUCCESS);
	EXPECT_NE(desc, nullptr);
	EXPECT_GT(len, 0u);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, devs[0], &desc, &len), DOCA_SUCCESS);
	uint8_t capability = 0;
	ASSERT_EQ(doca_mmap_cap_is_export_pci_supported(doca_dev_as_devinfo(devs[0]), &capability), DOCA_SUCCESS);
	EXPECT_EQ(capability, 1); // consistent with the export above
	doca_mmap *imported = nullptr;
	// A one-byte descriptor is truncated.
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, "x", 1, devs[0], &imported), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
}

} // namespace
