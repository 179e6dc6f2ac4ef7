// struct doca_buf_inventory: a fixed set of descriptors handed out over any started mmap.
// Internal to src/core/mem (the C forwarders are in buf_inventory_api.cpp).
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_inventory.h>

#include <memory>

// Owns its descriptors (one array allocated at creation); the buffers it hands out point into
// mmaps it does not own.
struct doca_buf_inventory {
public:
	// Throws std::bad_alloc.
	explicit doca_buf_inventory(uint32_t num_elements);

	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	// True when no descriptor is out (the inventory can be destroyed).
	bool all_free() const noexcept { return free_.all_free(); }
	uint32_t num_elements() const noexcept { return free_.num_total; }
	uint32_t num_free_elements() const noexcept { return free_.num_free; }
	doca_error_t set_user_data(union doca_data user_data) noexcept;
	union doca_data user_data() const noexcept { return user_data_; }

	// Gets a descriptor for [addr, addr + len) with data [data, data + data_len); no allocation.
	doca_error_t get(doca_mmap *mmap, void *addr, size_t len, void *data, size_t data_len, doca_buf **buf) noexcept;
	doca_error_t dup(const doca_buf *src, doca_buf **dst) noexcept;

private:
	// All descriptors live in one array allocated at creation; free ones sit on free_.
	std::unique_ptr<doca_buf[]> descriptors_;
	softdpu::mem::BufFreeList free_;
	bool started_ = false;
	union doca_data user_data_ = {};
};
