// The DPDK ports of the DOCA DPDK bridge (doca_dpdk_port_probe): each is DPDK's own net_memif PMD
// on the probed device's end of its packet link (softdpu/link.h, docs/links.md).
//
// Owns: the table of ports probed through the bridge (device, port id, vdev name). Does not own the
// devices (a port's device must stay open while the port is used) nor the DPDK ports (the
// application closes them; a closed port is no longer reported).
//
// Thread unsafe, as DOCA documents doca_dpdk_port_probe; the table itself is locked.
#pragma once

#include <doca_error.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct doca_dev;

namespace softdpu::dpdk_bridge {

// The devargs of doca_dpdk_port_probe, parsed: "key=value" (or "key") items separated by commas.
struct Devargs {
	std::vector<std::pair<std::string, std::string>> items;
	std::string representor; // the value of representor=, "" when absent
	std::string error;       // set when the string is refused
};
// Refuses an empty item, an item without a key, a key outside [a-z0-9_-], and any item that is a
// PCI address ([domain:]bus:devid.func).
Devargs parse_devargs(std::string_view text);

doca_error_t probe_port(doca_dev &dev, const char *devargs) noexcept;
doca_error_t first_port_of(const doca_dev &dev, uint16_t &port_id) noexcept;
doca_error_t dev_of_port(uint16_t port_id, doca_dev *&dev) noexcept;

} // namespace softdpu::dpdk_bridge
