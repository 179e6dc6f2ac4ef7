// Opening emulated devices for tests of every kind.
#pragma once

#include <doca_dev.h>

#include <cstdint>

namespace softdpu_test {

// Opens the first device of this process's side for which matches(devinfo) is true; nullptr if none.
template <typename Matches> doca_dev *open_first_device(Matches matches)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS)
		return nullptr;
	doca_dev *dev = nullptr;
	for (uint32_t i = 0; i < count && dev == nullptr; ++i) {
		if (matches(list[i]))
			doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

// The nth device (0 = first) of this process's side whose PCI address equals pci ("03:00.0":
// p0 then p0s0). nullptr if none.
inline doca_dev *open_by_pci(const char *pci, int nth = 0)
{
	return open_first_device([&](doca_devinfo *devinfo) {
		uint8_t equal = 0;
		return doca_devinfo_is_equal_pci_addr(devinfo, pci, &equal) == DOCA_SUCCESS && equal && nth-- == 0;
	});
}

} // namespace softdpu_test
