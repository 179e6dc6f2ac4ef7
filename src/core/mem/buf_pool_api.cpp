// doca_buf_pool.h: argument checks over doca_buf_pool (pool.hpp).
#include <doca_buf_pool.h>

#include "common/api_barrier.hpp"
#include "core/mem/pool.hpp"

#include <cstdint>

using softdpu::common::api_barrier;

extern "C" {

doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool)
{
	if (mmap == nullptr || buf_pool == nullptr || num_elements == 0 || num_elements > UINT32_MAX ||
	    element_size == 0 || !mmap->memrange_set())
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		// The pool pins the mmap (a count on it), hence the const_cast of DOCA's const parameter.
		*buf_pool =
		    new doca_buf_pool(static_cast<uint32_t>(num_elements), element_size, const_cast<doca_mmap *>(mmap));
		return DOCA_SUCCESS;
	});
}

doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_pool->all_free())
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
	return buf_pool->stop();
}

doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf)
{
	if (buf_pool == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_pool->alloc(buf);
}

doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements)
{
	if (buf_pool == nullptr || num_of_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = buf_pool->num_elements();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_free_elements)
{
	if (buf_pool == nullptr || num_of_free_elements == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = buf_pool->num_free_elements();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_pool->set_element_alignment(element_alignment);
}

doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment)
{
	if (buf_pool == nullptr || element_alignment == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*element_alignment = buf_pool->element_alignment();
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data)
{
	if (buf_pool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return buf_pool->set_user_data(user_data);
}

doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data)
{
	if (buf_pool == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = buf_pool->user_data();
	return DOCA_SUCCESS;
}

} // extern "C"
