// struct doca_dma: the DMA context. Memcpy tasks below a size threshold are copied on the
// submitting thread (handing 64 bytes to another core costs more than copying them); larger ones
// run on the emulated DPU's engine threads while the application goes on. Either way the
// completion is delivered only from doca_pe_progress.
#pragma once

#include <doca_dma.h>

#include "core/exec/ctx.hpp"
#include "core/exec/task_pool.hpp"

struct doca_dma_task_memcpy : public doca_task {
	const doca_buf *src = nullptr;
	doca_buf *dst = nullptr;
};

struct doca_dma : public doca_ctx {
public:
	// Task types of this context (doca_task::type).
	static constexpr uint16_t kTaskMemcpy = 1;

	explicit doca_dma(doca_dev *dev) noexcept;
	~doca_dma() override;

	doca_dev *dev() const noexcept { return dev_; }
	doca_error_t set_memcpy_conf(doca_dma_task_memcpy_completion_cb_t on_success,
				     doca_dma_task_memcpy_completion_cb_t on_error, uint32_t num_tasks) noexcept;
	doca_error_t alloc_memcpy(const doca_buf *src, doca_buf *dst, union doca_data user_data,
				  doca_dma_task_memcpy **task) noexcept;

	// Why a memcpy task cannot run (DOCA_SUCCESS if it can); logs the reason when asked to.
	doca_error_t check_memcpy(const doca_dma_task_memcpy &task, uint64_t *total_bytes, bool *cross_process,
				  bool log) const noexcept;

protected:
	doca_error_t on_start() noexcept override;
	bool uses_copy_engine() const noexcept override { return true; }
	void on_stopped() noexcept override;
	doca_error_t validate(const doca_task *task) const noexcept override;
	Execution on_submit(doca_task *task) noexcept override;
	Execution execute(doca_task *task) noexcept override;

private:
	static void run_on_engine(softdpu::device::EngineJob *job) noexcept;

	doca_dev *dev_;
	doca_dma_task_memcpy_completion_cb_t memcpy_on_success_ = nullptr;
	doca_dma_task_memcpy_completion_cb_t memcpy_on_error_ = nullptr;
	uint32_t memcpy_pool_size_ = 0;
	softdpu::exec::TaskPool<doca_dma_task_memcpy> memcpy_pool_;
	// Copies of at least this many bytes go to the engine threads (SOFTDPU_DMA_INLINE_MAX); for copies
	// that read or write another process's memory, SOFTDPU_DMA_XPROC_INLINE_MAX.
	uint64_t engine_threshold_;
	uint64_t xproc_engine_threshold_;
};
