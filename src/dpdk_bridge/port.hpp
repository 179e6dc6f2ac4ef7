// The DPDK ports of the DOCA DPDK bridge (doca_dpdk_port_probe): each is DPDK's own net_memif PMD
// on the probed device's end of its packet link (softdpu/link.h, docs/links.md), and, for a DPU PF
// probed with representor=, one more on each named representor's end (the serving end).
//
// Owns: the table of ports probed through the bridge (device, port id, vdev name; a representor's
// port is the probed PF's device's, as mlx5's representor ports share their PF's device). Does not own the
// devices (a port's device must stay open while the port is used) nor the DPDK ports (the
// application closes them; a closed port is no longer reported).
//
// Thread unsafe, as DOCA documents doca_dpdk_port_probe; the table itself is locked.
#pragma once

#include <doca_error.h>

#include <cstdint>

struct doca_dev;

namespace softdpu::dpdk_bridge {

doca_error_t probe_port(doca_dev &dev, const char *devargs) noexcept;
doca_error_t first_port_of(const doca_dev &dev, uint16_t &port_id) noexcept;
doca_error_t dev_of_port(uint16_t port_id, doca_dev *&dev) noexcept;

} // namespace softdpu::dpdk_bridge
