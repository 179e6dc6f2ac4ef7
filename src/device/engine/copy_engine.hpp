// The emulated DPU's data-movement engine: worker threads that run large jobs (DMA copies) while
// the application thread does other work, the way a hardware DMA engine does. Jobs are intrusive
// (embedded in the task that owns them), so handing work over allocates nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace softdpu::device {

struct EngineJob {
	EngineJob *next = nullptr;
	// Runs on an engine thread. Must not throw. Responsible for reporting completion.
	void (*run)(EngineJob *job) = nullptr;
};

class CopyEngine {
public:
	// The process-wide engine. Its threads start on first use by a started context (see acquire).
	static CopyEngine &instance();

	// Contexts that may submit jobs hold a reference from start to stop; threads start with the
	// first reference, so a process that never starts a context never has engine threads.
	void acquire();
	void release();

	// Queues a job; wakes a sleeping worker (the one system call the design needs).
	void submit(EngineJob *job) noexcept;

	size_t thread_count() const noexcept { return threads_wanted_; }
	// Contexts holding a reference now (tests: which contexts use the engine).
	size_t users() noexcept
	{
		std::lock_guard lock(sleep_mutex_);
		return users_;
	}

	CopyEngine(const CopyEngine &) = delete;
	CopyEngine &operator=(const CopyEngine &) = delete;

private:
	CopyEngine();
	~CopyEngine();
	void worker_loop();
	EngineJob *try_pop() noexcept;
	void lock_queue() noexcept;
	void unlock_queue() noexcept { queue_locked_.store(false, std::memory_order_release); }

	// The job queue is guarded by a spin lock: its critical sections are a few stores, and a
	// blocking mutex would put the submitting thread or a worker to sleep under contention.
	std::atomic<bool> queue_locked_{false};
	EngineJob *head_ = nullptr;
	EngineJob **tail_ = &head_;
	// Jobs queued, and workers asleep: each side publishes its own, then reads the other's
	// (sequentially consistent), so a job is never left queued with every worker asleep.
	std::atomic<size_t> queued_{0};
	std::atomic<size_t> sleeping_{0};

	std::mutex sleep_mutex_; // only for idle workers going to sleep and waking them
	std::condition_variable wake_;
	bool shutting_down_ = false; // guarded by sleep_mutex_
	std::atomic<bool> stop_{false};
	size_t users_ = 0; // guarded by sleep_mutex_
	size_t threads_wanted_;
	std::vector<std::thread> threads_;
};

} // namespace softdpu::device
