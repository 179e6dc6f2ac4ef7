/*
 * softdpu: DOCA buffer pool (DOCA 2.5 doca_buf_pool.h).
 *
 * A pool cuts its mmap's memory range into num_elements fixed-size elements (each aligned to the
 * element alignment, from the start of the range) and hands out one doca_buf per element.
 *
 * softdpu notes: creating a pool over an mmap without a memory range returns
 * DOCA_ERROR_INVALID_VALUE; the mmap cannot be stopped or destroyed while the pool exists.
 * Starting a started pool or stopping one that is not started returns DOCA_ERROR_BAD_STATE.
 */
#ifndef DOCA_BUF_POOL_H_
#define DOCA_BUF_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_buf_pool;
struct doca_mmap;

/* Creates a pool of num_elements buffers of element_size bytes over mmap. INVALID_VALUE; NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool);

/* Destroys the pool (stopping it first). INVALID_VALUE; IN_USE while buffers are out. */
DOCA_STABLE
doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool);

/* Starts the pool. INVALID_VALUE; INITIALIZATION (memory range too small); BAD_STATE (mmap not started). */
DOCA_STABLE
doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool);

/* Stops the pool. INVALID_VALUE; IN_USE while buffers are out. */
DOCA_STABLE
doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool);

/* Gets a buffer over a free element, with an empty data section at its start.
 * INVALID_VALUE; BAD_STATE (not started); EMPTY (all buffers are out). */
DOCA_STABLE
doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf);

/* Gets the number of elements given at creation. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements);

/* Gets the number of free elements. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_free_elements);

/* Sets the element alignment (a power of 2, at least 1). INVALID_VALUE; BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment);

/* Gets the element alignment (1 unless set). INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment);

/* Sets the user data. INVALID_VALUE; BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data);

/* Gets the user data (0 unless set). INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_POOL_H_ */
