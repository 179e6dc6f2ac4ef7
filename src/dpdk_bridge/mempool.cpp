#include "dpdk_bridge/mempool.hpp"

#include "common/sdk_log.hpp"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>
#include <doca_types.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <new>

doca_dpdk_mempool::doca_dpdk_mempool(const rte_mempool &pool) noexcept
    : pool_(&pool), mbuf_to_buffer_(sizeof(rte_mbuf) + rte_pktmbuf_priv_size(const_cast<rte_mempool *>(&pool))),
      hooks_{&doca_dpdk_mempool::buf_taken, &doca_dpdk_mempool::buf_released, this}
{
}

doca_dpdk_mempool::~doca_dpdk_mempool()
{
	destroy_mmaps();
}

doca_error_t doca_dpdk_mempool::create(const rte_mempool &pool, doca_dpdk_mempool **created)
{
	// A pool of mbufs carries rte_pktmbuf_pool_private (rte_pktmbuf_pool_init): anything else has
	// no mbufs to convert.
	if (pool.private_data_size < sizeof(rte_pktmbuf_pool_private)) {
		SDK_LOG_ERR("DPDK bridge: mempool %s is not a pool of mbufs (create it with rte_pktmbuf_pool_create)",
			    pool.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	auto *mutable_pool = const_cast<rte_mempool *>(&pool);
	const size_t needed = sizeof(rte_mbuf) + rte_pktmbuf_priv_size(mutable_pool);
	if (pool.elt_size < needed) {
		SDK_LOG_ERR("DPDK bridge: mempool %s has elements of %u bytes, too small for mbufs", pool.name,
			    pool.elt_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pool.size == 0 || pool.nb_mem_chunks == 0) {
		SDK_LOG_ERR("DPDK bridge: mempool %s is empty (no memory populated)", pool.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*created = new doca_dpdk_mempool(pool);
	return DOCA_SUCCESS;
}

doca_error_t doca_dpdk_mempool::add_dev(doca_dev &dev) noexcept
{
	if (started_) {
		SDK_LOG_ERR("DPDK bridge: cannot add a device to a started mempool");
		return DOCA_ERROR_BAD_STATE;
	}
	if (std::find(devices_.begin(), devices_.end(), &dev) != devices_.end()) {
		SDK_LOG_ERR("DPDK bridge: the device was already added to this mempool");
		return DOCA_ERROR_INVALID_VALUE;
	}
	try {
		devices_.push_back(&dev);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_dpdk_mempool::set_permissions(uint32_t access_mask) noexcept
{
	// The PCI (formerly DPU) flags are for exports to the other side, which this memory never has.
	const uint32_t pci = DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE;
	if ((access_mask & ~softdpu::mem::kAllAccessFlags) != 0 || (access_mask & pci) != 0) {
		SDK_LOG_ERR("DPDK bridge: access mask 0x%x is not valid for a mempool (no DOCA_ACCESS_FLAG_PCI_* "
			    "flags, no unknown bits)",
			    access_mask);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (started_) {
		SDK_LOG_ERR("DPDK bridge: cannot change the permissions of a started mempool");
		return DOCA_ERROR_BAD_STATE;
	}
	permissions_ = access_mask;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpdk_mempool::start() noexcept
{
	if (started_) {
		SDK_LOG_ERR("DPDK bridge: the mempool is already started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (devices_.empty()) {
		SDK_LOG_ERR("DPDK bridge: cannot start a mempool with no device (doca_dpdk_mempool_dev_add)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	struct Walk {
		std::vector<Chunk> *chunks;
		bool failed;
	} walk{&chunks_, false};
	try {
		chunks_.reserve(pool_->nb_mem_chunks);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	rte_mempool_mem_iter(
	    const_cast<rte_mempool *>(pool_),
	    [](rte_mempool *, void *opaque, rte_mempool_memhdr *memhdr, unsigned int) {
		    auto *w = static_cast<Walk *>(opaque);
		    try {
			    w->chunks->push_back(
				Chunk{nullptr, reinterpret_cast<uintptr_t>(memhdr->addr), memhdr->len});
		    } catch (const std::bad_alloc &) {
			    w->failed = true;
		    }
	    },
	    &walk);
	if (walk.failed) {
		chunks_.clear();
		return DOCA_ERROR_NO_MEMORY;
	}
	for (Chunk &chunk : chunks_) {
		doca_error_t error = doca_mmap_create(&chunk.mmap);
		if (error == DOCA_SUCCESS)
			error = doca_mmap_set_memrange(chunk.mmap, reinterpret_cast<void *>(chunk.start), chunk.len);
		if (error == DOCA_SUCCESS)
			error = doca_mmap_set_permissions(chunk.mmap, permissions_);
		if (error == DOCA_SUCCESS && devices_.size() > softdpu::mem::kDefaultMaxNumDevices)
			error = doca_mmap_set_max_num_devices(chunk.mmap, static_cast<uint32_t>(devices_.size()));
		for (size_t i = 0; error == DOCA_SUCCESS && i < devices_.size(); ++i)
			error = doca_mmap_add_dev(chunk.mmap, devices_[i]);
		if (error == DOCA_SUCCESS)
			error = priv_doca_mmap_set_buf_hooks(chunk.mmap, &hooks_);
		if (error == DOCA_SUCCESS)
			error = doca_mmap_start(chunk.mmap);
		if (error != DOCA_SUCCESS) {
			SDK_LOG_ERR("DPDK bridge: cannot register a memory chunk of mempool %s (%zu bytes) on the "
				    "mempool's devices: %s",
				    pool_->name, chunk.len, doca_error_get_descr(error));
			destroy_mmaps();
			return error;
		}
	}
	started_ = true;
	return DOCA_SUCCESS;
}

const doca_dpdk_mempool::Chunk *doca_dpdk_mempool::find_chunk(const void *addr, size_t len) const noexcept
{
	const auto start = reinterpret_cast<uintptr_t>(addr);
	for (const Chunk &chunk : chunks_)
		if (start >= chunk.start && len <= chunk.len && start - chunk.start <= chunk.len - len)
			return &chunk;
	return nullptr;
}

doca_error_t doca_dpdk_mempool::mbuf_to_buf(doca_buf_inventory &inventory, rte_mbuf &mbuf, doca_buf **buf) noexcept
{
	if (!started_) {
		SDK_LOG_ERR("DPDK bridge: the mempool is not started (doca_dpdk_mempool_start)");
		return DOCA_ERROR_BAD_STATE;
	}
	// Check every segment before taking anything.
	uint32_t segments = 0;
	for (rte_mbuf *seg = &mbuf; seg != nullptr; seg = seg->next) {
		if (RTE_MBUF_HAS_EXTBUF(seg)) {
			SDK_LOG_ERR("DPDK bridge: the mbuf has an external buffer, not memory of the mempool");
			return DOCA_ERROR_INVALID_VALUE;
		}
		const rte_mbuf *direct = RTE_MBUF_DIRECT(seg) ? seg : rte_mbuf_from_indirect(seg);
		if (direct->pool != pool_ || find_chunk(seg->buf_addr, seg->buf_len) == nullptr) {
			SDK_LOG_ERR("DPDK bridge: Failed to get DOCA buf from mbuf: mbuf not in rte_mempool %s",
				    pool_->name);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (static_cast<size_t>(seg->data_off) + seg->data_len > seg->buf_len) {
			SDK_LOG_ERR(
			    "DPDK bridge: the mbuf's data (offset %u, length %u) overruns its buffer (%u bytes)",
			    seg->data_off, seg->data_len, seg->buf_len);
			return DOCA_ERROR_INVALID_VALUE;
		}
		++segments;
	}
	uint32_t free_elements = 0;
	doca_error_t error = doca_buf_inventory_get_num_free_elements(&inventory, &free_elements);
	if (error != DOCA_SUCCESS)
		return error;
	if (free_elements < segments) {
		SDK_LOG_ERR("DPDK bridge: the inventory has %u free elements, the mbuf needs %u", free_elements,
			    segments);
		return DOCA_ERROR_NO_MEMORY;
	}
	doca_buf *head = nullptr;
	for (rte_mbuf *seg = &mbuf; seg != nullptr; seg = seg->next) {
		auto *addr = static_cast<uint8_t *>(seg->buf_addr);
		const Chunk *chunk = find_chunk(addr, seg->buf_len);
		doca_buf *element = nullptr;
		error = doca_buf_inventory_buf_get_by_args(&inventory, chunk->mmap, addr, seg->buf_len,
							   addr + seg->data_off, seg->data_len, &element);
		if (error == DOCA_SUCCESS && head != nullptr) {
			error = doca_buf_chain_list(head, element);
			if (error != DOCA_SUCCESS)
				(void)doca_buf_dec_refcount(element, nullptr);
		}
		if (error != DOCA_SUCCESS) {
			// Releasing what was taken gives its mbuf references back (the hooks).
			if (head != nullptr)
				(void)doca_buf_dec_refcount(head, nullptr);
			SDK_LOG_ERR("DPDK bridge: cannot get a doca_buf for an mbuf segment: %s",
				    doca_error_get_descr(error));
			return error == DOCA_ERROR_BAD_STATE ? DOCA_ERROR_INVALID_VALUE : error;
		}
		if (head == nullptr)
			head = element;
	}
	*buf = head;
	return DOCA_SUCCESS;
}

void doca_dpdk_mempool::buf_taken(void *ctx, void *head) noexcept
{
	auto *self = static_cast<doca_dpdk_mempool *>(ctx);
	auto *direct = reinterpret_cast<rte_mbuf *>(static_cast<uint8_t *>(head) - self->mbuf_to_buffer_);
	rte_mbuf_refcnt_update(direct, 1);
}

void doca_dpdk_mempool::buf_released(void *ctx, void *head) noexcept
{
	auto *self = static_cast<doca_dpdk_mempool *>(ctx);
	auto *direct = reinterpret_cast<rte_mbuf *>(static_cast<uint8_t *>(head) - self->mbuf_to_buffer_);
	rte_pktmbuf_free_seg(direct);
}

doca_error_t doca_dpdk_mempool::shut_down() noexcept
{
	// The mmaps count the doca_bufs over their memory (doca_mmap_get_num_bufs): the data path keeps
	// no count of its own.
	uint64_t out = 0;
	for (const Chunk &chunk : chunks_) {
		uint32_t bufs = 0;
		if (doca_mmap_get_num_bufs(chunk.mmap, &bufs) == DOCA_SUCCESS)
			out += bufs;
	}
	if (out != 0) {
		SDK_LOG_ERR("DPDK bridge: Failed to destroy DOCA DPDK mempool: %lu doca_bufs over its mbufs are "
			    "still held (release them with doca_buf_dec_refcount)",
			    static_cast<unsigned long>(out));
		return DOCA_ERROR_IN_USE;
	}
	destroy_mmaps();
	return DOCA_SUCCESS;
}

void doca_dpdk_mempool::destroy_mmaps() noexcept
{
	for (Chunk &chunk : chunks_)
		if (chunk.mmap != nullptr) {
			if (doca_error_t error = doca_mmap_destroy(chunk.mmap); error != DOCA_SUCCESS)
				SDK_LOG_ERR("DPDK bridge: cannot destroy the mmap of a mempool chunk: %s",
					    doca_error_get_descr(error));
			chunk.mmap = nullptr;
		}
	chunks_.clear();
	started_ = false;
}
