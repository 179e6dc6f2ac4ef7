/*
 * softdpu: DOCA devices (local devices and their representors), as in DOCA 2.5's doca_dev.h.
 *
 * A local device (doca_devinfo / doca_dev) is a function this system can use directly; a
 * representor (doca_devinfo_rep / doca_dev_rep) is the DPU's proxy for a host function or a DPU
 * sub-function. Representors are listed through a DPU local device that manages them.
 * In softdpu the devices come from the emulated topology (docs/topology.md).
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_devinfo_rep;
struct doca_dev;
struct doca_dev_rep;

/* Buffer sizes, each including the terminating NUL for strings. */
#define DOCA_DEVINFO_VUID_SIZE 128
#define DOCA_DEVINFO_IPV4_ADDR_SIZE 4
#define DOCA_DEVINFO_IPV6_ADDR_SIZE 16
#define DOCA_DEVINFO_MAC_ADDR_SIZE 6
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
/* "XXXX:XX:XX.X" */
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13
/* "XX:XX.X" */
#define DOCA_DEVINFO_PCI_BDF_SIZE 8
#define DOCA_DEVINFO_REP_VUID_SIZE 128
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE 13
#define DOCA_DEVINFO_REP_PCI_BDF_SIZE 8

/* Which representors doca_devinfo_rep_create_list() returns; NET and EMULATED may be combined. */
enum doca_devinfo_rep_filter {
	DOCA_DEVINFO_REP_FILTER_ALL = 0,
	DOCA_DEVINFO_REP_FILTER_NET = 1 << 1,
	DOCA_DEVINFO_REP_FILTER_EMULATED = 1 << 2,
};

/* Lists the local devices; *dev_list is an array of *nb_devs entries (NULL-terminated), released
 * with doca_devinfo_destroy_list(). softdpu: NOT_FOUND when the emulated topology failed to load. */
DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/* Releases a list from doca_devinfo_create_list(); its entries must no longer be used. */
DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);

/* Lists the representors that the local device dev manages, filtered by a combination of
 * enum doca_devinfo_rep_filter; NOT_SUPPORTED for a device that exposes no representors or
 * lacks the filter's capability. Released with doca_devinfo_rep_destroy_list(). */
DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep);

/* Releases a list from doca_devinfo_rep_create_list(). */
DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);

/* Opens a local device. Opening an open device returns the same doca_dev; each open needs a close. */
DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/* Closes one open of a device; IN_USE while objects created on it still exist. */
DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev);

/* Opens a representor (same instance when already open); keeps its local device in use. */
DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/* Closes one open of a representor; IN_USE while objects created on it still exist. */
DOCA_STABLE
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);

/* The devinfo of an open device, valid while the device is open; NULL for NULL. */
DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/* The devinfo of an open representor, valid while it is open; NULL for NULL. */
DOCA_STABLE
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

/* Writes the representor's vendor unique id; size must be at least DOCA_DEVINFO_REP_VUID_SIZE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

/* Writes "XXXX:XX:XX.X" into a buffer of at least DOCA_DEVINFO_REP_PCI_ADDR_SIZE bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

/* The representor's PCI function type. The API reference renders this parameter as
 * "doca_pci_func_type **", but its description is a single enum value; like DOCA's header, the
 * parameter is a pointer to one enum doca_pci_func_type. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

/* Sets *is_equal to 1 when pci_addr_str ("XXXX:XX:XX.X" or "XX:XX.X") is the representor's
 * address; INVALID_VALUE for a malformed address. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal);

/* 1 when the representor's function was hot-plugged, 0 when statically plugged. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug);

/* Writes "XXXX:XX:XX.X" into a buffer of at least DOCA_DEVINFO_PCI_ADDR_SIZE bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

/* Sets *is_equal to 1 when pci_addr_str ("XXXX:XX:XX.X" or "XX:XX.X") is the device's address;
 * INVALID_VALUE for a malformed address. */
DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
					    uint8_t *is_equal);

/* Copies the IPv4 address (network order); size at least DOCA_DEVINFO_IPV4_ADDR_SIZE.
 * OPERATING_SYSTEM when the interface has no IPv4 address. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

/* Copies the IPv6 address; size at least DOCA_DEVINFO_IPV6_ADDR_SIZE.
 * OPERATING_SYSTEM when the interface has no IPv6 address. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size);

/* Copies the MAC address; size at least DOCA_DEVINFO_MAC_ADDR_SIZE. NOT_SUPPORTED when the port's
 * link layer is not Ethernet (RoCE). */
DOCA_STABLE
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/* Copies the network interface name; size at least DOCA_DEVINFO_IFACE_NAME_SIZE.
 * OPERATING_SYSTEM when the function has no network interface. */
DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

/* Copies the IB device name (e.g. "mlx5_0"); size at least DOCA_DEVINFO_IBDEV_NAME_SIZE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

/* The port LID; NOT_SUPPORTED when the port's link layer is not InfiniBand. */
DOCA_STABLE
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid);

/* Whether the device can hot-plug emulated functions. */
DOCA_STABLE
doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager);

/* Whether doca_devinfo_rep_create_list() accepts DOCA_DEVINFO_REP_FILTER_ALL on this device;
 * NOT_SUPPORTED for a device that exposes no representors. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_all_supported);

/* Same for DOCA_DEVINFO_REP_FILTER_NET. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_net_supported);

/* Same for DOCA_DEVINFO_REP_FILTER_EMULATED. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo,
							       uint8_t *filter_emulated_supported);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
