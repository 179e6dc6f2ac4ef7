/*
 * DMA Copy, host side. The host CPU never copies the file: it only exports the memory that holds it
 * (host -> DPU, PCI read-only) or that receives it (DPU -> host, PCI read-write), hands the export
 * to the DPU, waits for DONE, checks the checksum and tells the DPU its verdict.
 */
#define _POSIX_C_SOURCE 200809L

#include "dma_copy.h"
#include "dma_copy_checksum.h"
#include "dma_copy_proto.h"
#include "sample_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_COPY::HOST);

/* How long to wait between attempts to reach a DPU that is not listening yet. */
#define CONNECT_RETRY_MS 50

struct host_side {
	const struct dma_copy_config *config;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct dma_copy_region region;
	struct dma_copy_channel channel;
	uint64_t file_size;
	uint32_t expected_crc; /* of the file as the sending side read it */
};

static void sleep_ms(long ms)
{
	struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&pause, NULL);
}

/* Connects to the DPU's socket, retrying until the timeout: the DPU may start after the host. */
static doca_error_t connect_to_dpu(struct host_side *host)
{
	const uint64_t deadline = dma_copy_now_ns() + (uint64_t)host->config->timeout_seconds * 1000000000u;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	strncpy(addr.sun_path, host->config->socket_path, sizeof(addr.sun_path) - 1);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			DOCA_LOG_ERR("Cannot create a socket: %s", strerror(errno));
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		if (connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) == 0)
			break;
		if ((errno != ENOENT && errno != ECONNREFUSED && errno != EINTR) || dma_copy_now_ns() > deadline) {
			DOCA_LOG_ERR("Cannot connect to the DPU at %s: %s", host->config->socket_path, strerror(errno));
			close(fd);
			return errno == ENOENT || errno == ECONNREFUSED ? DOCA_ERROR_TIME_OUT
									: DOCA_ERROR_NOT_CONNECTED;
		}
		close(fd);
		sleep_ms(CONNECT_RETRY_MS);
	}
	DOCA_LOG_INFO("Connected to the DPU at %s", host->config->socket_path);
	return dma_copy_channel_init(&host->channel, fd, host->config->timeout_seconds, "DPU");
}

/* HELLO, HELLO_ACK: agree on the direction and learn the size (and checksum) of what comes. */
static doca_error_t handshake(struct host_side *host)
{
	const bool sending = host->config->direction == DMA_COPY_HOST_TO_DPU;
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_HELLO};
	doca_error_t result;

	msg.u.hello.direction = (uint32_t)host->config->direction;
	msg.u.hello.file_size = sending ? host->file_size : 0;
	msg.u.hello.crc32c = sending ? host->expected_crc : 0;
	result = dma_copy_send(&host->channel, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	result = dma_copy_expect(&host->channel, DMA_COPY_MSG_HELLO_ACK, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	if (sending) {
		if (msg.u.hello_ack.file_size != host->file_size || msg.u.hello_ack.crc32c != host->expected_crc) {
			DOCA_LOG_ERR("Protocol error from the DPU: HELLO_ACK does not echo the size and checksum");
			dma_copy_send_error(&host->channel, DOCA_ERROR_INVALID_VALUE, "HELLO_ACK does not echo HELLO");
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	}
	if (msg.u.hello_ack.file_size > SIZE_MAX / 2) {
		DOCA_LOG_ERR("The DPU announced %llu bytes: too large for this host",
			     (unsigned long long)msg.u.hello_ack.file_size);
		dma_copy_send_error(&host->channel, DOCA_ERROR_TOO_BIG, "file too large for the host");
		return DOCA_ERROR_TOO_BIG;
	}
	host->file_size = msg.u.hello_ack.file_size;
	host->expected_crc = msg.u.hello_ack.crc32c;
	DOCA_LOG_INFO("The DPU will send %llu bytes", (unsigned long long)host->file_size);
	return dma_copy_region_alloc((size_t)host->file_size, &host->region);
}

/* Exports the region to the DPU's side of the PCI link. An empty file has no memory to export. */
static doca_error_t export_region(struct host_side *host)
{
	const bool sending = host->config->direction == DMA_COPY_HOST_TO_DPU;
	struct dma_copy_msg msg = {.type = DMA_COPY_MSG_EXPORT};
	const void *blob = NULL;
	size_t blob_len = 0;
	doca_error_t result;

	if (host->region.len > 0) {
		/* The DPU only reads what the host sends, and only writes where the host receives. */
		result = sample_mmap_create(host->dev, host->region.addr, host->region.len,
					    sending ? DOCA_ACCESS_FLAG_PCI_READ_ONLY : DOCA_ACCESS_FLAG_PCI_READ_WRITE,
					    &host->mmap);
		if (result != DOCA_SUCCESS) {
			dma_copy_send_error(&host->channel, result, "the host could not create its mmap");
			return result;
		}
		result = doca_mmap_export_pci(host->mmap, host->dev, &blob, &blob_len);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to export the mmap over PCI: %s", doca_error_get_descr(result));
			dma_copy_send_error(&host->channel, result, "the host could not export its mmap");
			return result;
		}
		if (blob_len > DMA_COPY_PROTO_MAX_BLOB) {
			DOCA_LOG_ERR("The export descriptor has %zu bytes; the protocol carries at most %d", blob_len,
				     DMA_COPY_PROTO_MAX_BLOB);
			dma_copy_send_error(&host->channel, DOCA_ERROR_TOO_BIG, "export descriptor too large");
			return DOCA_ERROR_TOO_BIG;
		}
	}
	msg.u.export_desc.addr = (uint64_t)(uintptr_t)host->region.addr;
	msg.u.export_desc.len = host->region.len;
	msg.u.export_desc.blob = blob;
	msg.u.export_desc.blob_len = (uint32_t)blob_len;
	DOCA_LOG_INFO("Exported %zu bytes at %p (descriptor: %zu bytes)", host->region.len, (void *)host->region.addr,
		      blob_len);
	return dma_copy_send(&host->channel, &msg);
}

/* DONE, then the host's own check, then VERDICT so the DPU knows how it ended. */
static doca_error_t finish(struct host_side *host)
{
	const bool sending = host->config->direction == DMA_COPY_HOST_TO_DPU;
	struct dma_copy_msg msg;
	doca_error_t verdict = DOCA_SUCCESS;
	uint32_t host_crc = host->expected_crc;
	doca_error_t result;

	result = dma_copy_expect(&host->channel, DMA_COPY_MSG_DONE, &msg);
	if (result != DOCA_SUCCESS)
		return result;
	if (msg.u.done.status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The DPU reports that the copy failed: %s",
			     doca_error_get_descr((doca_error_t)msg.u.done.status));
		verdict = (doca_error_t)msg.u.done.status;
	} else if (msg.u.done.bytes != host->file_size) {
		DOCA_LOG_ERR("The DPU copied %llu bytes, expected %llu", (unsigned long long)msg.u.done.bytes,
			     (unsigned long long)host->file_size);
		verdict = DOCA_ERROR_UNEXPECTED;
	} else {
		/* Receiving: the bytes the DPU wrote into our memory are what counts, so checksum them here. */
		if (!sending)
			host_crc = dma_copy_crc32c(0, host->region.addr, host->region.len);
		if (host_crc != host->expected_crc || msg.u.done.crc32c != host->expected_crc)
			verdict = DOCA_ERROR_UNEXPECTED;
	}
	if (verdict == DOCA_SUCCESS || msg.u.done.status == DOCA_SUCCESS) {
		char throughput[96];

		dma_copy_format_throughput(throughput, sizeof(throughput), msg.u.done.bytes, msg.u.done.elapsed_ns);
		DOCA_LOG_INFO("DMA %s, as the DPU measured it: %s", dma_copy_direction_name(host->config->direction),
			      throughput);
		DOCA_LOG_INFO("Checksum verdict: %s (crc32c host 0x%08x, DPU 0x%08x, expected 0x%08x, %llu bytes)",
			      verdict == DOCA_SUCCESS ? "MATCH" : "MISMATCH", host_crc, msg.u.done.crc32c,
			      host->expected_crc, (unsigned long long)host->file_size);
	}
	if (verdict == DOCA_SUCCESS && !sending) {
		verdict = dma_copy_region_write_file(&host->region, host->config->file);
		if (verdict == DOCA_SUCCESS)
			DOCA_LOG_INFO("Wrote %llu bytes to %s", (unsigned long long)host->file_size,
				      host->config->file);
	}
	msg = (struct dma_copy_msg){.type = DMA_COPY_MSG_VERDICT};
	msg.u.verdict.status = (uint32_t)verdict;
	result = dma_copy_send(&host->channel, &msg);
	return verdict != DOCA_SUCCESS ? verdict : result;
}

static doca_error_t tear_down(struct host_side *host)
{
	doca_error_t result = DOCA_SUCCESS;

	/* Closing the socket first tells a DPU still waiting that we are gone. */
	dma_copy_channel_close(&host->channel);
	/* Destroying an exported mmap revokes the DPU's access; it stops it first. */
	if (host->mmap != NULL)
		sample_cleanup_step(&result, doca_mmap_destroy(host->mmap), "destroy mmap");
	if (host->dev != NULL)
		sample_cleanup_step(&result, doca_dev_close(host->dev), "close device");
	dma_copy_region_release(&host->region);
	return result;
}

doca_error_t dma_copy_run_host(const struct dma_copy_config *config)
{
	struct host_side host = {.config = config, .channel = {.fd = -1}};
	doca_error_t result;

	DOCA_LOG_INFO("Host side: %s, file %s, device %s", dma_copy_direction_name(config->direction), config->file,
		      config->pci_addr);
	result = sample_open_dma_device(config->pci_addr, &host.dev);
	if (result == DOCA_SUCCESS && config->direction == DMA_COPY_HOST_TO_DPU) {
		result = dma_copy_region_map_file(config->file, &host.region);
		host.file_size = host.region.len;
		host.expected_crc = dma_copy_crc32c(0, host.region.addr, host.region.len);
	}
	if (result == DOCA_SUCCESS)
		result = connect_to_dpu(&host);
	if (result == DOCA_SUCCESS)
		result = handshake(&host);
	if (result == DOCA_SUCCESS)
		result = export_region(&host);
	if (result == DOCA_SUCCESS)
		result = finish(&host);
	sample_record_error(&result, tear_down(&host));
	return result;
}
