/*
 * softdpu: DOCA buffer array (DOCA 2.5 doca_buf_array.h, experimental).
 *
 * A buffer array is num_elem fixed-size doca_bufs laid out from start_offset in its mmap's memory
 * range, meant to be used from a GPU or DPA. softdpu builds arrays on the CPU only: targeting a
 * GPU or DPA returns DOCA_ERROR_NOT_SUPPORTED, and so does asking a started array for a GPU or
 * DPA handle.
 *
 * softdpu notes: creating an array over an mmap without a memory range returns
 * DOCA_ERROR_INVALID_VALUE; starting one without parameters, or a started one, returns
 * DOCA_ERROR_BAD_STATE; starting one whose elements leave the memory range returns
 * DOCA_ERROR_INVALID_VALUE; stopping one that is not started returns DOCA_ERROR_BAD_STATE. The
 * mmap cannot be stopped or destroyed while the array exists.
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_mmap.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf_arr;
struct doca_mmap;
struct doca_gpu;
struct doca_dpa;
struct doca_gpu_buf_arr;
struct doca_dpa_dev_buf_arr;

/* Creates a buffer array over mmap (which must have a memory range). INVALID_VALUE; NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr);

/* Destroys the array (stopping it first). INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/* Sets the element size, the number of elements and the offset from the mmap's start.
 * INVALID_VALUE (size or num_elem 0); BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, size_t size, uint32_t num_elem,
				     uint32_t start_offset);

/* Builds the array on a GPU. INVALID_VALUE; BAD_STATE (started); NOT_SUPPORTED (softdpu has no GPU target). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

/* Builds the array on a DPA. INVALID_VALUE; BAD_STATE (started); NOT_SUPPORTED (softdpu has no DPA target). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler);

/* Creates the buffers. INVALID_VALUE; BAD_STATE; NOT_PERMITTED (mmap not started); NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

/* Releases the buffers so the array can be reconfigured. INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/* Gets the array's handle in GPU memory. INVALID_VALUE; BAD_STATE (not started); NOT_SUPPORTED (CPU array). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

/* Gets the array's handle in DPA memory. INVALID_VALUE; BAD_STATE (not started); NOT_SUPPORTED (CPU array). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, struct doca_dpa_dev_buf_arr **dpa_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
