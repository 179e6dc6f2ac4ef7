#include "dpdk_bridge/port.hpp"

#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"

#include <softdpu/link.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <cstdio>
#include <mutex>

namespace softdpu::dpdk_bridge {

namespace {

struct Port {
	doca_dev *dev;
	uint16_t port_id;
	std::string vdev_name;
};

std::mutex ports_mutex;
std::vector<Port> ports; // guarded by ports_mutex

bool is_key_char(char c) noexcept
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool is_hex(char c) noexcept
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// [domain:]bus:devid.func: hex digits, one or two colons, one dot before the last digit.
bool looks_like_pci_address(std::string_view item) noexcept
{
	size_t colons = 0;
	size_t dots = 0;
	for (const char c : item) {
		if (c == ':')
			++colons;
		else if (c == '.')
			++dots;
		else if (!is_hex(c))
			return false;
	}
	return (colons == 1 || colons == 2) && dots == 1;
}

// The port of a device if it is still a valid DPDK port (the application may have closed it).
bool is_live(const Port &port) noexcept
{
	char name[RTE_ETH_NAME_MAX_LEN];
	return rte_eth_dev_is_valid_port(port.port_id) != 0 && rte_eth_dev_get_name_by_port(port.port_id, name) == 0 &&
	       port.vdev_name == name;
}

} // namespace

Devargs parse_devargs(std::string_view text)
{
	Devargs result;
	size_t start = 0;
	while (start <= text.size()) {
		const size_t comma = text.find(',', start);
		const std::string_view item =
		    text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
		start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
		if (item.empty()) {
			if (text.empty())
				break;
			result.error = "an empty item";
			return result;
		}
		if (looks_like_pci_address(item)) {
			result.error = "a PCI address (\"" + std::string(item) +
				       "\"): the device is named by the doca_dev, the devargs must not name it";
			return result;
		}
		const size_t equal = item.find('=');
		const std::string_view key = item.substr(0, equal);
		const std::string_view value =
		    equal == std::string_view::npos ? std::string_view() : item.substr(equal + 1);
		if (key.empty()) {
			result.error = "an item without a key (\"" + std::string(item) + "\")";
			return result;
		}
		for (const char c : key) {
			if (!is_key_char(c)) {
				result.error = "a malformed key (\"" + std::string(key) + "\")";
				return result;
			}
		}
		if (key == "representor")
			result.representor = std::string(value);
		result.items.emplace_back(std::string(key), std::string(value));
	}
	return result;
}

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
		const std::string &function = dev.function().name;
		softdpu_link link{};
		uint8_t is_master = 0;
		const doca_error_t found = softdpu_link_find(function.c_str(), &link, &is_master);
		if (found == DOCA_ERROR_NOT_FOUND) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: device %s has no Ethernet network interface, "
				    "so no packet link and no DPDK port (docs/links.md)",
				    function.c_str());
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (found != DOCA_SUCCESS)
			return found;

		const std::lock_guard lock(ports_mutex);
		for (const Port &port : ports) {
			if (port.dev == &dev && is_live(port)) {
				SDK_LOG_ERR(
				    "DPDK bridge: doca_dpdk_port_probe: device %s is already probed (DPDK port %u)",
				    function.c_str(), port.port_id);
				return DOCA_ERROR_DRIVER;
			}
		}
		// net_memif wants the socket's directory to exist for either role.
		char dir[SOFTDPU_LINK_SOCKET_SIZE];
		if (const doca_error_t made = softdpu_link_get_socket_dir(dir, sizeof(dir), 1); made != DOCA_SUCCESS)
			return made == DOCA_ERROR_OPERATING_SYSTEM ? DOCA_ERROR_DRIVER : made;
		if (!parsed.representor.empty())
			SDK_LOG_WARN("DPDK bridge: doca_dpdk_port_probe: representor=%s recorded; representor ports "
				     "are not brought up yet (docs/dpdk-bridge.md)",
				     parsed.representor.c_str());

		const std::string vdev_name = "net_memif_softdpu_" + std::string(link.name) + (is_master ? "_s" : "_c");
		const std::string vdev_args = vdev_name + ",socket=" + link.socket +
					      ",socket-abstract=no,role=" + (is_master ? "server" : "client") +
					      ",id=" + std::to_string(link.interface_id) +
					      ",bsize=" + std::to_string(link.buffer_size) +
					      ",rsize=" + std::to_string(link.log2_ring_size);
		const int probed = rte_dev_probe(vdev_args.c_str());
		if (probed < 0) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: DPDK could not create port \"%s\": %s",
				    vdev_args.c_str(), rte_strerror(-probed));
			return DOCA_ERROR_DRIVER;
		}
		uint16_t port_id = 0;
		if (rte_eth_dev_get_port_by_name(vdev_name.c_str(), &port_id) != 0) {
			SDK_LOG_ERR("DPDK bridge: doca_dpdk_port_probe: DPDK created no port named %s",
				    vdev_name.c_str());
			(void)rte_eal_hotplug_remove("vdev", vdev_name.c_str());
			return DOCA_ERROR_DRIVER;
		}
		// Ports of closed DPDK devices are forgotten here.
		std::erase_if(ports, [](const Port &port) { return !is_live(port); });
		ports.push_back(Port{&dev, port_id, vdev_name});
		return DOCA_SUCCESS;
	});
}

doca_error_t first_port_of(const doca_dev &dev, uint16_t &port_id) noexcept
{
	const std::lock_guard lock(ports_mutex);
	for (const Port &port : ports) {
		if (port.dev == &dev && is_live(port)) {
			port_id = port.port_id;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
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
