// doca_dma.h: argument checks over doca_dma.
#include <doca_dma.h>

#include <new>

#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "dma/dma.hpp"

extern "C" {

doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma)
{
	if (dev == nullptr || dma == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	auto *created = new (std::nothrow) doca_dma(dev);
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	*dma = created;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_destroy(struct doca_dma *dma)
{
	if (dma == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dma->is_idle()) {
		SDK_LOG_ERR("failed to destroy DMA context: it is not idle (stop it first)");
		return DOCA_ERROR_IN_USE;
	}
	delete dma;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps().dma_memcpy ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma)
{
	return dma;
}

doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks)
{
	if (dma == nullptr || max_num_tasks == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_tasks = dma->dev()->caps().dma_max_num_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len)
{
	if (devinfo == nullptr || max_buf_list_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!devinfo->caps().dma_memcpy)
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_buf_list_len = devinfo->caps().dma_max_buf_list_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size)
{
	if (devinfo == nullptr || buf_size == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!devinfo->caps().dma_memcpy)
		return DOCA_ERROR_NOT_SUPPORTED;
	*buf_size = devinfo->caps().dma_max_buf_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks)
{
	if (dma == nullptr || task_completion_cb == nullptr || task_error_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return dma->set_memcpy_conf(task_completion_cb, task_error_cb, num_memcpy_tasks);
}

doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task)
{
	if (doca_unlikely(dma == nullptr || task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return dma->alloc_memcpy(src, dst, user_data, task);
}

struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task)
{
	return task;
}

void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src)
{
	if (task != nullptr)
		task->src = src;
}

const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task)
{
	return task != nullptr ? task->src : nullptr;
}

void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst)
{
	if (task != nullptr)
		task->dst = dst;
}

struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task)
{
	return task != nullptr ? task->dst : nullptr;
}

} // extern "C"
