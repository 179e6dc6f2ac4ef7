// doca_buf_array.h: argument checks over doca_buf_arr (buf_array.hpp).
#include <doca_buf_array.h>

#include "core/mem/buf_array.hpp"

#include <new>

extern "C" {

doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr)
{
	if (mmap == nullptr || buf_arr == nullptr || !mmap->memrange_set())
		return DOCA_ERROR_INVALID_VALUE;
	*buf_arr = new (std::nothrow) doca_buf_arr(mmap);
	return *buf_arr != nullptr ? DOCA_SUCCESS : DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	delete buf_arr;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, size_t size, uint32_t num_elem,
				     uint32_t start_offset)
{
	if (buf_arr == nullptr || size == 0 || num_elem == 0)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_arr->set_params(size, num_elem, start_offset);
}

doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler)
{
	if (buf_arr == nullptr || gpu_handler == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->is_started())
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED; // no GPU
}

doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler)
{
	if (buf_arr == nullptr || dpa_handler == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->is_started())
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED; // no DPA
}

doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_arr->start();
}

doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_arr->stop();
}

doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr)
{
	if (buf_arr == nullptr || gpu_buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->is_started())
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, struct doca_dpa_dev_buf_arr **dpa_buf_arr)
{
	if (buf_arr == nullptr || dpa_buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->is_started())
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

} // extern "C"
