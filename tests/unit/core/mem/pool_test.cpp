// doca_buf_pool.h: element layout, alignment, state, counts.
#include "core/mem/buf.hpp"
#include "mem_fixture.hpp"

#include <doca_buf_pool.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace {

class Pool : public mem_test::StartedMmap {
protected:
	void TearDown() override
	{
		if (pool != nullptr) {
			EXPECT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
		}
		StartedMmap::TearDown();
	}
	doca_buf *alloc()
	{
		doca_buf *buf = nullptr;
		EXPECT_EQ(doca_buf_pool_buf_alloc(pool, &buf), DOCA_SUCCESS);
		return buf;
	}
	uint32_t pool_free() const
	{
		uint32_t n = 0;
		EXPECT_EQ(doca_buf_pool_get_num_free_elements(pool, &n), DOCA_SUCCESS);
		return n;
	}
	doca_buf_pool *pool = nullptr;
};

TEST_F(Pool, CreateRejectsInvalidInput)
{
	doca_buf_pool *p = nullptr;
	EXPECT_EQ(doca_buf_pool_create(0, 64, mmap, &p), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_create(4, 0, mmap, &p), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_create(4, 64, nullptr, &p), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_create(4, 64, mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_create(size_t{UINT32_MAX} + 1, 64, mmap, &p), DOCA_ERROR_INVALID_VALUE);
}

TEST(PoolCreate, MmapNeedsAMemrange)
{
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	doca_buf_pool *pool = nullptr;
	EXPECT_EQ(doca_buf_pool_create(4, 64, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
}

TEST(PoolNullArgs, EveryFunctionRejectsNull)
{
	uint32_t count = 0;
	size_t alignment = 0;
	union doca_data data = {};
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_pool_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_buf_alloc(nullptr, &buf), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_num_elements(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_num_free_elements(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_set_element_alignment(nullptr, 8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_element_alignment(nullptr, &alignment), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_set_user_data(nullptr, data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_user_data(nullptr, &data), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Pool, GettersRejectNullOutputs)
{
	ASSERT_EQ(doca_buf_pool_create(4, 64, mmap, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_get_num_elements(pool, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_num_free_elements(pool, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_element_alignment(pool, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_get_user_data(pool, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_buf_alloc(pool, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Pool, DefaultsAndCounts)
{
	ASSERT_EQ(doca_buf_pool_create(4, 64, mmap, &pool), DOCA_SUCCESS);
	size_t alignment = 0;
	ASSERT_EQ(doca_buf_pool_get_element_alignment(pool, &alignment), DOCA_SUCCESS);
	EXPECT_EQ(alignment, 1u);
	union doca_data data = {.u64 = 3};
	ASSERT_EQ(doca_buf_pool_get_user_data(pool, &data), DOCA_SUCCESS);
	EXPECT_EQ(data.u64, 0u);
	uint32_t total = 0;
	ASSERT_EQ(doca_buf_pool_get_num_elements(pool, &total), DOCA_SUCCESS);
	EXPECT_EQ(total, 4u);
	EXPECT_EQ(pool_free(), 4u);
}

TEST_F(Pool, AllocGivesEmptyBuffersOverConsecutiveElements)
{
	ASSERT_EQ(doca_buf_pool_create(4, 100, mmap, &pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	std::vector<void *> heads;
	std::vector<doca_buf *> bufs;
	for (int i = 0; i < 4; ++i) {
		doca_buf *buf = alloc();
		EXPECT_EQ(buf->len(), 100u);
		EXPECT_EQ(buf->data(), buf->head());
		EXPECT_EQ(buf->data_len(), 0u);
		EXPECT_EQ(buf->mmap(), mmap);
		heads.push_back(buf->head());
		bufs.push_back(buf);
	}
	std::sort(heads.begin(), heads.end());
	for (int i = 0; i < 4; ++i)
		EXPECT_EQ(heads[i], at(i * 100));
	EXPECT_EQ(pool_free(), 0u);
	EXPECT_EQ(num_bufs(), 4u);
	doca_buf *extra = nullptr;
	EXPECT_EQ(doca_buf_pool_buf_alloc(pool, &extra), DOCA_ERROR_EMPTY);
	// A returned buffer comes back reset, even after set_data and chaining.
	ASSERT_EQ(doca_buf_set_data(bufs[0], bufs[0]->head(), 50), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_chain_list(bufs[0], bufs[1]), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_dec_refcount(bufs[0], nullptr), DOCA_SUCCESS);
	EXPECT_EQ(pool_free(), 2u);
	doca_buf *again = alloc();
	doca_buf *again2 = alloc();
	for (doca_buf *buf : {again, again2}) {
		EXPECT_EQ(buf->data_len(), 0u);
		EXPECT_EQ(buf->data(), buf->head());
		EXPECT_EQ(buf->next_in_list(), nullptr);
		EXPECT_TRUE(buf->is_list_head());
		EXPECT_EQ(buf->list_len(), 1u);
	}
	for (doca_buf *buf : {again, again2, bufs[2], bufs[3]})
		ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 0u);
}

TEST_F(Pool, AlignmentSpacesElements)
{
	ASSERT_EQ(doca_buf_pool_create(3, 100, mmap, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_set_element_alignment(pool, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_pool_set_element_alignment(pool, 48), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_pool_set_element_alignment(pool, 128), DOCA_SUCCESS);
	size_t alignment = 0;
	ASSERT_EQ(doca_buf_pool_get_element_alignment(pool, &alignment), DOCA_SUCCESS);
	EXPECT_EQ(alignment, 128u);
	ASSERT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	std::vector<doca_buf *> bufs = {alloc(), alloc(), alloc()};
	std::vector<uintptr_t> heads;
	for (doca_buf *buf : bufs) {
		EXPECT_EQ(reinterpret_cast<uintptr_t>(buf->head()) % 128, 0u);
		EXPECT_EQ(buf->len(), 100u);
		heads.push_back(reinterpret_cast<uintptr_t>(buf->head()));
	}
	std::sort(heads.begin(), heads.end());
	EXPECT_EQ(heads[1] - heads[0], 128u);
	EXPECT_EQ(heads[2] - heads[1], 128u);
	for (doca_buf *buf : bufs)
		ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
}

TEST_F(Pool, StartNeedsEnoughMemory)
{
	// 4096 bytes hold 40 elements of 100 but not 41.
	ASSERT_EQ(doca_buf_pool_create(41, 100, mmap, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	ASSERT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_create(40, 100, mmap, &pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_stop(pool), DOCA_SUCCESS);
	// With 128-byte alignment only 32 fit (the last one needs just its 100 bytes).
	ASSERT_EQ(doca_buf_pool_set_element_alignment(pool, 128), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	ASSERT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_create(32, 100, mmap, &pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_set_element_alignment(pool, 128), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	// An element larger than the whole range.
	ASSERT_EQ(doca_buf_pool_stop(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_create(1, SIZE_MAX, mmap, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
}

TEST_F(Pool, StartNeedsAStartedMmap)
{
	std::array<uint8_t, 256> other_memory{};
	doca_mmap *other = nullptr;
	ASSERT_EQ(doca_mmap_create(&other), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(other, other_memory.data(), other_memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_create(2, 64, other, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_mmap_start(other), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS); // implicit stop
	pool = nullptr;
	EXPECT_EQ(doca_mmap_destroy(other), DOCA_SUCCESS);
}

TEST_F(Pool, StateErrors)
{
	ASSERT_EQ(doca_buf_pool_create(2, 64, mmap, &pool), DOCA_SUCCESS);
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_pool_buf_alloc(pool, &buf), DOCA_ERROR_BAD_STATE); // not started
	EXPECT_EQ(doca_buf_pool_stop(pool), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_buf_pool_start(pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
	union doca_data data = {.u64 = 1};
	EXPECT_EQ(doca_buf_pool_set_user_data(pool, data), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_buf_pool_set_element_alignment(pool, 8), DOCA_ERROR_BAD_STATE);
	buf = alloc();
	EXPECT_EQ(doca_buf_pool_stop(pool), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_buf_pool_destroy(pool), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_pool_stop(pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_pool_buf_alloc(pool, &buf), DOCA_ERROR_BAD_STATE); // stopped
	ASSERT_EQ(doca_buf_pool_set_user_data(pool, data), DOCA_SUCCESS);     // configurable again
	union doca_data read = {};
	ASSERT_EQ(doca_buf_pool_get_user_data(pool, &read), DOCA_SUCCESS);
	EXPECT_EQ(read.u64, 1u);
}

} // namespace
