/*
 * Includes doca_buf_array.h only. In DOCA 2.5 that header includes doca_buf.h and doca_mmap.h, so a
 * program may call both without including them itself. Compiled as C11 and, through a generated
 * wrapper, as C++20.
 */
#include <doca_buf_array.h>

doca_error_t headers_buf_array_use(struct doca_mmap *mmap, struct doca_buf *buf);

doca_error_t headers_buf_array_use(struct doca_mmap *mmap, struct doca_buf *buf)
{
	struct doca_buf_arr *arr = NULL;
	uint16_t refcount = 0;
	bool failed = false;

	failed = failed || doca_mmap_start(mmap) != DOCA_SUCCESS; /* doca_mmap.h */
	failed = failed || doca_buf_arr_create(mmap, &arr) != DOCA_SUCCESS;
	failed = failed || doca_buf_arr_destroy(arr) != DOCA_SUCCESS;
	failed = failed || doca_buf_dec_refcount(buf, &refcount) != DOCA_SUCCESS; /* doca_buf.h */
	return failed ? DOCA_ERROR_UNKNOWN : DOCA_SUCCESS;
}
