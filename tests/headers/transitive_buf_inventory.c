/*
 * Includes doca_buf_inventory.h only. In DOCA 2.5 that header includes doca_buf.h and doca_mmap.h,
 * and through doca_mmap.h also doca_dev.h and <stdbool.h>, so a program may call all of those
 * without including them itself. Compiled as C11 and, through a generated wrapper, as C++20.
 */
#include <doca_buf_inventory.h>

doca_error_t headers_buf_inventory_use(struct doca_buf_inventory *inventory, struct doca_buf *buf,
				       struct doca_dev *dev);

doca_error_t headers_buf_inventory_use(struct doca_buf_inventory *inventory, struct doca_buf *buf, struct doca_dev *dev)
{
	struct doca_mmap *mmap = NULL;
	uint16_t refcount = 0;
	bool failed = false;

	failed = failed || doca_mmap_create(&mmap) != DOCA_SUCCESS;      /* doca_mmap.h */
	failed = failed || doca_mmap_add_dev(mmap, dev) != DOCA_SUCCESS; /* doca_mmap.h */
	failed = failed || doca_buf_inventory_buf_dup(inventory, buf, &buf) != DOCA_SUCCESS;
	failed = failed || doca_buf_dec_refcount(buf, &refcount) != DOCA_SUCCESS; /* doca_buf.h */
	failed = failed || doca_mmap_destroy(mmap) != DOCA_SUCCESS;
	failed = failed || doca_dev_close(dev) != DOCA_SUCCESS; /* doca_dev.h, through doca_mmap.h */
	return failed ? DOCA_ERROR_UNKNOWN : DOCA_SUCCESS;
}
