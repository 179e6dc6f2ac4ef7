// Replaces the C allocator entry points with counting wrappers around glibc's own that can fail
// one call on demand. operator new ends in malloc, so it is counted (and failed) too.
#include "support/alloc_counter.h"

#include <cstdint>
#include <cstdlib>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *ptr);
}

namespace {
constexpr std::size_t kNoFailure = SIZE_MAX;
thread_local std::size_t t_allocations = 0;
thread_local std::ptrdiff_t t_live = 0;             // blocks this thread allocated minus freed
thread_local std::size_t t_fail_after = kNoFailure; // allocations still to let through

// Counts one allocation; false when it is the one armed to fail.
bool allocation_allowed()
{
	++t_allocations;
	if (t_fail_after == kNoFailure)
		return true;
	if (t_fail_after-- > 0)
		return true;
	t_fail_after = kNoFailure;
	return false;
}

void *counted(void *block)
{
	if (block != nullptr)
		++t_live;
	return block;
}
} // namespace

extern "C" {
void *malloc(size_t size)
{
	return allocation_allowed() ? counted(__libc_malloc(size)) : nullptr;
}
void *calloc(size_t n, size_t size)
{
	return allocation_allowed() ? counted(__libc_calloc(n, size)) : nullptr;
}
void *realloc(void *ptr, size_t size)
{
	if (ptr != nullptr && size == 0) { // glibc frees the block: not an allocation, never failed
		--t_live;
		return __libc_realloc(ptr, 0);
	}
	if (!allocation_allowed())
		return nullptr;
	void *block = __libc_realloc(ptr, size);
	if (ptr == nullptr && block != nullptr)
		++t_live;
	return block;
}
void *memalign(size_t alignment, size_t size)
{
	return allocation_allowed() ? counted(__libc_memalign(alignment, size)) : nullptr;
}
void *aligned_alloc(size_t alignment, size_t size)
{
	return allocation_allowed() ? counted(__libc_memalign(alignment, size)) : nullptr;
}
int posix_memalign(void **out, size_t alignment, size_t size)
{
	void *p = allocation_allowed() ? counted(__libc_memalign(alignment, size)) : nullptr;
	if (p == nullptr)
		return 12; // ENOMEM
	*out = p;
	return 0;
}
void free(void *ptr)
{
	if (ptr != nullptr)
		--t_live;
	__libc_free(ptr);
}
}

namespace softdpu_test {

std::size_t thread_allocation_count()
{
	return t_allocations;
}

std::ptrdiff_t thread_live_blocks()
{
	return t_live;
}

void fail_allocation(std::size_t skip)
{
	t_fail_after = skip;
}

bool clear_allocation_failure()
{
	const bool was_armed = t_fail_after != kNoFailure;
	t_fail_after = kNoFailure;
	return was_armed;
}

AllocationScope::AllocationScope() : start_(t_allocations) {}
AllocationScope::~AllocationScope() = default;
std::size_t AllocationScope::count() const
{
	return t_allocations - start_;
}

} // namespace softdpu_test
