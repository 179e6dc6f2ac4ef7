/*
 * softdpu: DOCA Sync Event (DOCA 2.5 doca_sync_event.h, experimental), in libdoca_common.
 *
 * A sync event is a 64-bit value that threads update, read and wait upon. It is used either
 * stand-alone (doca_sync_event_start: synchronous calls only) or as a DOCA context
 * (doca_sync_event_as_ctx, connected to a PE: get, notify-set, notify-add and wait-greater-than
 * tasks, plus the synchronous calls). The value lives inside the event unless the application
 * gives its own 64-bit word with doca_sync_event_set_addr.
 *
 * softdpu notes (error codes DOCA leaves undocumented):
 * - Configuration (locations, set_addr) on a started event returns DOCA_ERROR_BAD_STATE.
 * - Starting without a publisher and a subscriber declared returns DOCA_ERROR_BAD_STATE; so do
 *   get, update and wait calls on an event that is not started.
 * - doca_sync_event_as_ctx commits the event to context mode: doca_sync_event_start then returns
 *   DOCA_ERROR_NOT_PERMITTED. as_ctx returns NULL while the event is started stand-alone.
 * - GPU and DPA locations and every export/import function return DOCA_ERROR_NOT_SUPPORTED
 *   (after the NULL checks); so do the export capability queries.
 * - Destroying an event that operates as a running context returns DOCA_ERROR_IN_USE; a
 *   stand-alone started event is stopped by destroy.
 * - Only updates made through this API (update_set/update_add and notify tasks) wake an
 *   event-driven PE that waits on a wait-gt task; plain stores to user-provided storage are seen
 *   at the next doca_pe_progress only. See docs/sync-event.md.
 */
#ifndef DOCA_SYNC_EVENT_H_
#define DOCA_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_gpu;
struct doca_dpa;
struct doca_sync_event;
struct doca_sync_event_remote_net;
struct doca_sync_event_task_get;
struct doca_sync_event_task_notify_set;
struct doca_sync_event_task_notify_add;
struct doca_sync_event_task_wait_gt;

/* Handles a DPA or GPU kernel would use (never produced by softdpu). */
typedef uint64_t doca_dpa_dev_sync_event_t;
typedef uint64_t doca_dpa_dev_sync_event_remote_net_t;
typedef uint64_t doca_gpu_dev_sync_event_t;
typedef uint64_t doca_gpu_dev_sync_event_remote_net_t;

typedef void (*doca_sync_event_task_get_completion_cb_t)(struct doca_sync_event_task_get *task,
							 union doca_data task_user_data, union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_notify_set_completion_cb_t)(struct doca_sync_event_task_notify_set *task,
								union doca_data task_user_data,
								union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_notify_add_completion_cb_t)(struct doca_sync_event_task_notify_add *task,
								union doca_data task_user_data,
								union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_wait_gt_completion_cb_t)(struct doca_sync_event_task_wait_gt *task,
							     union doca_data task_user_data,
							     union doca_data ctx_user_data);

/* ---- Creation and configuration ---- */

/* Creates an event whose value starts at 0. INVALID_VALUE; NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event);

/* Imports an event exported to the DPU. INVALID_VALUE; NOT_SUPPORTED (not yet in softdpu). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event);

/* INVALID_VALUE; IN_USE (operates as a context that is not idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event);

/* A CPU (host or DPU Arm) thread using dev publishes. INVALID_VALUE; BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/* INVALID_VALUE; NOT_SUPPORTED (softdpu has no DPA). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/* INVALID_VALUE; NOT_SUPPORTED (softdpu has no GPU). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/* The DPU publishes. INVALID_VALUE; BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_dpu(struct doca_sync_event *event);

/* A remote peer publishes. INVALID_VALUE; BAD_STATE (started); NOT_SUPPORTED (storage set with
 * doca_sync_event_set_addr: remote publishers need an internally allocated value). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event);

/* A CPU thread using dev subscribes. INVALID_VALUE; BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/* INVALID_VALUE; NOT_SUPPORTED (softdpu has no DPA). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/* INVALID_VALUE; NOT_SUPPORTED (softdpu has no GPU). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/* The DPU subscribes. INVALID_VALUE; BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_dpu(struct doca_sync_event *event);

/* Uses the 64-bit word at addr (8-byte aligned; its current content is the value) instead of
 * internal storage. The word must outlive the event's started period. INVALID_VALUE (NULL or
 * misaligned); BAD_STATE (started); NOT_SUPPORTED (a remote-net publisher is declared). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr);

/* Starts the event stand-alone (it can then no longer be used as a context until stopped).
 * INVALID_VALUE; BAD_STATE (already started, or no publisher/subscriber declared);
 * NOT_PERMITTED (the event operates as a context). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event);

/* Stops an event started with doca_sync_event_start. INVALID_VALUE; BAD_STATE (not started so). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event);

/* The event as a context (start/stop it with doca_ctx_start/doca_ctx_stop after connecting it
 * to a PE). NULL when event is NULL or started stand-alone. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event);

/* ---- Export and import (not yet supported by softdpu) ---- */

/* INVALID_VALUE; NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_dpa_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_dpu_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_gpu_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_dpa_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_gpu_supported(const struct doca_devinfo *devinfo);

/* INVALID_VALUE; NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpa(struct doca_sync_event *event, struct doca_dpa *dpa,
					   doca_dpa_dev_sync_event_t *dpa_dev_se_handle);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_gpu(struct doca_sync_event *event, struct doca_gpu *gpu,
					   doca_gpu_dev_sync_event_t **gpu_dev_se);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz);

/* INVALID_VALUE; NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
							   struct doca_sync_event_remote_net **event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_export_to_dpa(struct doca_sync_event_remote_net *event, struct doca_dpa *dpa,
						      doca_dpa_dev_sync_event_remote_net_t *dpa_remote_event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_export_to_gpu(struct doca_sync_event_remote_net *event, struct doca_gpu *gpu,
						      doca_gpu_dev_sync_event_remote_net_t *gpu_remote_event);

/* ---- Synchronous operations (started event) ---- */

/* Reads the value. INVALID_VALUE; BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value);

/* Atomically adds value; *fetched receives the value before the addition. INVALID_VALUE;
 * BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched);

/* Sets the value. INVALID_VALUE; BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value);

/* Busy-waits until (event value & mask) > value. INVALID_VALUE; BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* As doca_sync_event_wait_gt, calling sched_yield() after each check. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* ---- Asynchronous tasks (event operating as a running context) ---- */

/* Every emulated device supports the four task types. INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_get_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_set_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_add_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_gt_is_supported(const struct doca_devinfo *devinfo);

/* Task configuration: callbacks and pool size (at least 1). Allowed only while the context is
 * idle and the event is not started stand-alone. INVALID_VALUE (NULL, num_tasks 0);
 * NOT_PERMITTED (not idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_set_conf(struct doca_sync_event *event,
					       doca_sync_event_task_get_completion_cb_t completion_cb,
					       doca_sync_event_task_get_completion_cb_t error_cb, uint32_t num_tasks);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_set_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_set_completion_cb_t error_cb,
						      uint32_t num_tasks);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_add_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_add_completion_cb_t error_cb,
						      uint32_t num_tasks);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_gt_set_conf(struct doca_sync_event *event,
						   doca_sync_event_task_wait_gt_completion_cb_t completion_cb,
						   doca_sync_event_task_wait_gt_completion_cb_t error_cb,
						   uint32_t num_tasks);

/* Task allocation: INVALID_VALUE (NULL event or task); BAD_STATE (context not running);
 * NO_MEMORY (every task of the type in use, or the type not configured). */

/* Reads the value into *ret_val_ptr (which must be set before submission). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr,
						 union doca_data user_data, struct doca_sync_event_task_get **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_get_as_doca_task(struct doca_sync_event_task_get *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_get_set_ret_val_ptr(struct doca_sync_event_task_get *task, uint64_t *ret_val_ptr);
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_get_get_ret_val_ptr(const struct doca_sync_event_task_get *task);

/* Sets the value to set_val; completes at once. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val,
							union doca_data user_data,
							struct doca_sync_event_task_notify_set **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_set_as_doca_task(struct doca_sync_event_task_notify_set *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_set_set_set_val(struct doca_sync_event_task_notify_set *task, uint64_t set_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_set_get_set_val(const struct doca_sync_event_task_notify_set *task);

/* Atomically adds inc_val; the previous value goes to *fetched_val_ptr (softdpu: NULL skips it). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val,
							uint64_t *fetched_val_ptr, union doca_data user_data,
							struct doca_sync_event_task_notify_add **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_add_as_doca_task(struct doca_sync_event_task_notify_add *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_inc_val(struct doca_sync_event_task_notify_add *task, uint64_t inc_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_add_get_inc_val(const struct doca_sync_event_task_notify_add *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_fetched_val_ptr(struct doca_sync_event_task_notify_add *task,
							 uint64_t *fetched_val_ptr);
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_notify_add_get_fetched_val_ptr(const struct doca_sync_event_task_notify_add *task);

/* Completes once (value & mask) > wait_val. DOCA's hardware needs wait_val in [0, 254] and a mask
 * made of 0, 1, 2, 4 or 8 consecutive 0xFF bytes: doca_task_try_submit rejects other tasks with
 * INVALID_VALUE, doca_task_submit runs them with the plain comparison. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_gt_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						     union doca_data user_data,
						     struct doca_sync_event_task_wait_gt **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_gt_as_doca_task(struct doca_sync_event_task_wait_gt *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_gt_set_wait_val(struct doca_sync_event_task_wait_gt *task, uint64_t wait_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_gt_get_wait_val(const struct doca_sync_event_task_wait_gt *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_gt_set_mask(struct doca_sync_event_task_wait_gt *task, uint64_t mask);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_gt_get_mask(const struct doca_sync_event_task_wait_gt *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SYNC_EVENT_H_ */
