/*
 * softdpu: DOCA DMA (doca_dma.h, DOCA 2.5), in libdoca_dma.
 *
 * A DMA context copies memory with memcpy tasks. The source is the data section of the source
 * buffer (or the data of every element of a source list, gathered). The copy is appended to the
 * destination's tailroom (scattered over a destination list in order) and the destination's
 * data length grows by the amount copied.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

#include <inttypes.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_pe.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_dma;
struct doca_dma_task_memcpy;

typedef void (*doca_dma_task_memcpy_completion_cb_t)(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
						     union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma);

/* DOCA_ERROR_IN_USE unless the context is idle. Also disconnects the context from its PE. */
DOCA_STABLE
doca_error_t doca_dma_destroy(struct doca_dma *dma);

/* DOCA_SUCCESS if the device can run memcpy tasks, DOCA_ERROR_NOT_SUPPORTED otherwise. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo);

DOCA_STABLE
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

DOCA_STABLE
doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks);

/* Longest buffer list (source or destination) a memcpy task accepts. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len);

/* Most bytes one memcpy task copies. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);

/* Enables memcpy tasks: callbacks and the number of tasks the context can hold. Idle only. */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks);

/* Allocates a task from the context's pool (DOCA_ERROR_NO_MEMORY when all are in use). */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task);

DOCA_STABLE
struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src);

DOCA_STABLE
const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst);

DOCA_STABLE
struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
