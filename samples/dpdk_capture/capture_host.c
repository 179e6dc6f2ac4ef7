/*
 * DPDK capture, host side: exports the memory that receives the capture (PCI read-write), hands
 * the export to the DPU, sends its frames on PF0 through the DOCA DPDK bridge (PF0's DPDK port),
 * waits for the DPU's report and checks every record against the frame it sent.
 */
#define _GNU_SOURCE /* DPDK's headers use strnlen and friends */
#include "dpdk_capture.h"
#include "dpdk_sample_common.h"
#include "sample_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <doca_dpdk.h>
#include <doca_log.h>
#include <doca_mmap.h>

DOCA_LOG_REGISTER(DPDK_CAPTURE::HOST);

#define BURST 32
#define NUM_MBUFS 1023
#define MBUF_DATA_ROOM (9216 + RTE_PKTMBUF_HEADROOM)

struct host_side {
	const struct capture_config *config;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	uint8_t *region;
	size_t region_len;
	int fd;
	struct rte_mempool *pool;
	uint16_t port_id;
	bool port_probed, port_started;
};

static void sleep_ms(long ms)
{
	struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&pause, NULL);
}

/* The DPU may start after the host: retry until the timeout. */
static doca_error_t connect_to_dpu(struct host_side *host)
{
	const double deadline = capture_now() + host->config->timeout_seconds;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	strncpy(addr.sun_path, host->config->socket_path, sizeof(addr.sun_path) - 1);
	for (;;) {
		host->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (host->fd < 0) {
			DOCA_LOG_ERR("Cannot create a socket: %s", strerror(errno));
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		if (connect(host->fd, (const struct sockaddr *)&addr, sizeof(addr)) == 0)
			break;
		close(host->fd);
		host->fd = -1;
		if ((errno != ENOENT && errno != ECONNREFUSED && errno != EINTR) || capture_now() > deadline ||
		    capture_force_quit) {
			DOCA_LOG_ERR("Cannot connect to the DPU at %s: %s", host->config->socket_path, strerror(errno));
			return DOCA_ERROR_TIME_OUT;
		}
		sleep_ms(50);
	}
	DOCA_LOG_INFO("Connected to the DPU at %s", host->config->socket_path);
	return DOCA_SUCCESS;
}

/* The region holds exactly the records of the frames the host sends. */
static doca_error_t export_region(struct host_side *host)
{
	struct capture_hello hello = {.magic = CAPTURE_MAGIC, .version = CAPTURE_VERSION};
	const void *desc = NULL;
	size_t desc_len = 0;
	doca_error_t result;

	host->region_len = 0;
	for (uint32_t i = 0; i < host->config->count; i++)
		host->region_len += CAPTURE_RECORD_HEADER +
				    (host->config->external_sender ? CAPTURE_MAX_FRAME : capture_frame_length(i));
	host->region = mmap(NULL, host->region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (host->region == MAP_FAILED) {
		host->region = NULL;
		DOCA_LOG_ERR("Cannot map %zu bytes: %s", host->region_len, strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	result = doca_mmap_create(&host->mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_memrange(host->mmap, host->region, host->region_len);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(host->mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(host->mmap, host->dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(host->mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_export_pci(host->mmap, host->dev, &desc, &desc_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to export the capture region: %s", doca_error_get_descr(result));
		return result;
	}
	if (desc_len > CAPTURE_MAX_DESC) {
		DOCA_LOG_ERR("The export descriptor has %zu bytes; at most %d are sent", desc_len, CAPTURE_MAX_DESC);
		return DOCA_ERROR_TOO_BIG;
	}
	hello.addr = (uint64_t)(uintptr_t)host->region;
	hello.len = host->region_len;
	hello.count = host->config->count;
	hello.desc_len = (uint32_t)desc_len;
	result = capture_send_all(host->fd, &hello, sizeof(hello));
	if (result == DOCA_SUCCESS)
		result = capture_send_all(host->fd, desc, desc_len);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Exported %zu bytes for %u frames", host->region_len, host->config->count);
	return result;
}

static doca_error_t receive_report(struct host_side *host, struct capture_report *report, int timeout_seconds)
{
	doca_error_t result = capture_recv_all(host->fd, report, sizeof(*report), timeout_seconds);

	if (result != DOCA_SUCCESS)
		return result;
	if (report->magic != CAPTURE_MAGIC) {
		DOCA_LOG_ERR("Protocol error from the DPU: bad magic 0x%08x", report->magic);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (report->status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The DPU reports a failure: %s", doca_error_get_descr((doca_error_t)report->status));
		return (doca_error_t)report->status;
	}
	return DOCA_SUCCESS;
}

/* PF0's DPDK port, through the bridge; a memif client, so the DPU's representor serves already. */
static doca_error_t start_port(struct host_side *host)
{
	struct rte_eth_link link;
	const double deadline = capture_now() + host->config->timeout_seconds;
	doca_error_t result;
	int ret;

	result = doca_dpdk_port_probe(host->dev, "dv_flow_en=2");
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_dpdk_port_probe failed: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_dpdk_get_first_port_id(host->dev, &host->port_id);
	if (result != DOCA_SUCCESS)
		return result;
	host->port_probed = true;
	host->pool = rte_pktmbuf_pool_create("host_pool", NUM_MBUFS, 64, 0, MBUF_DATA_ROOM, rte_socket_id());
	if (host->pool == NULL) {
		DOCA_LOG_ERR("Failed to create the mbuf pool: %s", rte_strerror(rte_errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	ret = dpdk_sample_start_port(host->port_id, 1024, (int)rte_socket_id(), host->pool);
	if (ret != 0) {
		DOCA_LOG_ERR("Failed to start PF0's DPDK port %u: %s", host->port_id, rte_strerror(-ret));
		return DOCA_ERROR_DRIVER;
	}
	host->port_started = true;
	do {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(host->port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
			return DOCA_SUCCESS;
		sleep_ms(10);
	} while (capture_now() < deadline && !capture_force_quit);
	DOCA_LOG_ERR("PF0's link did not come up in %d s", host->config->timeout_seconds);
	return DOCA_ERROR_TIME_OUT;
}

static doca_error_t send_frames(struct host_side *host)
{
	const double deadline = capture_now() + host->config->timeout_seconds;
	uint32_t seq = 0;

	while (seq < host->config->count) {
		struct rte_mbuf *burst[BURST];
		uint16_t n = 0, sent = 0;

		while (n < BURST && seq + n < host->config->count) {
			const uint32_t len = capture_frame_length(seq + n);
			struct rte_mbuf *m = rte_pktmbuf_alloc(host->pool);
			uint8_t *data;

			if (m == NULL)
				break;
			data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
			if (data == NULL) {
				rte_pktmbuf_free(m);
				DOCA_LOG_ERR("An mbuf cannot hold %u bytes", len);
				return DOCA_ERROR_NO_MEMORY;
			}
			capture_frame_write(seq + n, data, len);
			burst[n++] = m;
		}
		while (sent < n) {
			sent += rte_eth_tx_burst(host->port_id, 0, burst + sent, n - sent);
			if (sent < n && (capture_now() > deadline || capture_force_quit)) {
				rte_pktmbuf_free_bulk(burst + sent, n - sent);
				DOCA_LOG_ERR("Sent %u of %u frames: PF0's ring stays full", seq + sent,
					     host->config->count);
				return DOCA_ERROR_TIME_OUT;
			}
		}
		seq += n;
	}
	DOCA_LOG_INFO("Sent %u frames on PF0", seq);
	return DOCA_SUCCESS;
}

/* Every record: the length and the bytes of the frame with that number, in order. */
static doca_error_t check_capture(const struct host_side *host, const struct capture_report *report)
{
	static uint8_t expected[CAPTURE_MAX_FRAME];
	size_t offset = 0;

	if (report->records != host->config->count || report->bytes != host->region_len || report->truncated != 0) {
		DOCA_LOG_ERR("The DPU captured %" PRIu64 " frames (%" PRIu64 " bytes, %" PRIu64
			     " truncated); the host sent %u (%zu bytes)",
			     report->records, report->bytes, report->truncated, host->config->count, host->region_len);
		return DOCA_ERROR_UNEXPECTED;
	}
	for (uint32_t seq = 0; seq < host->config->count; seq++) {
		const uint32_t want = capture_frame_length(seq);
		uint32_t len;

		memcpy(&len, host->region + offset, sizeof(len));
		if (len != want) {
			DOCA_LOG_ERR("Record %u has %u bytes, frame %u had %u", seq, len, seq, want);
			return DOCA_ERROR_UNEXPECTED;
		}
		capture_frame_write(seq, expected, want);
		if (memcmp(host->region + offset + CAPTURE_RECORD_HEADER, expected, want) != 0) {
			DOCA_LOG_ERR("Record %u differs from frame %u", seq, seq);
			return DOCA_ERROR_UNEXPECTED;
		}
		offset += CAPTURE_RECORD_HEADER + want;
	}
	DOCA_LOG_INFO("All %u frames captured in order and intact (%zu bytes in host memory)", host->config->count,
		      offset);
	return DOCA_SUCCESS;
}

/* Frames another program sent: whole records, back to back, each 14 to 9000 bytes; their lengths
 * are listed in order, runs of one length together ("512 x 64, 512 x 1500"). */
static doca_error_t check_external_capture(const struct host_side *host, const struct capture_report *report)
{
	char runs[512] = "";
	size_t used = 0, offset = 0;
	uint32_t run_len = 0;
	uint64_t run_count = 0;

	if (report->records != host->config->count || report->truncated != 0 || report->bytes > host->region_len) {
		DOCA_LOG_ERR("The DPU captured %" PRIu64 " frames (%" PRIu64 " bytes, %" PRIu64
			     " truncated); %u expected",
			     report->records, report->bytes, report->truncated, host->config->count);
		return DOCA_ERROR_UNEXPECTED;
	}
	for (uint64_t i = 0; i <= report->records; i++) {
		uint32_t len = 0;

		if (i < report->records) {
			if (offset + CAPTURE_RECORD_HEADER > report->bytes) {
				DOCA_LOG_ERR("Record %" PRIu64 " starts past the %" PRIu64 " bytes captured", i,
					     report->bytes);
				return DOCA_ERROR_UNEXPECTED;
			}
			memcpy(&len, host->region + offset, sizeof(len));
			if (len < 14 || len > CAPTURE_MAX_FRAME ||
			    offset + CAPTURE_RECORD_HEADER + len > report->bytes) {
				DOCA_LOG_ERR("Record %" PRIu64 " has an impossible length, %u bytes", i, len);
				return DOCA_ERROR_UNEXPECTED;
			}
			offset += CAPTURE_RECORD_HEADER + len;
		}
		if (i > 0 && (i == report->records || len != run_len) && used < sizeof(runs)) {
			used += (size_t)snprintf(runs + used, sizeof(runs) - used, "%s%" PRIu64 " x %u",
						 used ? ", " : "", run_count, run_len);
			run_count = 0;
		}
		run_len = len;
		run_count++;
	}
	if (offset != report->bytes) {
		DOCA_LOG_ERR("The records end at byte %zu, the DPU wrote %" PRIu64, offset, report->bytes);
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("Captured %" PRIu64 " frames from another sender on PF0, lengths in order: %s", report->records,
		      runs);
	return DOCA_SUCCESS;
}

doca_error_t capture_run_host(const struct capture_config *config)
{
	struct host_side host = {.config = config, .fd = -1};
	struct capture_report report;
	doca_error_t result;

	result = sample_open_device(config->pci_addr, false, &host.dev);
	if (result == DOCA_SUCCESS)
		result = connect_to_dpu(&host);
	if (result == DOCA_SUCCESS)
		result = export_region(&host);
	/* The DPU answers once its port is up and the export imported. */
	if (result == DOCA_SUCCESS)
		result = receive_report(&host, &report, config->timeout_seconds);
	if (result == DOCA_SUCCESS && config->external_sender) {
		/* The DPU gives up after its own timeout without a frame. */
		DOCA_LOG_INFO("Waiting for %u frames sent on PF0 by another program", config->count);
		result = receive_report(&host, &report, 4 * config->timeout_seconds + 60);
		if (result == DOCA_SUCCESS)
			result = check_external_capture(&host, &report);
	} else {
		if (result == DOCA_SUCCESS)
			result = start_port(&host);
		if (result == DOCA_SUCCESS)
			result = send_frames(&host);
		if (result == DOCA_SUCCESS)
			result = receive_report(&host, &report, 2 * config->timeout_seconds);
		if (result == DOCA_SUCCESS)
			result = check_capture(&host, &report);
	}

	if (host.port_started)
		rte_eth_dev_stop(host.port_id);
	if (host.port_probed)
		rte_eth_dev_close(host.port_id);
	rte_mempool_free(host.pool);
	if (host.fd >= 0)
		close(host.fd);
	if (host.mmap != NULL)
		doca_mmap_destroy(host.mmap);
	if (host.region != NULL)
		munmap(host.region, host.region_len);
	if (host.dev != NULL)
		doca_dev_close(host.dev);
	return result;
}
