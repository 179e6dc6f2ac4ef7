// struct doca_buf: the buffer descriptor behind doca_buf.h, and the free lists descriptors live on.
//
// Public to other modules (DMA): the inline accessors in the first block of struct doca_buf
// (head, len, data, data_len, set_data_len, tail, tailroom, next_in_list, list_len, is_list_head,
// mmap). They are plain loads and stores, meant for the data path. A DMA destination appends: copy
// to tail() (= data + data_len), at most tailroom() bytes, then set_data_len(data_len() + copied).
// The other public members belong to src/core/mem (the C forwarders in buf_api.cpp, the
// inventory, pool and array that own descriptors); the state is private.
#pragma once

#include "core/mem/mmap.hpp"

#include <doca_buf.h>

#include <cstddef>
#include <cstdint>

struct doca_buf;
struct doca_buf_inventory;
struct doca_buf_pool;
struct doca_buf_arr;

namespace softdpu::mem {

// The descriptors an inventory, pool or array owns that are free, as an intrusive LIFO list
// threaded through doca_buf::next_. Pushing and popping never allocates.
struct BufFreeList {
	doca_buf *first = nullptr;
	uint32_t num_free = 0;
	uint32_t num_total = 0;

	inline void push(doca_buf *buf) noexcept;
	inline doca_buf *pop() noexcept;
	bool all_free() const noexcept { return num_free == num_total; }
};

} // namespace softdpu::mem

// Owns nothing: it points into its mmap's memory (counted in the mmap while handed out) and
// returns to the free list of the inventory, pool or array that owns it.
struct doca_buf {
public:
	// ---- Data path accessors (public to other modules) ----
	void *head() const noexcept { return head_; }
	size_t len() const noexcept { return len_; }
	void *data() const noexcept { return data_; }
	size_t data_len() const noexcept { return data_len_; }
	// Caller guarantees data() + data_len <= head() + len(), i.e. data_len <= data_len() + tailroom().
	void set_data_len(size_t data_len) noexcept { data_len_ = data_len; }
	// First byte after the data: where a destination's new data goes.
	void *tail() const noexcept { return data_ + data_len_; }
	// Bytes between the end of the data and the end of the buffer.
	size_t tailroom() const noexcept { return static_cast<size_t>((head_ + len_) - (data_ + data_len_)); }
	// Next element of the list, nullptr after the last one.
	doca_buf *next_in_list() const noexcept { return next_; }
	// Number of elements in the list this buffer heads (meaningful on a head only).
	uint32_t list_len() const noexcept { return list_.len; }
	bool is_list_head() const noexcept { return !list_.is_member; }
	doca_mmap *mmap() const noexcept { return mmap_; }

	// ---- Internal to src/core/mem ----
	// The reference count; 0 while the descriptor is free (back with its owner).
	uint16_t refcount() const noexcept { return list_.refcount; }
	// True when the buffer is part of a list (a member, or a head with a next element).
	bool is_in_list() const noexcept { return list_.is_member || next_ != nullptr; }
	// doca_buf_inc_refcount / doca_buf_dec_refcount (buf is not NULL); the last reference returns
	// every element of the list to its owner.
	inline doca_error_t inc_refcount(uint16_t *refcount) noexcept;
	inline doca_error_t dec_refcount(uint16_t *refcount) noexcept;
	// Last element of the list this buffer belongs to.
	doca_buf *last_in_list() noexcept;
	// Points the data at [data, data + data_len), which must lie within the buffer.
	doca_error_t set_data(void *data, size_t data_len) noexcept;
	// doca_buf_chain_list / doca_buf_unchain_list (both not NULL).
	static doca_error_t chain(doca_buf *list1, doca_buf *list2) noexcept;
	static doca_error_t unchain(doca_buf *list1, doca_buf *list2) noexcept;

private:
	friend struct softdpu::mem::BufFreeList;
	friend struct doca_buf_inventory;
	friend struct doca_buf_pool;
	friend struct doca_buf_arr;

	// Points a free descriptor at [addr, addr + len) with data [data, data + data_len), as a lone buffer.
	void init(doca_mmap *mmap, uint8_t *addr, size_t len, uint8_t *data, size_t data_len) noexcept
	{
		head_ = addr;
		len_ = len;
		mmap_ = mmap;
		reset(data, data_len);
	}
	// Makes a free descriptor whose head, len and mmap are already right a lone buffer again.
	void reset(uint8_t *data, size_t data_len) noexcept
	{
		data_ = data;
		data_len_ = data_len;
		next_ = nullptr;
		list_ = ListState{};
		mmap_->buf_taken();
		if (const softdpu::mem::BufHooks *hooks = mmap_->buf_hooks(); hooks != nullptr) [[unlikely]]
			hooks->taken(hooks->ctx, head_);
	}
	// Last element of the list this buffer heads. last_ is kept only while the buffer has a next
	// element, so handing out a descriptor does not have to write it.
	doca_buf *list_tail() noexcept { return next_ != nullptr ? last_ : this; }
	// Returns every element of the list this buffer heads to its owner.
	inline void release_list() noexcept;

	// List length, reference count and list membership: written together with one store.
	struct ListState {
		uint32_t len = 1;       // elements in the list this buffer heads
		uint16_t refcount = 1;  // 0 while free; elements after a list head always hold 1
		bool is_member = false; // in a list but not its head
		uint8_t reserved = 0;
	};

	uint8_t *head_ = nullptr;
	size_t len_ = 0;
	uint8_t *data_ = nullptr;
	size_t data_len_ = 0;
	// Next element of the list; while the descriptor is free, the next free descriptor.
	doca_buf *next_ = nullptr;
	// Last element of the list, valid on a head whose next_ is set (see list_tail).
	doca_buf *last_ = nullptr;
	doca_mmap *mmap_ = nullptr;
	// The free list this descriptor returns to; set once when its owner creates it.
	softdpu::mem::BufFreeList *owner_ = nullptr;
	ListState list_ = {.len = 1, .refcount = 0, .is_member = false, .reserved = 0};
};

namespace softdpu::mem {

inline void BufFreeList::push(doca_buf *buf) noexcept
{
	buf->list_.refcount = 0;
	buf->next_ = first;
	first = buf;
	++num_free;
}

inline doca_buf *BufFreeList::pop() noexcept
{
	doca_buf *buf = first;
	if (buf != nullptr) {
		first = buf->next_;
		--num_free;
	}
	return buf;
}

} // namespace softdpu::mem

inline void doca_buf::release_list() noexcept
{
	doca_buf *buf = this;
	do {
		doca_buf *next = buf->next_;
		buf->mmap_->bufs_released(1);
		if (const softdpu::mem::BufHooks *hooks = buf->mmap_->buf_hooks(); hooks != nullptr) [[unlikely]]
			hooks->released(hooks->ctx, buf->head_);
		buf->owner_->push(buf);
		buf = next;
	} while (buf != nullptr);
}

inline doca_error_t doca_buf::inc_refcount(uint16_t *refcount) noexcept
{
	if (list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	// A released descriptor is back in its inventory or pool: taking a reference would hand it
	// out twice. Reported as dec_refcount reports it.
	if (list_.refcount == 0)
		return DOCA_ERROR_BAD_STATE;
	if (list_.refcount == UINT16_MAX)
		return DOCA_ERROR_TOO_BIG;
	if (refcount != nullptr)
		*refcount = list_.refcount;
	++list_.refcount;
	return DOCA_SUCCESS;
}

inline doca_error_t doca_buf::dec_refcount(uint16_t *refcount) noexcept
{
	if (list_.is_member)
		return DOCA_ERROR_NOT_PERMITTED;
	if (list_.refcount == 0)
		return DOCA_ERROR_BAD_STATE;
	if (refcount != nullptr)
		*refcount = list_.refcount;
	if (--list_.refcount == 0)
		release_list();
	return DOCA_SUCCESS;
}
