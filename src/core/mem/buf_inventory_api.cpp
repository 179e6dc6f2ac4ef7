// doca_buf_inventory.h: argument checks over doca_buf_inventory (inventory.hpp).
#include <doca_buf_inventory.h>

#include "common/api_barrier.hpp"
#include "core/mem/inventory.hpp"

#include <cstdint>

using softdpu::common::api_barrier;

extern "C" {

doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory)
{
	if (inventory == nullptr || num_elements == 0 || num_elements > UINT32_MAX)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		*inventory = new doca_buf_inventory(static_cast<uint32_t>(num_elements));
		return DOCA_SUCCESS;
	});
}

doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory)
{
	if (inventory == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!inventory->all_free())
		return DOCA_ERROR_IN_USE;
	delete inventory;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory)
{
	if (inventory == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return inventory->start();
}

doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory)
{
	if (inventory == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return inventory->stop();
}

doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory, uint32_t *num_of_elements)
{
	if (inventory == nullptr || num_of_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = inventory->num_elements();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements)
{
	if (inventory == nullptr || num_of_free_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = inventory->num_free_elements();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data)
{
	if (inventory == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return inventory->set_user_data(user_data);
}

doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory, union doca_data *user_data)
{
	if (inventory == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = inventory->user_data();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf)
{
	if (inventory == nullptr || src_buf == nullptr || dst_buf == nullptr || src_buf->refcount() == 0)
		return DOCA_ERROR_INVALID_VALUE;
	return inventory->dup(src_buf, dst_buf);
}

doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf)
{
	if (inventory == nullptr || mmap == nullptr || addr == nullptr || data == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return inventory->get(mmap, addr, len, data, data_len, buf);
}

} // extern "C"
