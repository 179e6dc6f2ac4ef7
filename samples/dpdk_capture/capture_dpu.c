/*
 * DPDK capture, DPU side: probes p0 through the DOCA DPDK bridge with representor=<PF0's
 * representor>, registers the receive mbuf pool with DOCA (doca_dpdk_mempool_*), imports the
 * host's export and, for every frame received on the representor's port, writes a record into
 * the host's memory with one DOCA DMA memcpy task straight from the mbuf: the 4-byte length goes
 * into the mbuf's headroom (rte_pktmbuf_prepend), doca_dpdk_mempool_mbuf_to_buf makes the mbuf a
 * doca_buf, and the task copies length and frame in one go.
 */
#define _GNU_SOURCE /* DPDK's headers use strnlen and friends */
#include "dpdk_capture.h"
#include "dpdk_sample_common.h"
#include "sample_common.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dma.h>
#include <doca_dpdk.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>

DOCA_LOG_REGISTER(DPDK_CAPTURE::DPU);

#define BURST 32
#define INFLIGHT 64 /* DMA tasks at once */
#define NUM_MBUFS 2047
#define MBUF_DATA_ROOM (9216 + RTE_PKTMBUF_HEADROOM)

struct dpu_side {
	const struct capture_config *config;
	struct doca_dev *dev;
	uint16_t uplink_port, rep_port;
	bool ports_probed, rep_started;
	struct rte_mempool *pool;
	struct doca_dpdk_mempool *doca_pool;
	int listen_fd, fd;
	struct doca_mmap *remote_mmap;
	uint8_t *remote_addr; /* the host's address: meaningful only through remote_mmap */
	uint64_t remote_len;
	uint32_t expected;
	struct doca_buf_inventory *inventory;
	struct doca_pe *pe;
	struct doca_dma *dma;
	bool ctx_started;
	/* progress */
	uint64_t offset;    /* next record's offset in the host's region */
	uint64_t records;   /* submitted */
	uint64_t completed; /* DMA tasks finished well */
	uint64_t truncated;
	uint32_t inflight;
	doca_error_t first_error;
};

/* --- DMA completions: release the buffers (the source's release frees its mbuf reference) --- */

static void release_task(struct doca_dma_task_memcpy *task, struct dpu_side *dpu)
{
	doca_buf_dec_refcount((struct doca_buf *)doca_dma_task_memcpy_get_src(task), NULL);
	doca_buf_dec_refcount(doca_dma_task_memcpy_get_dst(task), NULL);
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	dpu->inflight--;
}

static void record_done(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct dpu_side *dpu = ctx_user_data.ptr;

	(void)task_user_data;
	dpu->completed++;
	release_task(task, dpu);
}

static void record_failed(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct dpu_side *dpu = ctx_user_data.ptr;
	const doca_error_t status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));

	DOCA_LOG_ERR("The DMA of record %" PRIu64 " failed: %s", task_user_data.u64, doca_error_get_descr(status));
	if (dpu->first_error == DOCA_SUCCESS)
		dpu->first_error = status;
	release_task(task, dpu);
}

/* --- set-up --- */

static doca_error_t start_representor_port(struct dpu_side *dpu)
{
	char devargs[128];
	uint16_t port_id, others = 0;
	doca_error_t result;
	int ret;

	snprintf(devargs, sizeof(devargs), "dv_flow_en=2,dv_xmeta_en=4,representor=%s", dpu->config->representor);
	result = doca_dpdk_port_probe(dpu->dev, devargs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_dpdk_port_probe(\"%s\") failed: %s", devargs, doca_error_get_descr(result));
		return result;
	}
	result = doca_dpdk_get_first_port_id(dpu->dev, &dpu->uplink_port);
	if (result != DOCA_SUCCESS)
		return result;
	dpu->ports_probed = true;
	/* The bridge creates the device's own port first, then the representor's. */
	RTE_ETH_FOREACH_DEV(port_id)
	{
		if (port_id != dpu->uplink_port && others++ == 0)
			dpu->rep_port = port_id;
	}
	if (others != 1) {
		DOCA_LOG_ERR("Expected one representor port besides the uplink's, found %u", others);
		return DOCA_ERROR_NOT_FOUND;
	}

	dpu->pool = rte_pktmbuf_pool_create("capture_pool", NUM_MBUFS, 64, 0, MBUF_DATA_ROOM, rte_socket_id());
	if (dpu->pool == NULL) {
		DOCA_LOG_ERR("Failed to create the mbuf pool: %s", rte_strerror(rte_errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	/* The pool's memory, registered with the device: its mbufs become doca_bufs for DMA. */
	result = doca_dpdk_mempool_create(dpu->pool, &dpu->doca_pool);
	if (result == DOCA_SUCCESS)
		result = doca_dpdk_mempool_dev_add(dpu->doca_pool, dpu->dev);
	if (result == DOCA_SUCCESS)
		result = doca_dpdk_mempool_start(dpu->doca_pool);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to register the mbuf pool with DOCA: %s", doca_error_get_descr(result));
		return result;
	}

	ret = dpdk_sample_start_port(dpu->rep_port, 1024, (int)rte_socket_id(), dpu->pool);
	if (ret != 0) {
		DOCA_LOG_ERR("Failed to start the representor's DPDK port %u: %s", dpu->rep_port, rte_strerror(-ret));
		return DOCA_ERROR_DRIVER;
	}
	dpu->rep_started = true;
	DOCA_LOG_INFO("Capturing on representor %s (DPDK port %u)", dpu->config->representor, dpu->rep_port);
	return DOCA_SUCCESS;
}

static doca_error_t accept_host(struct dpu_side *dpu)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct pollfd pfd;
	int ready;

	strncpy(addr.sun_path, dpu->config->socket_path, sizeof(addr.sun_path) - 1);
	unlink(dpu->config->socket_path);
	dpu->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (dpu->listen_fd < 0 || bind(dpu->listen_fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(dpu->listen_fd, 1) != 0) {
		DOCA_LOG_ERR("Cannot listen on %s: %s", dpu->config->socket_path, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	DOCA_LOG_INFO("Waiting for the host on %s", dpu->config->socket_path);
	pfd = (struct pollfd){.fd = dpu->listen_fd, .events = POLLIN};
	for (int waited_ms = 0;; waited_ms += 100) {
		ready = poll(&pfd, 1, 100);
		if (ready > 0)
			break;
		if (capture_force_quit || waited_ms >= dpu->config->timeout_seconds * 1000) {
			DOCA_LOG_ERR("Timed out after %d s waiting for the host to connect",
				     dpu->config->timeout_seconds);
			return DOCA_ERROR_TIME_OUT;
		}
	}
	dpu->fd = accept(dpu->listen_fd, NULL, NULL);
	if (dpu->fd < 0) {
		DOCA_LOG_ERR("accept failed: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

static doca_error_t import_host_region(struct dpu_side *dpu)
{
	static uint8_t desc[CAPTURE_MAX_DESC];
	struct capture_hello hello;
	doca_error_t result;

	result = capture_recv_all(dpu->fd, &hello, sizeof(hello), dpu->config->timeout_seconds);
	if (result != DOCA_SUCCESS)
		return result;
	if (hello.magic != CAPTURE_MAGIC || hello.version != CAPTURE_VERSION || hello.desc_len == 0 ||
	    hello.desc_len > CAPTURE_MAX_DESC) {
		DOCA_LOG_ERR("Protocol error from the host: bad magic, version or descriptor length");
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = capture_recv_all(dpu->fd, desc, hello.desc_len, dpu->config->timeout_seconds);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_create_from_export(NULL, desc, hello.desc_len, dpu->dev, &dpu->remote_mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to import the host's export: %s", doca_error_get_descr(result));
		return result;
	}
	dpu->remote_addr = (uint8_t *)(uintptr_t)hello.addr;
	dpu->remote_len = hello.len;
	dpu->expected = hello.count;
	DOCA_LOG_INFO("The host exported %" PRIu64 " bytes for %u frames", dpu->remote_len, dpu->expected);
	return DOCA_SUCCESS;
}

static doca_error_t start_dma(struct dpu_side *dpu)
{
	union doca_data ctx_data = {.ptr = dpu};
	doca_error_t result;

	/* One doca_buf per mbuf segment and one for the host's side of each task. */
	result = doca_buf_inventory_create(4 * INFLIGHT, &dpu->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(dpu->inventory);
	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&dpu->pe);
	if (result == DOCA_SUCCESS)
		result = doca_dma_create(dpu->dev, &dpu->dma);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(dpu->pe, doca_dma_as_ctx(dpu->dma));
	if (result == DOCA_SUCCESS)
		result = doca_dma_task_memcpy_set_conf(dpu->dma, record_done, record_failed, INFLIGHT);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_dma_as_ctx(dpu->dma), ctx_data);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_dma_as_ctx(dpu->dma));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up DOCA DMA: %s", doca_error_get_descr(result));
		return result;
	}
	dpu->ctx_started = true;
	return DOCA_SUCCESS;
}

static doca_error_t send_report(struct dpu_side *dpu, doca_error_t status)
{
	struct capture_report report = {.magic = CAPTURE_MAGIC, .status = (int32_t)status};

	report.records = dpu->completed;
	report.bytes = dpu->offset;
	report.truncated = dpu->truncated;
	return capture_send_all(dpu->fd, &report, sizeof(report));
}

/* --- the capture --- */

/* One frame: its record goes to the host with one DMA task from the mbuf. The mbuf is the
 * application's to free right away: the doca_buf keeps its own reference until the task ends. */
static doca_error_t capture_frame(struct dpu_side *dpu, struct rte_mbuf *m)
{
	const uint32_t len = rte_pktmbuf_pkt_len(m);
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_dma_task_memcpy *task;
	union doca_data task_data = {.u64 = dpu->records};
	uint8_t *header;
	doca_error_t result;

	if (dpu->offset + CAPTURE_RECORD_HEADER + len > dpu->remote_len) {
		dpu->truncated++;
		rte_pktmbuf_free(m);
		return DOCA_SUCCESS;
	}
	header = (uint8_t *)rte_pktmbuf_prepend(m, CAPTURE_RECORD_HEADER);
	if (header == NULL) {
		rte_pktmbuf_free(m);
		DOCA_LOG_ERR("No headroom for the record header");
		return DOCA_ERROR_NO_MEMORY;
	}
	for (int i = 0; i < CAPTURE_RECORD_HEADER; i++)
		header[i] = (uint8_t)(len >> (8 * i));
	result = doca_dpdk_mempool_mbuf_to_buf(dpu->doca_pool, dpu->inventory, m, &src);
	rte_pktmbuf_free(m);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_dpdk_mempool_mbuf_to_buf failed: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_buf_inventory_buf_get_by_addr(dpu->inventory, dpu->remote_mmap, dpu->remote_addr + dpu->offset,
						    CAPTURE_RECORD_HEADER + len, &dst);
	if (result == DOCA_SUCCESS)
		result = doca_dma_task_memcpy_alloc_init(dpu->dma, src, dst, task_data, &task);
	if (result == DOCA_SUCCESS)
		result = doca_task_submit(doca_dma_task_memcpy_as_task(task));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit the DMA of record %" PRIu64 ": %s", dpu->records,
			     doca_error_get_descr(result));
		doca_buf_dec_refcount(src, NULL);
		if (dst != NULL)
			doca_buf_dec_refcount(dst, NULL);
		return result;
	}
	dpu->inflight++;
	dpu->records++;
	dpu->offset += CAPTURE_RECORD_HEADER + len;
	return DOCA_SUCCESS;
}

static doca_error_t capture(struct dpu_side *dpu)
{
	double last_frame = capture_now();
	uint32_t idle = 0;
	doca_error_t result = DOCA_SUCCESS;

	while (dpu->records + dpu->truncated < dpu->expected && !capture_force_quit && result == DOCA_SUCCESS) {
		struct rte_mbuf *burst[BURST];
		uint16_t room = (uint16_t)(INFLIGHT - dpu->inflight < BURST ? INFLIGHT - dpu->inflight : BURST);
		uint16_t n = 0;

		doca_pe_progress(dpu->pe);
		if (dpu->first_error != DOCA_SUCCESS)
			return dpu->first_error;
		if (room > 0)
			n = rte_eth_rx_burst(dpu->rep_port, 0, burst, room);
		if (n == 0) {
			/* Not at full speed while nothing comes: the sample shares its machine. */
			if (++idle > 1024)
				rte_delay_us_sleep(100);
			if (capture_now() - last_frame > dpu->config->timeout_seconds) {
				DOCA_LOG_ERR("No frame for %d s: captured %" PRIu64 " of %u",
					     dpu->config->timeout_seconds, dpu->records, dpu->expected);
				return DOCA_ERROR_TIME_OUT;
			}
			continue;
		}
		last_frame = capture_now();
		idle = 0;
		for (uint16_t i = 0; i < n; i++) {
			if (result == DOCA_SUCCESS)
				result = capture_frame(dpu, burst[i]);
			else
				rte_pktmbuf_free(burst[i]);
		}
	}
	return result;
}

/* Waits for the tasks in flight; true when none is left. */
static bool drain(struct dpu_side *dpu)
{
	const double deadline = capture_now() + dpu->config->timeout_seconds;

	while (dpu->inflight > 0 && capture_now() < deadline)
		doca_pe_progress(dpu->pe);
	return dpu->inflight == 0;
}

static void tear_down(struct dpu_side *dpu)
{
	if (dpu->ctx_started && drain(dpu)) {
		doca_ctx_stop(doca_dma_as_ctx(dpu->dma));
		dpu->ctx_started = false;
	}
	if (dpu->dma != NULL && !dpu->ctx_started)
		doca_dma_destroy(dpu->dma);
	if (dpu->pe != NULL && !dpu->ctx_started)
		doca_pe_destroy(dpu->pe);
	if (dpu->inventory != NULL && !dpu->ctx_started)
		doca_buf_inventory_destroy(dpu->inventory);
	if (dpu->remote_mmap != NULL && !dpu->ctx_started)
		doca_mmap_destroy(dpu->remote_mmap);
	if (dpu->rep_started)
		rte_eth_dev_stop(dpu->rep_port);
	if (dpu->ports_probed) {
		if (dpu->rep_port != RTE_MAX_ETHPORTS)
			rte_eth_dev_close(dpu->rep_port);
		rte_eth_dev_close(dpu->uplink_port);
	}
	if (dpu->doca_pool != NULL && !dpu->ctx_started)
		doca_dpdk_mempool_destroy(dpu->doca_pool);
	if (!dpu->ctx_started)
		rte_mempool_free(dpu->pool);
	if (dpu->fd >= 0)
		close(dpu->fd);
	if (dpu->listen_fd >= 0) {
		close(dpu->listen_fd);
		unlink(dpu->config->socket_path);
	}
	if (dpu->dev != NULL)
		doca_dev_close(dpu->dev);
}

doca_error_t capture_run_dpu(const struct capture_config *config)
{
	struct dpu_side dpu = {.config = config, .listen_fd = -1, .fd = -1, .rep_port = RTE_MAX_ETHPORTS};
	doca_error_t result;

	result = sample_open_device(config->pci_addr, true, &dpu.dev);
	if (result == DOCA_SUCCESS)
		result = start_representor_port(&dpu);
	if (result == DOCA_SUCCESS)
		result = accept_host(&dpu);
	if (result == DOCA_SUCCESS)
		result = import_host_region(&dpu);
	if (result == DOCA_SUCCESS)
		result = start_dma(&dpu);
	if (dpu.fd >= 0) {
		/* Ready (or why not): the host starts sending once it has this. */
		const doca_error_t sent = send_report(&dpu, result);

		if (result == DOCA_SUCCESS)
			result = sent;
	}
	if (result == DOCA_SUCCESS)
		result = capture(&dpu);
	if (dpu.ctx_started && !drain(&dpu) && result == DOCA_SUCCESS) {
		DOCA_LOG_ERR("%u DMA tasks still in flight after %d s", dpu.inflight, config->timeout_seconds);
		result = DOCA_ERROR_TIME_OUT;
	}
	if (result == DOCA_SUCCESS && dpu.first_error != DOCA_SUCCESS)
		result = dpu.first_error;
	if (dpu.remote_mmap != NULL) {
		DOCA_LOG_INFO("Captured %" PRIu64 " frames, %" PRIu64 " bytes into host memory (%" PRIu64 " truncated)",
			      dpu.completed, dpu.offset, dpu.truncated);
		if (dpu.fd >= 0) {
			const doca_error_t sent = send_report(&dpu, result);

			if (result == DOCA_SUCCESS)
				result = sent;
		}
	}
	tear_down(&dpu);
	return result;
}
