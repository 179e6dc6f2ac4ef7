// After start, the memory subsystem's data path (getting, duplicating, chaining, releasing
// buffers) makes no heap allocation.
#include "support/alloc_counter.h"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_mmap.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace {

class MemDataPath : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inventory_create(64, &inventory), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_pool_create(32, 64, mmap, &pool), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		EXPECT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
		EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}
	std::array<uint8_t, 4096> memory{};
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
	doca_buf_pool *pool = nullptr;
};

TEST_F(MemDataPath, InventoryGetAndReleaseAllocateNothing)
{
	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 100; ++round) {
		doca_buf *bufs[64];
		for (int i = 0; i < 64; ++i) {
			ASSERT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, memory.data() + i, 64,
								     memory.data() + i, 8, &bufs[i]),
				  DOCA_SUCCESS);
		}
		doca_buf *none = nullptr;
		ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory.data(), 1, &none),
			  DOCA_ERROR_NO_MEMORY);
		for (doca_buf *buf : bufs)
			ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	}
	EXPECT_EQ(scope.count(), 0u);
}

TEST_F(MemDataPath, PoolAllocAndReleaseAllocateNothing)
{
	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 100; ++round) {
		doca_buf *bufs[32];
		for (auto &buf : bufs)
			ASSERT_EQ(doca_buf_pool_buf_alloc(pool, &buf), DOCA_SUCCESS);
		doca_buf *none = nullptr;
		ASSERT_EQ(doca_buf_pool_buf_alloc(pool, &none), DOCA_ERROR_EMPTY);
		for (doca_buf *buf : bufs)
			ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	}
	EXPECT_EQ(scope.count(), 0u);
}

TEST_F(MemDataPath, ChainUnchainDupAndRefcountsAllocateNothing)
{
	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 100; ++round) {
		doca_buf *a = nullptr;
		doca_buf *b = nullptr;
		doca_buf *c = nullptr;
		ASSERT_EQ(doca_buf_inventory_buf_get_by_data(inventory, mmap, memory.data(), 16, &a), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_pool_buf_alloc(pool, &b), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_pool_buf_alloc(pool, &c), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_chain_list(a, b), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_chain_list(a, c), DOCA_SUCCESS);
		doca_buf *copy = nullptr;
		ASSERT_EQ(doca_buf_inventory_buf_dup(inventory, a, &copy), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inc_refcount(a, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_set_data(a, memory.data() + 2, 4), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_set_data(a, memory.data() + 2, 4096), DOCA_ERROR_INVALID_VALUE);
		ASSERT_EQ(doca_buf_unchain_list(a, c), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_unchain_list(a, b), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_dec_refcount(copy, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_dec_refcount(a, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_dec_refcount(b, nullptr), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_dec_refcount(c, nullptr), DOCA_SUCCESS);
	}
	EXPECT_EQ(scope.count(), 0u);
}

TEST_F(MemDataPath, TheCounterSeesAllocations)
{
	// Guards the tests above against a counter that never counts.
	softdpu_test::AllocationScope scope;
	doca_buf_inventory *extra = nullptr;
	ASSERT_EQ(doca_buf_inventory_create(4, &extra), DOCA_SUCCESS);
	EXPECT_GT(scope.count(), 0u);
	ASSERT_EQ(doca_buf_inventory_destroy(extra), DOCA_SUCCESS);
}

} // namespace
