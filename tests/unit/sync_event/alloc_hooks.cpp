#include "alloc_hooks.hpp"

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SYNC_EVENT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SYNC_EVENT_TEST_SANITIZED 1
#endif
#endif

namespace {
thread_local std::size_t allocations = 0;
thread_local bool fail_next = false;
} // namespace

namespace sync_event_test {

#ifdef SYNC_EVENT_TEST_SANITIZED
bool allocation_hooks_installed()
{
	return false;
}
#else
bool allocation_hooks_installed()
{
	return true;
}
#endif

std::size_t thread_allocations()
{
	return allocations;
}

void fail_next_allocation()
{
	fail_next = true;
}

} // namespace sync_event_test

#ifndef SYNC_EVENT_TEST_SANITIZED

namespace {
void *counted_allocation(std::size_t size, std::size_t alignment) noexcept
{
	++allocations;
	if (fail_next) {
		fail_next = false;
		return nullptr;
	}
	if (size == 0)
		size = 1;
	if (alignment <= alignof(std::max_align_t))
		return std::malloc(size);
	void *memory = nullptr;
	return posix_memalign(&memory, alignment, size) == 0 ? memory : nullptr;
}

void *throwing_allocation(std::size_t size, std::size_t alignment)
{
	void *memory = counted_allocation(size, alignment);
	if (memory == nullptr)
		throw std::bad_alloc();
	return memory;
}
} // namespace

void *operator new(std::size_t size)
{
	return throwing_allocation(size, 0);
}
void *operator new[](std::size_t size)
{
	return throwing_allocation(size, 0);
}
void *operator new(std::size_t size, std::align_val_t alignment)
{
	return throwing_allocation(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment)
{
	return throwing_allocation(size, static_cast<std::size_t>(alignment));
}
void *operator new(std::size_t size, const std::nothrow_t &) noexcept
{
	return counted_allocation(size, 0);
}
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept
{
	return counted_allocation(size, 0);
}
void *operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept
{
	return counted_allocation(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept
{
	return counted_allocation(size, static_cast<std::size_t>(alignment));
}

void operator delete(void *memory) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory) noexcept
{
	std::free(memory);
}
void operator delete(void *memory, std::size_t) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory, std::size_t) noexcept
{
	std::free(memory);
}
void operator delete(void *memory, std::align_val_t) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory, std::align_val_t) noexcept
{
	std::free(memory);
}
void operator delete(void *memory, std::size_t, std::align_val_t) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory, std::size_t, std::align_val_t) noexcept
{
	std::free(memory);
}
void operator delete(void *memory, const std::nothrow_t &) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory, const std::nothrow_t &) noexcept
{
	std::free(memory);
}
void operator delete(void *memory, std::align_val_t, const std::nothrow_t &) noexcept
{
	std::free(memory);
}
void operator delete[](void *memory, std::align_val_t, const std::nothrow_t &) noexcept
{
	std::free(memory);
}

#endif // SYNC_EVENT_TEST_SANITIZED
