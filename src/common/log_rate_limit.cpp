#include "common/log_rate_limit.hpp"

#include <time.h>

namespace softdpu::log {

namespace {
constexpr uint64_t kNsPerSecond = 1'000'000'000;

uint64_t monotonic_now() noexcept
{
	timespec now{};
	clock_gettime(CLOCK_MONOTONIC, &now);
	return static_cast<uint64_t>(now.tv_sec) * kNsPerSecond + static_cast<uint64_t>(now.tv_nsec);
}
} // namespace

RateLimiter::RateLimiter() noexcept : window_ns_(kDefaultWindowSeconds * kNsPerSecond), clock_(&monotonic_now) {}

int RateLimiter::register_bucket() noexcept
{
	int id = registered_.load(std::memory_order_relaxed);
	do {
		if (id >= kMaxBuckets)
			return -1;
	} while (!registered_.compare_exchange_weak(id, id + 1, std::memory_order_acq_rel));
	Bucket &bucket = buckets_[id];
	bucket.window_start.store(clock_.load(std::memory_order_relaxed)(), std::memory_order_relaxed);
	bucket.admitted.store(0, std::memory_order_relaxed);
	bucket.suppressed.store(0, std::memory_order_relaxed);
	return id;
}

bool RateLimiter::is_registered(int bucket) const noexcept
{
	return bucket >= 0 && bucket < registered_.load(std::memory_order_acquire);
}

RateLimiter::Decision RateLimiter::admit(int bucket_id) noexcept
{
	Bucket &bucket = buckets_[bucket_id];
	const uint64_t window = window_ns();
	if (window == 0)
		return {true, 0};
	const uint64_t now = clock_.load(std::memory_order_relaxed)();
	uint64_t start = bucket.window_start.load(std::memory_order_acquire);
	uint64_t reported = 0;
	// The thread that moves the window on resets the counters and reports what was dropped; the
	// others see the new window start and just count. A record racing with the reset may be
	// counted in either window, which is within what a log limiter needs.
	if (now - start >= window &&
	    bucket.window_start.compare_exchange_strong(start, now, std::memory_order_acq_rel)) {
		bucket.admitted.store(0, std::memory_order_relaxed);
		reported = bucket.suppressed.exchange(0, std::memory_order_relaxed);
	}
	if (bucket.admitted.fetch_add(1, std::memory_order_relaxed) < quantity())
		return {true, reported};
	bucket.suppressed.fetch_add(1, std::memory_order_relaxed);
	return {false, reported};
}

void RateLimiter::set_clock(Clock clock) noexcept
{
	clock_.store(clock ? clock : &monotonic_now, std::memory_order_relaxed);
}

void RateLimiter::reset() noexcept
{
	for (Bucket &bucket : buckets_) {
		bucket.window_start.store(0, std::memory_order_relaxed);
		bucket.admitted.store(0, std::memory_order_relaxed);
		bucket.suppressed.store(0, std::memory_order_relaxed);
	}
	quantity_.store(kDefaultQuantity, std::memory_order_relaxed);
	window_ns_.store(kDefaultWindowSeconds * kNsPerSecond, std::memory_order_relaxed);
	set_clock(nullptr);
}

} // namespace softdpu::log
