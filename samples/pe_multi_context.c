// pkg-config: doca-common doca-dma
/*
 * PE multi-context: one PE serves several contexts, here 4 DMA contexts with 16 tasks each.
 *
 * Every context gets its own bookkeeping as context user data, so one callback function tells
 * the contexts apart by the ctx_user_data argument. A single doca_pe_progress loop drives all of
 * them. Context k copies buffer pairs [16k, 16k + 16).
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_MULTI_CONTEXT::SAMPLE);

#define NUM_CONTEXTS 4
#define NUM_TASKS_PER_CONTEXT 16

struct multi_context_state {
	struct sample_pe_base base;
	struct doca_dma *dmas[NUM_CONTEXTS];
	struct sample_task_counts counts[NUM_CONTEXTS];
};

static bool all_contexts_done(void *arg)
{
	const struct multi_context_state *state = arg;

	for (int k = 0; k < NUM_CONTEXTS; k++)
		if (state->counts[k].num_succeeded + state->counts[k].num_failed < NUM_TASKS_PER_CONTEXT)
			return false;
	return true;
}

static doca_error_t run(struct multi_context_state *state)
{
	doca_error_t result;

	/* All contexts have tasks in flight on the same PE at the same time. */
	for (int k = 0; k < NUM_CONTEXTS; k++) {
		result = sample_start_and_submit(&state->base, state->dmas[k], k * NUM_TASKS_PER_CONTEXT,
						 NUM_TASKS_PER_CONTEXT);
		if (result != DOCA_SUCCESS)
			return result;
	}
	result = sample_progress_until(state->base.pe, all_contexts_done, state);
	for (int k = 0; k < NUM_CONTEXTS && result == DOCA_SUCCESS; k++) {
		result = sample_counts_check_all_succeeded(&state->counts[k], NUM_TASKS_PER_CONTEXT);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("DMA context %d did not complete its tasks correctly", k);
	}
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("%d contexts completed %d tasks each on one PE", NUM_CONTEXTS, NUM_TASKS_PER_CONTEXT);
	return result;
}

int main(void)
{
	struct multi_context_state state = {0};
	int num_created = 0;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&state.base, NUM_CONTEXTS * NUM_TASKS_PER_CONTEXT, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	for (; num_created < NUM_CONTEXTS && result == DOCA_SUCCESS; num_created++) {
		state.counts[num_created] =
		    (struct sample_task_counts){.base = &state.base, .first_error = DOCA_SUCCESS};
		result = sample_dma_create(&state.base, sample_memcpy_check_cb, sample_memcpy_error_cb,
					   NUM_TASKS_PER_CONTEXT, (union doca_data){.ptr = &state.counts[num_created]},
					   NULL, &state.dmas[num_created]);
	}
	if (result == DOCA_SUCCESS)
		result = run(&state);
	else
		num_created--; /* the last creation failed */
	/* Every context must be destroyed before the PE. */
	while (num_created > 0)
		sample_record_error(&result, sample_dma_destroy(&state.base, state.dmas[--num_created]));
	sample_record_error(&result, sample_pe_base_cleanup(&state.base));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
