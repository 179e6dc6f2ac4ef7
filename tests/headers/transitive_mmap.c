/*
 * Includes doca_mmap.h only. In DOCA 2.5 that header includes doca_dev.h and <stdbool.h>, so the
 * doca_devinfo_* / doca_dev_* calls and bool below need nothing else. Compiled as C11 and, through a
 * generated wrapper, as C++20.
 */
#include <doca_mmap.h>

bool headers_mmap_use(const char *pci_addr, struct doca_dev **dev);

bool headers_mmap_use(const char *pci_addr, struct doca_dev **dev)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;
	char addr[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint8_t is_equal = 0;
	bool found = false;

	if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS)
		return false;
	for (uint32_t i = 0; i < count && !found; i++) {
		if (doca_devinfo_get_pci_addr_str(list[i], addr) != DOCA_SUCCESS)
			continue;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci_addr, &is_equal) == DOCA_SUCCESS && is_equal)
			found = doca_dev_open(list[i], dev) == DOCA_SUCCESS;
	}
	doca_devinfo_destroy_list(list);
	return found;
}
