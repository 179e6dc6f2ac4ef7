// Replaces the C allocator entry points with counting wrappers around glibc's own. operator new
// ends in malloc, so it is counted too.
#include "support/alloc_counter.h"

#include <cstdlib>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *ptr);
}

namespace {
thread_local std::size_t t_allocations = 0;
}

extern "C" {
void *malloc(size_t size)
{
	++t_allocations;
	return __libc_malloc(size);
}
void *calloc(size_t n, size_t size)
{
	++t_allocations;
	return __libc_calloc(n, size);
}
void *realloc(void *ptr, size_t size)
{
	++t_allocations;
	return __libc_realloc(ptr, size);
}
void *memalign(size_t alignment, size_t size)
{
	++t_allocations;
	return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size)
{
	++t_allocations;
	return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size)
{
	++t_allocations;
	void *p = __libc_memalign(alignment, size);
	if (p == nullptr)
		return 12; // ENOMEM
	*out = p;
	return 0;
}
void free(void *ptr)
{
	__libc_free(ptr);
}
}

namespace softdpu_test {

std::size_t thread_allocation_count()
{
	return t_allocations;
}

AllocationScope::AllocationScope() : start_(t_allocations) {}
AllocationScope::~AllocationScope() = default;
std::size_t AllocationScope::count() const
{
	return t_allocations - start_;
}

} // namespace softdpu_test
