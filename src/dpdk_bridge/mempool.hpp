// struct doca_dpdk_mempool: a DPDK pool of mbufs seen by DOCA (doca_dpdk.h).
//
// Owns: one doca_mmap per memory chunk of the DPDK pool (rte_mempool_mem_iter), made at start with
// every device added and the pool's permissions, and destroyed with the pool. Does not own the DPDK
// pool, its mbufs or the devices.
//
// A doca_buf over an mbuf holds one reference on the direct mbuf under it: the mmaps carry buffer
// hooks (softdpu::mem::BufHooks) that take a reference (rte_mbuf_refcnt_update) for every doca_buf
// handed out over them, by doca_dpdk_mempool_mbuf_to_buf or by doca_buf_inventory_buf_dup, and
// give it back (rte_pktmbuf_free_seg) when the doca_buf is released, as DOCA documents.
//
// The control calls are for one thread; the data path (mbuf_to_buf, the hooks) may run on several
// threads at once, each with its own inventory. Whether doca_bufs are held is the mmaps' count
// (doca_mmap_get_num_bufs), which shut_down reads: the hooks do only the mbuf's reference.
#pragma once

#include "core/mem/mmap.hpp"

#include <doca_error.h>

#include <cstddef>
#include <cstdint>
#include <vector>

struct doca_dev;
struct doca_buf;
struct doca_buf_inventory;
struct rte_mempool;
struct rte_mbuf;

struct doca_dpdk_mempool {
public:
	// Checks that `pool` is a populated pool of mbufs (rte_pktmbuf_pool_create*): INVALID_VALUE
	// otherwise. Throws std::bad_alloc.
	static doca_error_t create(const rte_mempool &pool, doca_dpdk_mempool **created);
	~doca_dpdk_mempool();
	doca_dpdk_mempool(const doca_dpdk_mempool &) = delete;
	doca_dpdk_mempool &operator=(const doca_dpdk_mempool &) = delete;

	doca_error_t add_dev(doca_dev &dev) noexcept;
	doca_error_t set_permissions(uint32_t access_mask) noexcept;
	doca_error_t start() noexcept;
	doca_error_t mbuf_to_buf(doca_buf_inventory &inventory, rte_mbuf &mbuf, doca_buf **buf) noexcept;
	// IN_USE while a doca_buf over the pool's memory is held; otherwise destroys the mmaps, after
	// which the caller deletes the pool.
	doca_error_t shut_down() noexcept;

	bool is_started() const noexcept { return started_; }

private:
	struct Chunk {
		doca_mmap *mmap = nullptr;
		uintptr_t start = 0;
		size_t len = 0;
	};

	explicit doca_dpdk_mempool(const rte_mempool &pool) noexcept;
	static void buf_taken(void *ctx, void *head) noexcept;
	static void buf_released(void *ctx, void *head) noexcept;
	// The chunk holding [addr, addr + len), nullptr if none.
	const Chunk *find_chunk(const void *addr, size_t len) const noexcept;
	void destroy_mmaps() noexcept;

	const rte_mempool *pool_;
	// Bytes between an mbuf and its buffer: the mbuf header and the pool's private area.
	size_t mbuf_to_buffer_;
	std::vector<doca_dev *> devices_;
	uint32_t permissions_ = softdpu::mem::kDefaultMmapPermissions;
	bool started_ = false;
	std::vector<Chunk> chunks_;
	softdpu::mem::BufHooks hooks_;
};
