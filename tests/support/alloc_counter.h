// Counts heap allocations made by the calling thread while a scope is active, and makes one fail
// on demand. The test binary that links this replaces the C allocator (sanitized builds own the
// allocator, so it is built only without sanitizers).
#pragma once

#include <cstddef>

namespace softdpu_test {

std::size_t thread_allocation_count();
// Blocks this thread allocated minus blocks it freed (a block freed by another thread stays counted).
std::ptrdiff_t thread_live_blocks();

// Makes this thread's malloc-family call number `skip` + 1 from now return NULL (0: the next one):
// operator new then throws std::bad_alloc and its nothrow forms return null. One call fails; the
// failure is cleared once used, or by the call below.
void fail_allocation(std::size_t skip = 0);
// Clears a failure armed by fail_allocation that was not reached; true if one was still armed.
bool clear_allocation_failure();

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
