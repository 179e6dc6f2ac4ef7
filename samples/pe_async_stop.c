// pkg-config: doca-common doca-dma
/*
 * PE async stop: a context is stopped while it still has tasks in flight.
 *
 * 16 tasks are submitted; the success callback that sees the 8th completion calls doca_ctx_stop.
 * With tasks in flight the stop cannot finish at once: it returns DOCA_ERROR_IN_PROGRESS and the
 * context enters STOPPING. The remaining tasks are flushed: they come back through the error
 * callback, which tells a flushed task from a real failure by the context being in STOPPING.
 * Once the last one is freed, a later doca_pe_progress moves the context to IDLE, which the
 * state-changed callback reports.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_ASYNC_STOP::SAMPLE);

#define NUM_TASKS 16
#define STOP_AFTER_TASKS (NUM_TASKS / 2)

struct async_stop_state {
	struct sample_pe_base base;
	uint32_t num_succeeded;
	uint32_t num_flushed;
	doca_error_t stop_result; /* what doca_ctx_stop returned in the callback */
	bool saw_running_to_stopping;
	bool saw_stopping_to_idle;
	doca_error_t first_error;
};

static void memcpy_completed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			     union doca_data ctx_user_data)
{
	struct async_stop_state *state = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	struct doca_ctx *ctx = doca_task_get_ctx(task);

	sample_record_error(&state->first_error, sample_check_pair(&state->base, (uint32_t)task_user_data.u64));
	doca_task_free(task);
	if (++state->num_succeeded != STOP_AFTER_TASKS)
		return;
	DOCA_LOG_INFO("%d tasks completed; stopping the context with tasks still in flight", STOP_AFTER_TASKS);
	state->stop_result = doca_ctx_stop(ctx);
	DOCA_LOG_INFO("doca_ctx_stop returned: %s", doca_error_get_name(state->stop_result));
}

static void memcpy_failed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct async_stop_state *state = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	enum doca_ctx_states ctx_state = DOCA_CTX_STATE_IDLE;

	doca_ctx_get_state(doca_task_get_ctx(task), &ctx_state);
	if (ctx_state == DOCA_CTX_STATE_STOPPING) {
		/* Expected: the stop flushes what was still in flight. */
		state->num_flushed++;
		DOCA_LOG_INFO("Task of pair %u flushed: %s", (unsigned)task_user_data.u64,
			      doca_error_get_descr(doca_task_get_status(task)));
	} else {
		DOCA_LOG_ERR("Task of pair %u failed while the context was %s: %s", (unsigned)task_user_data.u64,
			     sample_ctx_state_name(ctx_state), doca_error_get_descr(doca_task_get_status(task)));
		sample_record_error(&state->first_error, DOCA_ERROR_IO_FAILED);
	}
	doca_task_free(task);
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state,
			  enum doca_ctx_states next_state)
{
	struct async_stop_state *state = user_data.ptr;

	(void)ctx;
	DOCA_LOG_INFO("DMA context: %s -> %s", sample_ctx_state_name(prev_state), sample_ctx_state_name(next_state));
	if (prev_state == DOCA_CTX_STATE_RUNNING && next_state == DOCA_CTX_STATE_STOPPING)
		state->saw_running_to_stopping = true;
	if (prev_state == DOCA_CTX_STATE_STOPPING && next_state == DOCA_CTX_STATE_IDLE)
		state->saw_stopping_to_idle = true;
}

static doca_error_t run(struct async_stop_state *state, struct doca_dma *dma)
{
	doca_error_t result;

	result = sample_start_and_submit(&state->base, dma, 0, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	/* The stop happens inside a callback; main only progresses until the context is idle. */
	result = sample_progress_until_state(state->base.pe, doca_dma_as_ctx(dma), DOCA_CTX_STATE_IDLE);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("%u tasks succeeded, %u were flushed", state->num_succeeded, state->num_flushed);
	if (state->stop_result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("doca_ctx_stop with tasks in flight returned %s, expected DOCA_ERROR_IN_PROGRESS",
			     doca_error_get_name(state->stop_result));
		return DOCA_ERROR_UNEXPECTED;
	}
	if (state->num_succeeded != STOP_AFTER_TASKS || state->num_flushed != NUM_TASKS - STOP_AFTER_TASKS) {
		DOCA_LOG_ERR("Expected %d successful and %d flushed tasks", STOP_AFTER_TASKS,
			     NUM_TASKS - STOP_AFTER_TASKS);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (!state->saw_running_to_stopping || !state->saw_stopping_to_idle) {
		DOCA_LOG_ERR("The state-changed callback missed running -> stopping or stopping -> idle");
		return DOCA_ERROR_UNEXPECTED;
	}
	return state->first_error;
}

int main(void)
{
	struct async_stop_state state = {.stop_result = DOCA_SUCCESS, .first_error = DOCA_SUCCESS};
	struct doca_dma *dma;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&state.base, NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_dma_create(&state.base, memcpy_completed, memcpy_failed, NUM_TASKS,
				   (union doca_data){.ptr = &state}, state_changed, &dma);
	if (result == DOCA_SUCCESS) {
		result = run(&state, dma);
		sample_record_error(&result, sample_dma_destroy(&state.base, dma));
	}
	sample_record_error(&result, sample_pe_base_cleanup(&state.base));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
