// struct doca_buf_pool: the buffer pool (the C forwarders are in buf_pool_api.cpp).
#include "core/mem/pool.hpp"

#include <cstdint>

doca_buf_pool::doca_buf_pool(uint32_t num_elements, size_t element_size, doca_mmap *mmap)
    : mmap_(mmap), element_size_(element_size), descriptors_(new doca_buf[num_elements])
{
	free_.num_total = num_elements;
	for (uint32_t i = num_elements; i-- > 0;) {
		descriptors_[i].owner_ = &free_;
		free_.push(&descriptors_[i]);
	}
	mmap_->add_dependent();
}

doca_buf_pool::~doca_buf_pool()
{
	mmap_->remove_dependent();
}

doca_error_t doca_buf_pool::start() noexcept
{
	if (started_ || !mmap_->is_started())
		return DOCA_ERROR_BAD_STATE;
	// Elements start at the first aligned address of the range and are spaced by the aligned size.
	const auto range_start = reinterpret_cast<uintptr_t>(mmap_->memrange_start());
	const size_t range_len = mmap_->memrange_len();
	const size_t align = element_alignment_;
	const size_t padding = (align - range_start % align) % align;
	if (element_size_ > SIZE_MAX - (align - 1))
		return DOCA_ERROR_INITIALIZATION;
	const size_t stride = (element_size_ + align - 1) & ~(align - 1);
	const uint64_t count = free_.num_total;
	// padding + stride * (count - 1) + element_size <= range_len, computed without overflow.
	if (padding > range_len || element_size_ > range_len - padding ||
	    (count > 1 && (range_len - padding - element_size_) / stride < count - 1))
		return DOCA_ERROR_INITIALIZATION;
	uint8_t *element = static_cast<uint8_t *>(mmap_->memrange_start()) + padding;
	for (uint32_t i = 0; i < free_.num_total; ++i, element += stride) {
		descriptors_[i].head_ = element;
		descriptors_[i].len_ = element_size_;
		descriptors_[i].mmap_ = mmap_;
	}
	started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool::stop() noexcept
{
	if (!free_.all_free())
		return DOCA_ERROR_IN_USE;
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	started_ = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool::set_element_alignment(size_t element_alignment) noexcept
{
	if (element_alignment == 0 || (element_alignment & (element_alignment - 1)) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	element_alignment_ = element_alignment;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool::set_user_data(union doca_data user_data) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	user_data_ = user_data;
	return DOCA_SUCCESS;
}
