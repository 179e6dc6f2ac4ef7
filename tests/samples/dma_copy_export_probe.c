// pkg-config: doca-common
/*
 * Tells dma_copy_test.sh whether this softdpu can export host memory over PCI yet: exit status 0
 * if doca_mmap_export_pci works on host PF0, 77 if it returns DOCA_ERROR_NOT_SUPPORTED, 1 on any
 * other failure. Run it with SOFTDPU_SIDE=host.
 */
#include <stdio.h>
#include <stdlib.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>

#define EXIT_EXPORT_NOT_SUPPORTED 77

int main(void)
{
	static char memory[4096];
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	const void *blob;
	size_t blob_len;
	uint32_t count;
	doca_error_t result;

	result = doca_devinfo_create_list(&list, &count);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	for (uint32_t i = 0; i < count && dev == NULL; i++) {
		uint8_t is_pf0 = 0;

		if (doca_devinfo_is_equal_pci_addr(list[i], "0b:00.0", &is_pf0) == DOCA_SUCCESS && is_pf0)
			result = doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	if (dev == NULL) {
		fprintf(stderr, "export probe: host PF0 0b:00.0 not found (is SOFTDPU_SIDE=host?)\n");
		return EXIT_FAILURE;
	}
	result = doca_mmap_create(&mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_memrange(mmap, memory, sizeof(memory));
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_export_pci(mmap, dev, &blob, &blob_len);
	printf("export probe: doca_mmap_export_pci: %s\n", doca_error_get_name(result));
	if (mmap != NULL)
		doca_mmap_destroy(mmap);
	doca_dev_close(dev);
	if (result == DOCA_ERROR_NOT_SUPPORTED)
		return EXIT_EXPORT_NOT_SUPPORTED;
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
