// Counts heap allocations made by the calling thread while a scope is active.
#pragma once

#include <cstddef>

namespace softdpu_test {

std::size_t thread_allocation_count();

// Counts malloc/calloc/realloc/aligned allocations and operator new of this thread.
class AllocationScope {
public:
	AllocationScope();
	~AllocationScope();
	AllocationScope(const AllocationScope &) = delete;
	AllocationScope &operator=(const AllocationScope &) = delete;
	std::size_t count() const;

private:
	std::size_t start_;
};

} // namespace softdpu_test
