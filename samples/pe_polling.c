// pkg-config: doca-common doca-dma
/*
 * PE polling: the basic progress-engine flow, the one the other PE samples vary.
 *
 * One DMA context is connected to one PE. 16 memcpy tasks are allocated and submitted, then main
 * busy-polls doca_pe_progress: the completion callbacks run inside that call, on this thread; each
 * one checks the copied bytes and frees its task. Clean-up destroys the context before the PE.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_POLLING::SAMPLE);

#define NUM_TASKS 16

static doca_error_t run(struct sample_task_counts *counts, struct doca_dma *dma)
{
	doca_error_t result;

	result = sample_start_and_submit(counts->base, dma, 0, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	/* The polling loop: progress until every callback has run. */
	result = sample_progress_until_counted(counts->base->pe, counts, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_counts_check_all_succeeded(counts, NUM_TASKS);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("All %d tasks completed and their copies were checked", NUM_TASKS);
	return result;
}

int main(void)
{
	struct sample_pe_base base;
	struct sample_task_counts counts = {.base = &base, .first_error = DOCA_SUCCESS};
	struct doca_dma *dma;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&base, NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_dma_create(&base, sample_memcpy_check_cb, sample_memcpy_error_cb, NUM_TASKS,
				   (union doca_data){.ptr = &counts}, NULL, &dma);
	if (result == DOCA_SUCCESS) {
		result = run(&counts, dma);
		sample_record_error(&result, sample_dma_destroy(&base, dma));
	}
	sample_record_error(&result, sample_pe_base_cleanup(&base));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
