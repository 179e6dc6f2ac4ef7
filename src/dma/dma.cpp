#include "dma/dma.hpp"

#include <cstddef>

#include "common/env.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "core/mem/buf.hpp"
#include "core/mem/mmap.hpp"
#include "dma/memcpy.hpp"

namespace {

// Local copies: below this, handing the copy to another core costs more than making it.
constexpr uint64_t kDefaultEngineThreshold = uint64_t{64} * 1024;
// Copies that touch another process's memory are one process_vm_readv/writev system call each; the
// kernel does the copy while the calling thread waits anyway, and a hand-off to the engine thread
// (another core, a queue, a wake-up) costs a third of a 64 KiB transfer on these machines.
constexpr uint64_t kDefaultXprocEngineThreshold = uint64_t{1024} * 1024;

uint64_t threshold_from_env(const char *name, uint64_t fallback) noexcept
{
	return softdpu::common::env_unsigned(name, 0, UINT64_MAX).value_or(fallback);
}

} // namespace

doca_dma::doca_dma(doca_dev *dev) noexcept
    : dev_(dev), engine_threshold_(threshold_from_env("SOFTDPU_DMA_INLINE_MAX", kDefaultEngineThreshold)),
      xproc_engine_threshold_(threshold_from_env("SOFTDPU_DMA_XPROC_INLINE_MAX", kDefaultXprocEngineThreshold))
{
	dev_->add_user();
}

doca_dma::~doca_dma()
{
	dev_->remove_user();
}

doca_error_t doca_dma::set_memcpy_conf(doca_dma_task_memcpy_completion_cb_t on_success,
				       doca_dma_task_memcpy_completion_cb_t on_error, uint32_t num_tasks) noexcept
{
	if (!is_idle()) {
		SDK_LOG_ERR("failed to configure memcpy tasks: context is not idle");
		return DOCA_ERROR_BAD_STATE;
	}
	if (num_tasks == 0 || num_tasks > dev_->caps().dma_max_num_tasks) {
		SDK_LOG_ERR("failed to configure memcpy tasks: %u tasks, the device allows 1..%u", num_tasks,
			    dev_->caps().dma_max_num_tasks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy_on_success_ = on_success;
	memcpy_on_error_ = on_error;
	memcpy_pool_size_ = num_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma::on_start() noexcept
{
	if (!dev_->caps().dma_memcpy) {
		SDK_LOG_ERR("failed to start DMA context: device %s has no DMA engine", dev_->function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (memcpy_pool_size_ == 0) {
		SDK_LOG_ERR("failed to start DMA context: no task type configured (doca_dma_task_memcpy_set_conf)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	// The task callbacks have the memcpy signature; the generic task carries them as
	// doca_task_completion_cb_t and they are only ever called with a doca_dma_task_memcpy.
	const doca_error_t result = memcpy_pool_.allocate(
	    memcpy_pool_size_, this, kTaskMemcpy, reinterpret_cast<doca_task_completion_cb_t>(memcpy_on_success_),
	    reinterpret_cast<doca_task_completion_cb_t>(memcpy_on_error_));
	if (result != DOCA_SUCCESS)
		SDK_LOG_ERR("failed to start DMA context: cannot allocate %u tasks", memcpy_pool_size_);
	return result == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_INITIALIZATION;
}

void doca_dma::on_stopped() noexcept
{
	memcpy_pool_.deallocate();
}

doca_error_t doca_dma::alloc_memcpy(const doca_buf *src, doca_buf *dst, union doca_data user_data,
				    doca_dma_task_memcpy **task) noexcept
{
	doca_task *allocated = nullptr;
	const doca_error_t result = alloc_task(memcpy_pool_, &allocated);
	if (result != DOCA_SUCCESS) {
		if (result == DOCA_ERROR_NO_MEMORY)
			SDK_LOG_DBG("memcpy task pool exhausted (%u tasks)", memcpy_pool_size_);
		return result;
	}
	auto *memcpy_task = static_cast<doca_dma_task_memcpy *>(allocated);
	memcpy_task->src = src;
	memcpy_task->dst = dst;
	memcpy_task->user_data = user_data;
	*task = memcpy_task;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma::check_memcpy(const doca_dma_task_memcpy &task, uint64_t *total_bytes, bool *cross_process,
				    bool log) const noexcept
{
#define REJECT(code, ...)                                                                                              \
	do {                                                                                                           \
		if (log)                                                                                               \
			SDK_LOG_ERR(__VA_ARGS__);                                                                      \
		return code;                                                                                           \
	} while (0)

	const auto &caps = dev_->caps();
	if (task.src == nullptr || task.dst == nullptr)
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p has no %s buffer", (const void *)&task,
		       task.src == nullptr ? "source" : "destination");
	if (!task.src->is_list_head() || !task.dst->is_list_head())
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p: a buffer is not the head of its list",
		       (const void *)&task);
	if (task.src->list_len() > caps.dma_max_buf_list_len || task.dst->list_len() > caps.dma_max_buf_list_len)
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p: buffer list longer than the device's %u elements",
		       (const void *)&task, caps.dma_max_buf_list_len);

	uint64_t total = 0;
	bool remote_seen = false;
	for (const doca_buf *buf = task.src; buf != nullptr; buf = buf->next_in_list()) {
		const doca_mmap *mmap = buf->mmap();
		if (!mmap->has_device(dev_))
			REJECT(DOCA_ERROR_NOT_PERMITTED, "memcpy task %p: source memory is not mapped for device %s",
			       (const void *)&task, dev_->function().name.c_str());
		if (const softdpu::mem::RemoteMemory *remote = mmap->remote(); remote != nullptr) {
			if (!remote->dma_capable())
				REJECT(DOCA_ERROR_NOT_PERMITTED,
				       "memcpy task %p: source memory was imported from an RDMA export (DMA needs a "
				       "PCI export)",
				       (const void *)&task);
			if ((remote->access() & (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)) ==
			    0)
				REJECT(DOCA_ERROR_NOT_PERMITTED, "memcpy task %p: source export grants no PCI read",
				       (const void *)&task);
			remote_seen = true;
		}
		total += buf->data_len();
	}
	if (total == 0)
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p: source has no data", (const void *)&task);
	if (total > caps.dma_max_buf_size)
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p: %llu bytes, the device copies at most %llu",
		       (const void *)&task, (unsigned long long)total, (unsigned long long)caps.dma_max_buf_size);

	uint64_t room = 0;
	for (const doca_buf *buf = task.dst; buf != nullptr; buf = buf->next_in_list()) {
		const doca_mmap *mmap = buf->mmap();
		if (!mmap->has_device(dev_))
			REJECT(DOCA_ERROR_NOT_PERMITTED,
			       "memcpy task %p: destination memory is not mapped for device %s", (const void *)&task,
			       dev_->function().name.c_str());
		if (const softdpu::mem::RemoteMemory *remote = mmap->remote(); remote != nullptr) {
			if (!remote->dma_capable())
				REJECT(DOCA_ERROR_NOT_PERMITTED,
				       "memcpy task %p: destination memory was imported from an RDMA export (DMA "
				       "needs a PCI export)",
				       (const void *)&task);
			if ((remote->access() & DOCA_ACCESS_FLAG_PCI_READ_WRITE) == 0)
				REJECT(DOCA_ERROR_NOT_PERMITTED,
				       "memcpy task %p: destination memory was exported read-only "
				       "(DOCA_ACCESS_FLAG_PCI_READ_ONLY)",
				       (const void *)&task);
			remote_seen = true;
		} else if ((mmap->permissions() & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) == 0) {
			REJECT(DOCA_ERROR_NOT_PERMITTED, "memcpy task %p: destination memory map is read-only",
			       (const void *)&task);
		}
		room += buf->tailroom();
	}
	if (room < total)
		REJECT(DOCA_ERROR_INVALID_VALUE, "memcpy task %p: destination has room for %llu bytes, source has %llu",
		       (const void *)&task, (unsigned long long)room, (unsigned long long)total);
	*total_bytes = total;
	*cross_process = remote_seen;
	return DOCA_SUCCESS;
#undef REJECT
}

doca_error_t doca_dma::validate(const doca_task *task) const noexcept
{
	if (task->type != kTaskMemcpy)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t total = 0;
	bool cross_process = false;
	const doca_error_t result =
	    check_memcpy(*static_cast<const doca_dma_task_memcpy *>(task), &total, &cross_process, true);
	// try_submit reports every invalid task the way DOCA documents it.
	return result == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

doca_dma::Execution doca_dma::on_submit(doca_task *task) noexcept
{
	auto *memcpy_task = static_cast<doca_dma_task_memcpy *>(task);
	uint64_t total = 0;
	bool cross_process = false;
	// A bad task fails the way hardware fails it: through the error callback, later.
	task->status = check_memcpy(*memcpy_task, &total, &cross_process, true);
	if (task->status != DOCA_SUCCESS)
		return Execution::done;
	if (total < (cross_process ? xproc_engine_threshold_ : engine_threshold_)) {
		task->status = softdpu::dma::copy_buffer_lists(memcpy_task->src, memcpy_task->dst);
		return Execution::done;
	}
	task->engine_job.run = &doca_dma::run_on_engine;
	hand_to_engine(task);
	return Execution::on_engine;
}

doca_dma::Execution doca_dma::execute(doca_task *task) noexcept
{
	// Nothing is ever left not-ready by on_submit; kept for completeness of the contract.
	auto *memcpy_task = static_cast<doca_dma_task_memcpy *>(task);
	task->status = softdpu::dma::copy_buffer_lists(memcpy_task->src, memcpy_task->dst);
	return Execution::done;
}

void doca_dma::run_on_engine(softdpu::device::EngineJob *job) noexcept
{
	auto *base = reinterpret_cast<doca_task *>(reinterpret_cast<char *>(job) - offsetof(doca_task, engine_job));
	auto *task = static_cast<doca_dma_task_memcpy *>(base);
	doca_ctx *ctx = task->ctx;
	if (ctx->stopping_requested())
		task->status = DOCA_ERROR_SHUTDOWN;
	else
		task->status = softdpu::dma::copy_buffer_lists(task->src, task->dst);
	ctx->complete_from_engine(task);
}
