// struct doca_buf_inventory: the buffer inventory (the C forwarders are in buf_inventory_api.cpp).
#include "core/mem/inventory.hpp"

#include <cstdint>

doca_buf_inventory::doca_buf_inventory(uint32_t num_elements) : descriptors_(new doca_buf[num_elements])
{
	free_.num_total = num_elements;
	// Push in reverse so the first get returns descriptor 0: easier to follow in a debugger.
	for (uint32_t i = num_elements; i-- > 0;) {
		descriptors_[i].owner_ = &free_;
		free_.push(&descriptors_[i]);
	}
}

doca_error_t doca_buf_inventory::get(doca_mmap *mmap, void *addr, size_t len, void *data, size_t data_len,
				     doca_buf **buf) noexcept
{
	if (!started_ || !mmap->is_started())
		return DOCA_ERROR_BAD_STATE;
	// The buffer must lie in the mmap, and the data in the buffer (both overflow-safe).
	const auto buf_start = reinterpret_cast<uintptr_t>(addr);
	const auto data_start = reinterpret_cast<uintptr_t>(data);
	if (!mmap->contains(addr, len) || data_start < buf_start || data_start - buf_start > len ||
	    data_len > len - (data_start - buf_start))
		return DOCA_ERROR_INVALID_VALUE;
	doca_buf *taken = free_.pop();
	if (taken == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	taken->init(mmap, static_cast<uint8_t *>(addr), len, static_cast<uint8_t *>(data), data_len);
	*buf = taken;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory::dup(const doca_buf *src, doca_buf **dst) noexcept
{
	if (src->list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	for (const doca_buf *element = src; element != nullptr; element = element->next_) {
		if (!element->mmap_->is_started())
			return DOCA_ERROR_BAD_STATE;
	}
	if (free_.num_free < src->list_.len)
		return DOCA_ERROR_NO_MEMORY;
	// Copy every element's descriptor, then chain the copies the way the source is chained.
	doca_buf *copy_head = nullptr;
	doca_buf *copy_last = nullptr;
	for (const doca_buf *element = src; element != nullptr; element = element->next_) {
		doca_buf *copy = free_.pop();
		copy->init(element->mmap_, element->head_, element->len_, element->data_, element->data_len_);
		if (copy_head == nullptr) {
			copy_head = copy;
		} else {
			copy->list_.is_member = true;
			copy_last->next_ = copy;
		}
		copy_last = copy;
	}
	copy_head->last_ = copy_last;
	copy_head->list_.len = src->list_.len;
	*dst = copy_head;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory::start() noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory::stop() noexcept
{
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	started_ = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory::set_user_data(union doca_data user_data) noexcept
{
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	user_data_ = user_data;
	return DOCA_SUCCESS;
}
