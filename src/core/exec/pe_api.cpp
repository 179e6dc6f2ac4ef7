// doca_pe.h: argument checks over doca_pe and doca_ctx's task life cycle. doca_task_submit is
// the fast path: it checks nothing beyond what keeps softdpu itself safe.
#include <doca_pe.h>

#include "core/exec/ctx.hpp"
#include "core/exec/pe.hpp"

extern "C" {

doca_error_t doca_pe_create(struct doca_pe **pe)
{
	if (pe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return doca_pe::create(pe);
}

doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->has_members())
		return DOCA_ERROR_IN_USE;
	delete pe;
	return DOCA_SUCCESS;
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	if (pe == nullptr)
		return 0;
	return pe->progress();
}

doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle)
{
	if (pe == nullptr || handle == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*handle = pe->notification_fd();
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle)
{
	(void)handle; // Linux: the PE has exactly one handle, so the argument is not needed.
	if (pe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return pe->clear_notification();
}

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	if (pe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return pe->request_notification();
}

doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks)
{
	if (pe == nullptr || num_inflight_tasks == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_inflight_tasks = pe->inflight();
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (pe == nullptr || ctx == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return pe->connect(ctx);
}

doca_error_t doca_task_submit(struct doca_task *task)
{
	if (doca_unlikely(task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return task->ctx->submit(task);
}

doca_error_t doca_task_try_submit(struct doca_task *task)
{
	if (task == nullptr || task->ctx == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return task->ctx->try_submit(task);
}

void doca_task_free(struct doca_task *task)
{
	if (task == nullptr)
		return;
	task->ctx->free_task(task);
}

doca_error_t doca_task_get_status(const struct doca_task *task)
{
	if (task == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return task->status;
}

void doca_task_set_user_data(struct doca_task *task, union doca_data user_data)
{
	if (task != nullptr)
		task->user_data = user_data;
}

union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	if (task == nullptr)
		return doca_data{};
	return task->user_data;
}

struct doca_ctx *doca_task_get_ctx(const struct doca_task *task)
{
	if (task == nullptr)
		return nullptr;
	return task->ctx;
}

} // extern "C"
