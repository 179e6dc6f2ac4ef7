// doca_buf_pool.h: the buffer pool.
#include "core/mem/pool.hpp"

#include <cstdint>
#include <new>

doca_buf_pool::doca_buf_pool(uint32_t num_elements, size_t element_size, doca_mmap *mmap)
	: mmap_(mmap), element_size_(element_size), descriptors_(new doca_buf[num_elements])
{
	free_.num_total = num_elements;
	for (uint32_t i = num_elements; i-- > 0;) {
		descriptors_[i].owner_ = &free_;
		free_.push(&descriptors_[i]);
	}
	++mmap_->num_dependents_;
}

doca_buf_pool::~doca_buf_pool()
{
	--mmap_->num_dependents_;
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
	uint8_t *element = mmap_->range_start_ + padding;
	for (uint32_t i = 0; i < free_.num_total; ++i, element += stride) {
		descriptors_[i].head_ = element;
		descriptors_[i].len_ = element_size_;
		descriptors_[i].mmap_ = mmap_;
	}
	started_ = true;
	return DOCA_SUCCESS;
}

extern "C" {

doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool)
{
	if (mmap == nullptr || buf_pool == nullptr || num_elements == 0 || num_elements > UINT32_MAX ||
	    element_size == 0 || !mmap->memrange_set_)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		// The pool pins the mmap (a count on it), hence the const_cast of DOCA's const parameter.
		*buf_pool = new doca_buf_pool(static_cast<uint32_t>(num_elements), element_size,
					      const_cast<doca_mmap *>(mmap));
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_pool->free_.all_free())
		return DOCA_ERROR_IN_USE;
	delete buf_pool;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_pool->start();
}

doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_pool->free_.all_free())
		return DOCA_ERROR_IN_USE;
	if (!buf_pool->started_)
		return DOCA_ERROR_BAD_STATE;
	buf_pool->started_ = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf)
{
	if (buf_pool == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_pool->started_)
		return DOCA_ERROR_BAD_STATE;
	doca_buf *taken = buf_pool->free_.pop();
	if (taken == nullptr)
		return DOCA_ERROR_EMPTY;
	taken->reset(taken->head_, 0); // head, len and mmap were set at start
	*buf = taken;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements)
{
	if (buf_pool == nullptr || num_of_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = buf_pool->free_.num_total;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements)
{
	if (buf_pool == nullptr || num_of_free_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = buf_pool->free_.num_free;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment)
{
	if (buf_pool == nullptr || element_alignment == 0 || (element_alignment & (element_alignment - 1)) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_pool->started_)
		return DOCA_ERROR_BAD_STATE;
	buf_pool->element_alignment_ = element_alignment;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment)
{
	if (buf_pool == nullptr || element_alignment == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*element_alignment = buf_pool->element_alignment_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_pool->started_)
		return DOCA_ERROR_BAD_STATE;
	buf_pool->user_data_ = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data)
{
	if (buf_pool == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = buf_pool->user_data_;
	return DOCA_SUCCESS;
}

} // extern "C"
