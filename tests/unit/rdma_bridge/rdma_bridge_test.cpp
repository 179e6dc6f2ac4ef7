// doca_rdma_bridge.h: the verbs objects behind DOCA devices and buffers, used by verbs for real
// (an RDMA WRITE into memory DOCA registered, with the key the bridge gave).
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_rdma_bridge.h>

#include <gtest/gtest.h>
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

// Two RC queue pairs of one PD connected to each other (the device reaches its own GIDs).
struct LoopbackPair {
	ibv_cq *cq = nullptr;
	ibv_qp *a = nullptr;
	ibv_qp *b = nullptr;

	explicit LoopbackPair(ibv_pd *pd)
	{
		cq = ibv_create_cq(pd->context, 16, nullptr, nullptr, 0);
		ibv_qp_init_attr init{};
		init.send_cq = cq;
		init.recv_cq = cq;
		init.cap = {8, 8, 1, 1, 0};
		init.qp_type = IBV_QPT_RC;
		a = ibv_create_qp(pd, &init);
		b = ibv_create_qp(pd, &init);
		connect(a, b->qp_num);
		connect(b, a->qp_num);
	}
	void connect(ibv_qp *qp, uint32_t remote)
	{
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_INIT;
		attr.port_num = 1;
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		ASSERT_EQ(
		    ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
		attr = {};
		attr.qp_state = IBV_QPS_RTR;
		attr.path_mtu = IBV_MTU_1024;
		attr.dest_qp_num = remote;
		attr.max_dest_rd_atomic = 1;
		attr.min_rnr_timer = 12;
		attr.ah_attr.is_global = 1;
		attr.ah_attr.port_num = 1;
		ASSERT_EQ(ibv_query_gid(qp->context, 1, 0, &attr.ah_attr.grh.dgid), 0);
		ASSERT_EQ(ibv_modify_qp(qp, &attr,
					IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
			  0);
		attr = {};
		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 1;
		ASSERT_EQ(ibv_modify_qp(qp, &attr,
					IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
			  0);
	}
	ibv_wc wait()
	{
		ibv_wc wc{};
		while (ibv_poll_cq(cq, 1, &wc) == 0) {
		}
		return wc;
	}
	~LoopbackPair()
	{
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		ibv_destroy_cq(cq);
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
		std::array<char, 64> source{};
		std::memcpy(source.data(), "written through the bridge's key", 33);
		ibv_mr *mr = ibv_reg_mr(pd, source.data(), source.size(), IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(mr, nullptr);
		LoopbackPair pair(pd);
		ibv_sge sge{reinterpret_cast<uintptr_t>(source.data()), 33, mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(target.data()) + 100;
		wr.wr.rdma.rkey = mkey;
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(ibv_post_send(pair.a, &wr, &bad), 0);
		const ibv_wc wc = pair.wait();
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
		EXPECT_STREQ(target.data() + 100, "written through the bridge's key");
		ibv_dereg_mr(mr);
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
		std::array<char, 8> source{"nope"};
		ibv_mr *mr = ibv_reg_mr(pd, source.data(), source.size(), IBV_ACCESS_LOCAL_WRITE);
		LoopbackPair pair(pd);
		ibv_sge sge{reinterpret_cast<uintptr_t>(source.data()), 8, mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(target.data());
		wr.wr.rdma.rkey = mkey;
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(ibv_post_send(pair.a, &wr, &bad), 0);
		EXPECT_EQ(pair.wait().status, IBV_WC_REM_ACCESS_ERR);
		EXPECT_EQ(target[0], 0);
		ibv_dereg_mr(mr);
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
		std::array<char, 16> source{"from the app"};
		ibv_mr *mr = ibv_reg_mr(pd, source.data(), source.size(), 0);
		LoopbackPair pair(pd);
		ibv_sge sge{reinterpret_cast<uintptr_t>(source.data()), 13, mr->lkey};
		ibv_send_wr wr{};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(memory.data());
		wr.wr.rdma.rkey = mkey;
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(ibv_post_send(pair.a, &wr, &bad), 0);
		EXPECT_EQ(pair.wait().status, IBV_WC_SUCCESS);
		EXPECT_STREQ(memory.data(), "from the app");
		ibv_dereg_mr(mr);
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
	std::array<char, 8> source{"late"};
	ibv_mr *mr = ibv_reg_mr(pd, source.data(), source.size(), 0);
	auto pair_owner = std::make_unique<LoopbackPair>(pd);
	LoopbackPair &pair = *pair_owner;
	ibv_sge sge{reinterpret_cast<uintptr_t>(source.data()), 5, mr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(memory.data());
	wr.wr.rdma.rkey = mkey;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(ibv_post_send(pair.a, &wr, &bad), 0);
	EXPECT_EQ(pair.wait().status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(memory[0], 0);
	pair_owner.reset();
	ibv_dereg_mr(mr);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

} // namespace
