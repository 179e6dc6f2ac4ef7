#include "core/exec/ctx.hpp"

#include <thread>

#include "common/sdk_log.hpp"
#include "core/exec/pe.hpp"
#include "core/exec/task_pool.hpp"
#include "device/engine/copy_engine.hpp"

using softdpu::device::CopyEngine;

extern "C" {
doca_error_t priv_doca_ctx_alloc_task(doca_ctx *ctx, softdpu::exec::TaskPoolBase *pool, doca_task **task) noexcept
{
	return ctx->alloc_task_impl(*pool, task);
}
void priv_doca_ctx_hand_to_engine(doca_ctx *ctx, doca_task *task) noexcept
{
	ctx->hand_to_engine_impl(task);
}
void priv_doca_ctx_complete_from_engine(doca_ctx *ctx, doca_task *task) noexcept
{
	ctx->complete_from_engine_impl(task);
}
bool priv_doca_ctx_progress(doca_ctx *ctx)
{
	return ctx->progress_impl();
}
bool priv_doca_ctx_has_pending_work(const doca_ctx *ctx)
{
	return ctx->has_pending_work_impl();
}
void priv_doca_ctx_destruct(doca_ctx *ctx) noexcept
{
	ctx->destruct();
}
} // extern "C"

void doca_ctx::destruct() noexcept
{
	while (engine_refs_.load(std::memory_order_acquire) != 0)
		std::this_thread::yield();
	if (engine_acquired_)
		CopyEngine::instance().release();
	if (pe_ != nullptr)
		pe_->disconnect(this);
}

void doca_ctx::set_state(doca_ctx_states next) noexcept
{
	const doca_ctx_states prev = state_;
	state_ = next;
	if (state_cb_ != nullptr)
		state_cb_(user_data_, this, prev, next);
}

doca_error_t doca_ctx::start() noexcept
{
	if (state_ != DOCA_CTX_STATE_IDLE) {
		SDK_LOG_ERR("failed to start context: context is not idle (state %d)", static_cast<int>(state_));
		return DOCA_ERROR_BAD_STATE;
	}
	if (pe_ == nullptr) {
		SDK_LOG_ERR("failed to start context: it is not connected to a progress engine");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	const doca_error_t result = on_start();
	if (result != DOCA_SUCCESS)
		return result;
	if (uses_copy_engine() && !engine_acquired_) {
		try {
			CopyEngine::instance().acquire();
		} catch (...) {
			on_stopped();
			SDK_LOG_ERR("failed to start context: cannot start the DMA engine threads");
			return DOCA_ERROR_INITIALIZATION;
		}
		engine_acquired_ = true;
	}
	stopping_.store(false, std::memory_order_relaxed);
	set_state(DOCA_CTX_STATE_RUNNING);
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx::stop() noexcept
{
	if (pe_ == nullptr)
		return DOCA_ERROR_NOT_CONNECTED;
	switch (state_) {
	case DOCA_CTX_STATE_IDLE:
		// Already stopped: nothing to do. DOCA documents no error for it, and NVIDIA's samples
		// (dma_local_copy, 2.5 to 2.10) stop the context from the last completion callback and
		// then again on their clean-up path, counting any error as a failed run.
		return DOCA_SUCCESS;
	case DOCA_CTX_STATE_STOPPING:
		return DOCA_ERROR_IN_PROGRESS;
	case DOCA_CTX_STATE_STARTING:
	case DOCA_CTX_STATE_RUNNING:
		break;
	}
	if (inflight_ == 0 && tasks_in_use_ == 0) {
		// Nothing to flush: straight to IDLE, one state change. STOPPING is the state of a context
		// that still has tasks to flush (an asynchronous stop, or a failed task); DOCA's samples log
		// it as an error, e.g. when they stop from their last completion callback.
		finish_stopping();
		return DOCA_SUCCESS;
	}
	begin_stopping();
	return DOCA_ERROR_IN_PROGRESS;
}

void doca_ctx::begin_stopping() noexcept
{
	stopping_.store(true, std::memory_order_relaxed);
	set_state(DOCA_CTX_STATE_STOPPING);
}

bool doca_ctx::try_finish_stopping() noexcept
{
	if (state_ != DOCA_CTX_STATE_STOPPING || inflight_ != 0 || tasks_in_use_ != 0)
		return false;
	finish_stopping();
	return true;
}

void doca_ctx::finish_stopping() noexcept
{
	on_stopped();
	stopping_.store(false, std::memory_order_relaxed);
	set_state(DOCA_CTX_STATE_IDLE);
}

doca_error_t doca_ctx::alloc_task_impl(softdpu::exec::TaskPoolBase &pool, doca_task **task) noexcept
{
	if (state_ != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;
	doca_task *allocated = pool.acquire();
	if (allocated == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	allocated->state = doca_task::State::owned;
	allocated->status = DOCA_SUCCESS;
	allocated->user_data = {};
	allocated->graph_run = nullptr;
	++tasks_in_use_;
	*task = allocated;
	return DOCA_SUCCESS;
}

void doca_ctx::free_task(doca_task *task) noexcept
{
	if (task->state != doca_task::State::owned) {
		SDK_LOG_ERR("doca_task_free: task %p is %s; ignored", static_cast<void *>(task),
			    task->state == doca_task::State::submitted ? "still submitted" : "already free");
		return;
	}
	task->pool->release(task);
	--tasks_in_use_;
}

doca_error_t doca_ctx::submit(doca_task *task) noexcept
{
	if (doca_unlikely(state_ != DOCA_CTX_STATE_RUNNING))
		return DOCA_ERROR_BAD_STATE;
	if (doca_unlikely(task->state != doca_task::State::owned))
		return task->state == doca_task::State::submitted ? DOCA_ERROR_IN_USE : DOCA_ERROR_BAD_STATE;
	task->state = doca_task::State::submitted;
	task->status = DOCA_SUCCESS;
	++inflight_;
	switch (on_submit(task)) {
	case Execution::done:
		done_.push_back(task);
		break;
	case Execution::not_ready:
		not_ready_.push_back(task);
		break;
	case Execution::on_engine:
		break;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx::try_submit(doca_task *task) noexcept
{
	if (state_ != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;
	if (task->state != doca_task::State::owned)
		return DOCA_ERROR_INVALID_VALUE;
	const doca_error_t result = validate(task);
	if (result != DOCA_SUCCESS)
		return result;
	return submit(task);
}

void doca_ctx::hand_to_engine_impl(doca_task *task) noexcept
{
	engine_refs_.fetch_add(1, std::memory_order_relaxed);
	CopyEngine::instance().submit(&task->engine_job);
}

void doca_ctx::complete_from_engine_impl(doca_task *task) noexcept
{
	doca_pe *pe = pe_;
	from_engine_.push(task);
	pe->signal_if_armed();
	// Last touch of this context by the engine thread.
	engine_refs_.fetch_sub(1, std::memory_order_release);
}

void doca_ctx::deliver(doca_task *task) noexcept
{
	--inflight_;
	task->state = doca_task::State::owned;
	bool failed = task->status != DOCA_SUCCESS;
	if (state_ == DOCA_CTX_STATE_STOPPING && !failed) {
		// Once a context is stopping every remaining task is flushed (docs/execution-model.md).
		task->status = DOCA_ERROR_SHUTDOWN;
		failed = true;
	}
	const bool fatal = failed && state_ == DOCA_CTX_STATE_RUNNING;
	if (task->graph_run != nullptr)
		task->graph_run->task_completed(task);
	else if (failed)
		task->on_error(task, task->user_data, user_data_);
	else
		task->on_success(task, task->user_data, user_data_);
	// A failed task is fatal to its context, as on hardware: it stops, flushing the rest.
	if (fatal && state_ == DOCA_CTX_STATE_RUNNING)
		begin_stopping();
}

bool doca_ctx::progress_impl()
{
	bool progressed = false;
	for (doca_task *task = from_engine_.take_all(); task != nullptr;) {
		doca_task *next = task->next;
		done_.push_back(task);
		task = next;
	}
	// Only what is queued now: tasks resubmitted from callbacks wait for the next call.
	for (size_t n = done_.size(); n > 0; --n) {
		deliver(done_.pop_front());
		progressed = true;
	}
	for (size_t n = not_ready_.size(); n > 0; --n) {
		doca_task *task = not_ready_.pop_front();
		if (state_ == DOCA_CTX_STATE_STOPPING) {
			deliver(task);
			progressed = true;
			continue;
		}
		switch (execute(task)) {
		case Execution::done:
			deliver(task);
			progressed = true;
			break;
		case Execution::not_ready:
			not_ready_.push_back(task);
			break;
		case Execution::on_engine:
			progressed = true;
			break;
		}
	}
	if (state_ == DOCA_CTX_STATE_STOPPING && try_finish_stopping())
		progressed = true;
	return progressed;
}

bool doca_ctx::has_pending_work_impl() const
{
	if (!done_.empty() || !from_engine_.empty())
		return true;
	if (state_ == DOCA_CTX_STATE_STOPPING)
		return !not_ready_.empty() || (inflight_ == 0 && tasks_in_use_ == 0);
	// Tasks waiting on a condition (sync event waits) must be re-checked: report them as pending,
	// unless the context knows nothing they wait for has changed since its last progress.
	return !not_ready_.empty() && not_ready_may_be_ready();
}
