// A ready-to-use DMA set-up through the public API only: a DMA-capable device, one mmap over a
// local arena with the device added, a buffer inventory, a PE and a DMA context connected to it.
#pragma once

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace softdpu_test {

// Opens the first device whose devinfo supports DMA memcpy; nullptr if none.
doca_dev *open_dma_device();

struct DmaSetup {
	explicit DmaSetup(size_t arena_bytes = 1 << 20, uint32_t num_bufs = 1024);
	~DmaSetup();
	DmaSetup(const DmaSetup &) = delete;
	DmaSetup &operator=(const DmaSetup &) = delete;

	doca_ctx *ctx() const { return doca_dma_as_ctx(dma); }
	// A buffer over arena[offset, offset + len) with data [offset, offset + data_len).
	doca_buf *buf(size_t offset, size_t len, size_t data_len);
	// Connects and configures a DMA context on `pe` (default: this setup's PE).
	doca_dma *make_dma(doca_dma_task_memcpy_completion_cb_t on_success,
			   doca_dma_task_memcpy_completion_cb_t on_error, uint32_t num_tasks, doca_pe *on_pe = nullptr);

	std::vector<uint8_t> arena;
	doca_dev *dev = nullptr;
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
	doca_pe *pe = nullptr;
	doca_dma *dma = nullptr; // not created by the constructor: see make_dma
	std::vector<doca_dma *> extra_dmas;
};

// Drives `pe` until `done()` or a bound on calls, returning whether done() became true.
template <class Done> bool progress_until(doca_pe *pe, Done done, size_t max_calls = 50'000'000)
{
	for (size_t i = 0; i < max_calls; ++i) {
		if (done())
			return true;
		doca_pe_progress(pe);
	}
	return done();
}

} // namespace softdpu_test
