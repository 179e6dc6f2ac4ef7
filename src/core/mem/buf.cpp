// doca_buf.h: buffer descriptors, reference counts and scatter/gather lists.
#include "core/mem/buf.hpp"

#include <cstdint>

extern "C" {

doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	// A released descriptor is back in its inventory or pool: taking a reference would hand it
	// out twice. Reported as dec_refcount reports it.
	if (buf->list_.refcount == 0)
		return DOCA_ERROR_BAD_STATE;
	if (buf->list_.refcount == UINT16_MAX)
		return DOCA_ERROR_TOO_BIG;
	if (refcount != nullptr)
		*refcount = buf->list_.refcount;
	++buf->list_.refcount;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	if (buf->list_.refcount == 0)
		return DOCA_ERROR_BAD_STATE;
	if (refcount != nullptr)
		*refcount = buf->list_.refcount;
	if (--buf->list_.refcount == 0)
		softdpu::mem::release_list(buf);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr || refcount == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*refcount = buf->list_.refcount;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (buf == nullptr || num_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	*num_elements = buf->list_.len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	if (buf == nullptr || is_first == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_first = buf->list_.is_member ? 0 : 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	if (buf == nullptr || is_last == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_last = buf->next_ == nullptr ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	if (buf == nullptr || is_in_list == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_in_list = (buf->list_.is_member || buf->next_ != nullptr) ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	if (buf == nullptr || next_buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*next_buf = buf->next_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	if (buf == nullptr || last_buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf->list_.is_member) {
		*last_buf = buf->list_tail();
		return DOCA_SUCCESS;
	}
	doca_buf *last = buf;
	while (last->next_ != nullptr)
		last = last->next_;
	*last_buf = last;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	if (buf == nullptr || head == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*head = buf->head_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	if (buf == nullptr || len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*len = buf->len_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	if (buf == nullptr || data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*data = buf->data_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	if (buf == nullptr || data_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*data_len = buf->data_len_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	if (buf == nullptr || data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	// [data, data + data_len] must lie within [head, head + len]; checked without overflow.
	const auto head = reinterpret_cast<uintptr_t>(buf->head_);
	const auto start = reinterpret_cast<uintptr_t>(data);
	if (start < head || start - head > buf->len_ || data_len > buf->len_ - (start - head))
		return DOCA_ERROR_INVALID_VALUE;
	buf->data_ = static_cast<uint8_t *>(data);
	buf->data_len_ = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	buf->data_len_ = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == nullptr || list2 == nullptr || list1 == list2)
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

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == nullptr || list2 == nullptr || list1 == list2 || list1->list_.is_member)
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

} // extern "C"
