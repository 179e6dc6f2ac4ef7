// doca_sync_event.h: argument checks over doca_sync_event.
#include <doca_sync_event.h>

#include <new>

#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "sync_event/sync_event.hpp"

namespace {

// GPU and DPA are not emulated: their locations and handles cannot exist in softdpu.
doca_error_t no_accelerator(const char *what, const char *unit) noexcept
{
	SDK_LOG_ERR("failed to %s: softdpu emulates no %s", what, unit);
	return DOCA_ERROR_NOT_SUPPORTED;
}

// Export and import across processes and machines come with the cross-process work.
doca_error_t not_yet(const char *what) noexcept
{
	SDK_LOG_ERR("failed to %s: sync event export/import is not supported by softdpu yet", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t export_capability(const doca_devinfo *devinfo) noexcept
{
	return devinfo == nullptr ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_SUPPORTED;
}

// A capability of the device's function (docs/topology.md).
doca_error_t device_capability(const doca_devinfo *devinfo, bool softdpu::device::Capabilities::*cap) noexcept
{
	if (devinfo == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps().*cap ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

// Every task type runs on the CPU, so every device supports it.
doca_error_t task_capability(const doca_devinfo *devinfo) noexcept
{
	return devinfo == nullptr ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

} // namespace

extern "C" {

/* ---- creation and configuration ---- */

doca_error_t doca_sync_event_create(struct doca_sync_event **event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	auto *created = new (std::nothrow) doca_sync_event();
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	*event = created;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event)
{
	if (dev == nullptr || data == nullptr || sz == 0 || event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return doca_sync_event::create_from_export(dev, data, sz, event);
}

doca_error_t doca_sync_event_destroy(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!event->can_destroy()) {
		SDK_LOG_ERR("failed to destroy sync event: its context is not idle (stop it first)");
		return DOCA_ERROR_IN_USE;
	}
	if (event->is_standalone_started())
		event->stop_standalone();
	delete event;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	if (event == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->add_publisher_cpu(dev);
}

doca_error_t doca_sync_event_add_publisher_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	if (event == nullptr || dpa == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("add a DPA publisher", "DPA");
}

doca_error_t doca_sync_event_add_publisher_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	if (event == nullptr || gpu == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("add a GPU publisher", "GPU");
}

doca_error_t doca_sync_event_add_publisher_location_dpu(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->add_publisher_dpu();
}

doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->add_publisher_remote_net();
}

doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	if (event == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->add_subscriber_cpu(dev);
}

doca_error_t doca_sync_event_add_subscriber_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	if (event == nullptr || dpa == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("add a DPA subscriber", "DPA");
}

doca_error_t doca_sync_event_add_subscriber_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	if (event == nullptr || gpu == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("add a GPU subscriber", "GPU");
}

doca_error_t doca_sync_event_add_subscriber_location_dpu(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->add_subscriber_dpu();
}

doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr)
{
	if (event == nullptr || addr == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->set_addr(addr);
}

doca_error_t doca_sync_event_start(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->start_standalone();
}

doca_error_t doca_sync_event_stop(struct doca_sync_event *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->stop_standalone();
}

struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event)
{
	return event != nullptr ? event->as_ctx() : nullptr;
}

/* ---- export and import ---- */

doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return device_capability(devinfo, &softdpu::device::Capabilities::sync_event_create_from_export);
}

doca_error_t doca_sync_event_cap_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_cap_is_export_to_dpu_supported(const struct doca_devinfo *devinfo)
{
	return device_capability(devinfo, &softdpu::device::Capabilities::sync_event_export_to_dpu);
}

doca_error_t doca_sync_event_cap_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_cap_remote_net_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_cap_remote_net_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return export_capability(devinfo);
}

doca_error_t doca_sync_event_export_to_dpa(struct doca_sync_event *event, struct doca_dpa *dpa,
					   doca_dpa_dev_sync_event_t *dpa_dev_se_handle)
{
	if (event == nullptr || dpa == nullptr || dpa_dev_se_handle == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("export a sync event to the DPA", "DPA");
}

doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz)
{
	if (event == nullptr || dev == nullptr || data == nullptr || sz == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->export_to_dpu(dev, data, sz);
}

doca_error_t doca_sync_event_export_to_gpu(struct doca_sync_event *event, struct doca_gpu *gpu,
					   doca_gpu_dev_sync_event_t **gpu_dev_se)
{
	if (event == nullptr || gpu == nullptr || gpu_dev_se == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("export a sync event to the GPU", "GPU");
}

doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz)
{
	if (event == nullptr || data == nullptr || sz == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return not_yet("export a sync event to a remote peer");
}

doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
							   struct doca_sync_event_remote_net **event)
{
	if (dev == nullptr || data == nullptr || sz == 0 || event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return not_yet("create a remote sync event from an export");
}

doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event)
{
	if (event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	// No remote handle can have been created (see doca_sync_event_remote_net_create_from_export).
	return not_yet("destroy a remote sync event");
}

doca_error_t doca_sync_event_remote_net_export_to_dpa(struct doca_sync_event_remote_net *event, struct doca_dpa *dpa,
						      doca_dpa_dev_sync_event_remote_net_t *dpa_remote_event)
{
	if (event == nullptr || dpa == nullptr || dpa_remote_event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("export a remote sync event to the DPA", "DPA");
}

doca_error_t doca_sync_event_remote_net_export_to_gpu(struct doca_sync_event_remote_net *event, struct doca_gpu *gpu,
						      doca_gpu_dev_sync_event_remote_net_t *gpu_remote_event)
{
	if (event == nullptr || gpu == nullptr || gpu_remote_event == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return no_accelerator("export a remote sync event to the GPU", "GPU");
}

/* ---- synchronous operations ---- */

doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value)
{
	if (doca_unlikely(event == nullptr || value == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->get(value);
}

doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched)
{
	if (doca_unlikely(event == nullptr || fetched == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->update_add(value, fetched);
}

doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value)
{
	if (doca_unlikely(event == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->update_set(value);
}

doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	if (doca_unlikely(event == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->wait_gt(value, mask, false);
}

doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	if (doca_unlikely(event == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->wait_gt(value, mask, true);
}

/* ---- tasks ---- */

doca_error_t doca_sync_event_cap_task_get_is_supported(const struct doca_devinfo *devinfo)
{
	return task_capability(devinfo);
}

doca_error_t doca_sync_event_cap_task_notify_set_is_supported(const struct doca_devinfo *devinfo)
{
	return task_capability(devinfo);
}

doca_error_t doca_sync_event_cap_task_notify_add_is_supported(const struct doca_devinfo *devinfo)
{
	return task_capability(devinfo);
}

doca_error_t doca_sync_event_cap_task_wait_gt_is_supported(const struct doca_devinfo *devinfo)
{
	return task_capability(devinfo);
}

doca_error_t doca_sync_event_task_get_set_conf(struct doca_sync_event *event,
					       doca_sync_event_task_get_completion_cb_t completion_cb,
					       doca_sync_event_task_get_completion_cb_t error_cb, uint32_t num_tasks)
{
	if (event == nullptr || completion_cb == nullptr || error_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->set_get_conf(completion_cb, error_cb, num_tasks);
}

doca_error_t doca_sync_event_task_notify_set_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_set_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_set_completion_cb_t error_cb,
						      uint32_t num_tasks)
{
	if (event == nullptr || completion_cb == nullptr || error_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->set_notify_set_conf(completion_cb, error_cb, num_tasks);
}

doca_error_t doca_sync_event_task_notify_add_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_add_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_add_completion_cb_t error_cb,
						      uint32_t num_tasks)
{
	if (event == nullptr || completion_cb == nullptr || error_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->set_notify_add_conf(completion_cb, error_cb, num_tasks);
}

doca_error_t doca_sync_event_task_wait_gt_set_conf(struct doca_sync_event *event,
						   doca_sync_event_task_wait_gt_completion_cb_t completion_cb,
						   doca_sync_event_task_wait_gt_completion_cb_t error_cb,
						   uint32_t num_tasks)
{
	if (event == nullptr || completion_cb == nullptr || error_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return event->set_wait_gt_conf(completion_cb, error_cb, num_tasks);
}

doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr,
						 union doca_data user_data, struct doca_sync_event_task_get **task)
{
	if (doca_unlikely(event == nullptr || task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->alloc_get(ret_val_ptr, user_data, task);
}

struct doca_task *doca_sync_event_task_get_as_doca_task(struct doca_sync_event_task_get *task)
{
	return task;
}

void doca_sync_event_task_get_set_ret_val_ptr(struct doca_sync_event_task_get *task, uint64_t *ret_val_ptr)
{
	if (task != nullptr)
		task->ret_val_ptr = ret_val_ptr;
}

uint64_t *doca_sync_event_task_get_get_ret_val_ptr(const struct doca_sync_event_task_get *task)
{
	return task != nullptr ? task->ret_val_ptr : nullptr;
}

doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val,
							union doca_data user_data,
							struct doca_sync_event_task_notify_set **task)
{
	if (doca_unlikely(event == nullptr || task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->alloc_notify_set(set_val, user_data, task);
}

struct doca_task *doca_sync_event_task_notify_set_as_doca_task(struct doca_sync_event_task_notify_set *task)
{
	return task;
}

void doca_sync_event_task_notify_set_set_set_val(struct doca_sync_event_task_notify_set *task, uint64_t set_val)
{
	if (task != nullptr)
		task->set_val = set_val;
}

uint64_t doca_sync_event_task_notify_set_get_set_val(const struct doca_sync_event_task_notify_set *task)
{
	return task != nullptr ? task->set_val : 0;
}

doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val,
							uint64_t *fetched_val_ptr, union doca_data user_data,
							struct doca_sync_event_task_notify_add **task)
{
	if (doca_unlikely(event == nullptr || task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->alloc_notify_add(inc_val, fetched_val_ptr, user_data, task);
}

struct doca_task *doca_sync_event_task_notify_add_as_doca_task(struct doca_sync_event_task_notify_add *task)
{
	return task;
}

void doca_sync_event_task_notify_add_set_inc_val(struct doca_sync_event_task_notify_add *task, uint64_t inc_val)
{
	if (task != nullptr)
		task->inc_val = inc_val;
}

uint64_t doca_sync_event_task_notify_add_get_inc_val(const struct doca_sync_event_task_notify_add *task)
{
	return task != nullptr ? task->inc_val : 0;
}

void doca_sync_event_task_notify_add_set_fetched_val_ptr(struct doca_sync_event_task_notify_add *task,
							 uint64_t *fetched_val_ptr)
{
	if (task != nullptr)
		task->fetched_val_ptr = fetched_val_ptr;
}

uint64_t *doca_sync_event_task_notify_add_get_fetched_val_ptr(const struct doca_sync_event_task_notify_add *task)
{
	return task != nullptr ? task->fetched_val_ptr : nullptr;
}

doca_error_t doca_sync_event_task_wait_gt_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						     union doca_data user_data,
						     struct doca_sync_event_task_wait_gt **task)
{
	if (doca_unlikely(event == nullptr || task == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	return event->alloc_wait_gt(wait_val, mask, user_data, task);
}

struct doca_task *doca_sync_event_task_wait_gt_as_doca_task(struct doca_sync_event_task_wait_gt *task)
{
	return task;
}

void doca_sync_event_task_wait_gt_set_wait_val(struct doca_sync_event_task_wait_gt *task, uint64_t wait_val)
{
	if (task != nullptr)
		task->wait_val = wait_val;
}

uint64_t doca_sync_event_task_wait_gt_get_wait_val(const struct doca_sync_event_task_wait_gt *task)
{
	return task != nullptr ? task->wait_val : 0;
}

void doca_sync_event_task_wait_gt_set_mask(struct doca_sync_event_task_wait_gt *task, uint64_t mask)
{
	if (task != nullptr)
		task->mask = mask;
}

uint64_t doca_sync_event_task_wait_gt_get_mask(const struct doca_sync_event_task_wait_gt *task)
{
	return task != nullptr ? task->mask : 0;
}

} // extern "C"
