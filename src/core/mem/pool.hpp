// struct doca_buf_pool: fixed-size elements cut from one mmap, one descriptor per element.
// Internal to src/core/mem (the C forwarders are in buf_pool_api.cpp).
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_pool.h>

#include <memory>

// Owns its descriptors; pins its mmap (counted as a dependent there) until destroyed.
struct doca_buf_pool {
public:
	// Throws std::bad_alloc.
	doca_buf_pool(uint32_t num_elements, size_t element_size, doca_mmap *mmap);
	~doca_buf_pool();
	doca_buf_pool(const doca_buf_pool &) = delete;
	doca_buf_pool &operator=(const doca_buf_pool &) = delete;

	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	// True when no element is out (the pool can be stopped or destroyed).
	bool all_free() const noexcept { return free_.all_free(); }
	uint32_t num_elements() const noexcept { return free_.num_total; }
	uint32_t num_free_elements() const noexcept { return free_.num_free; }
	doca_error_t set_element_alignment(size_t element_alignment) noexcept;
	size_t element_alignment() const noexcept { return element_alignment_; }
	doca_error_t set_user_data(union doca_data user_data) noexcept;
	union doca_data user_data() const noexcept { return user_data_; }

	// Hands out a free element as a lone buffer with no data; no allocation.
	doca_error_t alloc(doca_buf **buf) noexcept
	{
		if (!started_)
			return DOCA_ERROR_BAD_STATE;
		doca_buf *taken = free_.pop();
		if (taken == nullptr)
			return DOCA_ERROR_EMPTY;
		taken->reset(taken->head_, 0); // head, len and mmap were set at start
		*buf = taken;
		return DOCA_SUCCESS;
	}

private:
	doca_mmap *mmap_;
	size_t element_size_;
	size_t element_alignment_ = 1;
	std::unique_ptr<doca_buf[]> descriptors_;
	softdpu::mem::BufFreeList free_;
	bool started_ = false;
	union doca_data user_data_ = {};
};
