// pkg-config: doca-common doca-dma
/*
 * PE single completion callback: the pe_polling workload with one callback for success and error.
 *
 * DOCA recommends two callbacks so the success path never has to look at the task's status. A
 * program may still register the same function for both; it then asks doca_task_get_status
 * which of the two happened.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_SINGLE_TASK_COMP_CB::SAMPLE);

#define NUM_TASKS 16

/* Registered as both the success and the error callback of memcpy tasks. */
static void memcpy_finished(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct sample_task_counts *counts = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	const uint32_t pair_index = (uint32_t)task_user_data.u64;
	const doca_error_t status = doca_task_get_status(task);

	if (status == DOCA_SUCCESS) {
		counts->num_succeeded++;
		sample_record_error(&counts->first_error, sample_check_pair(counts->base, pair_index));
	} else {
		counts->num_failed++;
		DOCA_LOG_ERR("Task of pair %u failed: %s", pair_index, doca_error_get_descr(status));
		sample_record_error(&counts->first_error, status);
	}
	doca_task_free(task);
}

/* Same flow as pe_polling; what differs is the one callback registered for both outcomes. */
static doca_error_t run(struct sample_task_counts *counts, struct doca_dma *dma)
{
	return sample_submit_all_and_poll(counts, dma, NUM_TASKS);
}

int main(void)
{
	return sample_main_one_dma(NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE, memcpy_finished, memcpy_finished, run);
}
