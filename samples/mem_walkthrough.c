// pkg-config: doca-common
/*
 * Memory walkthrough: the DOCA Core memory subsystem from start to end.
 *
 * Opens the first device, builds a memory map over a local array (memory range, device,
 * permissions), starts it, and then takes buffers from an inventory (by address, by data,
 * duplicated), moves their data sections, chains them into a scatter/gather list, walks the
 * list, plays with reference counts, allocates from a buffer pool and a CPU buffer array, and
 * shows the state rules that keep an mmap in one piece. On the way it calls every function of
 * doca_mmap.h, doca_buf.h, doca_buf_inventory.h, doca_buf_pool.h and doca_buf_array.h at least
 * once (importing an export for real takes a second process: see samples/dma_copy). Every result
 * is checked; any mismatch ends the program with a non-zero status. Each call refused on purpose
 * also makes the library say why, as an SDK error line on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_types.h>

#define MEMORY_SIZE 4096

static int failures;

/* Checks that a call returned the expected code; prints the mismatch otherwise. */
#define EXPECT(call, expected)                                                                                         \
	do {                                                                                                           \
		doca_error_t got_ = (call);                                                                            \
		if (got_ != (expected)) {                                                                              \
			fprintf(stderr, "line %d: %s returned %s, expected %s\n", __LINE__, #call,                     \
				doca_error_get_name(got_), doca_error_get_name(expected));                             \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

/* Checks a condition. */
#define EXPECT_TRUE(cond)                                                                                              \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "line %d: expected %s\n", __LINE__, #cond);                                    \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

static uint8_t memory[MEMORY_SIZE];
static int free_cb_calls;

static void free_memory_cb(void *addr, size_t len, void *cookie)
{
	(void)cookie;
	printf("  free callback: the mmap hands back %zu bytes at offset %td\n", len, (uint8_t *)addr - memory);
	free_cb_calls++;
}

static struct doca_dev *open_first_device(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;
	struct doca_dev *dev = NULL;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE] = {0};

	EXPECT(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
	if (list == NULL || count == 0)
		return NULL;
	EXPECT(doca_devinfo_get_pci_addr_str(list[0], pci), DOCA_SUCCESS);
	EXPECT(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	EXPECT(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	printf("1. Opened device %s (first of %u)\n", pci, count);
	return dev;
}

static uint32_t mmap_bufs(const struct doca_mmap *mmap)
{
	uint32_t n = 0;
	EXPECT(doca_mmap_get_num_bufs(mmap, &n), DOCA_SUCCESS);
	return n;
}

int main(void)
{
	struct doca_dev *dev;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inventory = NULL;
	struct doca_buf_pool *pool = NULL;
	struct doca_buf_arr *arr = NULL;
	struct doca_buf *by_addr = NULL, *by_data = NULL, *copy = NULL, *next = NULL, *last = NULL, *pooled = NULL;
	void *ptr = NULL;
	size_t len = 0;
	uint32_t count = 0;
	uint16_t refcount = 0;
	uint8_t flag = 0;
	union doca_data user_data = {.u64 = 0x5eed};
	union doca_data got_user_data = {.u64 = 0};
	const void *export_desc = NULL;
	size_t export_len = 0;
	struct doca_mmap *other = NULL;

	dev = open_first_device();
	if (dev == NULL) {
		fprintf(stderr, "no device found\n");
		return EXIT_FAILURE;
	}

	/* The memory map: a memory range, a device and permissions, then start. */
	EXPECT(doca_mmap_create(&mmap), DOCA_SUCCESS);
	EXPECT(doca_mmap_set_memrange(mmap, memory, sizeof(memory)), DOCA_SUCCESS);
	EXPECT(doca_mmap_set_memrange(mmap, memory, 16), DOCA_ERROR_NOT_PERMITTED); /* only once */
	EXPECT(doca_mmap_set_max_num_devices(mmap, 4), DOCA_SUCCESS);
	EXPECT(doca_mmap_get_max_num_devices(mmap, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 4);
	EXPECT(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
	EXPECT(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_ALREADY_EXIST);
	EXPECT(doca_mmap_rm_dev(mmap, dev), DOCA_SUCCESS);
	EXPECT(doca_mmap_rm_dev(mmap, dev), DOCA_ERROR_NOT_FOUND);
	EXPECT(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
	EXPECT(doca_mmap_set_user_data(mmap, user_data), DOCA_SUCCESS);
	EXPECT(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE),
	       DOCA_ERROR_INVALID_VALUE); /* mutually exclusive */
	EXPECT(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE),
	       DOCA_SUCCESS);
	EXPECT(doca_mmap_set_free_cb(mmap, free_memory_cb, NULL), DOCA_SUCCESS);
	EXPECT(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_NOT_PERMITTED); /* no changes once started */
	EXPECT(doca_dev_close(dev), DOCA_ERROR_IN_USE);                 /* the mmap holds the device */
	EXPECT(doca_mmap_get_memrange(mmap, &ptr, &len), DOCA_SUCCESS);
	EXPECT_TRUE(ptr == memory && len == sizeof(memory));
	EXPECT(doca_mmap_get_user_data(mmap, &got_user_data), DOCA_SUCCESS);
	EXPECT_TRUE(got_user_data.u64 == user_data.u64);
	printf("2. Started an mmap over %zu bytes with the device and local + PCI read/write access\n", sizeof(memory));

	/* Exporting it for another process (here only the exporter's side). */
	EXPECT(doca_mmap_cap_is_export_pci_supported(doca_dev_as_devinfo(dev), &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 1);
	EXPECT(doca_mmap_cap_is_create_from_export_pci_supported(doca_dev_as_devinfo(dev), &flag), DOCA_SUCCESS);
	printf("   the device can export memory over PCI%s\n", flag ? " and import such exports" : "");
	EXPECT(doca_mmap_get_exported(mmap, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 0);
	EXPECT(doca_mmap_export_pci(mmap, dev, &export_desc, &export_len), DOCA_SUCCESS);
	EXPECT(doca_mmap_get_exported(mmap, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 1);
	EXPECT(doca_mmap_export_rdma(mmap, dev, &export_desc, &export_len),
	       DOCA_ERROR_NOT_PERMITTED); /* no RDMA access */
	EXPECT(doca_mmap_get_from_export(mmap, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 0);
	EXPECT(doca_mmap_create_from_export(NULL, export_desc, export_len - 1, dev, &other),
	       DOCA_ERROR_INVALID_VALUE); /* a truncated descriptor */
	printf("   exported it over PCI: a %zu-byte descriptor another process imports\n", export_len);
	/* A dma-buf needs a real dma-buf file descriptor; standard input is not one. */
	EXPECT(doca_mmap_create(&other), DOCA_SUCCESS);
	EXPECT(doca_mmap_set_dmabuf_memrange(other, 0, memory, 0, 64), DOCA_ERROR_INVALID_VALUE);
	EXPECT(doca_mmap_destroy(other), DOCA_SUCCESS);

	/* Buffers from an inventory. */
	EXPECT(doca_buf_inventory_create(8, &inventory), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_set_user_data(inventory, user_data), DOCA_ERROR_BAD_STATE); /* not started yet */
	EXPECT(doca_buf_inventory_get_num_elements(inventory, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 8);
	EXPECT(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory, 64, &by_addr), DOCA_ERROR_BAD_STATE);
	EXPECT(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_set_user_data(inventory, user_data), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_get_user_data(inventory, &got_user_data), DOCA_SUCCESS);
	EXPECT_TRUE(got_user_data.u64 == user_data.u64);
	EXPECT(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory, 64, &by_addr), DOCA_SUCCESS);
	memcpy(memory + 64, "hello, softdpu", 14);
	EXPECT(doca_buf_inventory_buf_get_by_data(inventory, mmap, memory + 64, 14, &by_data), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory + MEMORY_SIZE - 8, 16, &copy),
	       DOCA_ERROR_INVALID_VALUE); /* leaves the memory range */
	EXPECT(doca_buf_inventory_buf_get_by_args(inventory, mmap, memory + 128, 64, memory + 136, 8, &copy),
	       DOCA_SUCCESS); /* buffer and data given apart */
	EXPECT(doca_buf_get_data(copy, &ptr), DOCA_SUCCESS);
	EXPECT_TRUE(ptr == memory + 136);
	EXPECT(doca_buf_dec_refcount(copy, NULL), DOCA_SUCCESS);
	EXPECT(doca_buf_get_data_len(by_addr, &len), DOCA_SUCCESS);
	EXPECT_TRUE(len == 0);
	EXPECT(doca_buf_get_data(by_data, &ptr), DOCA_SUCCESS);
	EXPECT(doca_buf_get_data_len(by_data, &len), DOCA_SUCCESS);
	EXPECT_TRUE(len == 14 && memcmp(ptr, "hello, softdpu", 14) == 0);
	printf("3. Inventory: by_addr gives an empty 64-byte buffer, by_data a buffer holding \"%.*s\"\n", (int)len,
	       (const char *)ptr);

	EXPECT(doca_buf_inventory_buf_dup(inventory, by_data, &copy), DOCA_SUCCESS);
	EXPECT(doca_buf_get_data(copy, &ptr), DOCA_SUCCESS);
	EXPECT_TRUE(ptr == memory + 64);
	EXPECT(doca_buf_dec_refcount(copy, NULL), DOCA_SUCCESS);
	EXPECT_TRUE(mmap_bufs(mmap) == 2);
	printf("4. Duplicated the by_data descriptor, then released the copy: %u buffers point into the mmap\n",
	       mmap_bufs(mmap));

	/* Data sections. */
	EXPECT(doca_buf_set_data(by_data, memory + 71, 7), DOCA_SUCCESS);
	EXPECT(doca_buf_get_data(by_data, &ptr), DOCA_SUCCESS);
	EXPECT_TRUE(memcmp(ptr, "softdpu", 7) == 0);
	EXPECT(doca_buf_set_data(by_data, memory + 71, 100), DOCA_ERROR_INVALID_VALUE); /* past the buffer */
	EXPECT(doca_buf_reset_data_len(by_data), DOCA_SUCCESS);
	EXPECT(doca_buf_get_data_len(by_data, &len), DOCA_SUCCESS);
	EXPECT_TRUE(len == 0);
	EXPECT(doca_buf_set_data(by_data, memory + 64, 14), DOCA_SUCCESS);
	printf("5. set_data moved the data to \"softdpu\"; reset_data_len emptied it; out-of-range data is refused\n");

	/* A scatter/gather list. */
	EXPECT(doca_buf_chain_list(by_addr, by_data), DOCA_SUCCESS);
	EXPECT(doca_buf_get_list_len(by_addr, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 2);
	EXPECT(doca_buf_is_in_list(by_data, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 1);
	EXPECT(doca_buf_is_first_in_list(by_addr, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 1);
	EXPECT(doca_buf_is_last_in_list(by_data, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 1);
	EXPECT(doca_buf_get_next_in_list(by_addr, &next), DOCA_SUCCESS);
	EXPECT_TRUE(next == by_data);
	EXPECT(doca_buf_get_last_in_list(by_addr, &last), DOCA_SUCCESS);
	EXPECT_TRUE(last == by_data);
	EXPECT(doca_buf_dec_refcount(by_data, NULL), DOCA_ERROR_NOT_PERMITTED); /* not the head */
	EXPECT(doca_buf_get_list_len(by_data, &count), DOCA_ERROR_NOT_PERMITTED);
	printf("6. Chained the two buffers: a list of %u, walked head -> next -> end\n", 2u);
	EXPECT(doca_buf_unchain_list(by_addr, by_data), DOCA_SUCCESS);
	EXPECT(doca_buf_is_in_list(by_addr, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 0);
	EXPECT(doca_buf_unchain_list(by_addr, by_data), DOCA_ERROR_INVALID_VALUE); /* no longer in the list */
	printf("7. Unchained them again: two lone buffers\n");

	/* Reference counts. */
	EXPECT(doca_buf_inc_refcount(by_addr, &refcount), DOCA_SUCCESS);
	EXPECT_TRUE(refcount == 1);
	EXPECT(doca_buf_get_refcount(by_addr, &refcount), DOCA_SUCCESS);
	EXPECT_TRUE(refcount == 2);
	EXPECT(doca_buf_dec_refcount(by_addr, &refcount), DOCA_SUCCESS);
	EXPECT(doca_buf_chain_list(by_data, by_addr), DOCA_SUCCESS);
	EXPECT(doca_buf_dec_refcount(by_data, &refcount), DOCA_SUCCESS); /* releases the whole list */
	EXPECT_TRUE(refcount == 1);
	EXPECT(doca_buf_inventory_get_num_free_elements(inventory, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 8);
	EXPECT(doca_buf_dec_refcount(by_data, NULL), DOCA_ERROR_BAD_STATE); /* already released */
	printf("8. Reference counts: 1 -> 2 -> 1; releasing a list head returned both buffers (%u free)\n", count);

	/* A buffer pool: fixed-size elements cut from the mmap. */
	EXPECT(doca_buf_pool_create(16, 100, mmap, &pool), DOCA_SUCCESS);
	EXPECT(doca_buf_pool_set_element_alignment(pool, 64), DOCA_SUCCESS);
	EXPECT(doca_buf_pool_get_element_alignment(pool, &len), DOCA_SUCCESS);
	EXPECT_TRUE(len == 64);
	EXPECT(doca_buf_pool_get_num_elements(pool, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 16);
	EXPECT(doca_buf_pool_set_user_data(pool, user_data), DOCA_SUCCESS);
	EXPECT(doca_buf_pool_get_user_data(pool, &got_user_data), DOCA_SUCCESS);
	EXPECT_TRUE(got_user_data.u64 == user_data.u64);
	EXPECT(doca_buf_pool_buf_alloc(pool, &pooled), DOCA_ERROR_BAD_STATE);
	EXPECT(doca_buf_pool_start(pool), DOCA_SUCCESS);
	EXPECT(doca_buf_pool_buf_alloc(pool, &pooled), DOCA_SUCCESS);
	EXPECT(doca_buf_get_head(pooled, &ptr), DOCA_SUCCESS);
	EXPECT(doca_buf_get_len(pooled, &len), DOCA_SUCCESS);
	EXPECT_TRUE(((uintptr_t)ptr % 64) == 0 && len == 100);
	EXPECT(doca_buf_pool_stop(pool), DOCA_ERROR_IN_USE);
	EXPECT(doca_buf_dec_refcount(pooled, NULL), DOCA_SUCCESS);
	EXPECT(doca_buf_pool_get_num_free_elements(pool, &count), DOCA_SUCCESS);
	EXPECT_TRUE(count == 16);
	EXPECT(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
	printf("9. Pool: 16 elements of 100 bytes aligned to 64; allocated one, returned it\n");

	/* A buffer array on the CPU (experimental API); GPU targets are not available. */
	EXPECT(doca_buf_arr_create(mmap, &arr), DOCA_SUCCESS);
	EXPECT(doca_buf_arr_set_params(arr, 256, 16, 0), DOCA_SUCCESS);
	EXPECT(doca_buf_arr_set_target_gpu(arr, (struct doca_gpu *)&user_data), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT(doca_buf_arr_set_target_dpa(arr, (struct doca_dpa *)&user_data), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT(doca_buf_arr_start(arr), DOCA_SUCCESS);
	EXPECT_TRUE(mmap_bufs(mmap) == 16);
	EXPECT(doca_buf_arr_get_gpu_handle(arr, NULL), DOCA_ERROR_INVALID_VALUE);
	{
		struct doca_dpa_dev_buf_arr *dpa_handle = NULL;
		EXPECT(doca_buf_arr_get_dpa_handle(arr, &dpa_handle), DOCA_ERROR_NOT_SUPPORTED); /* a CPU array */
	}
	EXPECT(doca_buf_arr_stop(arr), DOCA_SUCCESS);
	EXPECT_TRUE(mmap_bufs(mmap) == 0);
	EXPECT(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	printf("10. Buffer array: 16 buffers of 256 bytes built on the CPU, then destroyed\n");

	/* Tearing down, in order. */
	EXPECT(doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory, 8, &by_addr), DOCA_SUCCESS);
	EXPECT(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED); /* a buffer still points into it */
	EXPECT(doca_buf_inventory_destroy(inventory), DOCA_ERROR_IN_USE);
	EXPECT(doca_buf_dec_refcount(by_addr, NULL), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_stop(inventory), DOCA_SUCCESS);
	EXPECT(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS);
	EXPECT(doca_mmap_stop(mmap), DOCA_SUCCESS); /* also revokes the export */
	EXPECT(doca_mmap_get_exported(mmap, &flag), DOCA_SUCCESS);
	EXPECT_TRUE(flag == 0);
	EXPECT(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	EXPECT_TRUE(free_cb_calls == 1);
	EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	printf("11. Tore down: the mmap refused to go while a buffer pointed into it, then went\n");

	if (failures != 0) {
		fprintf(stderr, "Sample failed: %d mismatches\n", failures);
		return EXIT_FAILURE;
	}
	printf("Sample finished successfully\n");
	return EXIT_SUCCESS;
}
