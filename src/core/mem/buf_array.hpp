// struct doca_buf_arr: num_elem fixed-size buffers over one mmap, built on the CPU.
// Internal to src/core/mem; element() lets tests and future CPU-side users reach the buffers.
#pragma once

#include "core/mem/buf.hpp"

#include <doca_buf_array.h>

#include <memory>

struct doca_buf_arr {
	explicit doca_buf_arr(doca_mmap *mmap) noexcept : mmap_(mmap) { ++mmap_->num_dependents_; }
	~doca_buf_arr();
	doca_buf_arr(const doca_buf_arr &) = delete;
	doca_buf_arr &operator=(const doca_buf_arr &) = delete;

	doca_error_t start() noexcept;
	void stop() noexcept;
	doca_buf *element(uint32_t index) const noexcept { return &elements_[index]; }

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
