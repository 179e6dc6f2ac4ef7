/*
 * DMA Copy, DPU side: the DMA initiator. It listens for the host, imports the host's export and
 * moves the file with DMA memcpy tasks between the imported (host) memory and its own memory,
 * one chunk per task, several tasks in flight on one progress engine.
 */
#define _POSIX_C_SOURCE 200809L

#include "dma_copy.h"
#include "dma_copy_checksum.h"
#include "dma_copy_proto.h"
#include "sample_common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_COPY::DPU);

/* How often the DPU tells a waiting host that the copy is still going (keeps the host's timeout off). */
#define PROGRESS_INTERVAL_NS 1000000000u

/* One task in flight: the chunk it copies and the two buffers it holds. */
struct chunk_slot {
	struct doca_buf *src;
	struct doca_buf *dst;
	uint64_t chunk_len;
	bool busy;
};

struct dpu_side {
	const struct dma_copy_config *config;
	struct doca_dev *dev;
	struct doca_mmap *local_mmap;
	struct doca_mmap *remote_mmap; /* the host's memory, from its export */
	struct doca_buf_inventory *inventory;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct dma_copy_region region; /* the DPU's copy of the file */
	struct dma_copy_channel channel;
	int listen_fd;
	uint64_t file_size;
	uint32_t expected_crc;
	uint8_t *remote_addr; /* the host's address of its region: meaningful only through remote_mmap */
	uint64_t chunk_size;
	uint64_t num_chunks;
	uint64_t next_chunk;
	uint64_t chunks_done;
	uint64_t bytes_done;
	uint32_t inflight;
	uint64_t last_completion_ns;
	doca_error_t first_error;
	struct chunk_slot *slots;
};

static doca_error_t listen_for_host(struct dpu_side *dpu)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	strncpy(addr.sun_path, dpu->config->socket_path, sizeof(addr.sun_path) - 1);
	dpu->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (dpu->listen_fd < 0) {
		DOCA_LOG_ERR("Cannot create a socket: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	/* A socket file left by an earlier run that died would make bind fail. */
	unlink(dpu->config->socket_path);
	if (bind(dpu->listen_fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(dpu->listen_fd, 1) != 0) {
		DOCA_LOG_ERR("Cannot listen on %s: %s", dpu->config->socket_path, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	DOCA_LOG_INFO("Waiting for the host on %s", dpu->config->socket_path);
	return DOCA_SUCCESS;
}

static doca_error_t accept_host(struct dpu_side *dpu)
{
	struct pollfd pfd = {.fd = dpu->listen_fd, .events = POLLIN};
	int ready;
	int fd;

	do
		ready = poll(&pfd, 1, dpu->config->timeout_seconds * 1000);
	while (ready < 0 && errno == EINTR);
	if (ready == 0) {
		DOCA_LOG_ERR("Timed out after %d s waiting for the host to connect", dpu->config->timeout_seconds);
		return DOCA_ERROR_TIME_OUT;
	}
	fd = ready > 0 ? accept(dpu->listen_fd, NULL, NULL) : -1;
	if (fd < 0) {
		DOCA_LOG_ERR("Failed to accept the host's connection: %s", strerror(errno));
		return DOCA_ERROR_NOT_CONNECTED;
	}
	/* One host per run: stop listening, so a second one is refused instead of waiting for nothing. */
	close(dpu->listen_fd);
	dpu->listen_fd = -1;
	unlink(dpu->config->socket_path);
	DOCA_LOG_INFO("The host connected");
	return dma_copy_channel_init(&dpu->channel, fd, dpu->config->timeout_seconds, "host");
}

/* Refuses with a reason the host will print too. */
static doca_error_t refuse(struct dpu_side *dpu, doca_error_t status, const char *text)
{
	DOCA_LOG_ERR("%s", text);
	dma_copy_send_error(&dpu->channel, status, text);
	return status;
}

/* HELLO, HELLO_ACK. Sending side: our file; receiving side: memory for the host's file. */
static doca_error_t handshake(struct dpu_side *dpu)
{
	const bool sending = dpu->config->direction == DMA_COPY_DPU_TO_HOST;
	struct dma_copy_msg msg;
	doca_error_t result;

	result = dma_copy_expect(&dpu->channel, DMA_COPY_MSG_HELLO, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	if (msg.u.hello.direction != (uint32_t)dpu->config->direction) {
		char text[128];

		snprintf(text, sizeof(text), "direction mismatch: the host asks for %s, the DPU was started for %s",
			 dma_copy_direction_name((enum dma_copy_direction)msg.u.hello.direction),
			 dma_copy_direction_name(dpu->config->direction));
		return refuse(dpu, DOCA_ERROR_INVALID_VALUE, text);
	}
	if (sending) {
		result = dma_copy_region_map_file(dpu->config->file, &dpu->region);
		if (result != DOCA_SUCCESS)
			return refuse(dpu, result, "the DPU cannot read its file");
		dpu->file_size = dpu->region.len;
		dpu->expected_crc = dma_copy_crc32c(0, dpu->region.addr, dpu->region.len);
	} else {
		if (msg.u.hello.file_size > SIZE_MAX / 2)
			return refuse(dpu, DOCA_ERROR_TOO_BIG, "file too large for the DPU");
		dpu->file_size = msg.u.hello.file_size;
		dpu->expected_crc = msg.u.hello.crc32c;
		result = dma_copy_region_alloc((size_t)dpu->file_size, &dpu->region);
		if (result != DOCA_SUCCESS)
			return refuse(dpu, result, "the DPU cannot allocate memory for the file");
	}
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_HELLO_ACK};
	msg.u.hello_ack.file_size = dpu->file_size;
	msg.u.hello_ack.crc32c = dpu->expected_crc;
	DOCA_LOG_INFO("%s: %llu bytes, crc32c 0x%08x", dma_copy_direction_name(dpu->config->direction),
		      (unsigned long long)dpu->file_size, dpu->expected_crc);
	return dma_copy_send(&dpu->channel, &msg);
}

/* EXPORT: the host's range must be the file's size; its descriptor becomes our remote mmap. */
static doca_error_t import_host_memory(struct dpu_side *dpu)
{
	struct dma_copy_msg msg;
	doca_error_t result;

	result = dma_copy_expect(&dpu->channel, DMA_COPY_MSG_EXPORT, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	if (msg.u.export_desc.len != dpu->file_size)
		return refuse(dpu, DOCA_ERROR_INVALID_VALUE, "the exported range does not have the file's size");
	if (dpu->file_size == 0)
		return DOCA_SUCCESS; /* nothing exported, nothing to copy */
	if (msg.u.export_desc.blob_len == 0 || msg.u.export_desc.addr == 0 ||
	    msg.u.export_desc.addr > UINTPTR_MAX - msg.u.export_desc.len)
		return refuse(dpu, DOCA_ERROR_INVALID_VALUE, "EXPORT carries no descriptor or an impossible range");
	result = doca_mmap_create_from_export(NULL, msg.u.export_desc.blob, msg.u.export_desc.blob_len, dpu->dev,
					      &dpu->remote_mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create an mmap from the host's export: %s", doca_error_get_descr(result));
		return refuse(dpu, result, "the DPU could not import the host's export");
	}
	dpu->remote_addr = (uint8_t *)(uintptr_t)msg.u.export_desc.addr;
	DOCA_LOG_INFO("Imported %llu bytes of host memory at 0x%llx", (unsigned long long)msg.u.export_desc.len,
		      (unsigned long long)msg.u.export_desc.addr);
	return DOCA_SUCCESS;
}

static void release_slot(struct chunk_slot *slot)
{
	if (slot->src != NULL)
		doca_buf_dec_refcount(slot->src, NULL);
	if (slot->dst != NULL)
		doca_buf_dec_refcount(slot->dst, NULL);
	slot->src = NULL;
	slot->dst = NULL;
	slot->busy = false;
}

static void chunk_completed(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct chunk_slot *slot = task_user_data.ptr;
	struct dpu_side *dpu = ctx_user_data.ptr;
	doca_error_t status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	size_t copied = 0;

	if (status == DOCA_SUCCESS) {
		/* The device appends to the destination's data: all of the chunk, nothing more. */
		status = doca_buf_get_data_len(slot->dst, &copied);
		if (status == DOCA_SUCCESS && copied != slot->chunk_len) {
			DOCA_LOG_ERR("A DMA task copied %zu bytes of a %llu-byte chunk", copied,
				     (unsigned long long)slot->chunk_len);
			status = DOCA_ERROR_UNEXPECTED;
		}
	} else if (dpu->first_error == DOCA_SUCCESS) {
		/* Only the first: after it the context flushes every other task with an error too. */
		DOCA_LOG_ERR("A DMA task failed: %s", doca_error_get_descr(status));
	}
	sample_record_error(&dpu->first_error, status);
	if (status == DOCA_SUCCESS)
		dpu->bytes_done += slot->chunk_len;
	dpu->chunks_done++;
	dpu->inflight--;
	dpu->last_completion_ns = dma_copy_now_ns();
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	release_slot(slot);
}

/* Checks the chunk size and in-flight count against what the device can do, then sets up the
 * local mmap, the inventory, the PE and the DMA context. */
static doca_error_t prepare_dma(struct dpu_side *dpu)
{
	struct doca_devinfo *devinfo = doca_dev_as_devinfo(dpu->dev);
	uint64_t max_buf_size;
	uint32_t max_tasks;
	doca_error_t result;

	result = doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, &max_buf_size);
	if (result != DOCA_SUCCESS)
		return result;
	if (dpu->config->chunk_size > max_buf_size) {
		DOCA_LOG_ERR("--chunk-size %llu exceeds the device's %llu bytes per task",
			     (unsigned long long)dpu->config->chunk_size, (unsigned long long)max_buf_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	dpu->chunk_size = dpu->config->chunk_size;
	dpu->num_chunks = dma_copy_num_chunks(dpu->file_size, dpu->chunk_size);
	dpu->slots = calloc(dpu->config->inflight, sizeof(*dpu->slots));
	if (dpu->slots == NULL)
		return DOCA_ERROR_NO_MEMORY;

	/* The file the DPU sends is mapped read-only: registering it for writes would fail, as it does
	 * on hardware. The DPU writes only the region it receives into. */
	result = sample_mmap_create(dpu->dev, dpu->region.addr, dpu->region.len,
				    dpu->config->direction == DMA_COPY_DPU_TO_HOST ? DOCA_ACCESS_FLAG_LOCAL_READ_ONLY
										   : DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
				    &dpu->local_mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_create(2 * dpu->config->inflight, &dpu->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(dpu->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&dpu->pe);
	if (result == DOCA_SUCCESS)
		result = doca_dma_create(dpu->dev, &dpu->dma);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the inventory, PE or DMA context: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_dma_cap_get_max_num_tasks(dpu->dma, &max_tasks);
	if (result == DOCA_SUCCESS && dpu->config->inflight > max_tasks) {
		DOCA_LOG_ERR("--inflight %u exceeds the device's %u tasks", dpu->config->inflight, max_tasks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(dpu->pe, doca_dma_as_ctx(dpu->dma));
	if (result == DOCA_SUCCESS)
		result =
		    doca_dma_task_memcpy_set_conf(dpu->dma, chunk_completed, chunk_completed, dpu->config->inflight);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_dma_as_ctx(dpu->dma), (union doca_data){.ptr = dpu});
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_dma_as_ctx(dpu->dma));
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to set up the DMA context: %s", doca_error_get_descr(result));
	return result;
}

/* Builds the two buffers of the next chunk and submits its task into a free slot. */
static doca_error_t submit_next_chunk(struct dpu_side *dpu, struct chunk_slot *slot)
{
	const bool to_host = dpu->config->direction == DMA_COPY_DPU_TO_HOST;
	struct doca_mmap *src_mmap = to_host ? dpu->local_mmap : dpu->remote_mmap;
	struct doca_mmap *dst_mmap = to_host ? dpu->remote_mmap : dpu->local_mmap;
	uint8_t *src_base = to_host ? dpu->region.addr : dpu->remote_addr;
	uint8_t *dst_base = to_host ? dpu->remote_addr : dpu->region.addr;
	struct doca_dma_task_memcpy *task;
	uint64_t offset;
	uint64_t len;
	doca_error_t result;

	dma_copy_chunk_range(dpu->file_size, dpu->chunk_size, dpu->next_chunk, &offset, &len);
	slot->chunk_len = len;
	/* The source's data is the whole chunk; the destination starts empty and the copy fills it. */
	result = doca_buf_inventory_buf_get_by_data(dpu->inventory, src_mmap, src_base + offset, len, &slot->src);
	if (result == DOCA_SUCCESS)
		result =
		    doca_buf_inventory_buf_get_by_addr(dpu->inventory, dst_mmap, dst_base + offset, len, &slot->dst);
	if (result == DOCA_SUCCESS)
		result = doca_dma_task_memcpy_alloc_init(dpu->dma, slot->src, slot->dst, (union doca_data){.ptr = slot},
							 &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to prepare the task of chunk %llu: %s", (unsigned long long)dpu->next_chunk,
			     doca_error_get_descr(result));
		release_slot(slot);
		return result;
	}
	result = doca_task_submit(doca_dma_task_memcpy_as_task(task));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit the task of chunk %llu: %s", (unsigned long long)dpu->next_chunk,
			     doca_error_get_descr(result));
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		release_slot(slot);
		return result;
	}
	slot->busy = true;
	dpu->inflight++;
	dpu->next_chunk++;
	return DOCA_SUCCESS;
}

static void fill_free_slots(struct dpu_side *dpu)
{
	for (uint32_t i = 0; i < dpu->config->inflight && dpu->first_error == DOCA_SUCCESS; i++) {
		if (dpu->next_chunk == dpu->num_chunks)
			return;
		if (!dpu->slots[i].busy)
			sample_record_error(&dpu->first_error, submit_next_chunk(dpu, &dpu->slots[i]));
	}
}

/*
 * Keeps up to --inflight tasks going until every chunk is copied. After an error no new chunk is
 * submitted, but the ones in flight are waited for. Gives up when no task completes for --timeout.
 */
static doca_error_t copy_chunks(struct dpu_side *dpu, uint64_t *elapsed_ns)
{
	const uint64_t stall_limit_ns = (uint64_t)dpu->config->timeout_seconds * 1000000000u;
	const uint64_t start_ns = dma_copy_now_ns();
	uint64_t next_progress_ns = start_ns + PROGRESS_INTERVAL_NS;

	dpu->last_completion_ns = start_ns;
	fill_free_slots(dpu);
	while (dpu->inflight > 0) {
		const uint64_t now = dma_copy_now_ns();

		if (doca_pe_progress(dpu->pe) != 0) {
			fill_free_slots(dpu);
			continue;
		}
		if (now - dpu->last_completion_ns > stall_limit_ns) {
			DOCA_LOG_ERR("No DMA task completed for %d s (%u in flight): giving up",
				     dpu->config->timeout_seconds, dpu->inflight);
			sample_record_error(&dpu->first_error, DOCA_ERROR_TIME_OUT);
			break;
		}
		if (now >= next_progress_ns) {
			struct dma_copy_msg msg = {.type = DMA_COPY_MSG_PROGRESS};

			msg.u.progress.bytes_done = dpu->bytes_done;
			/* A host that went away is an error too: it can no longer take the file. */
			sample_record_error(&dpu->first_error, dma_copy_send(&dpu->channel, &msg));
			next_progress_ns = now + PROGRESS_INTERVAL_NS;
		}
	}
	*elapsed_ns = dma_copy_now_ns() - start_ns;
	if (dpu->first_error == DOCA_SUCCESS && dpu->chunks_done != dpu->num_chunks)
		dpu->first_error = DOCA_ERROR_UNEXPECTED;
	return dpu->first_error;
}

/* The copy, our check, DONE to the host, and the host's VERDICT. */
static doca_error_t transfer(struct dpu_side *dpu)
{
	const bool to_host = dpu->config->direction == DMA_COPY_DPU_TO_HOST;
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_DONE};
	uint64_t elapsed_ns = 0;
	uint32_t crc = dpu->expected_crc;
	doca_error_t status = DOCA_SUCCESS;
	doca_error_t result;

	if (dpu->file_size > 0) {
		status = prepare_dma(dpu);
		if (status == DOCA_SUCCESS)
			status = copy_chunks(dpu, &elapsed_ns);
	}
	if (status == DOCA_SUCCESS) {
		char throughput[96];

		dma_copy_format_throughput(throughput, sizeof(throughput), dpu->file_size, elapsed_ns);
		DOCA_LOG_INFO("DMA %s (the DPU %s host memory): %s", dma_copy_direction_name(dpu->config->direction),
			      to_host ? "writes" : "reads", throughput);
		DOCA_LOG_INFO("%llu chunks of up to %llu bytes, up to %u in flight",
			      (unsigned long long)dpu->num_chunks, (unsigned long long)dpu->chunk_size,
			      dpu->config->inflight);
		/* Receiving: checksum what the DMA actually brought into our memory. */
		if (!to_host) {
			crc = dma_copy_crc32c(0, dpu->region.addr, dpu->region.len);
			DOCA_LOG_INFO("Checksum verdict: %s (crc32c DPU 0x%08x, host 0x%08x, %llu bytes)",
				      crc == dpu->expected_crc ? "MATCH" : "MISMATCH", crc, dpu->expected_crc,
				      (unsigned long long)dpu->file_size);
			if (crc != dpu->expected_crc)
				status = DOCA_ERROR_UNEXPECTED;
			else
				status = dma_copy_region_write_file(&dpu->region, dpu->config->file);
			if (status == DOCA_SUCCESS)
				DOCA_LOG_INFO("Wrote %llu bytes to %s", (unsigned long long)dpu->file_size,
					      dpu->config->file);
		}
	}
	msg.u.done.status = (uint32_t)status;
	msg.u.done.crc32c = crc;
	msg.u.done.bytes = status == DOCA_SUCCESS ? dpu->file_size : dpu->bytes_done;
	msg.u.done.elapsed_ns = elapsed_ns;
	result = dma_copy_send(&dpu->channel, &msg);
	if (status != DOCA_SUCCESS)
		return status;
	if (result != DOCA_SUCCESS)
		return result;
	result = dma_copy_expect(&dpu->channel, DMA_COPY_MSG_VERDICT, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	if (msg.u.verdict.status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The host's verdict: the copy failed (%s)",
			     doca_error_get_descr((doca_error_t)msg.u.verdict.status));
		return DOCA_ERROR_UNEXPECTED;
	}
	if (to_host)
		DOCA_LOG_INFO("Checksum verdict: MATCH (the host checked crc32c 0x%08x over %llu bytes)", crc,
			      (unsigned long long)dpu->file_size);
	return DOCA_SUCCESS;
}

static doca_error_t tear_down(struct dpu_side *dpu)
{
	doca_error_t result = DOCA_SUCCESS;
	enum doca_ctx_states state;

	if (dpu->dma != NULL) {
		struct doca_ctx *ctx = doca_dma_as_ctx(dpu->dma);

		/* A failed task already moved the context to STOPPING by itself; only a running one needs a stop. */
		if (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && state == DOCA_CTX_STATE_RUNNING) {
			const doca_error_t stopped = doca_ctx_stop(ctx);

			if (stopped != DOCA_ERROR_IN_PROGRESS)
				sample_cleanup_step(&result, stopped, "stop DMA context");
		}
		/* Tasks still in flight (after a stall) are flushed through the callback. */
		if (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && state != DOCA_CTX_STATE_IDLE)
			sample_cleanup_step(&result, sample_progress_until_state(dpu->pe, ctx, DOCA_CTX_STATE_IDLE),
					    "wait for the DMA context to stop");
		sample_cleanup_step(&result, doca_dma_destroy(dpu->dma), "destroy DMA context");
	}
	if (dpu->pe != NULL)
		sample_cleanup_step(&result, doca_pe_destroy(dpu->pe), "destroy progress engine");
	if (dpu->slots != NULL)
		for (uint32_t i = 0; i < dpu->config->inflight; i++)
			release_slot(&dpu->slots[i]);
	free(dpu->slots);
	if (dpu->inventory != NULL)
		sample_cleanup_step(&result, doca_buf_inventory_destroy(dpu->inventory), "destroy buffer inventory");
	if (dpu->remote_mmap != NULL)
		sample_cleanup_step(&result, doca_mmap_destroy(dpu->remote_mmap), "destroy the imported mmap");
	if (dpu->local_mmap != NULL)
		sample_cleanup_step(&result, doca_mmap_destroy(dpu->local_mmap), "destroy the local mmap");
	if (dpu->dev != NULL)
		sample_cleanup_step(&result, doca_dev_close(dpu->dev), "close device");
	dma_copy_channel_close(&dpu->channel);
	if (dpu->listen_fd >= 0) {
		close(dpu->listen_fd);
		unlink(dpu->config->socket_path);
	}
	dma_copy_region_release(&dpu->region);
	return result;
}

doca_error_t dma_copy_run_dpu(const struct dma_copy_config *config)
{
	struct dpu_side dpu = {.config = config, .channel = {.fd = -1}, .listen_fd = -1};
	doca_error_t result;

	DOCA_LOG_INFO("DPU side: %s, file %s, device %s, chunks of %llu bytes, %u in flight",
		      dma_copy_direction_name(config->direction), config->file, config->pci_addr,
		      (unsigned long long)config->chunk_size, config->inflight);
	result = sample_open_dma_device(config->pci_addr, &dpu.dev);
	if (result == DOCA_SUCCESS)
		result = listen_for_host(&dpu);
	if (result == DOCA_SUCCESS)
		result = accept_host(&dpu);
	if (result == DOCA_SUCCESS)
		result = handshake(&dpu);
	if (result == DOCA_SUCCESS)
		result = import_host_memory(&dpu);
	if (result == DOCA_SUCCESS)
		result = transfer(&dpu);
	sample_record_error(&result, tear_down(&dpu));
	return result;
}
