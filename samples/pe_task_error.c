// pkg-config: doca-common doca-dma
/*
 * PE task error: a task fails "in hardware", and the program recovers the context.
 *
 * 255 tasks are submitted with doca_task_submit, which does not validate. The task of pair 2 has
 * a source whose data length was reset to 0, so it fails on execution: it comes back through the
 * error callback, and the failure is fatal to the context, which moves to STOPPING by itself
 * (nobody calls doca_ctx_stop). Every task still in flight is then flushed through the error
 * callback; a few queued around the bad one may still have succeeded. Main polls
 * doca_ctx_get_num_inflight_tasks down to 0, then progresses until the context reports IDLE.
 * Finally it shows the context is usable again: it starts it and runs one clean task.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_TASK_ERROR::SAMPLE);

#define NUM_TASKS 255
#define BAD_PAIR 2
#define RECOVERY_PAIR 0

enum pair_outcome {
	PAIR_PENDING = 0,
	PAIR_SUCCEEDED,
	PAIR_FAILED,
};

struct task_error_state {
	struct sample_pe_base base;
	struct doca_ctx *ctx;
	enum pair_outcome outcomes[NUM_TASKS];
	uint32_t num_succeeded;
	uint32_t num_failed;
	bool stop_requested;    /* set before the sample itself calls doca_ctx_stop */
	bool stopped_by_itself; /* running -> stopping without doca_ctx_stop */
	bool saw_stopping_to_idle;
	doca_error_t first_error;
};

static void memcpy_completed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			     union doca_data ctx_user_data)
{
	struct task_error_state *state = ctx_user_data.ptr;
	const uint32_t pair_index = (uint32_t)task_user_data.u64;

	state->num_succeeded++;
	state->outcomes[pair_index] = PAIR_SUCCEEDED;
	sample_record_error(&state->first_error, sample_check_pair(&state->base, pair_index));
	doca_task_free(doca_dma_task_memcpy_as_task(dma_task));
}

static void memcpy_failed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct task_error_state *state = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	const uint32_t pair_index = (uint32_t)task_user_data.u64;
	const doca_error_t status = doca_task_get_status(task);

	state->num_failed++;
	state->outcomes[pair_index] = PAIR_FAILED;
	if (status == DOCA_SUCCESS) {
		DOCA_LOG_ERR("Task of pair %u reached the error callback with a success status", pair_index);
		sample_record_error(&state->first_error, DOCA_ERROR_UNEXPECTED);
	}
	/* Only the bad task is worth a line; the flushed ones are expected and many. */
	if (pair_index == BAD_PAIR)
		DOCA_LOG_INFO("Task of pair %u failed as intended: %s", pair_index, doca_error_get_descr(status));
	doca_task_free(task);
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state,
			  enum doca_ctx_states next_state)
{
	struct task_error_state *state = user_data.ptr;

	(void)ctx;
	DOCA_LOG_INFO("DMA context: %s -> %s", sample_ctx_state_name(prev_state), sample_ctx_state_name(next_state));
	if (prev_state == DOCA_CTX_STATE_RUNNING && next_state == DOCA_CTX_STATE_STOPPING) {
		if (!state->stop_requested) {
			DOCA_LOG_INFO("The context stopped itself after the task error; in-flight tasks are flushed");
			state->stopped_by_itself = true;
		}
	}
	if (prev_state == DOCA_CTX_STATE_STOPPING && next_state == DOCA_CTX_STATE_IDLE)
		state->saw_stopping_to_idle = true;
}

static bool no_task_in_flight(void *arg)
{
	const struct task_error_state *state = arg;
	size_t num_inflight = 1;

	return doca_ctx_get_num_inflight_tasks(state->ctx, &num_inflight) == DOCA_SUCCESS && num_inflight == 0;
}

static doca_error_t check_error_phase(const struct task_error_state *state)
{
	DOCA_LOG_INFO("%u tasks succeeded, %u failed or were flushed", state->num_succeeded, state->num_failed);
	if (state->num_succeeded + state->num_failed != NUM_TASKS) {
		DOCA_LOG_ERR("Only %u of %d tasks came back", state->num_succeeded + state->num_failed, NUM_TASKS);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (state->outcomes[BAD_PAIR] != PAIR_FAILED) {
		DOCA_LOG_ERR("The task with the empty source did not fail");
		return DOCA_ERROR_UNEXPECTED;
	}
	if (!state->stopped_by_itself || !state->saw_stopping_to_idle) {
		DOCA_LOG_ERR("Expected running -> stopping by itself, then stopping -> idle");
		return DOCA_ERROR_UNEXPECTED;
	}
	/* Nothing may have been written for the task that failed. */
	return sample_check_pair_untouched(&state->base, BAD_PAIR);
}

/* After the failure: start the same context again and run one clean task on it. */
static doca_error_t recover(struct task_error_state *state, struct doca_dma *dma)
{
	const uint32_t succeeded_before = state->num_succeeded;
	const uint32_t failed_before = state->num_failed;
	doca_error_t result;

	result = sample_reset_pair(&state->base, RECOVERY_PAIR);
	if (result == DOCA_SUCCESS)
		result = sample_start_and_submit(&state->base, dma, RECOVERY_PAIR, 1);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_progress_until(state->base.pe, no_task_in_flight, state);
	if (result != DOCA_SUCCESS)
		return result;
	if (state->num_succeeded != succeeded_before + 1 || state->num_failed != failed_before) {
		DOCA_LOG_ERR("The clean task after the restart did not succeed");
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("Context restarted and a clean task succeeded");
	return state->first_error;
}

static doca_error_t run(struct task_error_state *state, struct doca_dma *dma)
{
	uint32_t num_submitted;
	doca_error_t result;

	/* The source keeps its memory but has no data: invalid, yet doca_task_submit does not check. */
	result = doca_buf_reset_data_len(state->base.src_bufs[BAD_PAIR]);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to empty the source of pair %d: %s", BAD_PAIR, doca_error_get_descr(result));
		return result;
	}
	result = doca_ctx_start(state->ctx);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start DMA context: %s", doca_error_get_descr(result));
		return result;
	}
	result = sample_submit_pair_tasks(&state->base, dma, 0, NUM_TASKS, &num_submitted);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Submitted %u tasks, the one of pair %d with an empty source", num_submitted, BAD_PAIR);

	/* First wait until every task came back, then for the context to finish stopping. */
	result = sample_progress_until(state->base.pe, no_task_in_flight, state);
	if (result == DOCA_SUCCESS)
		result = sample_progress_until_state(state->base.pe, state->ctx, DOCA_CTX_STATE_IDLE);
	if (result == DOCA_SUCCESS)
		result = check_error_phase(state);
	if (result == DOCA_SUCCESS)
		result = state->first_error;
	if (result == DOCA_SUCCESS)
		result = recover(state, dma);
	return result;
}

int main(void)
{
	struct task_error_state state = {.first_error = DOCA_SUCCESS};
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
		state.ctx = doca_dma_as_ctx(dma);
		result = run(&state, dma);
		state.stop_requested = true; /* the clean-up below stops the restarted context */
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
