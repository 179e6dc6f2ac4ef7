/*
 * softdpu: DOCA buffer inventory (DOCA 2.5 doca_buf_inventory.h).
 *
 * An inventory is a fixed set of doca_buf descriptors. Once started, it hands them out pointing at
 * any range of any started doca_mmap, without allocating memory.
 *
 * softdpu notes: getting a buffer whose range leaves the mmap's memory range, or whose data leaves
 * the buffer, returns DOCA_ERROR_INVALID_VALUE; getting a buffer from an unstarted inventory or
 * over an unstarted mmap returns DOCA_ERROR_BAD_STATE (as doca_buf_inventory_buf_dup documents).
 * Starting a started inventory or stopping one that is not started returns DOCA_ERROR_BAD_STATE.
 * doca_buf_inventory_set_user_data follows the reference: it needs a started inventory.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_mmap.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_buf_inventory;
struct doca_mmap;

/* Creates an inventory of num_elements descriptors. INVALID_VALUE (NULL, 0, more than UINT32_MAX); NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);

/* Destroys the inventory (stopping it first). INVALID_VALUE; IN_USE while buffers are out. */
DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

/* Allows getting buffers. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/* Stops handing out buffers; buffers already out may still be released. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/* Gets the total number of descriptors. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory, uint32_t *num_of_elements);

/* Gets the number of free descriptors. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

/* Sets the user data. INVALID_VALUE; BAD_STATE (inventory not started). */
DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data);

/* Gets the user data (0 unless set). INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory, union doca_data *user_data);

/* Duplicates the descriptor of src_buf (every element of the list it heads) into new descriptors.
 * INVALID_VALUE; BAD_STATE (inventory or src_buf's mmap not started); NOT_PERMITTED (src_buf is a list
 * element after the head); NO_MEMORY (not enough free descriptors). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

/* Gets a buffer [addr, addr + len) with data [data, data + data_len), inside mmap's memory range.
 * INVALID_VALUE (NULL, range outside the mmap or data outside the buffer); BAD_STATE (inventory or mmap not
 * started); NO_MEMORY (inventory empty). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf);

/* Gets a buffer [addr, addr + len) with an empty data section at addr. */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *addr, size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/* Gets a buffer whose data is the whole buffer [data, data + data_len). */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *data, size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
