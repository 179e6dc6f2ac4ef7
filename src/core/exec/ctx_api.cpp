// doca_ctx.h: argument checks over doca_ctx.
#include <doca_ctx.h>

#include "common/sdk_log.hpp"
#include "core/exec/ctx.hpp"

extern "C" {

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	if (ctx == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return ctx->start();
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	if (ctx == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return ctx->stop();
}

doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks)
{
	if (ctx == nullptr || num_inflight_tasks == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_inflight_tasks = ctx->inflight();
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state)
{
	if (ctx == nullptr || state == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*state = ctx->state();
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb)
{
	if (ctx == nullptr || cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	ctx->set_state_changed_cb(cb);
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data)
{
	if (ctx == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	ctx->set_user_data(user_data);
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data)
{
	if (ctx == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = ctx->user_data();
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev)
{
	if (ctx == nullptr || gpu_dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!ctx->is_idle())
		return DOCA_ERROR_BAD_STATE;
	SDK_LOG_ERR("failed to set GPU data path: softdpu emulates no GPU");
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_ctx_set_datapath_on_dpa(struct doca_ctx *ctx, struct doca_dpa *dpa_dev)
{
	if (ctx == nullptr || dpa_dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!ctx->is_idle())
		return DOCA_ERROR_BAD_STATE;
	SDK_LOG_ERR("failed to set DPA data path: softdpu emulates no DPA");
	return DOCA_ERROR_NOT_SUPPORTED;
}

} // extern "C"
