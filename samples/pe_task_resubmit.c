// pkg-config: doca-common doca-dma
/*
 * PE task resubmit: a few tasks are reused for many copies.
 *
 * The DMA context's task pool holds only 4 tasks, yet 16 buffer pairs are copied. Each completion
 * callback checks the pair its task just copied, then points the same task at the next pair
 * (doca_dma_task_memcpy_set_src / set_dst, new user data) and submits it again. A task is freed
 * only when no pair is left. Resubmitting saves the free/alloc round trip and keeps the pool small.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_TASK_RESUBMIT::SAMPLE);

#define NUM_TASKS 4
#define NUM_PAIRS 16

struct resubmit_state {
	struct sample_pe_base base;
	uint32_t next_pair; /* first pair no task has copied yet */
	uint32_t num_pairs_done;
	uint32_t times_copied[NUM_PAIRS];
	uint32_t num_resubmits;
	doca_error_t first_error;
};

/* Points the finished task at the next pair and submits it again; frees it when none is left. */
static void reuse_or_free(struct resubmit_state *state, struct doca_dma_task_memcpy *dma_task)
{
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	const uint32_t pair_index = state->next_pair;
	doca_error_t result;

	if (pair_index == NUM_PAIRS) {
		doca_task_free(task);
		return;
	}
	state->next_pair++;
	doca_dma_task_memcpy_set_src(dma_task, state->base.src_bufs[pair_index]);
	doca_dma_task_memcpy_set_dst(dma_task, state->base.dst_bufs[pair_index]);
	doca_task_set_user_data(task, (union doca_data){.u64 = pair_index});
	result = doca_task_submit(task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to resubmit task for pair %u: %s", pair_index, doca_error_get_descr(result));
		sample_record_error(&state->first_error, result);
		/* Give up on the rest: mark them done so that main's loop still ends. */
		state->num_pairs_done += NUM_PAIRS - pair_index;
		state->next_pair = NUM_PAIRS;
		doca_task_free(task);
		return;
	}
	state->num_resubmits++;
}

static void memcpy_completed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			     union doca_data ctx_user_data)
{
	struct resubmit_state *state = ctx_user_data.ptr;
	const uint32_t pair_index = (uint32_t)task_user_data.u64;

	state->num_pairs_done++;
	state->times_copied[pair_index]++;
	sample_record_error(&state->first_error, sample_check_pair(&state->base, pair_index));
	reuse_or_free(state, dma_task);
}

static void memcpy_failed(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct resubmit_state *state = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);

	state->num_pairs_done++;
	DOCA_LOG_ERR("Task of pair %u failed: %s", (unsigned)task_user_data.u64,
		     doca_error_get_descr(doca_task_get_status(task)));
	sample_record_error(&state->first_error, DOCA_ERROR_IO_FAILED);
	/* After a failure the context stops; do not resubmit into it. */
	doca_task_free(task);
}

static bool all_pairs_done(void *arg)
{
	const struct resubmit_state *state = arg;

	return state->num_pairs_done >= NUM_PAIRS;
}

static doca_error_t run(struct resubmit_state *state, struct doca_dma *dma)
{
	doca_error_t result;

	/* Only the first NUM_TASKS pairs get a task of their own. */
	state->next_pair = NUM_TASKS;
	result = sample_start_and_submit(&state->base, dma, 0, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_progress_until(state->base.pe, all_pairs_done, state);
	if (result != DOCA_SUCCESS)
		return result;
	if (state->first_error != DOCA_SUCCESS)
		return state->first_error;
	for (uint32_t i = 0; i < NUM_PAIRS; i++) {
		if (state->times_copied[i] != 1) {
			DOCA_LOG_ERR("Pair %u was copied %u times, expected once", i, state->times_copied[i]);
			return DOCA_ERROR_UNEXPECTED;
		}
	}
	if (state->num_resubmits != NUM_PAIRS - NUM_TASKS) {
		DOCA_LOG_ERR("%u resubmissions, expected %d", state->num_resubmits, NUM_PAIRS - NUM_TASKS);
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("%d tasks copied %d buffer pairs with %u resubmissions", NUM_TASKS, NUM_PAIRS,
		      state->num_resubmits);
	return DOCA_SUCCESS;
}

int main(void)
{
	struct resubmit_state state = {.first_error = DOCA_SUCCESS};
	struct doca_dma *dma;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&state.base, NUM_PAIRS, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	/* The pool holds NUM_TASKS tasks: allocating one per pair would fail. */
	result = sample_dma_create(&state.base, memcpy_completed, memcpy_failed, NUM_TASKS,
				   (union doca_data){.ptr = &state}, NULL, &dma);
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
