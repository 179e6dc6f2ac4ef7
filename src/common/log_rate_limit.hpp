// Fixed-window rate limiting for DOCA_LOG_RATE_LIMIT (softdpu extension, include/softdpu/log.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace softdpu::log {

class RateLimiter {
public:
	static constexpr int kMaxBuckets = 4096;
	static constexpr uint16_t kDefaultQuantity = 10;
	static constexpr uint16_t kDefaultWindowSeconds = 1;

	using Clock = uint64_t (*)() noexcept; // nanoseconds, monotonic

	RateLimiter() noexcept;

	// Returns a new bucket id, or -1 when every bucket is taken.
	int register_bucket() noexcept;
	bool is_registered(int bucket) const noexcept;

	struct Decision {
		bool write;                 // the record is within this window's quota
		uint64_t suppressed_before; // records dropped in the window that just ended (report them)
	};
	Decision admit(int bucket) noexcept;

	void set_quantity(uint16_t quantity) noexcept { quantity_.store(quantity, std::memory_order_relaxed); }
	uint16_t quantity() const noexcept { return quantity_.load(std::memory_order_relaxed); }
	void set_window_ns(uint64_t window) noexcept { window_ns_.store(window, std::memory_order_relaxed); }
	uint64_t window_ns() const noexcept { return window_ns_.load(std::memory_order_relaxed); }

	// Tests replace the clock to move time deterministically; nullptr restores CLOCK_MONOTONIC.
	void set_clock(Clock clock) noexcept;
	// Tests only: clear every bucket's counters and restore the defaults. Registrations stay,
	// because call sites keep their bucket ids in static variables.
	void reset() noexcept;
	// Tests only: drop the registrations made after the first `count` (to undo filling the table).
	int registered_count() const noexcept { return registered_.load(std::memory_order_acquire); }
	void forget_buckets_after(int count) noexcept { registered_.store(count, std::memory_order_release); }

private:
	struct Bucket {
		std::atomic<uint64_t> window_start{0};
		std::atomic<uint64_t> admitted{0};
		std::atomic<uint64_t> suppressed{0};
	};
	std::array<Bucket, kMaxBuckets> buckets_;
	std::atomic<int> registered_{0};
	std::atomic<uint16_t> quantity_{kDefaultQuantity};
	std::atomic<uint64_t> window_ns_;
	std::atomic<Clock> clock_;
};

} // namespace softdpu::log
