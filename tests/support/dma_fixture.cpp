#include "support/dma_fixture.h"

#include "support/devices.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace softdpu_test {

namespace {
void check(doca_error_t result, const char *what)
{
	if (result != DOCA_SUCCESS)
		throw std::runtime_error(std::string(what) + ": " + doca_error_get_name(result));
}
} // namespace

doca_dev *open_dma_device()
{
	return open_first_device(
	    [](doca_devinfo *devinfo) { return doca_dma_cap_task_memcpy_is_supported(devinfo) == DOCA_SUCCESS; });
}

DmaSetup::DmaSetup(size_t arena_bytes, uint32_t num_bufs) : arena(arena_bytes)
{
	dev = open_dma_device();
	if (dev == nullptr)
		throw std::runtime_error("no DMA-capable device");
	check(doca_mmap_create(&mmap), "doca_mmap_create");
	check(doca_mmap_set_memrange(mmap, arena.data(), arena.size()), "doca_mmap_set_memrange");
	check(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), "doca_mmap_set_permissions");
	check(doca_mmap_add_dev(mmap, dev), "doca_mmap_add_dev");
	check(doca_mmap_start(mmap), "doca_mmap_start");
	check(doca_buf_inventory_create(num_bufs, &inventory), "doca_buf_inventory_create");
	check(doca_buf_inventory_start(inventory), "doca_buf_inventory_start");
	check(doca_pe_create(&pe), "doca_pe_create");
}

doca_dma *DmaSetup::make_dma(doca_dma_task_memcpy_completion_cb_t on_success,
			     doca_dma_task_memcpy_completion_cb_t on_error, uint32_t num_tasks, doca_pe *on_pe)
{
	doca_dma *created = nullptr;
	check(doca_dma_create(dev, &created), "doca_dma_create");
	check(doca_pe_connect_ctx(on_pe != nullptr ? on_pe : pe, doca_dma_as_ctx(created)), "doca_pe_connect_ctx");
	check(doca_dma_task_memcpy_set_conf(created, on_success, on_error, num_tasks), "doca_dma_task_memcpy_set_conf");
	if (dma == nullptr)
		dma = created;
	else
		extra_dmas.push_back(created);
	return created;
}

doca_buf *DmaSetup::buf(size_t offset, size_t len, size_t data_len)
{
	doca_buf *buf = nullptr;
	check(doca_buf_inventory_buf_get_by_args(inventory, mmap, arena.data() + offset, len, arena.data() + offset,
						 data_len, &buf),
	      "doca_buf_inventory_buf_get_by_args");
	return buf;
}

DmaSetup::~DmaSetup()
{
	extra_dmas.insert(extra_dmas.begin(), dma);
	for (doca_dma *each : extra_dmas) {
		if (each == nullptr)
			continue;
		doca_ctx *ctx = doca_dma_as_ctx(each);
		enum doca_ctx_states state;
		doca_ctx_get_state(ctx, &state);
		if (state != DOCA_CTX_STATE_IDLE && doca_ctx_stop(ctx) == DOCA_ERROR_IN_PROGRESS)
			progress_until(pe, [&] {
				doca_ctx_get_state(ctx, &state);
				return state == DOCA_CTX_STATE_IDLE;
			});
		doca_dma_destroy(each);
	}
	if (pe != nullptr)
		doca_pe_destroy(pe);
	if (inventory != nullptr) {
		doca_buf_inventory_stop(inventory);
		doca_buf_inventory_destroy(inventory);
	}
	if (mmap != nullptr) {
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (dev != nullptr)
		doca_dev_close(dev);
}

} // namespace softdpu_test
