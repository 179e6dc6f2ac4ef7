// pkg-config: doca-common doca-dma
/*
 * PE reactive: the program is driven from callbacks; main only starts the context and progresses.
 *
 * The state-changed callback submits the 16 tasks as soon as the context is running. Each
 * completion callback checks its copy and frees its task, and the last one stops the context.
 * Main's loop knows nothing about tasks: it calls doca_pe_progress until the context is idle.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_REACTIVE::SAMPLE);

#define NUM_TASKS 16

struct reactive_state {
	struct sample_pe_base base;
	struct doca_dma *dma;
	uint32_t num_completed;
	doca_error_t first_error;
};

static void stop_ctx(struct reactive_state *state, struct doca_ctx *ctx)
{
	const doca_error_t result = doca_ctx_stop(ctx);

	/* Either stopped at once, or it reaches idle in a later doca_pe_progress. */
	if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("Failed to stop DMA context: %s", doca_error_get_descr(result));
		sample_record_error(&state->first_error, result);
	}
}

/* Counts a finished task; the last one stops the context, which ends main's loop. */
static void task_done(struct reactive_state *state, struct doca_task *task)
{
	struct doca_ctx *ctx = doca_task_get_ctx(task);

	doca_task_free(task);
	if (++state->num_completed == NUM_TASKS) {
		DOCA_LOG_INFO("All %d tasks completed; stopping the context from the callback", NUM_TASKS);
		stop_ctx(state, ctx);
	}
}

static void memcpy_completed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			     union doca_data ctx_user_data)
{
	struct reactive_state *state = ctx_user_data.ptr;

	sample_record_error(&state->first_error, sample_check_pair(&state->base, (uint32_t)task_user_data.u64));
	task_done(state, doca_dma_task_memcpy_as_task(dma_task));
}

static void memcpy_failed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct reactive_state *state = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);

	DOCA_LOG_ERR("Task of pair %u failed: %s", (unsigned)task_user_data.u64,
		     doca_error_get_descr(doca_task_get_status(task)));
	sample_record_error(&state->first_error, DOCA_ERROR_IO_FAILED);
	task_done(state, task);
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state,
			  enum doca_ctx_states next_state)
{
	struct reactive_state *state = user_data.ptr;
	uint32_t num_submitted;
	doca_error_t result;

	DOCA_LOG_INFO("DMA context: %s -> %s", sample_ctx_state_name(prev_state), sample_ctx_state_name(next_state));
	if (next_state != DOCA_CTX_STATE_RUNNING)
		return;
	/* Work starts here, not in main: the context is ready for tasks. */
	result = sample_submit_pair_tasks(&state->base, state->dma, 0, NUM_TASKS, &num_submitted);
	if (result != DOCA_SUCCESS) {
		sample_record_error(&state->first_error, result);
		/* Count what was never submitted as done, so the last in-flight task still stops the context. */
		state->num_completed += NUM_TASKS - num_submitted;
		if (num_submitted == 0)
			stop_ctx(state, ctx);
	}
}

int main(void)
{
	struct reactive_state state = {.first_error = DOCA_SUCCESS};
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&state.base, NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_dma_create(&state.base, memcpy_completed, memcpy_failed, NUM_TASKS,
				   (union doca_data){.ptr = &state}, state_changed, &state.dma);
	if (result == DOCA_SUCCESS) {
		result = doca_ctx_start(doca_dma_as_ctx(state.dma));
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to start DMA context: %s", doca_error_get_descr(result));
		else
			/* The whole main loop: the callbacks do the rest and finally stop the context. */
			result =
			    sample_progress_until_state(state.base.pe, doca_dma_as_ctx(state.dma), DOCA_CTX_STATE_IDLE);
		sample_record_error(&result, state.first_error);
		if (result == DOCA_SUCCESS && state.num_completed != NUM_TASKS) {
			DOCA_LOG_ERR("Context went idle after %u of %d tasks", state.num_completed, NUM_TASKS);
			result = DOCA_ERROR_UNEXPECTED;
		}
		sample_record_error(&result, sample_dma_destroy(&state.base, state.dma));
	}
	sample_record_error(&result, sample_pe_base_cleanup(&state.base));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
