/*
 * softdpu: DOCA progress engine and tasks (doca_pe.h, DOCA 2.5).
 *
 * A progress engine (PE) is a single-threaded event loop. Contexts connect to it; their task
 * completions and state changes are delivered only from inside doca_pe_progress(), on the
 * calling thread. Event-driven use on Linux:
 *   get the handle (an fd) -> doca_pe_request_notification -> wait for the fd to be readable
 *   -> doca_pe_clear_notification -> doca_pe_progress until it returns 0 -> repeat.
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_pe;
struct doca_task;

/* Completion callback: used both for success and for failure. */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/* DOCA_ERROR_IN_USE while contexts are still connected (destroy them first). */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/* Runs completion handlers and state changes; 1 if anything happened, 0 otherwise. */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

/* The PE's notification handle: an fd that becomes readable once armed and work is pending. */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);

/* Drains the notification. The handle argument is not used on Linux. */
DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/* Arms the PE: the handle becomes readable when progress can be made (at once if it can now). */
DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/* Submits a task without validating it. On success DOCA owns the task until its callback runs. */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/* Validates, then submits. DOCA_ERROR_INVALID_VALUE for an invalid task (still owned by the caller). */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/* Returns the task to its context's pool. */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

/* DOCA_SUCCESS or the reason the task failed. */
DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

/* The context that allocated the task. */
DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/* Connects an idle context to the PE. A context connects to one PE, for its whole life. */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
