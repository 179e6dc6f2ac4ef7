// Failures a test asks a module to pretend, to reach its NO_MEMORY paths in every build: the
// sanitized builds own the allocator, so there it cannot be made to fail.
#pragma once

#include <atomic>

namespace softdpu::common {

class InjectedFailures {
public:
	// The next `count` calls of consume() report a failure.
	void arm(int count) noexcept { remaining_.store(count, std::memory_order_relaxed); }
	// Whether this call should fail (using up one armed failure). Thread-safe.
	bool consume() noexcept
	{
		int remaining = remaining_.load(std::memory_order_relaxed);
		while (remaining > 0) {
			if (remaining_.compare_exchange_weak(remaining, remaining - 1, std::memory_order_relaxed))
				return true;
		}
		return false;
	}

private:
	std::atomic<int> remaining_{0};
};

} // namespace softdpu::common
