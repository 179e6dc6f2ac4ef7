// struct doca_buf_inventory: a fixed set of descriptors handed out over any started mmap.
// Internal to src/core/mem.
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_inventory.h>

#include <memory>

struct doca_buf_inventory {
	explicit doca_buf_inventory(uint32_t num_elements);

	// Gets a descriptor for [addr, addr + len) with data [data, data + data_len); no allocation.
	doca_error_t get(doca_mmap *mmap, void *addr, size_t len, void *data, size_t data_len, doca_buf **buf) noexcept;
	doca_error_t dup(const doca_buf *src, doca_buf **dst) noexcept;

	// All descriptors live in one array allocated at creation; free ones sit on free_.
	std::unique_ptr<doca_buf[]> descriptors_;
	softdpu::mem::BufFreeList free_;
	bool started_ = false;
	union doca_data user_data_ = {};
};
