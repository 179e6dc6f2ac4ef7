// doca_buf_inventory.h: creation, state, getting buffers in range, duplication, counts.
#include "core/mem/buf.hpp"
#include "core/mem/testing.hpp"
#include "mem_fixture.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using Inventory = mem_test::StartedMmap;

TEST(InventoryCreate, RejectsInvalidInput)
{
	doca_buf_inventory *inventory = nullptr;
	EXPECT_EQ(doca_buf_inventory_create(4, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_create(0, &inventory), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_create(size_t{UINT32_MAX} + 1, &inventory), DOCA_ERROR_INVALID_VALUE);
}

TEST(InventoryNullArgs, EveryFunctionRejectsNull)
{
	uint32_t count = 0;
	union doca_data data = {};
	doca_buf *buf = nullptr;
	int byte = 0;
	EXPECT_EQ(doca_buf_inventory_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_get_num_elements(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_get_num_free_elements(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_set_user_data(nullptr, data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_get_user_data(nullptr, &data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_dup(nullptr, nullptr, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(nullptr, nullptr, &byte, 1, &byte, 0, &buf),
		  DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Inventory, GettersRejectNullOutputs)
{
	EXPECT_EQ(doca_buf_inventory_get_num_elements(inventory, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_get_num_free_elements(inventory, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_get_user_data(inventory, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Inventory, GetByArgsRejectsNullArguments)
{
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, nullptr, at(0), 8, at(0), 0, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, nullptr, 8, at(0), 0, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(0), 8, nullptr, 0, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(0), 8, at(0), 0, nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Inventory, ByAddrHasEmptyDataAtTheStart)
{
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(64), 128, &buf), DOCA_SUCCESS);
	EXPECT_EQ(buf->head(), at(64));
	EXPECT_EQ(buf->len(), 128u);
	EXPECT_EQ(buf->data(), at(64));
	EXPECT_EQ(buf->data_len(), 0u);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Inventory, ByDataMakesTheWholeBufferData)
{
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_data(inventory, mmap, at(64), 128, &buf), DOCA_SUCCESS);
	EXPECT_EQ(buf->head(), at(64));
	EXPECT_EQ(buf->len(), 128u);
	EXPECT_EQ(buf->data(), at(64));
	EXPECT_EQ(buf->data_len(), 128u);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_get_refcount(buf, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Inventory, BuffersMustLieInTheMemrange)
{
	doca_buf *buf = nullptr;
	const size_t size = mem_test::kMemorySize;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(0), size + 1, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(size - 4), 8, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory.data() - 1, 8, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(8), SIZE_MAX, &buf), DOCA_ERROR_INVALID_VALUE);
	// The whole range, and an empty buffer at its very end, are fine.
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(0), size, &buf), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(size), 0, &buf), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Inventory, DataMustLieInTheBuffer)
{
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(100), 100, at(99), 1, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(100), 100, at(150), 51, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(100), 100, at(201), 0, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(100), 100, at(150), SIZE_MAX, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(100), 100, at(150), 50, &buf), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Inventory, EmptyInventoryIsNoMemory)
{
	doca_buf *bufs[16];
	for (auto &buf : bufs)
		buf = get(0, 8);
	EXPECT_EQ(free_elements(), 0u);
	EXPECT_EQ(num_bufs(), 16u);
	doca_buf *extra = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(0), 8, &extra), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_data(inventory, mmap, at(0), 8, &extra), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(0), 8, at(0), 4, &extra),
		  DOCA_ERROR_NO_MEMORY);
	for (auto *buf : bufs)
		ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Inventory, InventoryAndMmapMustBeStarted)
{
	doca_buf *buf = nullptr;
	ASSERT_EQ(doca_buf_inventory_stop(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(0), 8, &buf), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, at(0), 8, &buf), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
}

TEST(InventoryState, NeverStartedInventoryRefusesBuffers)
{
	std::array<uint8_t, 64> memory{};
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inventory_create(2, &inventory), DOCA_SUCCESS);
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory.data(), 8, &buf), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_buf_inventory_stop(inventory), DOCA_ERROR_BAD_STATE);
	union doca_data data = {.u64 = 1};
	EXPECT_EQ(doca_buf_inventory_set_user_data(inventory, data), DOCA_ERROR_BAD_STATE); // as documented
	EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
}

TEST_F(Inventory, StartTwiceIsBadState)
{
	EXPECT_EQ(doca_buf_inventory_start(inventory), DOCA_ERROR_BAD_STATE);
}

TEST_F(Inventory, StoppedInventoryStillTakesBuffersBack)
{
	doca_buf *buf = get(0, 8);
	ASSERT_EQ(doca_buf_inventory_stop(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
	ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
}

TEST_F(Inventory, DestroyWithBuffersOutIsInUse)
{
	doca_buf *buf = get(0, 8);
	EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Inventory, Counts)
{
	uint32_t total = 0;
	ASSERT_EQ(doca_buf_inventory_get_num_elements(inventory, &total), DOCA_SUCCESS);
	EXPECT_EQ(total, 16u);
	doca_buf *a = get(0, 8);
	doca_buf *b = get(8, 8);
	EXPECT_EQ(free_elements(), 14u);
	ASSERT_EQ(doca_buf_inventory_get_num_elements(inventory, &total), DOCA_SUCCESS);
	EXPECT_EQ(total, 16u);
	ASSERT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_dec_refcount(b, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Inventory, UserDataRoundTrip)
{
	union doca_data data = {};
	ASSERT_EQ(doca_buf_inventory_get_user_data(inventory, &data), DOCA_SUCCESS);
	EXPECT_EQ(data.u64, 0u);
	data.ptr = this;
	ASSERT_EQ(doca_buf_inventory_set_user_data(inventory, data), DOCA_SUCCESS);
	union doca_data read = {};
	ASSERT_EQ(doca_buf_inventory_get_user_data(inventory, &read), DOCA_SUCCESS);
	EXPECT_EQ(read.ptr, this);
}

TEST_F(Inventory, DupCopiesTheDescriptor)
{
	doca_buf *src = get(100, 100, 10, 20);
	ASSERT_EQ(doca_buf_inc_refcount(src, nullptr), DOCA_SUCCESS);
	doca_buf *copy = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_dup(inventory, src, &copy), DOCA_SUCCESS);
	EXPECT_NE(copy, src);
	EXPECT_EQ(copy->head(), src->head());
	EXPECT_EQ(copy->len(), src->len());
	EXPECT_EQ(copy->data(), src->data());
	EXPECT_EQ(copy->data_len(), src->data_len());
	EXPECT_EQ(copy->mmap(), mmap);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_get_refcount(copy, &refcount), DOCA_SUCCESS);
	EXPECT_EQ(refcount, 1); // a fresh descriptor, not the source's count
	EXPECT_EQ(num_bufs(), 2u);
	// Independent: changing the copy leaves the source alone.
	ASSERT_EQ(doca_buf_reset_data_len(copy), DOCA_SUCCESS);
	EXPECT_EQ(src->data_len(), 20u);
	EXPECT_EQ(doca_buf_dec_refcount(copy, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(src, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(src, nullptr), DOCA_SUCCESS);
}

TEST_F(Inventory, DupOfAListCopiesEveryElement)
{
	doca_buf *a = get(0, 10, 0, 5);
	doca_buf *b = get(10, 10, 2, 3);
	ASSERT_EQ(doca_buf_chain_list(a, b), DOCA_SUCCESS);
	doca_buf *copy = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_SUCCESS);
	uint32_t n = 0;
	ASSERT_EQ(doca_buf_get_list_len(copy, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 2u);
	doca_buf *second = copy->next_in_list();
	ASSERT_NE(second, nullptr);
	EXPECT_NE(second, b);
	EXPECT_EQ(second->data(), b->data());
	EXPECT_EQ(second->data_len(), 3u);
	EXPECT_FALSE(second->is_list_head());
	EXPECT_EQ(doca_buf_dec_refcount(copy, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(free_elements(), 16u);
}

TEST_F(Inventory, DupErrors)
{
	doca_buf *a = get(0, 10);
	doca_buf *b = get(10, 10);
	ASSERT_EQ(doca_buf_chain_list(a, b), DOCA_SUCCESS);
	doca_buf *copy = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, nullptr, &copy), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, a, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, b, &copy), DOCA_ERROR_NOT_PERMITTED); // not the head
	// Not enough free descriptors for the whole list.
	doca_buf *fill[13];
	for (auto &buf : fill)
		buf = get(0, 1);
	EXPECT_EQ(free_elements(), 1u);
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(free_elements(), 1u); // nothing taken
	for (auto *buf : fill)
		ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	// Inventory stopped, then mmap stopped.
	ASSERT_EQ(doca_buf_inventory_stop(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	// The mmap cannot be stopped while a points into it; simulate it.
	softdpu::mem::testing::MmapAccess::set_started(*a->mmap(), false);
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_ERROR_BAD_STATE);
	softdpu::mem::testing::MmapAccess::set_started(*a->mmap(), true);
	ASSERT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS);
	// A released descriptor is not a valid source.
	EXPECT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Inventory, BuffersFromTwoInventoriesOverOneMmap)
{
	doca_buf_inventory *second = nullptr;
	ASSERT_EQ(doca_buf_inventory_create(1, &second), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inventory_start(second), DOCA_SUCCESS);
	doca_buf *a = get(0, 8);
	doca_buf *b = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(second, mmap, at(8), 8, &b), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 2u);
	ASSERT_EQ(doca_buf_chain_list(a, b), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS); // each goes home
	uint32_t free_in_second = 0;
	ASSERT_EQ(doca_buf_inventory_get_num_free_elements(second, &free_in_second), DOCA_SUCCESS);
	EXPECT_EQ(free_in_second, 1u);
	EXPECT_EQ(free_elements(), 16u);
	EXPECT_EQ(doca_buf_inventory_destroy(second), DOCA_SUCCESS);
}

} // namespace

// Threads with inventories of their own take and release buffers over one shared mmap at once (as
// DPDK lcores converting mbufs of one mempool do): the mmap's count of buffers stays exact, and
// destroy is refused while any is out. Runs under TSan with the other Concurrent suites.
TEST(InventoryConcurrent, ThreadsWithTheirOwnInventoriesShareOneMmap)
{
	constexpr int kThreads = 4;
	constexpr int kRounds = 2000;
	constexpr size_t kHeld = 8;
	static std::array<uint8_t, 4096> memory{};
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);

	std::vector<doca_buf_inventory *> inventories(kThreads, nullptr);
	for (auto &inventory : inventories) {
		ASSERT_EQ(doca_buf_inventory_create(kHeld, &inventory), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	}
	std::atomic<int> failures{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; ++t) {
		threads.emplace_back([&, t] {
			std::array<doca_buf *, kHeld> held{};
			for (int round = 0; round < kRounds; ++round) {
				for (size_t i = 0; i < kHeld; ++i) {
					if (doca_buf_inventory_buf_get_by_addr(inventories[t], mmap,
									       memory.data() + (t * kHeld + i) * 64, 64,
									       &held[i]) != DOCA_SUCCESS)
						failures.fetch_add(1);
				}
				for (doca_buf *buf : held) {
					uint16_t refcount = 0;
					if (buf == nullptr || doca_buf_dec_refcount(buf, &refcount) != DOCA_SUCCESS)
						failures.fetch_add(1);
				}
			}
		});
	}
	for (auto &thread : threads)
		thread.join();
	EXPECT_EQ(failures.load(), 0);
	uint32_t count = 1;
	ASSERT_EQ(doca_mmap_get_num_bufs(mmap, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 0u);

	doca_buf *last = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventories[0], mmap, memory.data(), 64, &last), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	uint16_t refcount = 0;
	ASSERT_EQ(doca_buf_dec_refcount(last, &refcount), DOCA_SUCCESS);
	for (auto *inventory : inventories)
		EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
}
