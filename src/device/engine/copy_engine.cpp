#include "device/engine/copy_engine.hpp"

#include <cstdlib>

namespace softdpu::device {

namespace {

// SOFTDPU_DMA_ENGINE_THREADS sets the number of engine threads (1..64, default 1: on small
// machines one engine thread plus the application thread already fill two cores).
size_t configured_thread_count()
{
	const char *value = std::getenv("SOFTDPU_DMA_ENGINE_THREADS");
	if (value == nullptr)
		return 1;
	char *end = nullptr;
	const long n = std::strtol(value, &end, 10);
	if (end == value || *end != '\0' || n < 1 || n > 64)
		return 1;
	return static_cast<size_t>(n);
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
		std::lock_guard lock(mutex_);
		shutting_down_ = true;
		threads.swap(threads_);
	}
	wake_.notify_all();
	for (auto &thread : threads)
		thread.join();
}

void CopyEngine::acquire()
{
	std::lock_guard lock(mutex_);
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
	std::lock_guard lock(mutex_);
	if (users_ > 0)
		--users_;
}

void CopyEngine::submit(EngineJob *job) noexcept
{
	bool wake = false;
	{
		std::lock_guard lock(mutex_);
		job->next = nullptr;
		*tail_ = job;
		tail_ = &job->next;
		wake = sleeping_ > 0;
	}
	if (wake)
		wake_.notify_one();
}

EngineJob *CopyEngine::pop_locked() noexcept
{
	EngineJob *job = head_;
	if (job != nullptr) {
		head_ = job->next;
		if (head_ == nullptr)
			tail_ = &head_;
		job->next = nullptr;
	}
	return job;
}

void CopyEngine::worker_loop()
{
	std::unique_lock lock(mutex_);
	for (;;) {
		EngineJob *job = pop_locked();
		if (job == nullptr) {
			if (shutting_down_)
				return;
			++sleeping_;
			wake_.wait(lock, [this] { return head_ != nullptr || shutting_down_; });
			--sleeping_;
			continue;
		}
		lock.unlock();
		job->run(job);
		lock.lock();
	}
}

} // namespace softdpu::device
