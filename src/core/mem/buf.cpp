// struct doca_buf: lists and data bounds (the C forwarders are in buf_api.cpp).
#include "core/mem/buf.hpp"

#include <cstdint>

doca_buf *doca_buf::last_in_list() noexcept
{
	if (!list_.is_member)
		return list_tail();
	doca_buf *last = this;
	while (last->next_ != nullptr)
		last = last->next_;
	return last;
}

doca_error_t doca_buf::set_data(void *data, size_t data_len) noexcept
{
	// [data, data + data_len] must lie within [head, head + len]; checked without overflow.
	const auto head = reinterpret_cast<uintptr_t>(head_);
	const auto start = reinterpret_cast<uintptr_t>(data);
	if (start < head || start - head > len_ || data_len > len_ - (start - head))
		return DOCA_ERROR_INVALID_VALUE;
	data_ = static_cast<uint8_t *>(data);
	data_len_ = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf::chain(doca_buf *list1, doca_buf *list2) noexcept
{
	if (list1 == list2)
		return DOCA_ERROR_INVALID_VALUE;
	if (list1->list_.is_member || list2->list_.is_member || list2->list_.refcount != 1)
		return DOCA_ERROR_NOT_PERMITTED;
	if (list1->list_.refcount == 0 || static_cast<uint64_t>(list1->list_.len) + list2->list_.len > UINT32_MAX)
		return DOCA_ERROR_INVALID_VALUE; // a free descriptor, or a list too long to count
	doca_buf *new_tail = list2->list_tail();
	list1->list_tail()->next_ = list2;
	list1->last_ = new_tail;
	list1->list_.len += list2->list_.len;
	list2->list_.is_member = true;
	list2->list_.len = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf::unchain(doca_buf *list1, doca_buf *list2) noexcept
{
	if (list1 == list2 || list1->list_.is_member)
		return DOCA_ERROR_INVALID_VALUE;
	doca_buf *before = list1;
	while (before->next_ != nullptr && before->next_ != list2)
		before = before->next_;
	if (before->next_ != list2)
		return DOCA_ERROR_INVALID_VALUE; // list2 is not part of list1
	uint32_t split_len = 0;
	for (doca_buf *buf = list2; buf != nullptr; buf = buf->next_)
		++split_len;
	before->next_ = nullptr;
	list2->last_ = list1->last_; // list1 had a next element, so its last_ was valid
	list1->last_ = before;
	list1->list_.len -= split_len;
	list2->list_.len = split_len;
	list2->list_.is_member = false;
	list2->list_.refcount = 1;
	return DOCA_SUCCESS;
}
