// doca_dpdk.h over a real DPDK EAL (no hugepages, no PCI, no root): mbufs of a pktmbuf pool as
// doca_bufs that DOCA DMA reads and writes, their mbuf references, and every documented error.
// EAL initialises once per process: every test calls eal() first, whether ctest runs it alone or
// the whole binary runs.
#include "bridge_support.hpp"
#include "support/devices.hpp"
#include "support/dma_fixture.h"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_dpdk.h>
#include <doca_types.h>
#include <softdpu/link.h>

#include <gtest/gtest.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using softdpu_test::DmaSetup;
using softdpu_test::eal;
using softdpu_test::PortLinks;
using softdpu_test::progress_until;

namespace {

rte_mempool *make_pktmbuf_pool(unsigned int count = 255, uint16_t data_room = RTE_MBUF_DEFAULT_BUF_SIZE)
{
	static int serial = 0;
	const std::string name = "bridge_test_" + std::to_string(serial++);
	return rte_pktmbuf_pool_create(name.c_str(), count, 0, 0, data_room, SOCKET_ID_ANY);
}

void fill(rte_mbuf *mbuf, uint16_t len, uint8_t seed)
{
	auto *data = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(mbuf, len));
	ASSERT_NE(data, nullptr);
	for (uint16_t i = 0; i < len; ++i)
		data[i] = static_cast<uint8_t>(seed + i * 7);
}

struct Results {
	int successes = 0;
	int errors = 0;
};

void on_success(doca_dma_task_memcpy *task, union doca_data, union doca_data ctx_user_data)
{
	++static_cast<Results *>(ctx_user_data.ptr)->successes;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void on_error(doca_dma_task_memcpy *task, union doca_data, union doca_data ctx_user_data)
{
	++static_cast<Results *>(ctx_user_data.ptr)->errors;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

// A pktmbuf pool and a started bridge over it on the DMA set-up's device.
class DpdkBridgeTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_TRUE(eal()) << "rte_eal_init failed";
		pool = make_pktmbuf_pool();
		ASSERT_NE(pool, nullptr);
		ASSERT_EQ(doca_dpdk_mempool_create(pool, &mempool), DOCA_SUCCESS);
		ASSERT_EQ(doca_dpdk_mempool_dev_add(mempool, setup.dev), DOCA_SUCCESS);
		ASSERT_EQ(doca_dpdk_mempool_start(mempool), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		if (mempool != nullptr) {
			EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_SUCCESS);
		}
		if (pool != nullptr) {
			EXPECT_EQ(rte_mempool_avail_count(pool), pool->size) << "every mbuf is back in its pool";
			rte_mempool_free(pool);
		}
	}
	// Copies src into dst with DOCA DMA and waits for the completion.
	void dma_copy(doca_buf *src, doca_buf *dst)
	{
		if (setup.dma == nullptr) {
			setup.make_dma(on_success, on_error, 4);
			ASSERT_EQ(doca_ctx_set_user_data(setup.ctx(), doca_data{.ptr = &results}), DOCA_SUCCESS);
			ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
		}
		doca_dma_task_memcpy *task = nullptr;
		ASSERT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, doca_data{}, &task), DOCA_SUCCESS);
		const int before = results.successes;
		ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
		ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes + results.errors > before; }));
		ASSERT_EQ(results.errors, 0);
	}

	DmaSetup setup{1 << 16, 64};
	Results results;
	rte_mempool *pool = nullptr;
	doca_dpdk_mempool *mempool = nullptr;
};

TEST(DpdkBridgePorts, ArgumentChecksAndUnprobedDevices)
{
	ASSERT_TRUE(eal());
	doca_dev *dev = softdpu_test::open_first_device([](doca_devinfo *) { return true; });
	ASSERT_NE(dev, nullptr);
	EXPECT_EQ(doca_dpdk_port_probe(nullptr, "dv_flow_en=2"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_port_probe(dev, nullptr), DOCA_ERROR_INVALID_VALUE);
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(dev, &port_id), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dpdk_get_first_port_id(nullptr, &port_id), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_get_first_port_id(dev, nullptr), DOCA_ERROR_INVALID_VALUE);
	doca_dev *found = nullptr;
	EXPECT_EQ(doca_dpdk_port_as_dev(RTE_MAX_ETHPORTS - 1, &found), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dpdk_port_as_dev(0, nullptr), DOCA_ERROR_INVALID_VALUE);
	// Devargs that name a PCI address, or are not key=value items, are refused before anything.
	for (const char *devargs : {"03:00.0", "0000:03:00.0,dv_flow_en=2", "dv_flow_en=2,03:00.1", "dv_flow_en=2,,x=1",
				    "=2", "dv flow_en=2", "dv_flow_en=2,"}) {
		EXPECT_EQ(doca_dpdk_port_probe(dev, devargs), DOCA_ERROR_INVALID_VALUE) << devargs;
	}
	EXPECT_EQ(doca_dpdk_get_first_port_id(dev, &port_id), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

// The host's PF0 (link hpf0) and its VF pf0vf1 (link hpf0vf1) as bridge ports (the tests run on
// the host side: both ends connect), each against a plain net_memif port serving the
// representor's end of the same link; frames both ways on both links.
TEST_F(PortLinks, ProbedPortsCarryFramesBothWays)
{
	allow_memif_disconnect_bug();
	doca_dev *pf = open_by_iface("enp11s0f0np0");
	ASSERT_NE(pf, nullptr);
	devs.push_back(pf);
	doca_dev *vf = open_by_iface("enp11s0f0v1");
	ASSERT_NE(vf, nullptr);
	devs.push_back(vf);

	ASSERT_EQ(
	    doca_dpdk_port_probe(pf, "dv_flow_en=2,dv_xmeta_en=4,fdb_def_rule_en=0,vport_match=1,repr_matching_en=0"),
	    DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_port_probe(vf, "dv_flow_en=2,dv_xmeta_en=4"), DOCA_SUCCESS);
	// Probing a device twice: DPDK's refusal, DOCA_ERROR_DRIVER.
	EXPECT_EQ(doca_dpdk_port_probe(pf, "dv_flow_en=2"), DOCA_ERROR_DRIVER);

	uint16_t pf_port = 0, vf_port = 0;
	ASSERT_EQ(doca_dpdk_get_first_port_id(pf, &pf_port), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_get_first_port_id(vf, &vf_port), DOCA_SUCCESS);
	EXPECT_NE(pf_port, vf_port);
	doca_dev *found = nullptr;
	ASSERT_EQ(doca_dpdk_port_as_dev(pf_port, &found), DOCA_SUCCESS);
	EXPECT_EQ(found, pf);
	ASSERT_EQ(doca_dpdk_port_as_dev(vf_port, &found), DOCA_SUCCESS);
	EXPECT_EQ(found, vf);

	uint16_t hpf0_port = 0, hpf0vf1_port = 0;
	ASSERT_TRUE(probe_peer("pf0", "net_memif_test_hpf0", hpf0_port));
	ASSERT_TRUE(probe_peer("pf0vf1", "net_memif_test_hpf0vf1", hpf0vf1_port));
	// Ports the bridge did not probe have no device.
	EXPECT_EQ(doca_dpdk_port_as_dev(hpf0_port, &found), DOCA_ERROR_NOT_FOUND);

	// DPDK's memif client connects when it starts: the serving (representor) ends start first.
	start_port(hpf0_port);
	start_port(hpf0vf1_port);
	start_port(pf_port);
	start_port(vf_port);
	ASSERT_TRUE(wait_up(pf_port, hpf0_port));
	ASSERT_TRUE(wait_up(vf_port, hpf0vf1_port));

	exchange(pf_port, hpf0_port, 3000);
	exchange(hpf0_port, pf_port, 3000);
	exchange(vf_port, hpf0vf1_port, 3000);
	exchange(hpf0vf1_port, vf_port, 3000);

	// A closed port is no longer the device's.
	stop_and_settle({pf_port});
	ASSERT_EQ(rte_eth_dev_close(pf_port), 0);
	EXPECT_EQ(doca_dpdk_get_first_port_id(pf, &pf_port), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dpdk_port_as_dev(pf_port, &found), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(rte_eal_hotplug_remove("vdev", "net_memif_softdpu_hpf0_c"), 0);
	// Once its port is gone, the device may be probed again.
	EXPECT_EQ(doca_dpdk_port_probe(pf, "dv_flow_en=2"), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_get_first_port_id(pf, &pf_port), DOCA_SUCCESS);
	started.push_back(pf_port);
}

TEST(DpdkBridgeMempool, CreateRefusesWhatIsNotAPopulatedMbufPool)
{
	ASSERT_TRUE(eal());
	doca_dpdk_mempool *mempool = nullptr;
	rte_mempool *mbufs = make_pktmbuf_pool();
	ASSERT_NE(mbufs, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_create(nullptr, &mempool), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_create(mbufs, nullptr), DOCA_ERROR_INVALID_VALUE);
	// A pool of plain objects (no pktmbuf private area) holds no mbufs.
	rte_mempool *plain =
	    rte_mempool_create("bridge_plain", 63, 256, 0, 0, nullptr, nullptr, nullptr, nullptr, SOCKET_ID_ANY, 0);
	ASSERT_NE(plain, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_create(plain, &mempool), DOCA_ERROR_INVALID_VALUE);
	rte_mempool_free(plain);
	// A pool of mbufs whose memory was never populated.
	rte_mempool *empty = rte_mempool_create_empty("bridge_empty", 63, sizeof(rte_mbuf) + 2048, 0,
						      sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY, 0);
	ASSERT_NE(empty, nullptr);
	rte_pktmbuf_pool_init(empty, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_create(empty, &mempool), DOCA_ERROR_INVALID_VALUE);
	rte_mempool_free(empty);
	ASSERT_EQ(doca_dpdk_mempool_create(mbufs, &mempool), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_SUCCESS) << "destroying a pool never started";
	EXPECT_EQ(doca_dpdk_mempool_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	rte_mempool_free(mbufs);
}

TEST(DpdkBridgeMempool, ConfigurationBeforeStartOnlyAndStartNeedsADevice)
{
	ASSERT_TRUE(eal());
	rte_mempool *mbufs = make_pktmbuf_pool();
	ASSERT_NE(mbufs, nullptr);
	doca_dev *dev = softdpu_test::open_dma_device();
	ASSERT_NE(dev, nullptr);
	doca_dpdk_mempool *mempool = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_create(mbufs, &mempool), DOCA_SUCCESS);

	EXPECT_EQ(doca_dpdk_mempool_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_start(mempool), DOCA_ERROR_INVALID_VALUE) << "no device added";
	EXPECT_EQ(doca_dpdk_mempool_dev_add(nullptr, dev), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_dev_add(mempool, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_set_permissions(nullptr, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_set_permissions(mempool, DOCA_ACCESS_FLAG_PCI_READ_WRITE),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_set_permissions(mempool, DOCA_ACCESS_FLAG_PCI_READ_ONLY), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_set_permissions(mempool, 1u << 20), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(
	    doca_dpdk_mempool_set_permissions(mempool, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ),
	    DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_dev_add(mempool, dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_dev_add(mempool, dev), DOCA_ERROR_INVALID_VALUE) << "added twice";

	doca_buf_inventory *inventory = nullptr;
	ASSERT_EQ(doca_buf_inventory_create(4, &inventory), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	rte_mbuf *mbuf = rte_pktmbuf_alloc(mbufs);
	ASSERT_NE(mbuf, nullptr);
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, inventory, mbuf, &buf), DOCA_ERROR_BAD_STATE) << "not started";

	ASSERT_EQ(doca_dpdk_mempool_start(mempool), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_start(mempool), DOCA_ERROR_BAD_STATE);
	doca_dev *other =
	    softdpu_test::open_first_device([&](doca_devinfo *info) { return info != doca_dev_as_devinfo(dev); });
	ASSERT_NE(other, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_dev_add(mempool, other), DOCA_ERROR_BAD_STATE) << "changed after start";
	EXPECT_EQ(doca_dpdk_mempool_set_permissions(mempool, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_ERROR_BAD_STATE);

	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, inventory, mbuf, &buf), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_ERROR_IN_USE) << "a doca_buf is still held";
	// A duplicate holds the memory as well, after the original is gone.
	doca_buf *dup = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_dup(inventory, buf, &dup), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_ERROR_IN_USE) << "the duplicate is still held";
	EXPECT_EQ(doca_buf_dec_refcount(dup, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_SUCCESS);
	rte_pktmbuf_free(mbuf);
	EXPECT_EQ(rte_mempool_avail_count(mbufs), mbufs->size);
	EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(other), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	rte_mempool_free(mbufs);
}

TEST_F(DpdkBridgeTest, ABufDescribesTheMbufBufferAndDataAndHoldsAReference)
{
	rte_mbuf *mbuf = rte_pktmbuf_alloc(pool);
	ASSERT_NE(mbuf, nullptr);
	fill(mbuf, 300, 5);
	ASSERT_TRUE(rte_pktmbuf_adj(mbuf, 20) != nullptr); // data no longer at the default headroom
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, mbuf, &buf), DOCA_SUCCESS);
	void *head = nullptr;
	void *data = nullptr;
	size_t len = 0;
	size_t data_len = 0;
	EXPECT_EQ(doca_buf_get_head(buf, &head), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_get_len(buf, &len), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_get_data(buf, &data), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_get_data_len(buf, &data_len), DOCA_SUCCESS);
	EXPECT_EQ(head, mbuf->buf_addr);
	EXPECT_EQ(len, mbuf->buf_len);
	EXPECT_EQ(data, rte_pktmbuf_mtod(mbuf, void *));
	EXPECT_EQ(data_len, 280u);
	EXPECT_EQ(rte_mbuf_refcnt_read(mbuf), 2) << "the doca_buf holds a reference on the mbuf";

	// The application frees the mbuf first: it stays out of the pool until the doca_buf goes.
	const unsigned int available = rte_mempool_avail_count(pool);
	rte_pktmbuf_free(mbuf);
	EXPECT_EQ(rte_mempool_avail_count(pool), available);
	EXPECT_EQ(rte_mbuf_refcnt_read(mbuf), 1);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(rte_mempool_avail_count(pool), available + 1) << "releasing the doca_buf freed the mbuf";
}

TEST_F(DpdkBridgeTest, ReleasingTheBufFirstLeavesTheMbufToTheApplication)
{
	rte_mbuf *mbuf = rte_pktmbuf_alloc(pool);
	ASSERT_NE(mbuf, nullptr);
	fill(mbuf, 64, 1);
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, mbuf, &buf), DOCA_SUCCESS);
	// A duplicate holds a reference too.
	doca_buf *dup = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_dup(setup.inventory, buf, &dup), DOCA_SUCCESS);
	EXPECT_EQ(rte_mbuf_refcnt_read(mbuf), 3);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(dup, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(rte_mbuf_refcnt_read(mbuf), 1);
	EXPECT_EQ(rte_pktmbuf_data_len(mbuf), 64) << "the mbuf is the application's, untouched";
	rte_pktmbuf_free(mbuf);
}

TEST_F(DpdkBridgeTest, DmaCopiesFromOneMbufIntoAnother)
{
	rte_mbuf *src_mbuf = rte_pktmbuf_alloc(pool);
	rte_mbuf *dst_mbuf = rte_pktmbuf_alloc(pool);
	ASSERT_NE(src_mbuf, nullptr);
	ASSERT_NE(dst_mbuf, nullptr);
	fill(src_mbuf, 1500, 9);
	doca_buf *src = nullptr;
	doca_buf *dst = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, src_mbuf, &src), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, dst_mbuf, &dst), DOCA_SUCCESS);
	dma_copy(src, dst);
	size_t copied = 0;
	EXPECT_EQ(doca_buf_get_data_len(dst, &copied), DOCA_SUCCESS);
	EXPECT_EQ(copied, 1500u);
	// The bytes landed in the destination mbuf's buffer, where its data starts.
	EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(dst_mbuf, void *), rte_pktmbuf_mtod(src_mbuf, void *), 1500), 0);
	EXPECT_EQ(rte_pktmbuf_data_len(dst_mbuf), 0) << "the doca_buf's length is not the mbuf's";
	EXPECT_EQ(doca_buf_dec_refcount(src, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(dst, nullptr), DOCA_SUCCESS);
	rte_pktmbuf_free(src_mbuf);
	rte_pktmbuf_free(dst_mbuf);
}

TEST_F(DpdkBridgeTest, AMultiSegmentMbufIsAListOfBufsThatDmaGathers)
{
	const uint16_t lengths[] = {100, 1000, 37};
	rte_mbuf *chain = nullptr;
	std::vector<uint8_t> expected;
	for (int i = 0; i < 3; ++i) {
		rte_mbuf *seg = rte_pktmbuf_alloc(pool);
		ASSERT_NE(seg, nullptr);
		fill(seg, lengths[i], static_cast<uint8_t>(40 * i));
		const auto *bytes = rte_pktmbuf_mtod(seg, const uint8_t *);
		expected.insert(expected.end(), bytes, bytes + lengths[i]);
		if (chain == nullptr)
			chain = seg;
		else
			ASSERT_EQ(rte_pktmbuf_chain(chain, seg), 0);
	}
	doca_buf *list = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, chain, &list), DOCA_SUCCESS);
	uint32_t list_len = 0;
	EXPECT_EQ(doca_buf_get_list_len(list, &list_len), DOCA_SUCCESS);
	EXPECT_EQ(list_len, 3u);
	doca_buf *element = list;
	for (rte_mbuf *seg = chain; seg != nullptr; seg = seg->next) {
		ASSERT_NE(element, nullptr);
		void *data = nullptr;
		size_t data_len = 0;
		EXPECT_EQ(doca_buf_get_data(element, &data), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_get_data_len(element, &data_len), DOCA_SUCCESS);
		EXPECT_EQ(data, rte_pktmbuf_mtod(seg, void *));
		EXPECT_EQ(data_len, seg->data_len);
		EXPECT_EQ(rte_mbuf_refcnt_read(seg), 2);
		doca_buf *next = nullptr;
		EXPECT_EQ(doca_buf_get_next_in_list(element, &next), DOCA_SUCCESS);
		element = next;
	}
	EXPECT_EQ(element, nullptr);

	rte_mbuf *dst_mbuf = rte_pktmbuf_alloc(pool);
	ASSERT_NE(dst_mbuf, nullptr);
	doca_buf *dst = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, dst_mbuf, &dst), DOCA_SUCCESS);
	dma_copy(list, dst);
	EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(dst_mbuf, void *), expected.data(), expected.size()), 0);

	// The application frees the chain; the segments return to the pool with the doca_buf list.
	const unsigned int available = rte_mempool_avail_count(pool);
	rte_pktmbuf_free(chain);
	EXPECT_EQ(rte_mempool_avail_count(pool), available);
	EXPECT_EQ(doca_buf_dec_refcount(list, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(rte_mempool_avail_count(pool), available + 3);
	EXPECT_EQ(doca_buf_dec_refcount(dst, nullptr), DOCA_SUCCESS);
	rte_pktmbuf_free(dst_mbuf);
}

TEST_F(DpdkBridgeTest, AnIndirectMbufGivesItsOwnDataAndReferencesTheDirectOne)
{
	rte_mbuf *direct = rte_pktmbuf_alloc(pool);
	ASSERT_NE(direct, nullptr);
	fill(direct, 200, 3);
	rte_mbuf *clone = rte_pktmbuf_clone(direct, pool);
	ASSERT_NE(clone, nullptr);
	ASSERT_TRUE(rte_pktmbuf_adj(clone, 50) != nullptr);
	EXPECT_EQ(rte_mbuf_refcnt_read(direct), 2);
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, clone, &buf), DOCA_SUCCESS);
	EXPECT_EQ(rte_mbuf_refcnt_read(direct), 3) << "the reference is on the direct mbuf";
	EXPECT_EQ(rte_mbuf_refcnt_read(clone), 1);
	void *data = nullptr;
	size_t data_len = 0;
	EXPECT_EQ(doca_buf_get_data(buf, &data), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_get_data_len(buf, &data_len), DOCA_SUCCESS);
	EXPECT_EQ(data, rte_pktmbuf_mtod(clone, void *));
	EXPECT_EQ(data_len, 150u);
	rte_pktmbuf_free(clone);
	rte_pktmbuf_free(direct);
	EXPECT_EQ(rte_mbuf_refcnt_read(direct), 1);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(DpdkBridgeTest, MbufToBufRefusesForeignMbufsAndTooSmallInventories)
{
	doca_buf *buf = nullptr;
	rte_mbuf *mbuf = rte_pktmbuf_alloc(pool);
	ASSERT_NE(mbuf, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(nullptr, setup.inventory, mbuf, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, nullptr, mbuf, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, nullptr, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, mbuf, nullptr), DOCA_ERROR_INVALID_VALUE);

	// An mbuf of a pool that was not registered.
	rte_mempool *other_pool = make_pktmbuf_pool(63);
	ASSERT_NE(other_pool, nullptr);
	rte_mbuf *foreign = rte_pktmbuf_alloc(other_pool);
	ASSERT_NE(foreign, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, foreign, &buf), DOCA_ERROR_INVALID_VALUE);
	// A chain whose second segment is foreign: nothing is taken from the first.
	ASSERT_EQ(rte_pktmbuf_chain(mbuf, foreign), 0);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, mbuf, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(rte_mbuf_refcnt_read(mbuf), 1);
	rte_pktmbuf_free(mbuf);
	EXPECT_EQ(rte_mempool_avail_count(other_pool), other_pool->size);
	rte_mempool_free(other_pool);

	// An mbuf over external memory.
	static uint8_t external[4096];
	rte_mbuf_ext_shared_info shinfo{};
	shinfo.free_cb = [](void *, void *) {};
	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	rte_mbuf *ext = rte_pktmbuf_alloc(pool);
	ASSERT_NE(ext, nullptr);
	rte_pktmbuf_attach_extbuf(ext, external, reinterpret_cast<rte_iova_t>(external), sizeof(external), &shinfo);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, ext, &buf), DOCA_ERROR_INVALID_VALUE);
	rte_pktmbuf_free(ext);

	// An inventory with fewer free elements than the chain has segments, and one not started.
	doca_buf_inventory *small = nullptr;
	ASSERT_EQ(doca_buf_inventory_create(1, &small), DOCA_SUCCESS);
	rte_mbuf *chain = rte_pktmbuf_alloc(pool);
	rte_mbuf *second = rte_pktmbuf_alloc(pool);
	ASSERT_NE(chain, nullptr);
	ASSERT_NE(second, nullptr);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, small, second, &buf), DOCA_ERROR_INVALID_VALUE)
	    << "inventory not started";
	ASSERT_EQ(rte_pktmbuf_chain(chain, second), 0);
	ASSERT_EQ(doca_buf_inventory_start(small), DOCA_SUCCESS);
	EXPECT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, small, chain, &buf), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(rte_mbuf_refcnt_read(chain), 1);
	EXPECT_EQ(rte_mbuf_refcnt_read(second), 1);
	rte_pktmbuf_free(chain);
	EXPECT_EQ(doca_buf_inventory_destroy(small), DOCA_SUCCESS);
}

TEST(DpdkBridgeMempool, SeveralDevicesShareTheMbufsAndDmaWorksOnEach)
{
	ASSERT_TRUE(eal());
	rte_mempool *mbufs = make_pktmbuf_pool();
	ASSERT_NE(mbufs, nullptr);
	DmaSetup first{1 << 12, 16};
	doca_dev *second = softdpu_test::open_first_device([&](doca_devinfo *info) {
		return info != doca_dev_as_devinfo(first.dev) &&
		       doca_dma_cap_task_memcpy_is_supported(info) == DOCA_SUCCESS;
	});
	ASSERT_NE(second, nullptr) << "the default topology has two DMA-capable functions per side";
	doca_dpdk_mempool *mempool = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_create(mbufs, &mempool), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_dev_add(mempool, first.dev), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_dev_add(mempool, second), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_start(mempool), DOCA_SUCCESS);
	rte_mbuf *src_mbuf = rte_pktmbuf_alloc(mbufs);
	rte_mbuf *dst_mbuf = rte_pktmbuf_alloc(mbufs);
	ASSERT_NE(src_mbuf, nullptr);
	ASSERT_NE(dst_mbuf, nullptr);
	fill(src_mbuf, 512, 77);

	for (doca_dev *dev : {first.dev, second}) {
		Results results;
		doca_pe *pe = nullptr;
		doca_dma *dma = nullptr;
		ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
		ASSERT_EQ(doca_dma_create(dev, &dma), DOCA_SUCCESS);
		ASSERT_EQ(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)), DOCA_SUCCESS);
		ASSERT_EQ(doca_dma_task_memcpy_set_conf(dma, on_success, on_error, 2), DOCA_SUCCESS);
		ASSERT_EQ(doca_ctx_set_user_data(doca_dma_as_ctx(dma), doca_data{.ptr = &results}), DOCA_SUCCESS);
		ASSERT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_SUCCESS);
		std::memset(rte_pktmbuf_mtod(dst_mbuf, void *), 0, 512);
		doca_buf *src = nullptr;
		doca_buf *dst = nullptr;
		ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, first.inventory, src_mbuf, &src), DOCA_SUCCESS);
		ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, first.inventory, dst_mbuf, &dst), DOCA_SUCCESS);
		doca_dma_task_memcpy *task = nullptr;
		ASSERT_EQ(doca_dma_task_memcpy_alloc_init(dma, src, dst, doca_data{}, &task), DOCA_SUCCESS);
		ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
		ASSERT_TRUE(progress_until(pe, [&] { return results.successes + results.errors == 1; }));
		EXPECT_EQ(results.successes, 1);
		EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(dst_mbuf, void *), rte_pktmbuf_mtod(src_mbuf, void *), 512), 0);
		EXPECT_EQ(doca_buf_dec_refcount(src, nullptr), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_dec_refcount(dst, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_ctx_stop(doca_dma_as_ctx(dma)), DOCA_SUCCESS);
		EXPECT_EQ(doca_dma_destroy(dma), DOCA_SUCCESS);
		EXPECT_EQ(doca_pe_destroy(pe), DOCA_SUCCESS);
	}
	rte_pktmbuf_free(src_mbuf);
	rte_pktmbuf_free(dst_mbuf);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(second), DOCA_SUCCESS);
	EXPECT_EQ(rte_mempool_avail_count(mbufs), mbufs->size);
	rte_mempool_free(mbufs);
}

// A pool of mbufs over two separate memory chunks: start registers each as an mmap, and DMA copies
// between mbufs of different chunks.
TEST(DpdkBridgeMempool, EveryMemoryChunkOfThePoolIsRegistered)
{
	ASSERT_TRUE(eal());
	constexpr unsigned int kPerChunk = 16;
	const uint16_t data_room = 2048 + RTE_PKTMBUF_HEADROOM;
	rte_mempool *mbufs = rte_mempool_create_empty("bridge_two_chunks", 2 * kPerChunk, sizeof(rte_mbuf) + data_room,
						      0, sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY, 0);
	ASSERT_NE(mbufs, nullptr);
	ASSERT_EQ(rte_mempool_set_ops_byname(mbufs, rte_mbuf_best_mempool_ops(), nullptr), 0);
	rte_pktmbuf_pool_private private_area{};
	private_area.mbuf_data_room_size = data_room;
	rte_pktmbuf_pool_init(mbufs, &private_area);
	const size_t chunk_len = (kPerChunk + 1) * (mbufs->header_size + mbufs->elt_size + mbufs->trailer_size);
	void *chunks[2] = {std::aligned_alloc(4096, (chunk_len + 4095) / 4096 * 4096),
			   std::aligned_alloc(4096, (chunk_len + 4095) / 4096 * 4096)};
	ASSERT_NE(chunks[0], nullptr);
	ASSERT_NE(chunks[1], nullptr);
	for (void *chunk : chunks)
		ASSERT_GT(rte_mempool_populate_iova(mbufs, static_cast<char *>(chunk), RTE_BAD_IOVA, chunk_len, nullptr,
						    nullptr),
			  0);
	ASSERT_EQ(mbufs->nb_mem_chunks, 2u);
	rte_mempool_obj_iter(mbufs, rte_pktmbuf_init, nullptr);

	DmaSetup setup{1 << 12, 16};
	Results results;
	setup.make_dma(on_success, on_error, 2);
	ASSERT_EQ(doca_ctx_set_user_data(setup.ctx(), doca_data{.ptr = &results}), DOCA_SUCCESS);
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	doca_dpdk_mempool *mempool = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_create(mbufs, &mempool), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_dev_add(mempool, setup.dev), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_start(mempool), DOCA_SUCCESS);

	// One mbuf from each chunk.
	std::vector<rte_mbuf *> taken;
	rte_mbuf *in_chunk[2] = {nullptr, nullptr};
	while (in_chunk[0] == nullptr || in_chunk[1] == nullptr) {
		rte_mbuf *mbuf = rte_pktmbuf_alloc(mbufs);
		ASSERT_NE(mbuf, nullptr);
		taken.push_back(mbuf);
		for (int i = 0; i < 2; ++i) {
			const auto start = reinterpret_cast<uintptr_t>(chunks[i]);
			const auto at = reinterpret_cast<uintptr_t>(mbuf);
			if (at >= start && at < start + chunk_len && in_chunk[i] == nullptr)
				in_chunk[i] = mbuf;
		}
	}
	fill(in_chunk[0], 1000, 21);
	doca_buf *src = nullptr;
	doca_buf *dst = nullptr;
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, in_chunk[0], &src), DOCA_SUCCESS);
	ASSERT_EQ(doca_dpdk_mempool_mbuf_to_buf(mempool, setup.inventory, in_chunk[1], &dst), DOCA_SUCCESS);
	doca_dma_task_memcpy *task = nullptr;
	ASSERT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, doca_data{}, &task), DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes + results.errors == 1; }));
	EXPECT_EQ(results.successes, 1);
	EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(in_chunk[1], void *), rte_pktmbuf_mtod(in_chunk[0], void *), 1000), 0);
	EXPECT_EQ(doca_buf_dec_refcount(src, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(dst, nullptr), DOCA_SUCCESS);
	for (rte_mbuf *mbuf : taken)
		rte_pktmbuf_free(mbuf);
	EXPECT_EQ(doca_dpdk_mempool_destroy(mempool), DOCA_SUCCESS);
	EXPECT_EQ(rte_mempool_avail_count(mbufs), mbufs->populated_size);
	rte_mempool_free(mbufs);
	std::free(chunks[0]);
	std::free(chunks[1]);
}

} // namespace
