/*
 * DPDK capture: packets a host sends on PF0 are captured on the DPU from the PF's representor and
 * written, by DOCA DMA straight from the DPDK mbufs (doca_dpdk_mempool_mbuf_to_buf), into memory
 * the host exported; the host then checks every captured byte. See samples/dpdk_capture/README.md.
 */
#ifndef DPDK_CAPTURE_H_
#define DPDK_CAPTURE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_dev.h>
#include <doca_error.h>

#define CAPTURE_DEFAULT_SOCKET "/tmp/softdpu-dpdk-capture.sock"
#define CAPTURE_DEFAULT_HOST_PCI_ADDR "0b:00.0"  /* host PF0 */
#define CAPTURE_DEFAULT_DPU_PCI_ADDR "03:00.0"   /* DPU p0, whose representors include PF0's */
#define CAPTURE_DEFAULT_REPRESENTOR "pf0vf65535" /* the host PF's representor (mlx5 numbers it VF 65535) */
#define CAPTURE_DEFAULT_COUNT 1000
#define CAPTURE_DEFAULT_TIMEOUT_SECONDS 10
#define CAPTURE_MAX_FRAME 9000
#define CAPTURE_MIN_FRAME 64
#define CAPTURE_PATH_SIZE 108 /* sockaddr_un.sun_path */

enum capture_role {
	CAPTURE_ROLE_NONE = 0,
	CAPTURE_ROLE_HOST,
	CAPTURE_ROLE_DPU,
};

struct capture_config {
	enum capture_role role;
	char socket_path[CAPTURE_PATH_SIZE]; /* the DPU listens, the host connects */
	char pci_addr[32];                   /* empty: the role's default */
	char representor[64];                /* DPU: the representor= value to capture on */
	uint32_t count;                      /* host: frames to send and expect captured */
	bool external_sender;                /* host: another program sends the frames on PF0 */
	int timeout_seconds;                 /* longest wait for the peer, or for frames */
};

/*
 * The capture in host memory: records one after the other from offset 0, each a 32-bit length
 * (little-endian) followed by that many bytes of the frame, as received.
 */
#define CAPTURE_RECORD_HEADER 4

/* Control messages over the AF_UNIX socket (both processes on one machine: host byte order). */
#define CAPTURE_MAGIC 0x43505444u /* "DTPC" */
#define CAPTURE_VERSION 1
#define CAPTURE_MAX_DESC 4096

/* Host -> DPU: where to capture to, and how many frames the host will send; followed by the
 * export descriptor (desc_len bytes). */
struct capture_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t addr; /* the host's address of the region (meaningful only through the export) */
	uint64_t len;
	uint32_t count;
	uint32_t desc_len;
};

/* DPU -> host, once the port is up and the export imported; then once the capture is over. */
struct capture_report {
	uint32_t magic;
	int32_t status; /* doca_error_t */
	uint64_t records;
	uint64_t bytes;     /* of the region used, headers included */
	uint64_t truncated; /* frames received that did not fit in the region */
};

/* Frame number seq of the host's sequence: its length (64 to 9000 bytes, every seventh 9000, the
 * next 64) and content (Ethernet header, the number, a pattern). */
uint32_t capture_frame_length(uint64_t seq);
void capture_frame_write(uint64_t seq, uint8_t *frame, uint32_t len);

/* Whole-message socket I/O with a deadline; DOCA_ERROR_TIME_OUT, DOCA_ERROR_NOT_CONNECTED. */
doca_error_t capture_send_all(int fd, const void *data, size_t len);
doca_error_t capture_recv_all(int fd, void *data, size_t len, int timeout_seconds);

/* Monotonic clock, seconds. */
double capture_now(void);

doca_error_t capture_run_host(const struct capture_config *config);
doca_error_t capture_run_dpu(const struct capture_config *config);

extern volatile int capture_force_quit;

#endif /* DPDK_CAPTURE_H_ */
