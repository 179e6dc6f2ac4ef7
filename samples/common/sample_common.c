/*
 * Set-up shared by the softdpu samples; see sample_common.h.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "sample_common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(SAMPLE_COMMON);

doca_error_t sample_log_init(void)
{
	struct doca_log_backend *sdk_log;
	doca_error_t result;

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result != DOCA_SUCCESS)
		return result;
	return doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
}

doca_error_t sample_open_device(const char *pci_addr, bool need_dma, struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs;
	doca_error_t result;

	*dev = NULL;
	result = doca_devinfo_create_list(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list devices: %s", doca_error_get_descr(result));
		return result;
	}
	for (uint32_t i = 0; i < nb_devs && *dev == NULL; i++) {
		if (pci_addr != NULL) {
			uint8_t is_equal = 0;

			result = doca_devinfo_is_equal_pci_addr(dev_list[i], pci_addr, &is_equal);
			if (result != DOCA_SUCCESS || !is_equal)
				continue;
		}
		if (need_dma && doca_dma_cap_task_memcpy_is_supported(dev_list[i]) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_WARN("Failed to open device %u: %s", i, doca_error_get_descr(result));
	}
	doca_devinfo_destroy_list(dev_list);
	if (*dev == NULL) {
		if (pci_addr != NULL && need_dma)
			DOCA_LOG_ERR("No device at %s supports DMA memcpy tasks", pci_addr);
		else if (pci_addr != NULL)
			DOCA_LOG_ERR("No device at %s could be opened", pci_addr);
		else if (need_dma)
			DOCA_LOG_ERR("No device supports DMA memcpy tasks");
		else
			DOCA_LOG_ERR("No device could be opened");
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_open_dma_device(const char *pci_addr, struct doca_dev **dev)
{
	return sample_open_device(pci_addr, true, dev);
}

doca_error_t sample_mmap_create(struct doca_dev *dev, void *addr, size_t len, uint32_t permissions,
				struct doca_mmap **mmap)
{
	doca_error_t result;

	result = doca_mmap_create(mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create mmap: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_mmap_set_memrange(*mmap, addr, len);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(*mmap, permissions);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(*mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(*mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up mmap: %s", doca_error_get_descr(result));
		doca_mmap_destroy(*mmap);
		*mmap = NULL;
	}
	return result;
}

static double monotonic_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

doca_error_t sample_progress_until(struct doca_pe *pe, sample_done_fn is_done, void *arg)
{
	const double deadline = monotonic_seconds() + SAMPLE_TIMEOUT_SECONDS;

	while (!is_done(arg)) {
		/* Read the clock only when there was nothing to do, so busy progress stays cheap. */
		if (doca_pe_progress(pe) == 0 && monotonic_seconds() > deadline) {
			DOCA_LOG_ERR("Gave up after %d seconds without reaching the expected state",
				     SAMPLE_TIMEOUT_SECONDS);
			return DOCA_ERROR_TIME_OUT;
		}
	}
	return DOCA_SUCCESS;
}

struct wanted_state {
	struct doca_ctx *ctx;
	enum doca_ctx_states state;
};

static bool ctx_in_wanted_state(void *arg)
{
	const struct wanted_state *wanted = arg;
	enum doca_ctx_states state;

	return doca_ctx_get_state(wanted->ctx, &state) == DOCA_SUCCESS && state == wanted->state;
}

doca_error_t sample_progress_until_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_states wanted)
{
	struct wanted_state target = {.ctx = ctx, .state = wanted};

	return sample_progress_until(pe, ctx_in_wanted_state, &target);
}

const char *sample_ctx_state_name(enum doca_ctx_states state)
{
	switch (state) {
	case DOCA_CTX_STATE_IDLE:
		return "idle";
	case DOCA_CTX_STATE_STARTING:
		return "starting";
	case DOCA_CTX_STATE_RUNNING:
		return "running";
	case DOCA_CTX_STATE_STOPPING:
		return "stopping";
	}
	return "unknown";
}

/* The byte source pair_index holds at offset: differs between neighbouring pairs and offsets. */
static uint8_t pattern_byte(uint32_t pair_index, size_t offset)
{
	return (uint8_t)(pair_index * 37u + offset * 7u + 1u);
}

static uint8_t *src_memory(const struct sample_pe_base *base, uint32_t pair_index)
{
	return base->region + (size_t)pair_index * base->buffer_size;
}

static uint8_t *dst_memory(const struct sample_pe_base *base, uint32_t pair_index)
{
	return base->region + ((size_t)base->num_pairs + pair_index) * base->buffer_size;
}

static doca_error_t get_pair_bufs(struct sample_pe_base *base)
{
	doca_error_t result;

	for (uint32_t i = 0; i < base->num_pairs; i++) {
		/* The source's data is the whole buffer; the destination's data section starts empty. */
		result = doca_buf_inventory_buf_get_by_data(base->inventory, base->mmap, src_memory(base, i),
							    base->buffer_size, &base->src_bufs[i]);
		if (result == DOCA_SUCCESS)
			result = doca_buf_inventory_buf_get_by_addr(base->inventory, base->mmap, dst_memory(base, i),
								    base->buffer_size, &base->dst_bufs[i]);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to get buffers of pair %u: %s", i, doca_error_get_descr(result));
			return result;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_pe_base_init(struct sample_pe_base *base, uint32_t num_pairs, size_t buffer_size)
{
	const size_t region_len = 2 * (size_t)num_pairs * buffer_size;
	doca_error_t result;

	memset(base, 0, sizeof(*base));
	base->num_pairs = num_pairs;
	base->buffer_size = buffer_size;
	base->region = calloc(1, region_len);
	base->src_bufs = calloc(num_pairs, sizeof(*base->src_bufs));
	base->dst_bufs = calloc(num_pairs, sizeof(*base->dst_bufs));
	if (base->region == NULL || base->src_bufs == NULL || base->dst_bufs == NULL) {
		DOCA_LOG_ERR("Failed to allocate %zu bytes of sample memory", region_len);
		sample_pe_base_cleanup(base);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < num_pairs; i++)
		for (size_t offset = 0; offset < buffer_size; offset++)
			src_memory(base, i)[offset] = pattern_byte(i, offset);

	result = sample_open_dma_device(NULL, &base->dev);
	if (result == DOCA_SUCCESS)
		result = sample_mmap_create(base->dev, base->region, region_len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
					    &base->mmap);
	if (result == DOCA_SUCCESS) {
		result = doca_buf_inventory_create(2 * (size_t)num_pairs, &base->inventory);
		if (result == DOCA_SUCCESS)
			result = doca_buf_inventory_start(base->inventory);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to set up buffer inventory: %s", doca_error_get_descr(result));
	}
	if (result == DOCA_SUCCESS)
		result = get_pair_bufs(base);
	if (result == DOCA_SUCCESS) {
		result = doca_pe_create(&base->pe);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to create progress engine: %s", doca_error_get_descr(result));
	}
	if (result != DOCA_SUCCESS)
		sample_pe_base_cleanup(base);
	return result;
}

void sample_cleanup_step(doca_error_t *first_error, doca_error_t result, const char *what)
{
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to %s: %s", what, doca_error_get_descr(result));
	sample_record_error(first_error, result);
}

doca_error_t sample_pe_base_cleanup(struct sample_pe_base *base)
{
	doca_error_t first_error = DOCA_SUCCESS;

	/* The PE goes first: its contexts are already destroyed, and nothing else depends on it. */
	if (base->pe != NULL)
		sample_cleanup_step(&first_error, doca_pe_destroy(base->pe), "destroy progress engine");
	for (uint32_t i = 0; i < base->num_pairs; i++) {
		if (base->src_bufs != NULL && base->src_bufs[i] != NULL)
			sample_cleanup_step(&first_error, doca_buf_dec_refcount(base->src_bufs[i], NULL),
					    "release source buffer");
		if (base->dst_bufs != NULL && base->dst_bufs[i] != NULL)
			sample_cleanup_step(&first_error, doca_buf_dec_refcount(base->dst_bufs[i], NULL),
					    "release destination buffer");
	}
	if (base->inventory != NULL)
		sample_cleanup_step(&first_error, doca_buf_inventory_destroy(base->inventory),
				    "destroy buffer inventory");
	if (base->mmap != NULL)
		sample_cleanup_step(&first_error, doca_mmap_destroy(base->mmap), "destroy mmap");
	if (base->dev != NULL)
		sample_cleanup_step(&first_error, doca_dev_close(base->dev), "close device");
	free(base->src_bufs);
	free(base->dst_bufs);
	free(base->region);
	memset(base, 0, sizeof(*base));
	return first_error;
}

doca_error_t sample_dma_create(struct sample_pe_base *base, doca_dma_task_memcpy_completion_cb_t success_cb,
			       doca_dma_task_memcpy_completion_cb_t error_cb, uint32_t num_tasks,
			       union doca_data ctx_user_data, doca_ctx_state_changed_callback_t state_cb,
			       struct doca_dma **dma)
{
	struct doca_ctx *ctx;
	doca_error_t result;

	result = doca_dma_create(base->dev, dma);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create DMA context: %s", doca_error_get_descr(result));
		return result;
	}
	ctx = doca_dma_as_ctx(*dma);
	result = doca_pe_connect_ctx(base->pe, ctx);
	if (result == DOCA_SUCCESS)
		result = doca_dma_task_memcpy_set_conf(*dma, success_cb, error_cb, num_tasks);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(ctx, ctx_user_data);
	if (result == DOCA_SUCCESS && state_cb != NULL)
		result = doca_ctx_set_state_changed_cb(ctx, state_cb);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to configure DMA context: %s", doca_error_get_descr(result));
		doca_dma_destroy(*dma);
		*dma = NULL;
	}
	return result;
}

doca_error_t sample_dma_destroy(struct sample_pe_base *base, struct doca_dma *dma)
{
	struct doca_ctx *ctx = doca_dma_as_ctx(dma);
	enum doca_ctx_states state;
	doca_error_t result;

	result = doca_ctx_get_state(ctx, &state);
	if (result == DOCA_SUCCESS && state != DOCA_CTX_STATE_IDLE) {
		result = doca_ctx_stop(ctx);
		if (result == DOCA_ERROR_IN_PROGRESS)
			result = sample_progress_until_state(base->pe, ctx, DOCA_CTX_STATE_IDLE);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to stop DMA context: %s", doca_error_get_descr(result));
	}
	if (result == DOCA_SUCCESS) {
		result = doca_dma_destroy(dma);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to destroy DMA context: %s", doca_error_get_descr(result));
	}
	return result;
}

doca_error_t sample_alloc_pair_task(struct sample_pe_base *base, struct doca_dma *dma, uint32_t pair_index,
				    struct doca_dma_task_memcpy **task)
{
	union doca_data user_data = {.u64 = pair_index};
	doca_error_t result;

	result = doca_dma_task_memcpy_alloc_init(dma, base->src_bufs[pair_index], base->dst_bufs[pair_index], user_data,
						 task);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to allocate task for pair %u: %s", pair_index, doca_error_get_descr(result));
	return result;
}

doca_error_t sample_submit_pair_tasks(struct sample_pe_base *base, struct doca_dma *dma, uint32_t first_pair,
				      uint32_t count, uint32_t *num_submitted)
{
	struct doca_dma_task_memcpy *task;
	doca_error_t result = DOCA_SUCCESS;
	uint32_t submitted = 0;

	for (; submitted < count; submitted++) {
		result = sample_alloc_pair_task(base, dma, first_pair + submitted, &task);
		if (result != DOCA_SUCCESS)
			break;
		result = doca_task_submit(doca_dma_task_memcpy_as_task(task));
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to submit task for pair %u: %s", first_pair + submitted,
				     doca_error_get_descr(result));
			/* A task that was not submitted still belongs to the caller. */
			doca_task_free(doca_dma_task_memcpy_as_task(task));
			break;
		}
	}
	if (num_submitted != NULL)
		*num_submitted = submitted;
	return result;
}

doca_error_t sample_start_and_submit(struct sample_pe_base *base, struct doca_dma *dma, uint32_t first_pair,
				     uint32_t count)
{
	doca_error_t result;

	result = doca_ctx_start(doca_dma_as_ctx(dma));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start DMA context: %s", doca_error_get_descr(result));
		return result;
	}
	/* On a failure, tasks already in flight are flushed when the context is destroyed. */
	return sample_submit_pair_tasks(base, dma, first_pair, count, NULL);
}

doca_error_t sample_check_pair(const struct sample_pe_base *base, uint32_t pair_index)
{
	const uint8_t *expected = src_memory(base, pair_index);
	const uint8_t *copied = dst_memory(base, pair_index);
	void *data;
	size_t data_len;

	if (doca_buf_get_data(base->dst_bufs[pair_index], &data) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(base->dst_bufs[pair_index], &data_len) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Pair %u: cannot read the destination's data section", pair_index);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (data != (const void *)copied || data_len != base->buffer_size) {
		DOCA_LOG_ERR("Pair %u: destination data section is %p+%zu, expected %p+%zu", pair_index, data, data_len,
			     (const void *)copied, base->buffer_size);
		return DOCA_ERROR_UNEXPECTED;
	}
	for (size_t offset = 0; offset < base->buffer_size; offset++) {
		if (copied[offset] != expected[offset] || expected[offset] != pattern_byte(pair_index, offset)) {
			DOCA_LOG_ERR("Pair %u: byte %zu is 0x%02x, expected 0x%02x", pair_index, offset, copied[offset],
				     pattern_byte(pair_index, offset));
			return DOCA_ERROR_UNEXPECTED;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_check_pair_untouched(const struct sample_pe_base *base, uint32_t pair_index)
{
	const uint8_t *memory = dst_memory(base, pair_index);
	size_t data_len;

	if (doca_buf_get_data_len(base->dst_bufs[pair_index], &data_len) != DOCA_SUCCESS || data_len != 0) {
		DOCA_LOG_ERR("Pair %u: destination should be empty", pair_index);
		return DOCA_ERROR_UNEXPECTED;
	}
	for (size_t offset = 0; offset < base->buffer_size; offset++) {
		if (memory[offset] != 0) {
			DOCA_LOG_ERR("Pair %u: destination byte %zu was written", pair_index, offset);
			return DOCA_ERROR_UNEXPECTED;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_reset_pair(struct sample_pe_base *base, uint32_t pair_index)
{
	doca_error_t result;

	memset(dst_memory(base, pair_index), 0, base->buffer_size);
	result = doca_buf_reset_data_len(base->dst_bufs[pair_index]);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Pair %u: failed to empty the destination: %s", pair_index, doca_error_get_descr(result));
	return result;
}

void sample_memcpy_check_cb(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct sample_task_counts *counts = ctx_user_data.ptr;

	counts->num_succeeded++;
	sample_record_error(&counts->first_error, sample_check_pair(counts->base, (uint32_t)task_user_data.u64));
	doca_task_free(doca_dma_task_memcpy_as_task(dma_task));
}

void sample_memcpy_error_cb(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct sample_task_counts *counts = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);
	const doca_error_t status = doca_task_get_status(task);

	counts->num_failed++;
	DOCA_LOG_ERR("Task of pair %u failed: %s", (unsigned)task_user_data.u64, doca_error_get_descr(status));
	/* A failed task must report a failure status; SUCCESS here would itself be a bug. */
	sample_record_error(&counts->first_error, status != DOCA_SUCCESS ? status : DOCA_ERROR_UNEXPECTED);
	doca_task_free(task);
}

struct counted_target {
	const struct sample_task_counts *counts;
	uint32_t num_tasks;
};

static bool counted_target_reached(void *arg)
{
	const struct counted_target *target = arg;

	return target->counts->num_succeeded + target->counts->num_failed >= target->num_tasks;
}

doca_error_t sample_progress_until_counted(struct doca_pe *pe, struct sample_task_counts *counts, uint32_t num_tasks)
{
	struct counted_target target = {.counts = counts, .num_tasks = num_tasks};

	return sample_progress_until(pe, counted_target_reached, &target);
}

doca_error_t sample_counts_check_all_succeeded(const struct sample_task_counts *counts, uint32_t num_tasks)
{
	if (counts->first_error != DOCA_SUCCESS)
		return counts->first_error;
	if (counts->num_succeeded != num_tasks || counts->num_failed != 0) {
		DOCA_LOG_ERR("%u tasks succeeded and %u failed, expected %u successes", counts->num_succeeded,
			     counts->num_failed, num_tasks);
		return DOCA_ERROR_UNEXPECTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_submit_all_and_poll(struct sample_task_counts *counts, struct doca_dma *dma, uint32_t num_tasks)
{
	doca_error_t result;

	result = sample_start_and_submit(counts->base, dma, 0, num_tasks);
	if (result != DOCA_SUCCESS)
		return result;
	/* The polling loop: progress until every callback has run. */
	result = sample_progress_until_counted(counts->base->pe, counts, num_tasks);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_counts_check_all_succeeded(counts, num_tasks);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("All %u tasks completed and their copies were checked", num_tasks);
	return result;
}

int sample_main_one_dma(uint32_t num_tasks, size_t buffer_size, doca_dma_task_memcpy_completion_cb_t success_cb,
			doca_dma_task_memcpy_completion_cb_t error_cb, sample_scenario_fn scenario)
{
	struct sample_pe_base base;
	struct sample_task_counts counts = {.base = &base, .first_error = DOCA_SUCCESS};
	struct doca_dma *dma;
	doca_error_t result;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&base, num_tasks, buffer_size);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result =
	    sample_dma_create(&base, success_cb, error_cb, num_tasks, (union doca_data){.ptr = &counts}, NULL, &dma);
	if (result == DOCA_SUCCESS) {
		result = scenario(&counts, dma);
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
