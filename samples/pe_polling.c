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

/* The polling flow: submit every task, then busy-poll doca_pe_progress until all callbacks ran. */
static doca_error_t run(struct sample_task_counts *counts, struct doca_dma *dma)
{
	return sample_submit_all_and_poll(counts, dma, NUM_TASKS);
}

int main(void)
{
	return sample_main_one_dma(NUM_TASKS, SAMPLE_DEFAULT_BUFFER_SIZE, sample_memcpy_check_cb,
				   sample_memcpy_error_cb, run);
}
