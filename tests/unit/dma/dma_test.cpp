// DMA memcpy tasks on a PE: data movement, gather/scatter, append semantics, validation and the
// documented error returns of doca_dma.h.
#include <gtest/gtest.h>

#include <poll.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "device/engine/copy_engine.hpp"
#include "device/topology.hpp"
#include "support/dma_fixture.h"
#include "support/topology_with_caps.hpp"

using softdpu_test::DmaSetup;
using softdpu_test::progress_until;

namespace {

struct Results {
	int successes = 0;
	int errors = 0;
	std::vector<doca_error_t> error_codes;
};

void on_success(doca_dma_task_memcpy *task, union doca_data task_data, union doca_data)
{
	static_cast<Results *>(task_data.ptr)->successes++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void on_error(doca_dma_task_memcpy *task, union doca_data task_data, union doca_data)
{
	auto *results = static_cast<Results *>(task_data.ptr);
	results->errors++;
	results->error_codes.push_back(doca_task_get_status(doca_dma_task_memcpy_as_task(task)));
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void fill_pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; ++i)
		p[i] = static_cast<uint8_t>(seed + i * 7);
}

class DmaTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		setup.make_dma(on_success, on_error, 64);
		ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	}

	doca_dma_task_memcpy *alloc(doca_buf *src, doca_buf *dst)
	{
		doca_dma_task_memcpy *task = nullptr;
		union doca_data data;
		data.ptr = &results;
		EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &task), DOCA_SUCCESS);
		return task;
	}

	Results results;
	DmaSetup setup{4 << 20};
};

// A DMA context holds the copy engine from its first start until it is destroyed.
TEST(DmaEngine, ADmaContextHoldsTheCopyEngine)
{
	auto &engine = softdpu::device::CopyEngine::instance();
	const size_t users = engine.users();
	{
		DmaSetup setup;
		setup.make_dma(on_success, on_error, 4);
		EXPECT_EQ(engine.users(), users);
		ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
		EXPECT_EQ(engine.users(), users + 1);
		ASSERT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS);
	}
	EXPECT_EQ(engine.users(), users);
}

TEST_F(DmaTest, CopiesSourceDataIntoEmptyDestination)
{
	uint8_t *arena = setup.arena.data();
	fill_pattern(arena, 1024, 3);
	doca_buf *src = setup.buf(0, 1024, 1024);
	doca_buf *dst = setup.buf(4096, 1024, 0);
	doca_dma_task_memcpy *task = alloc(src, dst);
	EXPECT_EQ(doca_dma_task_memcpy_get_src(task), src);
	EXPECT_EQ(doca_dma_task_memcpy_get_dst(task), dst);
	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	EXPECT_EQ(results.successes, 0) << "completions are delivered only inside doca_pe_progress";
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes == 1; }));
	EXPECT_EQ(doca_pe_progress(setup.pe), 0) << "nothing left to do";
	EXPECT_EQ(std::memcmp(arena, arena + 4096, 1024), 0);
	size_t len = 0;
	doca_buf_get_data_len(dst, &len);
	EXPECT_EQ(len, 1024u);
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}

TEST_F(DmaTest, DestinationAppendsAfterExistingData)
{
	uint8_t *arena = setup.arena.data();
	fill_pattern(arena, 100, 1);
	std::memset(arena + 1000, 0xAB, 50); // existing destination data
	doca_buf *src = setup.buf(0, 100, 100);
	doca_buf *dst = setup.buf(1000, 200, 50);
	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(alloc(src, dst))), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes == 1; }));
	size_t len = 0;
	doca_buf_get_data_len(dst, &len);
	EXPECT_EQ(len, 150u);
	for (int i = 0; i < 50; ++i)
		ASSERT_EQ(arena[1000 + i], 0xAB) << "existing data must be kept";
	EXPECT_EQ(std::memcmp(arena, arena + 1050, 100), 0);
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}

TEST_F(DmaTest, GathersSourceListAndScattersOverDestinationList)
{
	uint8_t *arena = setup.arena.data();
	fill_pattern(arena, 3000, 9);
	// Source: three pieces with data of 100, 700 and 200 bytes (1000 in all).
	doca_buf *s1 = setup.buf(0, 500, 100);
	doca_buf *s2 = setup.buf(1000, 1000, 700);
	doca_buf *s3 = setup.buf(2500, 500, 200);
	ASSERT_EQ(doca_buf_chain_list(s1, s2), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_chain_list(s1, s3), DOCA_SUCCESS);
	// Destination: 300 bytes of room, then 400 (with 100 already there), then 1000.
	doca_buf *d1 = setup.buf(10000, 300, 0);
	doca_buf *d2 = setup.buf(11000, 500, 100);
	doca_buf *d3 = setup.buf(12000, 1000, 0);
	ASSERT_EQ(doca_buf_chain_list(d1, d2), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_chain_list(d1, d3), DOCA_SUCCESS);

	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(alloc(s1, d1))), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes == 1; }));

	std::vector<uint8_t> expected;
	expected.insert(expected.end(), arena, arena + 100);
	expected.insert(expected.end(), arena + 1000, arena + 1700);
	expected.insert(expected.end(), arena + 2500, arena + 2700);
	std::vector<uint8_t> got;
	got.insert(got.end(), arena + 10000, arena + 10300);
	got.insert(got.end(), arena + 11100, arena + 11500);
	got.insert(got.end(), arena + 12000, arena + 12300);
	EXPECT_EQ(got, expected);
	size_t l1 = 0, l2 = 0, l3 = 0;
	doca_buf_get_data_len(d1, &l1);
	doca_buf_get_data_len(d2, &l2);
	doca_buf_get_data_len(d3, &l3);
	EXPECT_EQ(l1, 300u);
	EXPECT_EQ(l2, 500u);
	EXPECT_EQ(l3, 300u);
	doca_buf_dec_refcount(s1, nullptr);
	doca_buf_dec_refcount(d1, nullptr);
}

TEST_F(DmaTest, LargeCopiesRunOnTheEngineWithoutProgress)
{
	constexpr size_t kSize = 2 << 20;
	uint8_t *arena = setup.arena.data();
	fill_pattern(arena, kSize, 5);
	doca_buf *src = setup.buf(0, kSize, kSize);
	doca_buf *dst = setup.buf(kSize, kSize, 0);
	doca_notification_handle_t fd;
	ASSERT_EQ(doca_pe_get_notification_handle(setup.pe, &fd), DOCA_SUCCESS);
	ASSERT_EQ(doca_pe_request_notification(setup.pe), DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(alloc(src, dst))), DOCA_SUCCESS);
	// The engine copies while this thread makes no DOCA call: the armed PE's fd becomes readable
	// once the copy is done, and the callback still waits for doca_pe_progress.
	pollfd pfd{fd, POLLIN, 0};
	ASSERT_EQ(poll(&pfd, 1, 10'000), 1);
	ASSERT_EQ(doca_pe_clear_notification(setup.pe, fd), DOCA_SUCCESS);
	EXPECT_EQ(results.successes, 0);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes == 1; }));
	EXPECT_EQ(std::memcmp(arena, arena + kSize, kSize), 0);
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}

TEST_F(DmaTest, TrySubmitRejectsInvalidTasksAndLeavesThemWithTheCaller)
{
	doca_buf *empty_src = setup.buf(0, 100, 0);
	doca_buf *src = setup.buf(0, 100, 100);
	doca_buf *small_dst = setup.buf(1000, 50, 0);
	doca_buf *dst = setup.buf(2000, 100, 0);

	doca_dma_task_memcpy *task = alloc(empty_src, dst);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_src(task, src);
	doca_dma_task_memcpy_set_dst(task, small_dst);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_dst(task, nullptr);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_dst(task, dst);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.successes == 1; }));
	EXPECT_EQ(results.errors, 0);
	for (doca_buf *b : {empty_src, src, small_dst, dst})
		doca_buf_dec_refcount(b, nullptr);
}

TEST_F(DmaTest, BuffersOfAnMmapWithoutTheDeviceOrReadOnlyAreRejected)
{
	std::vector<uint8_t> other(4096);
	doca_mmap *no_dev = nullptr;
	ASSERT_EQ(doca_mmap_create(&no_dev), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(no_dev, other.data(), 2048), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(no_dev), DOCA_SUCCESS);
	doca_mmap *read_only = nullptr;
	ASSERT_EQ(doca_mmap_create(&read_only), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(read_only, other.data() + 2048, 2048), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_permissions(read_only, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_add_dev(read_only, setup.dev), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(read_only), DOCA_SUCCESS);

	doca_buf *src = setup.buf(0, 100, 100);
	doca_buf *unmapped_dst = nullptr;
	doca_buf *read_only_dst = nullptr;
	ASSERT_EQ(doca_buf_inventory_buf_get_by_addr(setup.inventory, no_dev, other.data(), 100, &unmapped_dst),
		  DOCA_SUCCESS);
	ASSERT_EQ(
	    doca_buf_inventory_buf_get_by_addr(setup.inventory, read_only, other.data() + 2048, 100, &read_only_dst),
	    DOCA_SUCCESS);
	doca_dma_task_memcpy *task = alloc(src, unmapped_dst);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_dst(task, read_only_dst);
	EXPECT_EQ(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	// Submitted without validation, the task fails in "hardware" with the access error.
	ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results.errors == 1; }));
	EXPECT_EQ(results.error_codes.at(0), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(other[2048], 0) << "nothing was written to read-only memory";

	for (doca_buf *b : {src, unmapped_dst, read_only_dst})
		doca_buf_dec_refcount(b, nullptr);
	enum doca_ctx_states state;
	ASSERT_TRUE(progress_until(setup.pe, [&] {
		doca_ctx_get_state(setup.ctx(), &state);
		return state == DOCA_CTX_STATE_IDLE;
	}));
	for (doca_mmap *m : {no_dev, read_only}) {
		EXPECT_EQ(doca_mmap_stop(m), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_destroy(m), DOCA_SUCCESS);
	}
}

TEST_F(DmaTest, PoolExhaustionAndStateErrors)
{
	std::vector<doca_dma_task_memcpy *> tasks;
	for (int i = 0; i < 64; ++i)
		tasks.push_back(alloc(nullptr, nullptr));
	doca_dma_task_memcpy *extra = nullptr;
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, nullptr, nullptr, {}, &extra), DOCA_ERROR_NO_MEMORY);
	for (auto *task : tasks)
		doca_task_free(doca_dma_task_memcpy_as_task(task));
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, nullptr, nullptr, {}, &extra), DOCA_SUCCESS);
	doca_task_free(doca_dma_task_memcpy_as_task(extra));

	// Configuration only while idle; destroy only while idle.
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(setup.dma, on_success, on_error, 8), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_dma_destroy(setup.dma), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_ctx_start(setup.ctx()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS);
	// Stopping a stopped context is a no-op that succeeds (NVIDIA's dma_local_copy relies on it).
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS);
	doca_ctx_states state = DOCA_CTX_STATE_RUNNING;
	EXPECT_EQ(doca_ctx_get_state(setup.ctx(), &state), DOCA_SUCCESS);
	EXPECT_EQ(state, DOCA_CTX_STATE_IDLE);
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, nullptr, nullptr, {}, &extra), DOCA_ERROR_BAD_STATE);
}

TEST(DmaApi, DocumentedArgumentErrors)
{
	DmaSetup setup;
	doca_dma *dma = nullptr;
	EXPECT_EQ(doca_dma_create(nullptr, &dma), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_create(setup.dev, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_as_ctx(nullptr), nullptr);
	EXPECT_EQ(doca_dma_cap_task_memcpy_is_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
	uint32_t u32 = 0;
	uint64_t u64 = 0;
	doca_devinfo *devinfo = doca_dev_as_devinfo(setup.dev);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_list_len(nullptr, &u32), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_list_len(devinfo, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_size(nullptr, &u64), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_list_len(devinfo, &u32), DOCA_SUCCESS);
	EXPECT_GT(u32, 1u);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, &u64), DOCA_SUCCESS);
	EXPECT_GE(u64, 1u << 20);

	ASSERT_EQ(doca_dma_create(setup.dev, &dma), DOCA_SUCCESS);
	EXPECT_EQ(doca_dma_cap_get_max_num_tasks(nullptr, &u32), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_get_max_num_tasks(dma, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_cap_get_max_num_tasks(dma, &u32), DOCA_SUCCESS);
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(nullptr, on_success, on_error, 8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(dma, nullptr, on_error, 8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(dma, on_success, nullptr, 8), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(dma, on_success, on_error, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(dma, on_success, on_error, u32 + 1), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy *task = nullptr;
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(nullptr, nullptr, nullptr, {}, &task), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(dma, nullptr, nullptr, {}, nullptr), DOCA_ERROR_INVALID_VALUE);

	// Start needs a PE and a task configuration.
	EXPECT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_EQ(doca_ctx_stop(doca_dma_as_ctx(dma)), DOCA_ERROR_NOT_CONNECTED);
	ASSERT_EQ(doca_pe_connect_ctx(setup.pe, doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_dma_destroy(dma), DOCA_SUCCESS);
}

} // namespace

namespace {

// A device whose topology entry has no DMA engine: every documented NOT_SUPPORTED return.
TEST(DmaApi, DeviceWithoutDmaEngineIsNotSupported)
{
	auto topology =
	    softdpu_test::default_topology_with_caps(softdpu::device::Side::dpu, "p1", {{"dma_memcpy", false}});
	ASSERT_TRUE(topology);
	softdpu::device::testing::ScopedTopology scoped(topology);

	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	ASSERT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
	doca_devinfo *no_dma = nullptr;
	for (uint32_t i = 0; i < count; ++i) {
		uint8_t is_p1 = 0;
		ASSERT_EQ(doca_devinfo_is_equal_pci_addr(list[i], "03:00.1", &is_p1), DOCA_SUCCESS);
		if (is_p1 && no_dma == nullptr)
			no_dma = list[i];
	}
	ASSERT_NE(no_dma, nullptr);
	EXPECT_EQ(doca_dma_cap_task_memcpy_is_supported(no_dma), DOCA_ERROR_NOT_SUPPORTED);
	uint32_t list_len = 0;
	uint64_t buf_size = 0;
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_list_len(no_dma, &list_len), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_dma_cap_task_memcpy_get_max_buf_size(no_dma, &buf_size), DOCA_ERROR_NOT_SUPPORTED);

	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_dev_open(no_dma, &dev), DOCA_SUCCESS);
	doca_pe *pe = nullptr;
	ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
	doca_dma *dma = nullptr;
	ASSERT_EQ(doca_dma_create(dev, &dma), DOCA_SUCCESS);
	ASSERT_EQ(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	ASSERT_EQ(doca_dma_task_memcpy_set_conf(dma, on_success, on_error, 4), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_NOT_SUPPORTED)
	    << "doca_ctx_start: a device the context does not support";
	EXPECT_EQ(doca_dma_destroy(dma), DOCA_SUCCESS);
	EXPECT_EQ(doca_pe_destroy(pe), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
}

} // namespace
