/*
 * softdpu: DOCA buffer (DOCA 2.5 doca_buf.h).
 *
 * A doca_buf describes part of a doca_mmap's memory: the buffer [head, head + len) and, inside it,
 * the data [data, data + data_len). Buffers come from an inventory, a pool or an array, and go back
 * when their reference count drops to 0. Buffers can be chained into a scatter/gather list, which
 * its head represents; the elements after the head always have a reference count of 1.
 *
 * softdpu notes: a NULL argument returns DOCA_ERROR_INVALID_VALUE even where DOCA says "always
 * DOCA_SUCCESS"; doca_buf_set_data outside the buffer returns DOCA_ERROR_INVALID_VALUE (undefined
 * behaviour in DOCA); doca_buf_chain_list with a list element that is not a head returns
 * DOCA_ERROR_NOT_PERMITTED.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/* Adds a reference. refcount (may be NULL) receives the count before the call.
 * NOT_PERMITTED (buf is a list element after the head); TOO_BIG (already UINT16_MAX);
 * BAD_STATE (buf was released: its count is 0). */
DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);

/* Drops a reference; at 0 the buffer (and the rest of its list) goes back to where it came from.
 * refcount (may be NULL) receives the count before the call.
 * NOT_PERMITTED (buf is a list element after the head); BAD_STATE (already 0). */
DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);

/* Gets the reference count (1 for a list element after the head). */
DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/* Gets the number of elements of the list headed by buf. INVALID_VALUE; NOT_PERMITTED (not a head). */
DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

/* 1 if buf is the first element of its list (a lone buffer is), else 0. */
DOCA_STABLE
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);

/* 1 if buf is the last element of its list (a lone buffer is), else 0. */
DOCA_STABLE
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);

/* 1 if buf is part of a list of two or more elements, else 0. */
DOCA_STABLE
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);

/* Gets the next element, or NULL after the last one. */
DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

/* Gets the last element of the list that buf belongs to, from buf on (buf itself if it is the last). INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

/* Gets the start of the buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

/* Gets the length of the buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/* Gets the start of the data. */
DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/* Gets the length of the data. */
DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

/* Sets the data section; [data, data + data_len] must lie within [head, head + len] (else INVALID_VALUE). */
DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/* Sets the data length to 0; the data pointer stays. */
DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/* Appends list2 to list1. Both must be list heads; list2 must have a reference count of 1.
 * NOT_PERMITTED (list2's reference count is not 1, or an argument is not a head); INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/* Separates list2 (an element after the head of list1) and what follows it from list1; list2 becomes a head
 * with a reference count of 1. INVALID_VALUE (list2 is not part of list1, list1 is not a head, list1 == list2). */
DOCA_STABLE
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
