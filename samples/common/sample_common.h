/*
 * Set-up shared by the softdpu samples: logging, device selection, memory maps, and the buffers,
 * inventory and progress engine that every progress-engine (PE) sample starts from.
 *
 * The scenario of each sample lives in its own file; this file only holds what would otherwise be
 * copied into each of them. Every function logs what failed and returns the DOCA error.
 */
#ifndef SAMPLE_COMMON_H_
#define SAMPLE_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

/* How long a sample waits for any expected event before it gives up and fails (never hangs). */
#define SAMPLE_TIMEOUT_SECONDS 10

/* Buffer size of the PE samples: small copies, as in the DOCA Core guide's scenarios. */
#define SAMPLE_DEFAULT_BUFFER_SIZE 1024

/* Standard application backends plus an SDK backend on stderr at WARNING, as DOCA samples do. */
doca_error_t sample_log_init(void);

/*
 * Opens a device that can run DMA memcpy tasks: the one at pci_addr ("XX:XX.X" or
 * "XXXX:XX:XX.X"), or, when pci_addr is NULL, the first listed device that supports memcpy.
 */
doca_error_t sample_open_dma_device(const char *pci_addr, struct doca_dev **dev);

/*
 * Opens the device at pci_addr (or, when pci_addr is NULL, the first listed device that opens),
 * skipping devices that cannot run DMA memcpy tasks when need_dma.
 */
doca_error_t sample_open_device(const char *pci_addr, bool need_dma, struct doca_dev **dev);

/* Creates and starts an mmap over [addr, addr + len) that dev may access with the given permissions. */
doca_error_t sample_mmap_create(struct doca_dev *dev, void *addr, size_t len, uint32_t permissions,
				struct doca_mmap **mmap);

/* Progresses pe until is_done(arg) holds; DOCA_ERROR_TIME_OUT after SAMPLE_TIMEOUT_SECONDS. */
typedef bool (*sample_done_fn)(void *arg);
doca_error_t sample_progress_until(struct doca_pe *pe, sample_done_fn is_done, void *arg);

/* Progresses pe until ctx reaches the wanted state (bounded like sample_progress_until). */
doca_error_t sample_progress_until_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_states wanted);

/* Human-readable name of a context state, for logs. */
const char *sample_ctx_state_name(enum doca_ctx_states state);

/*
 * What the PE samples share: one device, one memory region holding num_pairs source buffers
 * followed by num_pairs destination buffers of buffer_size bytes each, one mmap over the region,
 * one inventory, one PE, and a doca_buf per buffer. Source i is filled with a pattern unique to
 * i, as a doca_buf whose data is the whole buffer; destination i starts empty (zeroed memory,
 * empty data section), so that a finished copy can be checked byte by byte.
 */
struct sample_pe_base {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inventory;
	struct doca_pe *pe;
	uint8_t *region;
	size_t buffer_size;
	uint32_t num_pairs;
	struct doca_buf **src_bufs;
	struct doca_buf **dst_bufs;
};

/* Sets up everything above; on failure, whatever was created is released again. */
doca_error_t sample_pe_base_init(struct sample_pe_base *base, uint32_t num_pairs, size_t buffer_size);

/* Releases the PE, buffers, inventory, mmap and device, in that order. DMA contexts must be gone first. */
doca_error_t sample_pe_base_cleanup(struct sample_pe_base *base);

/*
 * Creates a DMA context on base's device, connects it to base's PE and enables memcpy tasks.
 * ctx_user_data reaches every task callback; state_cb may be NULL. The context is not started.
 */
doca_error_t sample_dma_create(struct sample_pe_base *base, doca_dma_task_memcpy_completion_cb_t success_cb,
			       doca_dma_task_memcpy_completion_cb_t error_cb, uint32_t num_tasks,
			       union doca_data ctx_user_data, doca_ctx_state_changed_callback_t state_cb,
			       struct doca_dma **dma);

/* Stops the context if it is not idle (progressing base's PE until it is), then destroys it. */
doca_error_t sample_dma_destroy(struct sample_pe_base *base, struct doca_dma *dma);

/* Allocates a memcpy task from source pair_index to destination pair_index; user data = pair_index. */
doca_error_t sample_alloc_pair_task(struct sample_pe_base *base, struct doca_dma *dma, uint32_t pair_index,
				    struct doca_dma_task_memcpy **task);

/*
 * Allocates and submits (doca_task_submit) one task per pair in [first_pair, first_pair + count).
 * Stops at the first failure; a task that could not be submitted is freed. *num_submitted (may be
 * NULL) receives how many are in flight: their callbacks still run, so the caller still progresses.
 */
doca_error_t sample_submit_pair_tasks(struct sample_pe_base *base, struct doca_dma *dma, uint32_t first_pair,
				      uint32_t count, uint32_t *num_submitted);

/* Starts the DMA context, then submits one task per pair in [first_pair, first_pair + count). */
doca_error_t sample_start_and_submit(struct sample_pe_base *base, struct doca_dma *dma, uint32_t first_pair,
				     uint32_t count);

/*
 * Checks that destination pair_index holds exactly its source: data section at the buffer's start,
 * data length buffer_size, every byte equal. DOCA_ERROR_UNEXPECTED (logged) on any mismatch.
 */
doca_error_t sample_check_pair(const struct sample_pe_base *base, uint32_t pair_index);

/* Checks that destination pair_index was never written: empty data section, memory still zero. */
doca_error_t sample_check_pair_untouched(const struct sample_pe_base *base, uint32_t pair_index);

/* Makes destination pair_index empty again (zeroed memory, data length 0) so it can be reused. */
doca_error_t sample_reset_pair(struct sample_pe_base *base, uint32_t pair_index);

/*
 * Completion bookkeeping for samples whose callbacks do the usual thing: check the copy, count,
 * free the task. Pass a pointer to one of these as the DMA context's user data and use
 * sample_memcpy_check_cb / sample_memcpy_error_cb as the memcpy callbacks.
 */
struct sample_task_counts {
	struct sample_pe_base *base;
	uint32_t num_succeeded;
	uint32_t num_failed;
	doca_error_t first_error; /* first wrong copy or failed task */
};

/* Success callback: checks the pair named by the task's user data, counts, frees the task. */
void sample_memcpy_check_cb(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data);

/* Error callback: logs and records the task's status, counts, frees the task. */
void sample_memcpy_error_cb(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data);

/* Progresses pe until counts has seen num_tasks completions, successful or not (bounded). */
doca_error_t sample_progress_until_counted(struct doca_pe *pe, struct sample_task_counts *counts, uint32_t num_tasks);

/* DOCA_SUCCESS when all num_tasks succeeded with correct copies; logs and fails otherwise. */
doca_error_t sample_counts_check_all_succeeded(const struct sample_task_counts *counts, uint32_t num_tasks);

/* Starts dma, submits num_tasks copies over pairs 0..num_tasks-1, busy-polls until every callback
 * has run, and checks that all succeeded with correct copies. */
doca_error_t sample_submit_all_and_poll(struct sample_task_counts *counts, struct doca_dma *dma, uint32_t num_tasks);

/* A scenario run on one DMA context whose task user data is `counts`. */
typedef doca_error_t (*sample_scenario_fn)(struct sample_task_counts *counts, struct doca_dma *dma);

/* The main() of a one-context sample: logging, set-up of num_tasks buffer pairs, one DMA context
 * with the given callbacks (context user data: the task counts), the scenario, clean-up, and the
 * final verdict. Returns the process exit status. */
int sample_main_one_dma(uint32_t num_tasks, size_t buffer_size, doca_dma_task_memcpy_completion_cb_t success_cb,
			doca_dma_task_memcpy_completion_cb_t error_cb, sample_scenario_fn scenario);

/* Keeps the first failure: a callback cannot return an error, so it records it for main. */
static inline void sample_record_error(doca_error_t *first_error, doca_error_t result)
{
	if (*first_error == DOCA_SUCCESS && result != DOCA_SUCCESS)
		*first_error = result;
}

/* A clean-up step: logs a failure of `what` and keeps the first one, so clean-up can go on. */
void sample_cleanup_step(doca_error_t *first_error, doca_error_t result, const char *what);

#endif /* SAMPLE_COMMON_H_ */
