// pkg-config: doca-common doca-dma
/*
 * DMA local copy: one memcpy between two memory maps of this process, on one device.
 *
 * The device is opened by PCI address (default 03:00.0, the DPU's first port in the default
 * topology; -p <pci address> picks another). The source text and the destination buffer each get
 * their own mmap; the two ranges must not overlap, which the sample checks before it copies.
 * One memcpy task runs on a PE; afterwards the destination must hold exactly the source bytes.
 */
#define _POSIX_C_SOURCE 200809L /* getopt under -std=c11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(DMA_LOCAL_COPY::SAMPLE);

#define DEFAULT_PCI_ADDR "03:00.0"
#define COPY_TEXT "softdpu: a DMA engine copied this sentence from one memory map to another."

struct local_copy {
	struct doca_dev *dev;
	struct doca_mmap *src_mmap;
	struct doca_mmap *dst_mmap;
	struct doca_buf_inventory *inventory;
	struct doca_buf *src_buf;
	struct doca_buf *dst_buf;
	struct doca_pe *pe;
	struct doca_dma *dma;
	char *src;
	char *dst;
	size_t len;
	bool task_done;
	doca_error_t task_status;
};

static void memcpy_finished(struct doca_dma_task_memcpy *dma_task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct local_copy *copy = ctx_user_data.ptr;
	struct doca_task *task = doca_dma_task_memcpy_as_task(dma_task);

	(void)task_user_data;
	copy->task_status = doca_task_get_status(task);
	copy->task_done = true;
	doca_task_free(task);
}

static bool task_done(void *arg)
{
	return ((const struct local_copy *)arg)->task_done;
}

static bool ranges_overlap(const void *a, const void *b, size_t len)
{
	const char *first = a;
	const char *second = b;

	return first < second + len && second < first + len;
}

/* The device must copy len bytes in one task and the two ranges must be disjoint. */
static doca_error_t check_copy_is_possible(const struct local_copy *copy)
{
	uint64_t max_buf_size;
	doca_error_t result;

	result = doca_dma_cap_task_memcpy_get_max_buf_size(doca_dev_as_devinfo(copy->dev), &max_buf_size);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to query the maximum memcpy size: %s", doca_error_get_descr(result));
		return result;
	}
	if (copy->len > max_buf_size) {
		DOCA_LOG_ERR("%zu bytes exceed the device's maximum of %llu per task", copy->len,
			     (unsigned long long)max_buf_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ranges_overlap(copy->src, copy->dst, copy->len)) {
		DOCA_LOG_ERR("Source and destination memory overlap");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t set_up(struct local_copy *copy, const char *pci_addr)
{
	doca_error_t result;

	result = sample_open_dma_device(pci_addr, &copy->dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = check_copy_is_possible(copy);
	if (result != DOCA_SUCCESS)
		return result;
	/* The source is only read; the destination is written by the device. */
	result = sample_mmap_create(copy->dev, copy->src, copy->len, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY, &copy->src_mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result =
	    sample_mmap_create(copy->dev, copy->dst, copy->len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, &copy->dst_mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_create(2, &copy->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(copy->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_get_by_data(copy->inventory, copy->src_mmap, copy->src, copy->len,
							    &copy->src_buf);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_get_by_addr(copy->inventory, copy->dst_mmap, copy->dst, copy->len,
							    &copy->dst_buf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to get buffers: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_pe_create(&copy->pe);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create progress engine: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_dma_create(copy->dev, &copy->dma);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(copy->pe, doca_dma_as_ctx(copy->dma));
	if (result == DOCA_SUCCESS)
		result = doca_dma_task_memcpy_set_conf(copy->dma, memcpy_finished, memcpy_finished, 1);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_dma_as_ctx(copy->dma), (union doca_data){.ptr = copy});
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_dma_as_ctx(copy->dma));
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to set up the DMA context: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t copy_and_check(struct local_copy *copy)
{
	struct doca_dma_task_memcpy *dma_task;
	void *data;
	size_t data_len;
	doca_error_t result;

	result =
	    doca_dma_task_memcpy_alloc_init(copy->dma, copy->src_buf, copy->dst_buf, (union doca_data){0}, &dma_task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to allocate the memcpy task: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_task_submit(doca_dma_task_memcpy_as_task(dma_task));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit the memcpy task: %s", doca_error_get_descr(result));
		doca_task_free(doca_dma_task_memcpy_as_task(dma_task));
		return result;
	}
	result = sample_progress_until(copy->pe, task_done, copy);
	if (result != DOCA_SUCCESS)
		return result;
	if (copy->task_status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The memcpy task failed: %s", doca_error_get_descr(copy->task_status));
		return copy->task_status;
	}
	/* The device sets the destination's data section to what it wrote. */
	result = doca_buf_get_data(copy->dst_buf, &data);
	if (result == DOCA_SUCCESS)
		result = doca_buf_get_data_len(copy->dst_buf, &data_len);
	if (result != DOCA_SUCCESS)
		return result;
	if (data != copy->dst || data_len != copy->len || memcmp(copy->dst, copy->src, copy->len) != 0) {
		DOCA_LOG_ERR("The destination does not hold the source's %zu bytes", copy->len);
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("Copied %zu bytes: %s", copy->len, copy->dst);
	return DOCA_SUCCESS;
}

/* Releases in reverse order of creation: context, PE, buffers, inventory, mmaps, device. */
static doca_error_t tear_down(struct local_copy *copy)
{
	doca_error_t result = DOCA_SUCCESS;
	enum doca_ctx_states state;

	if (copy->dma != NULL) {
		if (doca_ctx_get_state(doca_dma_as_ctx(copy->dma), &state) == DOCA_SUCCESS &&
		    state != DOCA_CTX_STATE_IDLE)
			sample_cleanup_step(&result, doca_ctx_stop(doca_dma_as_ctx(copy->dma)), "stop DMA context");
		sample_cleanup_step(&result, doca_dma_destroy(copy->dma), "destroy DMA context");
	}
	if (copy->pe != NULL)
		sample_cleanup_step(&result, doca_pe_destroy(copy->pe), "destroy progress engine");
	if (copy->src_buf != NULL)
		sample_cleanup_step(&result, doca_buf_dec_refcount(copy->src_buf, NULL), "release source buffer");
	if (copy->dst_buf != NULL)
		sample_cleanup_step(&result, doca_buf_dec_refcount(copy->dst_buf, NULL), "release destination buffer");
	if (copy->inventory != NULL)
		sample_cleanup_step(&result, doca_buf_inventory_destroy(copy->inventory), "destroy buffer inventory");
	if (copy->src_mmap != NULL)
		sample_cleanup_step(&result, doca_mmap_destroy(copy->src_mmap), "destroy source mmap");
	if (copy->dst_mmap != NULL)
		sample_cleanup_step(&result, doca_mmap_destroy(copy->dst_mmap), "destroy destination mmap");
	if (copy->dev != NULL)
		sample_cleanup_step(&result, doca_dev_close(copy->dev), "close device");
	free(copy->src);
	free(copy->dst);
	return result;
}

int main(int argc, char **argv)
{
	struct local_copy copy = {.task_status = DOCA_SUCCESS};
	const char *pci_addr = DEFAULT_PCI_ADDR;
	doca_error_t result;
	int opt;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	while ((opt = getopt(argc, argv, "p:h")) != -1) {
		if (opt == 'p') {
			pci_addr = optarg;
			continue;
		}
		fprintf(stderr, "usage: %s [-p <pci address>]   (default %s)\n", argv[0], DEFAULT_PCI_ADDR);
		return opt == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Copying on the device at %s", pci_addr);

	copy.len = sizeof(COPY_TEXT);
	copy.src = malloc(copy.len);
	copy.dst = calloc(1, copy.len);
	if (copy.src == NULL || copy.dst == NULL) {
		DOCA_LOG_ERR("Failed to allocate %zu bytes", copy.len);
		result = DOCA_ERROR_NO_MEMORY;
	} else {
		memcpy(copy.src, COPY_TEXT, copy.len);
		result = set_up(&copy, pci_addr);
		if (result == DOCA_SUCCESS)
			result = copy_and_check(&copy);
	}
	sample_record_error(&result, tear_down(&copy));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
