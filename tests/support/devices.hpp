// Opening emulated devices by PCI address, for tests of every kind.
#pragma once

#include <doca_dev.h>

#include <cstdint>

namespace softdpu_test {

// The nth device (0 = first) of this process's side whose PCI address equals pci ("03:00.0":
// p0 then p0s0). nullptr if none.
inline doca_dev *open_by_pci(const char *pci, int nth = 0)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS)
		return nullptr;
	doca_dev *dev = nullptr;
	for (uint32_t i = 0; i < count && dev == nullptr; ++i) {
		uint8_t equal = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal && nth-- == 0)
			doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

} // namespace softdpu_test
