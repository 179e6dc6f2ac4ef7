/*
 * DMA Copy application: copies a file between a host process and a DPU process.
 *
 * The host exports the memory that holds the file (host -> DPU) or that will receive it
 * (DPU -> host); the DPU imports that export and moves the bytes with DMA memcpy tasks, chunk by
 * chunk, several in flight. The two processes talk over a local (AF_UNIX) socket with the small
 * protocol of dma_copy_proto.h. See docs/dma-copy.md.
 */
#ifndef DMA_COPY_H_
#define DMA_COPY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#define DMA_COPY_DEFAULT_SOCKET "/tmp/softdpu-dma-copy.sock"
#define DMA_COPY_DEFAULT_HOST_PCI_ADDR "0b:00.0" /* host PF0 */
#define DMA_COPY_DEFAULT_DPU_PCI_ADDR "03:00.0"  /* DPU p0, PF0's match in the matching table */
#define DMA_COPY_DEFAULT_CHUNK_SIZE (1024 * 1024)
#define DMA_COPY_DEFAULT_INFLIGHT 8
#define DMA_COPY_MAX_INFLIGHT 1024
#define DMA_COPY_DEFAULT_TIMEOUT_SECONDS 10
#define DMA_COPY_MAX_TIMEOUT_SECONDS 3600
#define DMA_COPY_PATH_SIZE 4096
#define DMA_COPY_PCI_ADDR_SIZE 32

enum dma_copy_role {
	DMA_COPY_ROLE_NONE = 0,
	DMA_COPY_ROLE_HOST,
	DMA_COPY_ROLE_DPU,
};

/* Values are sent on the wire (HELLO): keep them stable. */
enum dma_copy_direction {
	DMA_COPY_DIRECTION_NONE = 0,
	DMA_COPY_HOST_TO_DPU = 1,
	DMA_COPY_DPU_TO_HOST = 2,
};

struct dma_copy_config {
	enum dma_copy_role role;
	enum dma_copy_direction direction;
	char file[DMA_COPY_PATH_SIZE];         /* the source on the sending side, the destination on the other */
	char socket_path[DMA_COPY_PATH_SIZE];  /* AF_UNIX path: the DPU listens, the host connects */
	char pci_addr[DMA_COPY_PCI_ADDR_SIZE]; /* empty: the role's default */
	uint64_t chunk_size;                   /* bytes per DMA task (DPU side) */
	uint32_t inflight;                     /* DMA tasks in flight at once (DPU side) */
	int timeout_seconds;                   /* longest wait for the peer or for DMA progress */
};

/* Parses the command line with doca_argp (init, register, start, destroy) into config, which gets
 * the defaults first. DOCA_ERROR_INVALID_VALUE / NOT_SUPPORTED for a bad command line. */
doca_error_t dma_copy_parse_args(int argc, char **argv, struct dma_copy_config *config);

const char *dma_copy_direction_name(enum dma_copy_direction direction);
const char *dma_copy_role_name(enum dma_copy_role role);

/* The two sides; each returns DOCA_SUCCESS only when the copy arrived intact. */
doca_error_t dma_copy_run_host(const struct dma_copy_config *config);
doca_error_t dma_copy_run_dpu(const struct dma_copy_config *config);

/* --- Chunking: chunk i covers [i * chunk_size, min((i + 1) * chunk_size, total)). --- */

/* Number of chunks of a transfer: 0 for 0 bytes. chunk_size must not be 0. */
uint64_t dma_copy_num_chunks(uint64_t total, uint64_t chunk_size);

/* Offset and length of chunk index (which must be < dma_copy_num_chunks). */
void dma_copy_chunk_range(uint64_t total, uint64_t chunk_size, uint64_t index, uint64_t *offset, uint64_t *len);

/* --- Files and memory. --- */

/* Memory that holds a whole file (read-only mapping) or receives one (anonymous mapping). */
struct dma_copy_region {
	uint8_t *addr; /* NULL when len is 0: nothing to map */
	size_t len;
};

/* Maps the whole file at path read-only. */
doca_error_t dma_copy_region_map_file(const char *path, struct dma_copy_region *region);

/* Maps len zeroed, writable bytes. */
doca_error_t dma_copy_region_alloc(size_t len, struct dma_copy_region *region);

/* Writes the region to path (created or truncated), all of it. */
doca_error_t dma_copy_region_write_file(const struct dma_copy_region *region, const char *path);

void dma_copy_region_release(struct dma_copy_region *region);

/* Monotonic clock, nanoseconds. */
uint64_t dma_copy_now_ns(void);

/* Writes "<bytes> bytes in <ms> ms, <MiB/s> MiB/s" (no rate for 0 bytes or no time) into text. */
void dma_copy_format_throughput(char *text, size_t size, uint64_t bytes, uint64_t elapsed_ns);

#endif /* DMA_COPY_H_ */
