#include "dpdk_bridge/port.hpp"

#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "dpdk_bridge/devargs.hpp"

#include <softdpu/link.h>

#include <doca_error.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace softdpu::dpdk_bridge {

namespace {

using device::Function;
using device::FuncType;
using device::Representor;
using device::Side;
using device::Topology;

struct Port {
	doca_dev *dev;
	uint16_t port_id;
	std::string vdev_name;
	bool representor; // a representor's port; false: the device's own
};

std::mutex ports_mutex;
std::vector<Port> ports; // guarded by ports_mutex

// The port of a device if it is still a valid DPDK port (the application may have closed it).
bool is_live(const Port &port) noexcept
{
	char name[RTE_ETH_NAME_MAX_LEN];
	return rte_eth_dev_is_valid_port(port.port_id) != 0 && rte_eth_dev_get_name_by_port(port.port_id, name) == 0 &&
	       port.vdev_name == name;
}

// The DPU PFs in topology order: pf0 (p0), pf1 (p1), ... as representor= numbers them.
std::vector<const Function *> dpu_pfs(const Topology &topology)
{
	std::vector<const Function *> pfs;
	for (const auto &function : topology.all_functions()) {
		if (function->side == Side::dpu && function->type == FuncType::pf)
			pfs.push_back(function.get());
	}
	return pfs;
}

// A VF's or SF's number: its place among its PF's functions of its type, in topology order
// (pf0vf0, pf0vf1 are host pf0's first and second VFs).
size_t function_number(const Topology &topology, const Function &function)
{
	size_t number = 0;
	for (const auto &other : topology.all_functions()) {
		if (other.get() == &function)
			return number;
		if (other->parent == function.parent && other->type == function.type)
			++number;
	}
	return number;
}

// The representor of DPU PF `manager` that the selector names, or null.
const Representor *find_representor(const Topology &topology, const Function &manager,
				    const RepresentorSelector &selector)
{
	for (const auto &rep : topology.representors()) {
		const Function *function = rep->represents;
		if (rep->manager != &manager || function == nullptr)
			continue;
		switch (selector.kind) {
		case RepresentorKind::host_pf:
			if (function->side == Side::host && function->type == FuncType::pf)
				return rep.get();
			break;
		case RepresentorKind::vf:
			if (function->side == Side::host && function->type == FuncType::vf &&
			    function_number(topology, *function) == selector.number)
				return rep.get();
			break;
		case RepresentorKind::sf:
			if (function->side == Side::dpu && function->type == FuncType::sf &&
			    function_number(topology, *function) == selector.number)
				return rep.get();
			break;
		}
	}
	return nullptr;
}

// The representors that the representor= values name, each once, in order; INVALID_VALUE (logged)
// for a malformed value or a representor the topology lacks.
doca_error_t resolve_representors(const doca_dev &dev, const std::vector<std::string> &values,
				  std::vector<const Representor *> &found)
{
	const Function &probed = dev.function();
	if (probed.side != Side::dpu || probed.type != FuncType::pf) {
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: representor=%s on device %s, which is not a DPU PF: "
			    "only a DPU PF (p0, p1) has representors",
			    values.front().c_str(), probed.name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	const Topology &topology = dev.devinfo().table().topology();
	const std::vector<const Function *> pfs = dpu_pfs(topology);
	const uint16_t probed_number = static_cast<uint16_t>(std::find(pfs.begin(), pfs.end(), &probed) - pfs.begin());
	for (const std::string &value : values) {
		const RepresentorList list = parse_representor(value);
		if (!list.error.empty()) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: representor=%s refused: %s", value.c_str(),
				    list.error.c_str());
			return DOCA_ERROR_INVALID_VALUE;
		}
		for (const RepresentorSelector &selector : list.selectors) {
			const uint16_t pf = selector.pf.value_or(probed_number);
			const Representor *rep =
			    pf < pfs.size() ? find_representor(topology, *pfs[pf], selector) : nullptr;
			if (rep == nullptr) {
				RepresentorSelector absolute = selector;
				absolute.pf = pf;
				SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: representor=%s names %s, which the "
					    "topology lacks (%s)",
					    value.c_str(), absolute.spelling().c_str(),
					    pf < pfs.size() ? ("no such representor of DPU PF " + pfs[pf]->name).c_str()
							    : "no such DPU PF");
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (std::find(found.begin(), found.end(), rep) == found.end())
				found.push_back(rep);
		}
	}
	return DOCA_SUCCESS;
}

// Creates DPDK's net_memif port on one end of a link: the vdev name is stable,
// net_memif_softdpu_<link>_<s|c>.
doca_error_t create_memif_port(const softdpu_link &link, bool is_master, std::string &vdev_name, uint16_t &port_id)
{
	vdev_name = "net_memif_softdpu_" + std::string(link.name) + (is_master ? "_s" : "_c");
	const std::string vdev_args =
	    vdev_name + ",socket=" + link.socket + ",socket-abstract=no,role=" + (is_master ? "server" : "client") +
	    ",id=" + std::to_string(link.interface_id) + ",bsize=" + std::to_string(link.buffer_size) +
	    ",rsize=" + std::to_string(link.log2_ring_size);
	// DPDK would answer a second vdev of the same name with the first one's port.
	if (rte_eth_dev_get_port_by_name(vdev_name.c_str(), &port_id) == 0) {
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: DPDK port %u is already named %s", port_id,
			    vdev_name.c_str());
		return DOCA_ERROR_DRIVER;
	}
	const int probed = rte_dev_probe(vdev_args.c_str());
	if (probed < 0) {
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: DPDK could not create port \"%s\": %s",
			    vdev_args.c_str(), rte_strerror(-probed));
		return DOCA_ERROR_DRIVER;
	}
	if (rte_eth_dev_get_port_by_name(vdev_name.c_str(), &port_id) != 0) {
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: DPDK created no port named %s", vdev_name.c_str());
		(void)rte_eal_hotplug_remove("vdev", vdev_name.c_str());
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

// The link that `end` (a function or representor name) ends, and whether that end serves.
doca_error_t find_link(const std::string &end, softdpu_link &link, bool &is_master)
{
	uint8_t master = 0;
	const doca_error_t found = softdpu_link_find(end.c_str(), &link, &master);
	if (found == DOCA_ERROR_NOT_FOUND) {
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: %s has no Ethernet network interface, so no packet "
			    "link and no DPDK port (docs/links.md)",
			    end.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (found != DOCA_SUCCESS) {
		// The topology cannot be loaded, or the links cannot be made (a socket path too long):
		// softdpu_link_find logged why. DOCA documents INVALID_VALUE, DRIVER and NO_MEMORY for the
		// probe; what keeps the port from being made is the driver's business.
		if (found == DOCA_ERROR_NO_MEMORY)
			return found;
		SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: the packet link of %s is unknown (%s; the reason is "
			    "logged above)",
			    end.c_str(), doca_error_get_name(found));
		return DOCA_ERROR_DRIVER;
	}
	is_master = master != 0;
	return DOCA_SUCCESS;
}

} // namespace

doca_error_t probe_port(doca_dev &dev, const char *devargs) noexcept
{
	return common::api_barrier("doca_dpdk_port_probe", [&]() -> doca_error_t {
		if (rte_lcore_count() == 0) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: the DPDK EAL is not initialised: call "
				    "rte_eal_init first");
			return DOCA_ERROR_DRIVER;
		}
		const Devargs parsed = parse_devargs(devargs);
		if (!parsed.error.empty()) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: devargs \"%s\" refused: %s", devargs,
				    parsed.error.c_str());
			return DOCA_ERROR_INVALID_VALUE;
		}
		std::vector<const Representor *> representors;
		if (!parsed.representors.empty()) {
			if (const doca_error_t resolved = resolve_representors(dev, parsed.representors, representors);
			    resolved != DOCA_SUCCESS)
				return resolved;
		}
		// The links: the device's own end first, then each representor's (the serving end).
		struct End {
			softdpu_link link{};
			bool is_master = false;
		};
		std::vector<End> ends(1 + representors.size());
		if (const doca_error_t found = find_link(dev.function().name, ends[0].link, ends[0].is_master);
		    found != DOCA_SUCCESS)
			return found;
		for (size_t i = 0; i < representors.size(); ++i) {
			if (const doca_error_t found =
				find_link(representors[i]->name, ends[i + 1].link, ends[i + 1].is_master);
			    found != DOCA_SUCCESS)
				return found;
		}

		const std::lock_guard lock(ports_mutex);
		for (const Port &port : ports) {
			if (port.dev == &dev && !port.representor && is_live(port)) {
				SDK_LOG_ERR(
				    "DPDK bridge: doca_dpdk_port_probe: device %s is already probed (DPDK port %u)",
				    dev.function().name.c_str(), port.port_id);
				return DOCA_ERROR_DRIVER;
			}
		}
		// net_memif wants the socket's directory to exist for either role.
		char dir[SOFTDPU_LINK_SOCKET_SIZE];
		if (const doca_error_t made = softdpu_link_get_socket_dir(dir, sizeof(dir), 1); made != DOCA_SUCCESS) {
			if (made == DOCA_ERROR_NO_MEMORY)
				return made;
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: the link sockets' directory cannot be made "
				    "(%s; the reason is logged above)",
				    doca_error_get_name(made));
			return DOCA_ERROR_DRIVER;
		}

		// Ports of closed DPDK devices are forgotten here; room for the new ones is made before any
		// is created, so that nothing throws once DPDK has them.
		std::erase_if(ports, [](const Port &port) { return !is_live(port); });
		ports.reserve(ports.size() + ends.size());
		std::vector<Port> created;
		created.reserve(ends.size());
		for (size_t i = 0; i < ends.size(); ++i) {
			Port port{&dev, 0, {}, i > 0};
			doca_error_t made = DOCA_ERROR_NO_MEMORY;
			try {
				made = create_memif_port(ends[i].link, ends[i].is_master, port.vdev_name, port.port_id);
			} catch (const std::bad_alloc &) {
				made = DOCA_ERROR_NO_MEMORY; // before DPDK made the port
			}
			if (made != DOCA_SUCCESS) {
				// Every port this call made goes again.
				for (const Port &undo : created) {
					(void)rte_eth_dev_close(undo.port_id);
					(void)rte_eal_hotplug_remove("vdev", undo.vdev_name.c_str());
				}
				return made;
			}
			created.push_back(std::move(port));
		}
		std::move(created.begin(), created.end(), std::back_inserter(ports));
		return DOCA_SUCCESS;
	});
}

doca_error_t first_port_of(const doca_dev &dev, uint16_t &port_id) noexcept
{
	const std::lock_guard lock(ports_mutex);
	// The device's own port; once that is closed, its first representor port still open (in the
	// order probed).
	const Port *first = nullptr;
	for (const Port &port : ports) {
		if (port.dev != &dev || !is_live(port))
			continue;
		if (!port.representor) {
			first = &port;
			break;
		}
		if (first == nullptr)
			first = &port;
	}
	if (first == nullptr)
		return DOCA_ERROR_NOT_FOUND;
	port_id = first->port_id;
	return DOCA_SUCCESS;
}

doca_error_t dev_of_port(uint16_t port_id, doca_dev *&dev) noexcept
{
	const std::lock_guard lock(ports_mutex);
	for (const Port &port : ports) {
		if (port.port_id == port_id && is_live(port)) {
			dev = port.dev;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

} // namespace softdpu::dpdk_bridge
