// doca_rdma_bridge.h: the verbs objects behind DOCA devices and buffers, used by verbs for real
// (an RDMA WRITE into memory DOCA registered, with the key the bridge gave).
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_rdma_bridge.h>

#include <gtest/gtest.h>

#include "unit/verbs/verbs_test_support.hpp"
#include <infiniband/verbs.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

doca_dev *open_first_device()
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	EXPECT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
	doca_dev *dev = nullptr;
	if (count > 0) {
		EXPECT_EQ(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

std::string ibdev_name(doca_dev *dev)
{
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = {};
	EXPECT_EQ(doca_devinfo_get_ibdev_name(doca_dev_as_devinfo(dev), name, sizeof(name)), DOCA_SUCCESS);
	return name;
}

struct Mmap {
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
	doca_buf *buf = nullptr;

	Mmap(doca_dev *dev, void *memory, size_t length, uint32_t access)
	{
		EXPECT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_set_memrange(mmap, memory, length), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_set_permissions(mmap, access), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_inventory_create(4, &inventory), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory, length, &buf), DOCA_SUCCESS);
	}
	~Mmap()
	{
		doca_buf_dec_refcount(buf, nullptr);
		doca_buf_inventory_destroy(inventory);
		doca_mmap_destroy(mmap);
	}
};

// Two RC queue pairs of one PD connected to each other (the device reaches its own GIDs), each
// with a registered buffer of its own (verbs_test::Endpoint).
struct LoopbackPair {
	verbs_test::RcPair pair;

	explicit LoopbackPair(ibv_pd *pd)
	{
		verbs_test::Options options;
		options.shared_pd = pd;
		EXPECT_TRUE(pair.connect(options));
	}
	// An RDMA WRITE of `text` (with its NUL) from A's buffer to remote_addr with rkey: its status.
	ibv_wc_status write(const char *text, uint64_t remote_addr, uint32_t rkey)
	{
		const auto length = static_cast<uint32_t>(std::strlen(text) + 1);
		std::memcpy(pair.a.buf(), text, length);
		if (pair.a.post(IBV_WR_RDMA_WRITE, {pair.a.sge(0, length)}, remote_addr, rkey) != 0)
			return IBV_WC_GENERAL_ERR;
		const auto done = verbs_test::poll_n(pair.a.send_cq, 1);
		return done.size() == 1 ? done[0].status : IBV_WC_GENERAL_ERR;
	}
};

TEST(RdmaBridgeTest, DevicePdBelongsToTheVerbsDeviceOfTheSameName)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_SUCCESS);
	ASSERT_NE(pd, nullptr);
	EXPECT_EQ(ibdev_name(dev), ibv_get_device_name(pd->context->device));
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(pd->context, 1, &port), 0);
	EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
	// The same PD every time.
	ibv_pd *again = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &again), DOCA_SUCCESS);
	EXPECT_EQ(again, pd);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, InvalidArguments)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	EXPECT_EQ(doca_rdma_bridge_get_dev_pd(nullptr, &pd), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_rdma_bridge_get_dev_pd(dev, nullptr), DOCA_ERROR_INVALID_VALUE);
	doca_dev *out = nullptr;
	EXPECT_EQ(doca_rdma_bridge_open_dev_from_pd(nullptr, &out), DOCA_ERROR_INVALID_VALUE);
	uint32_t mkey = 0;
	EXPECT_EQ(doca_rdma_bridge_get_buf_mkey(nullptr, dev, &mkey), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, BufferKeyIsUsableAsAnRkeyByVerbs)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_SUCCESS);
	std::vector<char> target(4096, 0);
	{
		Mmap doca(dev, target.data(), target.size(),
			  DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE);
		uint32_t mkey = 0;
		ASSERT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, dev, &mkey), DOCA_SUCCESS);
		uint32_t again = 0;
		ASSERT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, dev, &again), DOCA_SUCCESS);
		EXPECT_EQ(again, mkey);

		// Verbs writes into the DOCA memory with that key.
		LoopbackPair pair(pd);
		const ibv_wc_status status = pair.write("written through the bridge's key",
							reinterpret_cast<uintptr_t>(target.data()) + 100, mkey);
		EXPECT_EQ(status, IBV_WC_SUCCESS) << ibv_wc_status_str(status);
		EXPECT_STREQ(target.data() + 100, "written through the bridge's key");
	}
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, KeyOfAReadOnlyMmapRefusesRemoteWrites)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_SUCCESS);
	std::vector<char> target(4096, 0);
	{
		Mmap doca(dev, target.data(), target.size(), DOCA_ACCESS_FLAG_RDMA_READ);
		uint32_t mkey = 0;
		ASSERT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, dev, &mkey), DOCA_SUCCESS);
		LoopbackPair pair(pd);
		EXPECT_EQ(pair.write("nope", reinterpret_cast<uintptr_t>(target.data()), mkey), IBV_WC_REM_ACCESS_ERR);
		EXPECT_EQ(target[0], 0);
	}
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, KeyForADeviceTheMmapDoesNotHaveIsInvalid)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	ASSERT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
	ASSERT_GE(count, 2u);
	doca_dev *first = nullptr;
	doca_dev *second = nullptr;
	ASSERT_EQ(doca_dev_open(list[0], &first), DOCA_SUCCESS);
	ASSERT_EQ(doca_dev_open(list[1], &second), DOCA_SUCCESS);
	doca_devinfo_destroy_list(list);
	std::vector<char> memory(4096);
	{
		Mmap doca(first, memory.data(), memory.size(), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
		uint32_t mkey = 0;
		EXPECT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, second, &mkey), DOCA_ERROR_INVALID_VALUE);
	}
	EXPECT_EQ(doca_dev_close(first), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(second), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, DeviceFromAnApplicationPd)
{
	int count = 0;
	ibv_device **devices = ibv_get_device_list(&count);
	ASSERT_GT(count, 0);
	ibv_context *context = ibv_open_device(devices[0]);
	ibv_free_device_list(devices);
	ASSERT_NE(context, nullptr);
	ibv_pd *pd = ibv_alloc_pd(context);
	ASSERT_NE(pd, nullptr);

	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_rdma_bridge_open_dev_from_pd(pd, &dev), DOCA_SUCCESS);
	// It has no devinfo of its own (DOCA documents NULL).
	EXPECT_EQ(doca_dev_as_devinfo(dev), nullptr);
	ibv_pd *same = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &same), DOCA_SUCCESS);
	EXPECT_EQ(same, pd);

	// Buffers of an mmap on that device get keys of the application's PD.
	std::vector<char> memory(4096, 0);
	{
		Mmap doca(dev, memory.data(), memory.size(),
			  DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE);
		uint32_t mkey = 0;
		ASSERT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, dev, &mkey), DOCA_SUCCESS);
		LoopbackPair pair(pd);
		EXPECT_EQ(pair.write("from the app", reinterpret_cast<uintptr_t>(memory.data()), mkey), IBV_WC_SUCCESS);
		EXPECT_STREQ(memory.data(), "from the app");
	}
	// Closing the DOCA device leaves the application's PD alone.
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(context), 0);
}

TEST(RdmaBridgeTest, DevicePdOfADocaDeviceCannotOpenAnotherDevice)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_SUCCESS);
	doca_dev *other = nullptr;
	EXPECT_EQ(doca_rdma_bridge_open_dev_from_pd(pd, &other), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(RdmaBridgeTest, RegistrationsGoWithTheMmap)
{
	doca_dev *dev = open_first_device();
	ASSERT_NE(dev, nullptr);
	ibv_pd *pd = nullptr;
	ASSERT_EQ(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_SUCCESS);
	std::vector<char> memory(4096, 0);
	uint32_t mkey = 0;
	{
		Mmap doca(dev, memory.data(), memory.size(),
			  DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE);
		ASSERT_EQ(doca_rdma_bridge_get_buf_mkey(doca.buf, dev, &mkey), DOCA_SUCCESS);
	}
	// The mmap is gone: its key no longer reaches the memory.
	{
		LoopbackPair pair(pd);
		EXPECT_EQ(pair.write("late", reinterpret_cast<uintptr_t>(memory.data()), mkey), IBV_WC_REM_ACCESS_ERR);
		EXPECT_EQ(memory[0], 0);
	}
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

} // namespace
