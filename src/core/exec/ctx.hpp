// struct doca_ctx: the base class of every DOCA context (DMA, sync event, ...). It owns the
// state machine, the connection to a progress engine and the task life cycle; each library
// derives from it and supplies configuration, validation and execution of its task types.
//
// Threading: a context is driven by one application thread (the PE's). Engine threads touch it
// only through complete_from_engine() and stopping_requested().
#pragma once

#include <doca_ctx.h>
#include <doca_pe.h>

#include <atomic>

#include "core/exec/progressable.hpp"
#include "core/exec/task.hpp"

struct doca_pe;
struct doca_ctx;

// The members of doca_ctx that libraries derived from it (libdoca_dma) reach run in
// libdoca_common through these C entry points, so that the shared libraries export no C++ symbols
// (cmake/exports.map). Only the inline members of doca_ctx below call them.
extern "C" {
doca_error_t priv_doca_ctx_alloc_task(doca_ctx *ctx, softdpu::exec::TaskPoolBase *pool, doca_task **task) noexcept;
void priv_doca_ctx_hand_to_engine(doca_ctx *ctx, doca_task *task) noexcept;
void priv_doca_ctx_complete_from_engine(doca_ctx *ctx, doca_task *task) noexcept;
bool priv_doca_ctx_progress(doca_ctx *ctx);
bool priv_doca_ctx_has_pending_work(const doca_ctx *ctx);
void priv_doca_ctx_destruct(doca_ctx *ctx) noexcept;
}

struct doca_ctx : public softdpu::exec::Progressable {
public:
	doca_ctx() = default;
	~doca_ctx() override { priv_doca_ctx_destruct(this); }
	doca_ctx(const doca_ctx &) = delete;
	doca_ctx &operator=(const doca_ctx &) = delete;

	// --- doca_ctx.h ---
	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	doca_ctx_states state() const noexcept { return state_; }
	bool is_running() const noexcept { return state_ == DOCA_CTX_STATE_RUNNING; }
	bool is_idle() const noexcept { return state_ == DOCA_CTX_STATE_IDLE; }
	void set_state_changed_cb(doca_ctx_state_changed_callback_t cb) noexcept { state_cb_ = cb; }
	void set_user_data(union doca_data data) noexcept { user_data_ = data; }
	union doca_data user_data() const noexcept { return user_data_; }
	size_t inflight() const noexcept override { return inflight_; }

	// --- progress engine connection ---
	doca_pe *pe() const noexcept { return pe_; }
	void attach_to_pe(doca_pe *pe) noexcept { pe_ = pe; }

	// --- task life cycle (doca_pe.h) ---
	// Allocates a task from `pool`; BAD_STATE unless running, NO_MEMORY when exhausted.
	doca_error_t alloc_task(softdpu::exec::TaskPoolBase &pool, doca_task **task) noexcept
	{
		return priv_doca_ctx_alloc_task(this, &pool, task);
	}
	doca_error_t submit(doca_task *task) noexcept;
	doca_error_t try_submit(doca_task *task) noexcept;
	void free_task(doca_task *task) noexcept;

	// Called by an engine thread when it has finished a job started by start_on_engine().
	void complete_from_engine(doca_task *task) noexcept { priv_doca_ctx_complete_from_engine(this, task); }
	// Engine threads skip the work of tasks whose context is being stopped.
	bool stopping_requested() const noexcept { return stopping_.load(std::memory_order_relaxed); }

	// Delivers a completion now, from inside progress (graphs run their nodes through this).
	void deliver(doca_task *task) noexcept;

	// --- Progressable ---
	bool progress() override { return priv_doca_ctx_progress(this); }
	bool has_pending_work() const override { return priv_doca_ctx_has_pending_work(this); }

protected:
	// What happened to a task handed to execute().
	enum class Execution {
		done,      // finished; task->status holds the result
		on_engine, // handed to an engine thread; it calls complete_from_engine()
		not_ready, // cannot make progress yet (e.g. waiting for a condition); try again later
	};

	// Library hooks.
	// Validate the configuration and allocate task pools; the context is idle.
	virtual doca_error_t on_start() noexcept = 0;
	// Release what on_start() allocated; every task has been freed.
	virtual void on_stopped() noexcept = 0;
	// Full validation for doca_task_try_submit (submit never calls it).
	virtual doca_error_t validate(const doca_task *task) const noexcept = 0;
	// Called at submit time, on the application thread. May run the work at once, hand it to an
	// engine, or leave it for the next progress (return kNotReady).
	virtual Execution on_submit(doca_task *task) noexcept = 0;
	// Called from progress for tasks that on_submit() (or a previous execute()) left not ready.
	virtual Execution execute(doca_task *task) noexcept = 0;
	// True if a task that on_submit()/execute() left not ready may be ready now. By default such
	// tasks are always reported as pending work, so an event-driven PE polls them. A context that
	// signals its PE (signal_if_armed) whenever their condition may change overrides this so the
	// PE can sleep; it must answer true for any change made since its last progress().
	virtual bool not_ready_may_be_ready() const noexcept { return true; }
	// True for contexts whose tasks may run on the DMA copy engine's threads (hand_to_engine): they
	// hold a reference on the engine from start to destruction, so its threads exist. Others (sync
	// events, graphs) never start them.
	virtual bool uses_copy_engine() const noexcept { return false; }
	// True while the library has tasks allocated (all must be freed before reaching idle).
	size_t tasks_in_use() const noexcept { return tasks_in_use_; }

	void hand_to_engine(doca_task *task) noexcept { priv_doca_ctx_hand_to_engine(this, task); }

private:
	friend doca_error_t priv_doca_ctx_alloc_task(doca_ctx *, softdpu::exec::TaskPoolBase *, doca_task **) noexcept;
	friend void priv_doca_ctx_hand_to_engine(doca_ctx *, doca_task *) noexcept;
	friend void priv_doca_ctx_complete_from_engine(doca_ctx *, doca_task *) noexcept;
	friend bool priv_doca_ctx_progress(doca_ctx *);
	friend bool priv_doca_ctx_has_pending_work(const doca_ctx *);
	friend void priv_doca_ctx_destruct(doca_ctx *) noexcept;

	// The bodies of the members above, in libdoca_common.
	void destruct() noexcept;
	doca_error_t alloc_task_impl(softdpu::exec::TaskPoolBase &pool, doca_task **task) noexcept;
	void hand_to_engine_impl(doca_task *task) noexcept;
	void complete_from_engine_impl(doca_task *task) noexcept;
	bool progress_impl();
	bool has_pending_work_impl() const;

	void set_state(doca_ctx_states next) noexcept;
	void begin_stopping() noexcept;
	bool try_finish_stopping() noexcept;
	// The end of every stop: engine released, IDLE reported.
	void finish_stopping() noexcept;
	void finish(doca_task *task) noexcept;

	doca_ctx_states state_ = DOCA_CTX_STATE_IDLE;
	doca_pe *pe_ = nullptr;
	doca_ctx_state_changed_callback_t state_cb_ = nullptr;
	union doca_data user_data_ = {};
	size_t inflight_ = 0;
	size_t tasks_in_use_ = 0;
	bool engine_acquired_ = false;
	std::atomic<bool> stopping_{false};
	// Engine jobs that may still touch this context: a job publishes its completion and then
	// signals the PE, and in between the application may already have consumed the completion.
	// The destructor waits for this to drain so neither the context nor its PE goes away first.
	// The wait is a yield loop on purpose: a context is destroyed idle, so no job can start and the
	// only ones left are between publishing and this decrement, a few instructions on an engine
	// thread; sleeping on a futex would cost every completion a system call.
	std::atomic<uint32_t> engine_refs_{0};
	softdpu::exec::TaskQueue not_ready_;
	softdpu::exec::TaskQueue done_;
	softdpu::exec::CompletionStack from_engine_;
};
