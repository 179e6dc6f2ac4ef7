// struct doca_buf_arr: num_elem fixed-size buffers over one mmap, built on the CPU.
// Internal to src/core/mem (the C forwarders are in buf_array_api.cpp); element() lets tests and
// future CPU-side users reach the buffers.
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_array.h>

#include <memory>

// Owns its elements (allocated at start, freed at stop); pins its mmap (counted as a dependent
// there) until destroyed.
struct doca_buf_arr {
public:
	explicit doca_buf_arr(doca_mmap *mmap) noexcept : mmap_(mmap) { mmap_->add_dependent(); }
	~doca_buf_arr();
	doca_buf_arr(const doca_buf_arr &) = delete;
	doca_buf_arr &operator=(const doca_buf_arr &) = delete;

	bool is_started() const noexcept { return started_; }
	doca_error_t set_params(size_t element_size, uint32_t num_elements, uint32_t start_offset) noexcept;
	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	doca_buf *element(uint32_t index) const noexcept { return &elements_[index]; }

private:
	void release_elements() noexcept;

	doca_mmap *mmap_;
	size_t element_size_ = 0;
	uint32_t num_elements_ = 0;
	uint32_t start_offset_ = 0;
	bool params_set_ = false;
	bool started_ = false;
	std::unique_ptr<doca_buf[]> elements_;
	// Elements released through doca_buf_dec_refcount land here until stop.
	softdpu::mem::BufFreeList released_;
};
