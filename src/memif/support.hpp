// Small building blocks of the memif module: the database's custom allocator as a standard
// allocator and the errno -> memif_err_t mapping (and the shared owning fd).
#pragma once

#include "common/unique_fd.hpp"

#include <libmemif.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <unistd.h>
#include <utility>

namespace softdpu::memif {

using common::UniqueFd;

// The allocator functions given to memif_init / memif_per_thread_init (defaults: malloc family).
inline void *default_alloc(size_t size)
{
	return std::malloc(size);
}
inline void *default_realloc(void *pointer, size_t size)
{
	return std::realloc(pointer, size);
}
inline void default_free(void *pointer)
{
	std::free(pointer);
}
struct AllocatorFns {
	memif_alloc_t *alloc = &default_alloc;
	memif_realloc_t *realloc = &default_realloc;
	memif_free_t *free = &default_free;
};

// A standard allocator drawing from a database's allocator functions, so that every internal
// allocation of a database (objects and containers) goes through the application's allocator.
template <typename T> class DbAllocator {
public:
	using value_type = T;
	explicit DbAllocator(const AllocatorFns *fns) : fns_(fns) {}
	template <typename U> DbAllocator(const DbAllocator<U> &other) : fns_(other.fns()) {}

	T *allocate(size_t count)
	{
		// NOLINTNEXTLINE(bugprone-sizeof-expression): T is the element type, a pointer for some containers
		if (count > size_t(-1) / sizeof(T))
			throw std::bad_alloc();
		void *memory = fns_->alloc(count * sizeof(T)); // NOLINT(bugprone-sizeof-expression): as above
		if (memory == nullptr)
			throw std::bad_alloc();
		return static_cast<T *>(memory);
	}
	void deallocate(T *pointer, size_t) { fns_->free(pointer); }
	const AllocatorFns *fns() const { return fns_; }

	template <typename U> bool operator==(const DbAllocator<U> &other) const { return fns_ == other.fns(); }

private:
	const AllocatorFns *fns_;
};

// Creates / destroys one object in memory from the application's allocator.
template <typename T, typename... Args> T *db_new(const AllocatorFns &fns, Args &&...args)
{
	void *memory = fns.alloc(sizeof(T));
	if (memory == nullptr)
		return nullptr;
	try {
		return new (memory) T(std::forward<Args>(args)...);
	} catch (...) {
		fns.free(memory);
		throw;
	}
}
template <typename T> void db_delete(const AllocatorFns &fns, T *object)
{
	if (object == nullptr)
		return;
	object->~T();
	fns.free(object);
}

// Maps an errno value to the closest memif_err_t.
int errno_to_memif(int error);

} // namespace softdpu::memif
