// pkg-config: doca-common doca-dma
/*
 * PE task try-submit: doca_task_try_submit validates a task before submitting it.
 *
 * doca_task_submit trusts its input (the fast path). doca_task_try_submit checks the task first
 * and refuses an invalid one with DOCA_ERROR_INVALID_VALUE; such a task was never submitted, so
 * the caller still owns it and frees it. Here the task of pair 5 has an empty source and is
 * refused; the other 15 are submitted and copy normally, and the context keeps running: a
 * refused try-submit is not a task failure. Validation costs CPU time: meant for development.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_TASK_TRY_SUBMIT::SAMPLE);

#define NUM_TASKS 16
#define INVALID_PAIR 5

/* Allocates and try-submits a task per pair; only INVALID_PAIR's must be refused. */
static doca_error_t try_submit_all(struct sample_pe_base *base, struct doca_dma *dma, uint32_t *num_submitted)
{
	struct doca_dma_task_memcpy *dma_task;
	struct doca_task *task;
	doca_error_t result;

	*num_submitted = 0;
	for (uint32_t i = 0; i < NUM_TASKS; i++) {
		result = sample_alloc_pair_task(base, dma, i, &dma_task);
		if (result != DOCA_SUCCESS)
			return result;
		task = doca_dma_task_memcpy_as_task(dma_task);
		result = doca_task_try_submit(task);
		if (result == DOCA_SUCCESS) {
			(*num_submitted)++;
			if (i != INVALID_PAIR)
				continue;
			DOCA_LOG_ERR("The invalid task of pair %u was accepted", i);
			return DOCA_ERROR_UNEXPECTED;
		}
		/* Not submitted: the task is still ours to free. */
		doca_task_free(task);
		if (i == INVALID_PAIR && result == DOCA_ERROR_INVALID_VALUE) {
			DOCA_LOG_INFO("The task of pair %u was refused as expected: %s", i,
				      doca_error_get_descr(result));
			continue;
		}
		DOCA_LOG_ERR("doca_task_try_submit of pair %u returned %s", i, doca_error_get_name(result));
		return i == INVALID_PAIR ? DOCA_ERROR_UNEXPECTED : result;
	}
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample_task_counts *counts, struct doca_dma *dma)
{
	struct doca_ctx *ctx = doca_dma_as_ctx(dma);
	enum doca_ctx_states ctx_state;
	uint32_t num_submitted;
	doca_error_t result;

	result = doca_buf_reset_data_len(counts->base->src_bufs[INVALID_PAIR]);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to empty the source of pair %d: %s", INVALID_PAIR, doca_error_get_descr(result));
		return result;
	}
	result = doca_ctx_start(ctx);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start DMA context: %s", doca_error_get_descr(result));
		return result;
	}
	result = try_submit_all(counts->base, dma, &num_submitted);
	/* Whatever happened, wait for the tasks that did go out. */
	sample_record_error(&result, sample_progress_until_counted(counts->base->pe, counts, num_submitted));
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_counts_check_all_succeeded(counts, NUM_TASKS - 1);
	if (result == DOCA_SUCCESS)
		result = sample_check_pair_untouched(counts->base, INVALID_PAIR);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_ctx_get_state(ctx, &ctx_state);
	if (result != DOCA_SUCCESS || ctx_state != DOCA_CTX_STATE_RUNNING) {
		DOCA_LOG_ERR("The context should still be running after a refused try-submit");
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("%d valid tasks completed; the invalid one never ran", NUM_TASKS - 1);
	return DOCA_SUCCESS;
}

int main(void)
{
	return sample_main_one_dma(NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE, sample_memcpy_check_cb,
				   sample_memcpy_error_cb, run);
}
