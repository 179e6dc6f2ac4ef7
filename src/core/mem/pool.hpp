// struct doca_buf_pool: fixed-size elements cut from one mmap, one descriptor per element.
// Internal to src/core/mem.
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_pool.h>

#include <memory>

struct doca_buf_pool {
	doca_buf_pool(uint32_t num_elements, size_t element_size, doca_mmap *mmap);
	~doca_buf_pool();
	doca_buf_pool(const doca_buf_pool &) = delete;
	doca_buf_pool &operator=(const doca_buf_pool &) = delete;

	doca_error_t start() noexcept;

	doca_mmap *mmap_;
	size_t element_size_;
	size_t element_alignment_ = 1;
	std::unique_ptr<doca_buf[]> descriptors_;
	softdpu::mem::BufFreeList free_;
	bool started_ = false;
	union doca_data user_data_ = {};
};
