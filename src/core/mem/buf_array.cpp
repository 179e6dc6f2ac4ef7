// struct doca_buf_arr: the buffer array, CPU target only (the C forwarders are in buf_array_api.cpp).
#include "core/mem/buf_array.hpp"

#include <cstdint>
#include <new>

doca_buf_arr::~doca_buf_arr()
{
	if (started_)
		release_elements();
	mmap_->remove_dependent();
}

doca_error_t doca_buf_arr::set_params(size_t element_size, uint32_t num_elements, uint32_t start_offset) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	element_size_ = element_size;
	num_elements_ = num_elements;
	start_offset_ = start_offset;
	params_set_ = true;
	return DOCA_SUCCESS;
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
	uint8_t *element = static_cast<uint8_t *>(mmap_->memrange_start()) + start_offset_;
	for (uint32_t i = 0; i < num_elements_; ++i, element += element_size_) {
		elements_[i].owner_ = &released_;
		elements_[i].init(mmap_, element, element_size_, element, 0);
	}
	started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr::stop() noexcept
{
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	release_elements();
	return DOCA_SUCCESS;
}

void doca_buf_arr::release_elements() noexcept
{
	// Elements already released through doca_buf_dec_refcount were uncounted then.
	mmap_->bufs_released(num_elements_ - released_.num_free);
	elements_.reset();
	released_ = {};
	started_ = false;
}
