// Fixed-size task pools. A context sizes its pools while idle (set_conf), allocates them at start
// and frees them when it is idle again, so allocating and freeing tasks never touches the heap.
#pragma once

#include <doca_error.h>

#include <cstdint>
#include <memory>
#include <new>

#include "core/exec/task.hpp"

namespace softdpu::exec {

class TaskPoolBase {
public:
	// Pops a free task, or nullptr when the pool is exhausted.
	doca_task *acquire() noexcept
	{
		doca_task *task = free_;
		if (task != nullptr) {
			free_ = task->next;
			task->next = nullptr;
			++in_use_;
		}
		return task;
	}

	void release(doca_task *task) noexcept
	{
		task->state = doca_task::State::free;
		task->graph_run = nullptr;
		task->next = free_;
		free_ = task;
		--in_use_;
	}

	size_t in_use() const noexcept { return in_use_; }

protected:
	doca_task *free_ = nullptr;
	size_t in_use_ = 0;
};

// T derives from doca_task.
template <class T> class TaskPool : public TaskPoolBase {
public:
	// Allocates `count` tasks owned by ctx. Returns DOCA_ERROR_NO_MEMORY on failure.
	doca_error_t allocate(size_t count, doca_ctx *ctx, uint16_t type, doca_task_completion_cb_t on_success,
			      doca_task_completion_cb_t on_error) noexcept
	{
		storage_.reset(new (std::nothrow) T[count]);
		if (!storage_ && count != 0)
			return DOCA_ERROR_NO_MEMORY;
		count_ = count;
		free_ = nullptr;
		in_use_ = 0;
		for (size_t i = count; i-- > 0;) {
			T &task = storage_[i];
			task.ctx = ctx;
			task.pool = this;
			task.type = type;
			task.on_success = on_success;
			task.on_error = on_error;
			task.state = doca_task::State::free;
			task.next = free_;
			free_ = &task;
		}
		return DOCA_SUCCESS;
	}

	void deallocate() noexcept
	{
		storage_.reset();
		free_ = nullptr;
		count_ = 0;
		in_use_ = 0;
	}

	size_t capacity() const noexcept { return count_; }

	// Tasks come from this pool's storage; used to reject foreign pointers on slow paths.
	bool owns(const doca_task *task) const noexcept
	{
		const auto address = reinterpret_cast<uintptr_t>(task);
		const auto base = reinterpret_cast<uintptr_t>(storage_.get());
		return base != 0 && address >= base && address < base + count_ * sizeof(T) &&
		       (address - base) % sizeof(T) == 0;
	}

private:
	std::unique_ptr<T[]> storage_;
	size_t count_ = 0;
};

} // namespace softdpu::exec
