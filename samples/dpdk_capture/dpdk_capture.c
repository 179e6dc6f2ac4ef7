// pkg-config: doca-common doca-dma doca-argp doca-dpdk-bridge libdpdk
/*
 * DPDK capture: the DPU captures the frames the host sends on PF0, from PF0's representor, into
 * memory the host exported, with DOCA DMA straight from the DPDK mbufs; the host checks them.
 *
 * Run it twice, once per side (each process picks its side with SOFTDPU_SIDE=host|dpu):
 *
 *   SOFTDPU_SIDE=dpu  dpdk_capture -- --role dpu
 *   SOFTDPU_SIDE=host dpdk_capture -- --role host --count 1000
 *
 * With --external-sender the host only exports and checks; another program on PF0 (dpdk-testpmd,
 * ...) sends the frames.
 *
 * The arguments before "--" go to DPDK's EAL (none: no hugepages, no PCI, a file prefix per
 * process). See samples/dpdk_capture/README.md.
 */
#define _GNU_SOURCE /* DPDK's headers use strnlen and friends */
#include "dpdk_capture.h"
#include "dpdk_sample_common.h"
#include "sample_argp.h"
#include "sample_common.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include <doca_argp.h>
#include <doca_dma.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(DPDK_CAPTURE);

volatile int capture_force_quit;
static void signal_handler(int signum)
{
	(void)signum;
	capture_force_quit = 1;
}

/* --- frames --- */

uint32_t capture_frame_length(uint64_t seq)
{
	if (seq % 7 == 0)
		return CAPTURE_MAX_FRAME;
	if (seq % 7 == 1)
		return CAPTURE_MIN_FRAME;
	return CAPTURE_MIN_FRAME + (uint32_t)((seq * 2654435761u) % (CAPTURE_MAX_FRAME - CAPTURE_MIN_FRAME + 1));
}

void capture_frame_write(uint64_t seq, uint8_t *frame, uint32_t len)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02};
	static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};

	memcpy(frame, dst, 6);
	memcpy(frame + 6, src, 6);
	frame[12] = 0x88; /* local experimental ethertype */
	frame[13] = 0xb5;
	for (int i = 0; i < 8; i++)
		frame[14 + i] = (uint8_t)(seq >> (8 * i));
	for (uint32_t i = 22; i < len; i++)
		frame[i] = (uint8_t)(seq * 31 + i * 7 + (i >> 8));
}

/* --- the control socket --- */

double capture_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

doca_error_t capture_send_all(int fd, const void *data, size_t len)
{
	const uint8_t *at = data;

	while (len > 0) {
		ssize_t sent = send(fd, at, len, MSG_NOSIGNAL);

		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0) {
			DOCA_LOG_ERR("Failed to send to the peer: %s", strerror(errno));
			return DOCA_ERROR_NOT_CONNECTED;
		}
		at += sent;
		len -= (size_t)sent;
	}
	return DOCA_SUCCESS;
}

doca_error_t capture_recv_all(int fd, void *data, size_t len, int timeout_seconds)
{
	const double deadline = capture_now() + timeout_seconds;
	uint8_t *at = data;

	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t got;

		if (capture_now() > deadline) {
			DOCA_LOG_ERR("Timed out after %d s waiting for the peer", timeout_seconds);
			return DOCA_ERROR_TIME_OUT;
		}
		if (poll(&pfd, 1, 100) <= 0) {
			if (capture_force_quit)
				return DOCA_ERROR_TIME_OUT;
			continue;
		}
		got = recv(fd, at, len, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			DOCA_LOG_ERR("The peer closed the connection");
			return DOCA_ERROR_NOT_CONNECTED;
		}
		at += got;
		len -= (size_t)got;
	}
	return DOCA_SUCCESS;
}

/* --- command line --- */

static doca_error_t role_cb(void *param, void *config)
{
	struct capture_config *cfg = config;
	bool is_host;
	const doca_error_t result = sample_argp_parse_role(param, &is_host);

	if (result == DOCA_SUCCESS)
		cfg->role = is_host ? CAPTURE_ROLE_HOST : CAPTURE_ROLE_DPU;
	return result;
}

static doca_error_t socket_cb(void *param, void *config)
{
	struct capture_config *cfg = config;

	return sample_argp_copy_string(cfg->socket_path, sizeof(cfg->socket_path), param, "socket");
}

static doca_error_t pci_addr_cb(void *param, void *config)
{
	struct capture_config *cfg = config;

	return sample_argp_copy_string(cfg->pci_addr, sizeof(cfg->pci_addr), param, "pci-addr");
}

static doca_error_t representor_cb(void *param, void *config)
{
	struct capture_config *cfg = config;

	return sample_argp_copy_string(cfg->representor, sizeof(cfg->representor), param, "representor");
}

static doca_error_t count_cb(void *param, void *config)
{
	int value;
	const doca_error_t result = sample_argp_int_in_range(param, "count", INT_MAX, "frames", &value);

	if (result == DOCA_SUCCESS)
		((struct capture_config *)config)->count = (uint32_t)value;
	return result;
}

static doca_error_t external_sender_cb(void *param, void *config)
{
	((struct capture_config *)config)->external_sender = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t timeout_cb(void *param, void *config)
{
	return sample_argp_int_in_range(param, "timeout", 3600, "seconds",
					&((struct capture_config *)config)->timeout_seconds);
}

static doca_error_t fill_defaults(void *config)
{
	struct capture_config *cfg = config;

	if (cfg->pci_addr[0] == '\0')
		strcpy(cfg->pci_addr,
		       cfg->role == CAPTURE_ROLE_HOST ? CAPTURE_DEFAULT_HOST_PCI_ADDR : CAPTURE_DEFAULT_DPU_PCI_ADDR);
	return DOCA_SUCCESS;
}

static doca_error_t register_flags(void)
{
	doca_error_t result;

	result = sample_argp_register_flag("r", "role", "<host|dpu>", "Which side this process plays (mandatory)",
					   DOCA_ARGP_TYPE_STRING, role_cb, true);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag(
		    "s", "socket", "<path>",
		    "AF_UNIX control socket: the DPU listens, the host connects (default " CAPTURE_DEFAULT_SOCKET ")",
		    DOCA_ARGP_TYPE_STRING, socket_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("p", "pci-addr", "<address>",
						   "Device PCI address (default " CAPTURE_DEFAULT_HOST_PCI_ADDR
						   " on the host, " CAPTURE_DEFAULT_DPU_PCI_ADDR " on the DPU)",
						   DOCA_ARGP_TYPE_STRING, pci_addr_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("R", "representor", "<representor>",
						   "DPU: the representor to capture on, DPDK's representor= syntax "
						   "(default " CAPTURE_DEFAULT_REPRESENTOR ", the host PF's)",
						   DOCA_ARGP_TYPE_STRING, representor_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("c", "count", "<frames>",
						   "Host: frames to send on PF0 and expect captured (default 1000)",
						   DOCA_ARGP_TYPE_INT, count_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag(
		    "e", "external-sender", NULL,
		    "Host: another program (testpmd, ...) sends the --count frames on PF0; the host checks "
		    "the records' structure and lists their lengths",
		    DOCA_ARGP_TYPE_BOOLEAN, external_sender_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("t", "timeout", "<seconds>",
						   "Longest wait for the peer or for frames (default 10)",
						   DOCA_ARGP_TYPE_INT, timeout_cb, false);
	if (result == DOCA_SUCCESS)
		result = doca_argp_register_validation_callback(fill_defaults);
	return result;
}

int main(int argc, char **argv)
{
	struct capture_config config;
	doca_error_t result;
	int status = EXIT_FAILURE;
	bool argp_initialised;

	memset(&config, 0, sizeof(config));
	strcpy(config.socket_path, CAPTURE_DEFAULT_SOCKET);
	strcpy(config.representor, CAPTURE_DEFAULT_REPRESENTOR);
	config.count = CAPTURE_DEFAULT_COUNT;
	config.timeout_seconds = CAPTURE_DEFAULT_TIMEOUT_SECONDS;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = dpdk_sample_argp_start("dpdk_capture", &config, register_flags, argc, argv, &argp_initialised);
	if (result != DOCA_SUCCESS) {
		if (!argp_initialised)
			return EXIT_FAILURE;
		goto out;
	}
	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
	result = config.role == CAPTURE_ROLE_HOST ? capture_run_host(&config) : capture_run_dpu(&config);
	if (result == DOCA_SUCCESS) {
		DOCA_LOG_INFO("DPDK capture (%s side) finished successfully",
			      config.role == CAPTURE_ROLE_HOST ? "host" : "DPU");
		status = EXIT_SUCCESS;
	} else
		DOCA_LOG_ERR("DPDK capture (%s side) failed: %s", config.role == CAPTURE_ROLE_HOST ? "host" : "DPU",
			     doca_error_get_descr(result));
out:
	if (dpdk_sample_eal_initialised()) {
		rte_eal_cleanup();
		dpdk_sample_remove_runtime_dir();
	}
	doca_argp_destroy();
	return status;
}
