// The generic part of every DOCA task, and the intrusive containers that move tasks between the
// application, the context's queues and the engines without allocating.
#pragma once

#include <doca_pe.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/exec/graph_hooks.hpp"
#include "device/engine/copy_engine.hpp"

namespace softdpu::exec {
class TaskPoolBase;
} // namespace softdpu::exec

struct doca_task {
	enum class State : uint8_t {
		free,      // in its context's pool
		owned,     // allocated, held by the application
		submitted, // owned by DOCA until its completion is delivered
	};

	doca_ctx *ctx = nullptr;
	softdpu::exec::TaskPoolBase *pool = nullptr;
	doca_task *next = nullptr; // link in exactly one of: pool free list, pending queue, done stack
	union doca_data user_data = {};
	doca_task_completion_cb_t on_success = nullptr;
	doca_task_completion_cb_t on_error = nullptr;
	doca_error_t status = DOCA_SUCCESS;
	State state = State::free;
	uint16_t type = 0; // the context's own task-type number
	// Set while the task runs as a node of a graph instance: the graph gets the completion.
	softdpu::exec::GraphNodeRun *graph_run = nullptr;
	// Lets an engine thread run the task's work (large DMA copies).
	softdpu::device::EngineJob engine_job;
};

namespace softdpu::exec {

// FIFO of tasks linked through doca_task::next. Single-threaded.
class TaskQueue {
public:
	bool empty() const noexcept { return head_ == nullptr; }
	size_t size() const noexcept { return size_; }

	void push_back(doca_task *task) noexcept
	{
		task->next = nullptr;
		*tail_ = task;
		tail_ = &task->next;
		++size_;
	}

	doca_task *pop_front() noexcept
	{
		doca_task *task = head_;
		if (task != nullptr) {
			head_ = task->next;
			if (head_ == nullptr)
				tail_ = &head_;
			task->next = nullptr;
			--size_;
		}
		return task;
	}

private:
	doca_task *head_ = nullptr;
	doca_task **tail_ = &head_;
	size_t size_ = 0;
};

// Tasks completed by engine threads, handed to the PE thread: many producers push, the single
// consumer takes everything at once (so there is no ABA problem).
class CompletionStack {
public:
	void push(doca_task *task) noexcept
	{
		doca_task *head = head_.load(std::memory_order_relaxed);
		do {
			task->next = head;
			// seq_cst: pairs with the PE's armed flag (see doca_pe::signal_if_armed).
		} while (
		    !head_.compare_exchange_weak(head, task, std::memory_order_seq_cst, std::memory_order_relaxed));
	}

	// Returns the completed tasks, oldest first.
	doca_task *take_all() noexcept
	{
		if (head_.load(std::memory_order_relaxed) == nullptr)
			return nullptr;
		doca_task *newest_first = head_.exchange(nullptr, std::memory_order_acquire);
		doca_task *oldest_first = nullptr;
		while (newest_first != nullptr) {
			doca_task *next = newest_first->next;
			newest_first->next = oldest_first;
			oldest_first = newest_first;
			newest_first = next;
		}
		return oldest_first;
	}

	bool empty() const noexcept { return head_.load(std::memory_order_seq_cst) == nullptr; }

private:
	std::atomic<doca_task *> head_{nullptr};
};

} // namespace softdpu::exec
