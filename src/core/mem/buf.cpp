// doca_buf.h: buffer descriptors, reference counts and scatter/gather lists.
#include "core/mem/buf.hpp"

#include <cstdint>

extern "C" {

doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->is_list_member_)
		return DOCA_ERROR_NOT_PERMITTED;
	if (buf->refcount_ == UINT16_MAX)
		return DOCA_ERROR_TOO_BIG;
	if (refcount != nullptr)
		*refcount = buf->refcount_;
	++buf->refcount_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->is_list_member_)
		return DOCA_ERROR_NOT_PERMITTED;
	if (buf->refcount_ == 0)
		return DOCA_ERROR_BAD_STATE;
	if (refcount != nullptr)
		*refcount = buf->refcount_;
	if (--buf->refcount_ == 0)
		softdpu::mem::release_list(buf);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr || refcount == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*refcount = buf->refcount_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (buf == nullptr || num_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->is_list_member_)
		return DOCA_ERROR_NOT_PERMITTED;
	*num_elements = buf->list_len_;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	if (buf == nullptr || is_first == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_first = buf->is_list_member_ ? 0 : 1;
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
	*is_in_list = (buf->is_list_member_ || buf->next_ != nullptr) ? 1 : 0;
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
	if (!buf->is_list_member_) {
		*last_buf = buf->last_;
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
	if (list1->is_list_member_ || list2->is_list_member_ || list2->refcount_ != 1)
		return DOCA_ERROR_NOT_PERMITTED;
	if (list1->refcount_ == 0 || static_cast<uint64_t>(list1->list_len_) + list2->list_len_ > UINT32_MAX)
		return DOCA_ERROR_INVALID_VALUE; // a free descriptor, or a list too long to count
	list1->last_->next_ = list2;
	list1->last_ = list2->last_;
	list1->list_len_ += list2->list_len_;
	list2->is_list_member_ = true;
	list2->last_ = list2;
	list2->list_len_ = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == nullptr || list2 == nullptr || list1 == list2 || list1->is_list_member_)
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
	list2->last_ = list1->last_;
	list1->last_ = before;
	list1->list_len_ -= split_len;
	list2->list_len_ = split_len;
	list2->is_list_member_ = false;
	list2->refcount_ = 1;
	return DOCA_SUCCESS;
}

} // extern "C"
