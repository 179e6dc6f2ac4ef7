// doca_buf.h: argument checks over doca_buf (buf.hpp).
#include <doca_buf.h>

#include "core/mem/buf.hpp"

extern "C" {

doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf->inc_refcount(refcount);
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf->dec_refcount(refcount);
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == nullptr || refcount == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*refcount = buf->refcount();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (buf == nullptr || num_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf->is_list_head())
		return DOCA_ERROR_NOT_PERMITTED;
	*num_elements = buf->list_len();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	if (buf == nullptr || is_first == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_first = buf->is_list_head() ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	if (buf == nullptr || is_last == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_last = buf->next_in_list() == nullptr ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	if (buf == nullptr || is_in_list == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_in_list = buf->is_in_list() ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	if (buf == nullptr || next_buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*next_buf = buf->next_in_list();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	if (buf == nullptr || last_buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*last_buf = buf->last_in_list();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	if (buf == nullptr || head == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*head = buf->head();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	if (buf == nullptr || len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*len = buf->len();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	if (buf == nullptr || data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*data = buf->data();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	if (buf == nullptr || data_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*data_len = buf->data_len();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	if (buf == nullptr || data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf->set_data(data, data_len);
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	if (buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	buf->set_data_len(0);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == nullptr || list2 == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return doca_buf::chain(list1, list2);
}

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == nullptr || list2 == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return doca_buf::unchain(list1, list2);
}

} // extern "C"
