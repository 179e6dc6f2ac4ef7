// doca_dev.h: argument checks, then the DeviceTable and the topology do the work.
#include "core/dev/dev.hpp"

#include "common/sdk_log.hpp"

#include <cstring>

using softdpu::dev::DeviceTable;
using softdpu::device::Function;
using softdpu::device::LinkLayer;
using softdpu::device::PciAddress;

namespace {

// Copies a string with its NUL into a caller buffer that must hold `required` bytes.
doca_error_t copy_string(const std::string &value, char *out, uint32_t size, uint32_t required)
{
	if (size < required || value.size() >= size)
		return DOCA_ERROR_INVALID_VALUE;
	std::memcpy(out, value.c_str(), value.size() + 1);
	return DOCA_SUCCESS;
}

doca_error_t compare_pci(const PciAddress &actual, const char *pci_addr_str, uint8_t *is_equal)
{
	if (pci_addr_str == nullptr || is_equal == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	// Bounded read: a valid address is at most 12 characters.
	const size_t length = strnlen(pci_addr_str, DOCA_DEVINFO_PCI_ADDR_SIZE);
	auto candidate = PciAddress::parse(std::string_view(pci_addr_str, length));
	if (!candidate) {
		SDK_LOG_ERR("malformed PCI address \"%.*s\"", static_cast<int>(length), pci_addr_str);
		return DOCA_ERROR_INVALID_VALUE;
	}
	// The short "BB:DD.F" form leaves the domain at 0, which is what it means.
	*is_equal = *candidate == actual ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t rep_filter_cap(const doca_devinfo *devinfo, uint8_t *supported, bool softdpu::device::Capabilities::*cap)
{
	if (devinfo == nullptr || supported == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!devinfo->exposes_representors())
		return DOCA_ERROR_NOT_SUPPORTED;
	*supported = devinfo->caps().*cap ? 1 : 0;
	return DOCA_SUCCESS;
}

} // namespace

extern "C" {

doca_error_t doca_devinfo_create_list(doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	if (dev_list == nullptr || nb_devs == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_error_t error = DOCA_SUCCESS;
	DeviceTable *table = DeviceTable::current(&error);
	if (table == nullptr) {
		// NOT_FOUND is the emulated equivalent of "failed to get RDMA devices list".
		if (error == DOCA_ERROR_NOT_FOUND)
			SDK_LOG_ERR("no device list: %s", softdpu::device::Topology::current_error().c_str());
		return error;
	}
	return table->create_list(dev_list, nb_devs);
}

doca_error_t doca_devinfo_destroy_list(doca_devinfo **dev_list)
{
	if (dev_list == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return DeviceTable::destroy_list_of_any_table(dev_list);
}

doca_error_t doca_devinfo_rep_create_list(doca_dev *dev, int filter, doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep)
{
	if (dev == nullptr || dev_list_rep == nullptr || nb_devs_rep == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return dev->devinfo().table().create_rep_list(*dev, filter, dev_list_rep, nb_devs_rep);
}

doca_error_t doca_devinfo_rep_destroy_list(doca_devinfo_rep **dev_list_rep)
{
	if (dev_list_rep == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return DeviceTable::destroy_rep_list_of_any_table(dev_list_rep);
}

doca_error_t doca_dev_open(doca_devinfo *devinfo, doca_dev **dev)
{
	if (devinfo == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->table().open(*devinfo, dev);
}

doca_error_t doca_dev_close(doca_dev *dev)
{
	// Closing nothing succeeds, as free(NULL) does: DOCA documents only SUCCESS and IN_USE, and
	// NVIDIA's DMA samples (2.5 to 2.10) close state.dev again after destroy_core_objects() has
	// closed it and set it to NULL, and count any error as a failed run.
	if (dev == nullptr)
		return DOCA_SUCCESS;
	return dev->devinfo().table().close(*dev);
}

doca_error_t doca_dev_rep_open(doca_devinfo_rep *devinfo, doca_dev_rep **dev_rep)
{
	if (devinfo == nullptr || dev_rep == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->manager().table().open_rep(*devinfo, dev_rep);
}

doca_error_t doca_dev_rep_close(doca_dev_rep *dev)
{
	if (dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return dev->devinfo().manager().table().close_rep(*dev);
}

doca_devinfo *doca_dev_as_devinfo(const doca_dev *dev)
{
	// A device opened from a verbs PD has no devinfo to report (DOCA documents NULL).
	return dev != nullptr && !dev->from_pd() ? &dev->devinfo() : nullptr;
}

doca_devinfo_rep *doca_dev_rep_as_devinfo(doca_dev_rep *dev_rep)
{
	return dev_rep != nullptr ? &dev_rep->devinfo() : nullptr;
}

doca_error_t doca_devinfo_rep_get_vuid(const doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size)
{
	if (devinfo_rep == nullptr || rep_vuid == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_string(devinfo_rep->representor().vuid, rep_vuid, size, DOCA_DEVINFO_REP_VUID_SIZE);
}

doca_error_t doca_devinfo_rep_get_pci_addr_str(const doca_devinfo_rep *devinfo_rep, char *pci_addr_str)
{
	if (devinfo_rep == nullptr || pci_addr_str == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	devinfo_rep->representor().pci.format(pci_addr_str);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_pci_func_type(const doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type)
{
	if (devinfo_rep == nullptr || pci_func_type == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*pci_func_type = static_cast<enum doca_pci_func_type>(devinfo_rep->representor().type);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_is_equal_pci_addr(const doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal)
{
	if (devinfo_rep == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return compare_pci(devinfo_rep->representor().pci, pci_addr_str, is_equal);
}

doca_error_t doca_devinfo_rep_get_is_hotplug(const doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug)
{
	if (devinfo_rep == nullptr || is_hotplug == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_hotplug = devinfo_rep->representor().hotplug ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_pci_addr_str(const doca_devinfo *devinfo, char *pci_addr_str)
{
	if (devinfo == nullptr || pci_addr_str == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	devinfo->function().pci.format(pci_addr_str);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_is_equal_pci_addr(const doca_devinfo *devinfo, const char *pci_addr_str, uint8_t *is_equal)
{
	if (devinfo == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return compare_pci(devinfo->function().pci, pci_addr_str, is_equal);
}

doca_error_t doca_devinfo_get_ipv4_addr(const doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size)
{
	if (devinfo == nullptr || ipv4_addr == nullptr || size < DOCA_DEVINFO_IPV4_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	const auto &address = devinfo->function().ipv4;
	if (!address)
		return DOCA_ERROR_OPERATING_SYSTEM; // the interface has no IPv4 address
	std::memcpy(ipv4_addr, address->data(), address->size());
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_ipv6_addr(const doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size)
{
	if (devinfo == nullptr || ipv6_addr == nullptr || size < DOCA_DEVINFO_IPV6_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	const auto &address = devinfo->function().ipv6;
	if (!address)
		return DOCA_ERROR_OPERATING_SYSTEM; // the interface has no IPv6 address
	std::memcpy(ipv6_addr, address->data(), address->size());
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_mac_addr(const doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size)
{
	if (devinfo == nullptr || mac_addr == nullptr || size < DOCA_DEVINFO_MAC_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	const Function &function = devinfo->function();
	if (function.link_layer != LinkLayer::ethernet || !function.mac)
		return DOCA_ERROR_NOT_SUPPORTED;
	std::memcpy(mac_addr, function.mac->data(), function.mac->size());
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_iface_name(const doca_devinfo *devinfo, char *iface_name, uint32_t size)
{
	if (devinfo == nullptr || iface_name == nullptr || size < DOCA_DEVINFO_IFACE_NAME_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	if (devinfo->function().iface.empty())
		return DOCA_ERROR_OPERATING_SYSTEM; // no network interface bound to the function
	return copy_string(devinfo->function().iface, iface_name, size, DOCA_DEVINFO_IFACE_NAME_SIZE);
}

doca_error_t doca_devinfo_get_ibdev_name(const doca_devinfo *devinfo, char *ibdev_name, uint32_t size)
{
	if (devinfo == nullptr || ibdev_name == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_string(devinfo->function().ibdev, ibdev_name, size, DOCA_DEVINFO_IBDEV_NAME_SIZE);
}

doca_error_t doca_devinfo_get_lid(const doca_devinfo *devinfo, uint16_t *lid)
{
	if (devinfo == nullptr || lid == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (devinfo->function().link_layer != LinkLayer::infiniband)
		return DOCA_ERROR_NOT_SUPPORTED;
	*lid = devinfo->function().lid;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const doca_devinfo *devinfo, uint8_t *is_hotplug_manager)
{
	if (devinfo == nullptr || is_hotplug_manager == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*is_hotplug_manager = devinfo->caps().hotplug_manager ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const doca_devinfo *devinfo, uint8_t *filter_all_supported)
{
	return rep_filter_cap(devinfo, filter_all_supported, &softdpu::device::Capabilities::rep_filter_all);
}

doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const doca_devinfo *devinfo, uint8_t *filter_net_supported)
{
	return rep_filter_cap(devinfo, filter_net_supported, &softdpu::device::Capabilities::rep_filter_net);
}

doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const doca_devinfo *devinfo,
							       uint8_t *filter_emulated_supported)
{
	return rep_filter_cap(devinfo, filter_emulated_supported, &softdpu::device::Capabilities::rep_filter_emulated);
}

} // extern "C"
