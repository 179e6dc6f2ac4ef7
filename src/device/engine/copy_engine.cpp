#include "device/engine/copy_engine.hpp"

#include "common/cpu.hpp"
#include "common/env.hpp"

#include <chrono>

namespace softdpu::device {

namespace {

using common::cpu_relax;

// SOFTDPU_DMA_ENGINE_THREADS sets the number of engine threads (1..64, default 1: on small
// machines one engine thread plus the application thread already fill two cores).
size_t configured_thread_count()
{
	return static_cast<size_t>(common::env_unsigned("SOFTDPU_DMA_ENGINE_THREADS", 1, 64).value_or(1));
}

} // namespace

CopyEngine &CopyEngine::instance()
{
	static CopyEngine engine;
	return engine;
}

CopyEngine::CopyEngine() : threads_wanted_(configured_thread_count()) {}

CopyEngine::~CopyEngine()
{
	std::vector<std::thread> threads;
	{
		std::lock_guard lock(sleep_mutex_);
		shutting_down_ = true;
		stop_.store(true);
		threads.swap(threads_);
	}
	wake_.notify_all();
	for (auto &thread : threads)
		thread.join();
}

void CopyEngine::acquire()
{
	std::lock_guard lock(sleep_mutex_);
	++users_;
	if (threads_.empty()) {
		threads_.reserve(threads_wanted_);
		for (size_t i = 0; i < threads_wanted_; ++i)
			threads_.emplace_back([this] { worker_loop(); });
	}
}

void CopyEngine::release()
{
	// Threads stay up once started: restarting contexts must not pay thread creation again.
	std::lock_guard lock(sleep_mutex_);
	if (users_ > 0)
		--users_;
}

void CopyEngine::lock_queue() noexcept
{
	for (;;) {
		if (!queue_locked_.exchange(true, std::memory_order_acquire))
			return;
		while (queue_locked_.load(std::memory_order_relaxed))
			cpu_relax();
	}
}

void CopyEngine::submit(EngineJob *job) noexcept
{
	job->next = nullptr;
	lock_queue();
	*tail_ = job;
	tail_ = &job->next;
	unlock_queue();
	queued_.fetch_add(1, std::memory_order_seq_cst);
	if (sleeping_.load(std::memory_order_seq_cst) != 0) {
		std::lock_guard lock(sleep_mutex_); // orders the notify after the sleeper's predicate check
		wake_.notify_one();
	}
}

EngineJob *CopyEngine::try_pop() noexcept
{
	if (queued_.load(std::memory_order_acquire) == 0)
		return nullptr;
	lock_queue();
	EngineJob *job = head_;
	if (job != nullptr) {
		head_ = job->next;
		if (head_ == nullptr)
			tail_ = &head_;
		job->next = nullptr;
	}
	unlock_queue();
	if (job != nullptr)
		queued_.fetch_sub(1, std::memory_order_relaxed);
	return job;
}

void CopyEngine::worker_loop()
{
	// An idle worker polls for a short while before it sleeps: a stream of jobs then costs no
	// wake-up system call per job, and an idle engine costs no CPU.
	constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);
	for (;;) {
		if (EngineJob *job = try_pop()) {
			job->run(job);
			continue;
		}
		if (stop_.load(std::memory_order_relaxed))
			return;
		const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
		while (queued_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < spin_until)
			cpu_relax();
		if (queued_.load(std::memory_order_acquire) != 0)
			continue;
		std::unique_lock lock(sleep_mutex_);
		sleeping_.fetch_add(1, std::memory_order_seq_cst);
		wake_.wait(lock, [this] { return queued_.load(std::memory_order_seq_cst) != 0 || shutting_down_; });
		sleeping_.fetch_sub(1, std::memory_order_relaxed);
		if (shutting_down_ && queued_.load() == 0)
			return;
	}
}

} // namespace softdpu::device
