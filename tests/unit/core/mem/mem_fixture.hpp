// Shared set-up for the memory subsystem tests: a started mmap over a local byte array.
#pragma once

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace mem_test {

inline constexpr size_t kMemorySize = 4096;

class StartedMmap : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inventory_create(16, &inventory), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}

	// A buffer over memory[offset, offset + len) with data [offset + data_offset, + data_len).
	doca_buf *get(size_t offset, size_t len, size_t data_offset = 0, size_t data_len = 0)
	{
		doca_buf *buf = nullptr;
		EXPECT_EQ(doca_buf_inventory_buf_get_by_args(inventory, mmap, at(offset), len, at(offset + data_offset),
							     data_len, &buf),
			  DOCA_SUCCESS);
		return buf;
	}
	uint8_t *at(size_t offset) { return memory.data() + offset; }
	uint32_t num_bufs() const
	{
		uint32_t n = 0;
		EXPECT_EQ(doca_mmap_get_num_bufs(mmap, &n), DOCA_SUCCESS);
		return n;
	}
	uint32_t free_elements() const
	{
		uint32_t n = 0;
		EXPECT_EQ(doca_buf_inventory_get_num_free_elements(inventory, &n), DOCA_SUCCESS);
		return n;
	}

	// 128-byte aligned so the pool alignment tests know where the first aligned element is.
	alignas(128) std::array<uint8_t, kMemorySize> memory{};
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
};

} // namespace mem_test
