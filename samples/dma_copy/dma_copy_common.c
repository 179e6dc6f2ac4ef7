/*
 * DMA Copy: what both sides share: chunking, file and memory regions, time and throughput.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, mmap flags under -std=c11 */
#define _DEFAULT_SOURCE         /* MAP_ANONYMOUS */

#include "dma_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_COPY::COMMON);

const char *dma_copy_direction_name(enum dma_copy_direction direction)
{
	switch (direction) {
	case DMA_COPY_HOST_TO_DPU:
		return "host-to-dpu";
	case DMA_COPY_DPU_TO_HOST:
		return "dpu-to-host";
	case DMA_COPY_DIRECTION_NONE:
		break;
	}
	return "none";
}

const char *dma_copy_role_name(enum dma_copy_role role)
{
	switch (role) {
	case DMA_COPY_ROLE_HOST:
		return "host";
	case DMA_COPY_ROLE_DPU:
		return "dpu";
	case DMA_COPY_ROLE_NONE:
		break;
	}
	return "none";
}

uint64_t dma_copy_num_chunks(uint64_t total, uint64_t chunk_size)
{
	/* Written so that total close to UINT64_MAX cannot overflow. */
	return total / chunk_size + (total % chunk_size != 0 ? 1 : 0);
}

void dma_copy_chunk_range(uint64_t total, uint64_t chunk_size, uint64_t index, uint64_t *offset, uint64_t *len)
{
	const uint64_t start = index * chunk_size;
	const uint64_t left = total - start;

	*offset = start;
	*len = left < chunk_size ? left : chunk_size;
}

doca_error_t dma_copy_region_map_file(const char *path, struct dma_copy_region *region)
{
	struct stat info;
	void *addr;
	int fd;

	region->addr = NULL;
	region->len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		DOCA_LOG_ERR("Cannot open %s: %s", path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
		DOCA_LOG_ERR("%s is not a regular file", path);
		close(fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (info.st_size == 0) {
		close(fd); /* an empty file has nothing to map; the transfer is a handshake only */
		return DOCA_SUCCESS;
	}
	addr = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		DOCA_LOG_ERR("Cannot map %s: %s", path, strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	region->addr = addr;
	region->len = (size_t)info.st_size;
	return DOCA_SUCCESS;
}

doca_error_t dma_copy_region_alloc(size_t len, struct dma_copy_region *region)
{
	void *addr;

	region->addr = NULL;
	region->len = 0;
	if (len == 0)
		return DOCA_SUCCESS;
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		DOCA_LOG_ERR("Cannot allocate %zu bytes: %s", len, strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	region->addr = addr;
	region->len = len;
	return DOCA_SUCCESS;
}

doca_error_t dma_copy_region_write_file(const struct dma_copy_region *region, const char *path)
{
	size_t written = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		DOCA_LOG_ERR("Cannot create %s: %s", path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	while (written < region->len) {
		const ssize_t n = write(fd, region->addr + written, region->len - written);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			DOCA_LOG_ERR("Cannot write %s: %s", path, strerror(errno));
			close(fd);
			return DOCA_ERROR_IO_FAILED;
		}
		written += (size_t)n;
	}
	if (close(fd) != 0) {
		DOCA_LOG_ERR("Cannot write %s: %s", path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

void dma_copy_region_release(struct dma_copy_region *region)
{
	if (region->addr != NULL)
		munmap(region->addr, region->len);
	region->addr = NULL;
	region->len = 0;
}

uint64_t dma_copy_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void dma_copy_format_throughput(char *text, size_t size, uint64_t bytes, uint64_t elapsed_ns)
{
	const double seconds = (double)elapsed_ns / 1e9;
	const double mib = (double)bytes / (1024.0 * 1024.0);

	if (bytes == 0 || elapsed_ns == 0)
		snprintf(text, size, "%llu bytes in %.3f ms", (unsigned long long)bytes, seconds * 1e3);
	else
		snprintf(text, size, "%llu bytes in %.3f ms, %.1f MiB/s", (unsigned long long)bytes, seconds * 1e3,
			 mib / seconds);
}
