/*
 * softdpu: DOCA context (doca_ctx.h, DOCA 2.5).
 *
 * A context is an instance of a DOCA library (DMA, sync event, ...) that executes tasks. It is
 * configured while idle, started, connected to one progress engine, and stopped to reconfigure.
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_dpa;
struct doca_gpu;

/*
 * Context states.
 *   IDLE: created or fully stopped; configurable; no tasks.
 *   STARTING: asynchronous start in progress; no tasks.
 *   RUNNING: tasks can be allocated and submitted.
 *   STOPPING: stop requested or a fatal task error happened; in-flight tasks are flushed.
 */
enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,
	DOCA_CTX_STATE_STARTING = 1,
	DOCA_CTX_STATE_RUNNING = 2,
	DOCA_CTX_STATE_STOPPING = 3,
};

/* Called on every state change, with the context already in next_state. */
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data, struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state, enum doca_ctx_states next_state);

/* Finalizes the configuration and starts the context. */
DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/* Stops the context; DOCA_ERROR_IN_PROGRESS when tasks are still in flight (it reaches idle later). */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks);

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);

DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

/* Binds the data path to a GPU. softdpu emulates no GPU: DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

/* Binds the data path to a DPA. softdpu emulates no DPA: DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_dpa(struct doca_ctx *ctx, struct doca_dpa *dpa_dev);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
