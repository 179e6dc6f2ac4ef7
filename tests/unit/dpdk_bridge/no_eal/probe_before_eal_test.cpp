// doca_dpdk_port_probe before the application's rte_eal_init: DPDK cannot attach a port, so
// DOCA_ERROR_DRIVER, and no port is the device's. A binary of its own (unit_dpdk_bridge_no_eal):
// the EAL of a process cannot be undone, and unit_dpdk_bridge initialises it.
#include "support/devices.hpp"

#include <doca_dev.h>
#include <doca_dpdk.h>

#include <gtest/gtest.h>

#include <rte_lcore.h>

#include <cstdint>
#include <cstring>

namespace {

TEST(DpdkBridgeNoEal, ProbeBeforeRteEalInitIsADriverError)
{
	ASSERT_EQ(rte_lcore_count(), 0u) << "nothing in this binary initialises the EAL";
	doca_dev *pf = softdpu_test::open_first_device([](doca_devinfo *info) {
		char name[DOCA_DEVINFO_IFACE_NAME_SIZE] = {};
		return doca_devinfo_get_iface_name(info, name, sizeof(name)) == DOCA_SUCCESS &&
		       std::strcmp(name, "enp11s0f0np0") == 0;
	});
	ASSERT_NE(pf, nullptr);
	EXPECT_EQ(doca_dpdk_port_probe(pf, "dv_flow_en=2"), DOCA_ERROR_DRIVER);
	EXPECT_EQ(doca_dpdk_port_probe(pf, ""), DOCA_ERROR_DRIVER);
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(pf, &port_id), DOCA_ERROR_NOT_FOUND);
	doca_dev *found = nullptr;
	EXPECT_EQ(doca_dpdk_port_as_dev(0, &found), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dev_close(pf), DOCA_SUCCESS);
}

} // namespace
