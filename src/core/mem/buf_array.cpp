// doca_buf_array.h: the buffer array (CPU target only).
#include "core/mem/buf_array.hpp"

#include <cstdint>
#include <new>

doca_buf_arr::~doca_buf_arr()
{
	if (started_)
		stop();
	--mmap_->num_dependents_;
}

doca_error_t doca_buf_arr::start() noexcept
{
	if (started_ || !params_set_)
		return DOCA_ERROR_BAD_STATE;
	if (!mmap_->is_started())
		return DOCA_ERROR_NOT_PERMITTED;
	const size_t range_len = mmap_->memrange_len();
	if (start_offset_ > range_len || element_size_ > (range_len - start_offset_) / num_elements_)
		return DOCA_ERROR_INVALID_VALUE; // the elements would leave the memory range
	elements_.reset(new (std::nothrow) doca_buf[num_elements_]);
	if (elements_ == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	released_ = {};
	released_.num_total = num_elements_;
	uint8_t *element = mmap_->range_start_ + start_offset_;
	for (uint32_t i = 0; i < num_elements_; ++i, element += element_size_) {
		elements_[i].owner_ = &released_;
		elements_[i].init(mmap_, element, element_size_, element, 0);
	}
	started_ = true;
	return DOCA_SUCCESS;
}

void doca_buf_arr::stop() noexcept
{
	// Elements already released through doca_buf_dec_refcount were uncounted then.
	mmap_->num_bufs_ -= num_elements_ - released_.num_free;
	elements_.reset();
	released_ = {};
	started_ = false;
}

extern "C" {

doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr)
{
	if (mmap == nullptr || buf_arr == nullptr || !mmap->memrange_set_)
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
	if (buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	buf_arr->element_size_ = size;
	buf_arr->num_elements_ = num_elem;
	buf_arr->start_offset_ = start_offset;
	buf_arr->params_set_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler)
{
	if (buf_arr == nullptr || gpu_handler == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler)
{
	if (buf_arr == nullptr || dpa_handler == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
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
	if (!buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	buf_arr->stop();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr)
{
	if (buf_arr == nullptr || gpu_buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, struct doca_dpa_dev_buf_arr **dpa_buf_arr)
{
	if (buf_arr == nullptr || dpa_buf_arr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->started_)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

} // extern "C"
