// doca_buf_array.h: CPU arrays; GPU and DPA targets are not supported.
#include "core/mem/buf_array.hpp"
#include "mem_fixture.hpp"

#include <array>
#include <cstdint>

namespace {

class BufArr : public mem_test::StartedMmap {
protected:
	void SetUp() override
	{
		StartedMmap::SetUp();
		ASSERT_EQ(doca_buf_arr_create(mmap, &arr), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		EXPECT_EQ(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
		StartedMmap::TearDown();
	}
	doca_buf_arr *arr = nullptr;
};

doca_gpu *fake_gpu()
{
	static int storage;
	return reinterpret_cast<doca_gpu *>(&storage);
}
doca_dpa *fake_dpa()
{
	static int storage;
	return reinterpret_cast<doca_dpa *>(&storage);
}

TEST(BufArrNullArgs, EveryFunctionRejectsNull)
{
	doca_buf_arr *arr = nullptr;
	doca_gpu_buf_arr *gpu = nullptr;
	doca_dpa_dev_buf_arr *dpa = nullptr;
	EXPECT_EQ(doca_buf_arr_create(nullptr, &arr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_params(nullptr, 8, 1, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_target_gpu(nullptr, fake_gpu()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_target_dpa(nullptr, fake_dpa()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_get_gpu_handle(nullptr, &gpu), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_get_dpa_handle(nullptr, &dpa), DOCA_ERROR_INVALID_VALUE);
}

TEST(BufArrCreate, MmapNeedsAMemrange)
{
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	doca_buf_arr *arr = nullptr;
	EXPECT_EQ(doca_buf_arr_create(mmap, &arr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_create(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
}

TEST_F(BufArr, CpuArrayLaysOutElements)
{
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 8, 512), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 8u);
	for (uint32_t i = 0; i < 8; ++i) {
		const doca_buf *buf = arr->element(i);
		EXPECT_EQ(buf->head(), at(512 + i * 64));
		EXPECT_EQ(buf->len(), 64u);
		EXPECT_EQ(buf->data_len(), 0u);
		EXPECT_EQ(buf->mmap(), mmap);
	}
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_arr_stop(arr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 0u);
	// Stopped: reconfigure and start again.
	ASSERT_EQ(doca_buf_arr_set_params(arr, 4096, 1, 0), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 1u);
}

TEST_F(BufArr, ReleasedElementIsNotCountedTwice)
{
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 2, 0), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_dec_refcount(arr->element(0), nullptr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 1u);
	ASSERT_EQ(doca_buf_arr_stop(arr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 0u);
}

TEST_F(BufArr, SetParamsErrors)
{
	EXPECT_EQ(doca_buf_arr_set_params(arr, 0, 1, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_params(arr, 8, 0, 0), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 8, 1, 0), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_set_params(arr, 8, 2, 0), DOCA_ERROR_BAD_STATE);
}

TEST_F(BufArr, StartErrors)
{
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE); // no parameters yet
	EXPECT_EQ(doca_buf_arr_stop(arr), DOCA_ERROR_BAD_STATE);  // not started
	// Elements leaving the memory range.
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 65, 0), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 1, 4095), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 1, 5000), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, SIZE_MAX, 2, 0), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 64, 0), DOCA_SUCCESS); // exactly fits
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE); // already started
}

TEST(BufArrStart, MmapMustBeStarted)
{
	std::array<uint8_t, 256> memory{};
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	doca_buf_arr *arr = nullptr;
	ASSERT_EQ(doca_buf_arr_create(mmap, &arr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 16, 4, 0), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_start(arr), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_destroy(arr), DOCA_SUCCESS); // implicit stop
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
}

TEST_F(BufArr, GpuAndDpaTargetsAreNotSupported)
{
	EXPECT_EQ(doca_buf_arr_set_target_gpu(arr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_target_dpa(arr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_set_target_gpu(arr, fake_gpu()), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_buf_arr_set_target_dpa(arr, fake_dpa()), DOCA_ERROR_NOT_SUPPORTED);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 8, 1, 0), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_set_target_gpu(arr, fake_gpu()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_buf_arr_set_target_dpa(arr, fake_dpa()), DOCA_ERROR_BAD_STATE);
}

TEST_F(BufArr, HandlesNeedAStartedArrayAndAreNotSupportedOnCpu)
{
	doca_gpu_buf_arr *gpu = nullptr;
	doca_dpa_dev_buf_arr *dpa = nullptr;
	EXPECT_EQ(doca_buf_arr_get_gpu_handle(arr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_get_dpa_handle(arr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_arr_get_gpu_handle(arr, &gpu), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_buf_arr_get_dpa_handle(arr, &dpa), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 8, 1, 0), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_buf_arr_get_gpu_handle(arr, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_buf_arr_get_dpa_handle(arr, &dpa), DOCA_ERROR_NOT_SUPPORTED);
}

} // namespace
