// softdpu devices [--json]: what a DOCA program on this side sees, listed through the doca_dev.h
// API itself; the emulated details DOCA has no call for (names, VUIDs, the host-to-DPU mapping)
// come from the softdpu/topology.h extension.
#include "commands.hpp"

#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_sync_event.h>
#include <softdpu/topology.h>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace softdpu::cli {

namespace {

constexpr uint32_t kTextSize = 256;

std::string devinfo_str(const doca_devinfo *devinfo, softdpu_devinfo_attr attr)
{
	char value[kTextSize] = {};
	return softdpu_devinfo_get_str(devinfo, attr, value, sizeof(value)) == DOCA_SUCCESS ? value : "";
}

std::string rep_str(const doca_devinfo_rep *rep, softdpu_devinfo_rep_attr attr)
{
	char value[kTextSize] = {};
	return softdpu_devinfo_rep_get_str(rep, attr, value, sizeof(value)) == DOCA_SUCCESS ? value : "";
}

std::string or_dash(const std::string &text)
{
	return text.empty() ? "-" : text;
}

nlohmann::json or_null(const std::string &text)
{
	return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

const char *func_type_name(doca_pci_func_type type)
{
	switch (type) {
	case DOCA_PCI_FUNC_TYPE_PF:
		return "pf";
	case DOCA_PCI_FUNC_TYPE_VF:
		return "vf";
	case DOCA_PCI_FUNC_TYPE_SF:
		return "sf";
	}
	return "?";
}

// One local device as the DOCA API reports it.
struct Device {
	std::string name, type, pci, ibdev, iface, vuid, parent, link_layer, mac = "-", ipv4 = "-", ipv6 = "-";
	std::string dpu_manager, dpu_manager_pci, dpu_representor;
	bool available = true;
	nlohmann::json caps;
	bool dma_memcpy = false;
};

struct Rep {
	std::string name, type, pci, vuid, iface, emulation, represents;
	bool hotplug = false;
};

// The representors a local device lists with DOCA_DEVINFO_REP_FILTER_ALL; nullopt when it has
// none (or cannot be opened).
struct Listing {
	std::optional<std::vector<Rep>> reps;
	std::optional<uint32_t> dma_max_num_tasks; // needs an open device and a DMA context
};

Listing open_and_list(doca_devinfo *devinfo)
{
	Listing listing;
	doca_dev *dev = nullptr;
	if (doca_dev_open(devinfo, &dev) != DOCA_SUCCESS)
		return listing;
	doca_dma *dma = nullptr;
	if (doca_dma_create(dev, &dma) == DOCA_SUCCESS) {
		uint32_t tasks = 0;
		if (doca_dma_cap_get_max_num_tasks(dma, &tasks) == DOCA_SUCCESS)
			listing.dma_max_num_tasks = tasks;
		doca_dma_destroy(dma);
	}
	uint8_t filter_all = 0;
	doca_devinfo_rep **reps = nullptr;
	uint32_t count = 0;
	if (doca_devinfo_rep_cap_is_filter_all_supported(devinfo, &filter_all) == DOCA_SUCCESS && filter_all &&
	    doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &count) == DOCA_SUCCESS) {
		std::vector<Rep> list;
		for (uint32_t i = 0; i < count; ++i) {
			Rep rep;
			rep.name = rep_str(reps[i], SOFTDPU_DEVINFO_REP_NAME);
			doca_pci_func_type type{};
			if (doca_devinfo_rep_get_pci_func_type(reps[i], &type) == DOCA_SUCCESS)
				rep.type = func_type_name(type);
			char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE] = {};
			if (doca_devinfo_rep_get_pci_addr_str(reps[i], pci) == DOCA_SUCCESS)
				rep.pci = pci;
			char vuid[DOCA_DEVINFO_REP_VUID_SIZE] = {};
			if (doca_devinfo_rep_get_vuid(reps[i], vuid, sizeof(vuid)) == DOCA_SUCCESS)
				rep.vuid = vuid;
			uint8_t hotplug = 0;
			if (doca_devinfo_rep_get_is_hotplug(reps[i], &hotplug) == DOCA_SUCCESS)
				rep.hotplug = hotplug != 0;
			rep.iface = rep_str(reps[i], SOFTDPU_DEVINFO_REP_IFACE);
			rep.emulation = rep_str(reps[i], SOFTDPU_DEVINFO_REP_EMULATION);
			rep.represents = rep_str(reps[i], SOFTDPU_DEVINFO_REP_REPRESENTS);
			list.push_back(std::move(rep));
		}
		doca_devinfo_rep_destroy_list(reps);
		listing.reps = std::move(list);
	}
	doca_dev_close(dev);
	return listing;
}

template <typename Getter> bool flag(Getter getter, const doca_devinfo *devinfo)
{
	uint8_t value = 0;
	return getter(devinfo, &value) == DOCA_SUCCESS && value != 0;
}

Device describe(doca_devinfo *devinfo, const Listing &listing)
{
	Device d;
	d.name = devinfo_str(devinfo, SOFTDPU_DEVINFO_NAME);
	d.type = devinfo_str(devinfo, SOFTDPU_DEVINFO_FUNC_TYPE);
	d.parent = devinfo_str(devinfo, SOFTDPU_DEVINFO_PARENT);
	d.vuid = devinfo_str(devinfo, SOFTDPU_DEVINFO_VUID);
	d.link_layer = devinfo_str(devinfo, SOFTDPU_DEVINFO_LINK_LAYER);
	d.dpu_manager = devinfo_str(devinfo, SOFTDPU_DEVINFO_DPU_MANAGER);
	d.dpu_manager_pci = devinfo_str(devinfo, SOFTDPU_DEVINFO_DPU_MANAGER_PCI);
	d.dpu_representor = devinfo_str(devinfo, SOFTDPU_DEVINFO_DPU_REPRESENTOR);
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE] = {};
	if (doca_devinfo_get_pci_addr_str(devinfo, pci) == DOCA_SUCCESS)
		d.pci = pci;
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE] = {};
	if (doca_devinfo_get_ibdev_name(devinfo, ibdev, sizeof(ibdev)) == DOCA_SUCCESS)
		d.ibdev = ibdev;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE] = {};
	if (doca_devinfo_get_iface_name(devinfo, iface, sizeof(iface)) == DOCA_SUCCESS)
		d.iface = iface;
	uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE] = {};
	if (doca_devinfo_get_mac_addr(devinfo, mac, sizeof(mac)) == DOCA_SUCCESS) {
		char text[18];
		std::snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
			      mac[4], mac[5]);
		d.mac = text;
	}
	uint8_t ipv4[DOCA_DEVINFO_IPV4_ADDR_SIZE] = {};
	char text[INET6_ADDRSTRLEN] = {};
	if (doca_devinfo_get_ipv4_addr(devinfo, ipv4, sizeof(ipv4)) == DOCA_SUCCESS &&
	    inet_ntop(AF_INET, ipv4, text, sizeof(text)) != nullptr)
		d.ipv4 = text;
	uint8_t ipv6[DOCA_DEVINFO_IPV6_ADDR_SIZE] = {};
	if (doca_devinfo_get_ipv6_addr(devinfo, ipv6, sizeof(ipv6)) == DOCA_SUCCESS &&
	    inet_ntop(AF_INET6, ipv6, text, sizeof(text)) != nullptr)
		d.ipv6 = text;
	uint8_t available = 1;
	softdpu_devinfo_get_is_available(devinfo, &available);
	d.available = available != 0;

	d.dma_memcpy = doca_dma_cap_task_memcpy_is_supported(devinfo) == DOCA_SUCCESS;
	uint64_t max_buf_size = 0;
	uint32_t max_list_len = 0, mmap_max_devices = 0;
	doca_dma_cap_task_memcpy_get_max_buf_size(devinfo, &max_buf_size);
	doca_dma_cap_task_memcpy_get_max_buf_list_len(devinfo, &max_list_len);
	softdpu_devinfo_get_mmap_max_num_devices(devinfo, &mmap_max_devices);
	d.caps = {{"dma_memcpy", d.dma_memcpy},
		  {"dma_max_buf_size", max_buf_size},
		  {"dma_max_buf_list_len", max_list_len},
		  {"dma_max_num_tasks",
		   listing.dma_max_num_tasks ? nlohmann::json(*listing.dma_max_num_tasks) : nlohmann::json(nullptr)},
		  {"mmap_export_pci", flag(doca_mmap_cap_is_export_pci_supported, devinfo)},
		  {"mmap_create_from_export_pci", flag(doca_mmap_cap_is_create_from_export_pci_supported, devinfo)},
		  {"mmap_max_devices", mmap_max_devices},
		  {"sync_event_export_to_dpu", doca_sync_event_cap_is_export_to_dpu_supported(devinfo) == DOCA_SUCCESS},
		  {"sync_event_create_from_export",
		   doca_sync_event_cap_is_create_from_export_supported(devinfo) == DOCA_SUCCESS},
		  {"hotplug_manager", flag(doca_devinfo_cap_is_hotplug_manager_supported, devinfo)},
		  {"rep_filter_all", flag(doca_devinfo_rep_cap_is_filter_all_supported, devinfo)},
		  {"rep_filter_net", flag(doca_devinfo_rep_cap_is_filter_net_supported, devinfo)},
		  {"rep_filter_emulated", flag(doca_devinfo_rep_cap_is_filter_emulated_supported, devinfo)}};
	return d;
}

void print_json(const char *source, const char *side, const std::vector<Device> &devices,
		const std::vector<Listing> &listings)
{
	nlohmann::json list = nlohmann::json::array();
	for (size_t i = 0; i < devices.size(); ++i) {
		const Device &d = devices[i];
		nlohmann::json entry = {{"name", d.name},
					{"type", d.type},
					{"pci", d.pci},
					{"parent", or_null(d.parent)},
					{"ibdev", d.ibdev},
					{"iface", d.iface},
					{"vuid", d.vuid},
					{"mac", d.mac},
					{"ipv4", d.ipv4},
					{"ipv6", d.ipv6},
					{"link_layer", d.link_layer},
					{"available", d.available},
					{"caps", d.caps}};
		if (std::string(side) == "host") {
			entry["dpu_device"] = or_null(d.dpu_manager);
			entry["dpu_representor"] = or_null(d.dpu_representor);
		}
		if (listings[i].reps) {
			nlohmann::json reps = nlohmann::json::array();
			for (const Rep &rep : *listings[i].reps)
				reps.push_back({{"name", rep.name},
						{"type", rep.type},
						{"pci", rep.pci},
						{"vuid", rep.vuid},
						{"iface", rep.iface},
						{"kind", rep.emulation.empty() ? "net" : rep.emulation},
						{"hotplug", rep.hotplug},
						{"represents", or_null(rep.represents)}});
			entry["representors"] = std::move(reps);
		}
		list.push_back(std::move(entry));
	}
	nlohmann::json out = {{"side", side}, {"topology", source}, {"devices", list}};
	std::printf("%s\n", out.dump(2).c_str());
}

void print_table(const char *source, const char *side, const std::vector<Device> &devices,
		 const std::vector<Listing> &listings)
{
	std::printf("softdpu %s side, topology %s: %zu local device(s)\n\n", side, source, devices.size());
	std::printf("%-8s %-3s %-13s %-8s %-14s %-18s %-16s %-16s %s\n", "NAME", "FN", "PCI", "IBDEV", "IFACE", "MAC",
		    "IPV4", "VUID", "DMA");
	for (const Device &d : devices)
		std::printf("%-8s %-3s %-13s %-8s %-14s %-18s %-16s %-16s %s\n", d.name.c_str(), d.type.c_str(),
			    d.pci.c_str(), d.ibdev.c_str(), or_dash(d.iface).c_str(), d.mac.c_str(), d.ipv4.c_str(),
			    d.vuid.c_str(), d.dma_memcpy ? "yes" : "no");
	for (size_t i = 0; i < devices.size(); ++i) {
		if (!listings[i].reps)
			continue;
		const std::vector<Rep> &reps = *listings[i].reps;
		std::printf("\nrepresentors of %s (%s): %zu\n", devices[i].name.c_str(), devices[i].pci.c_str(),
			    reps.size());
		if (reps.empty())
			continue;
		std::printf("  %-10s %-3s %-13s %-8s %-18s %-20s %s\n", "NAME", "FN", "PCI", "IFACE", "VUID", "KIND",
			    "HOTPLUG");
		for (const Rep &rep : reps)
			std::printf("  %-10s %-3s %-13s %-8s %-18s %-20s %s\n", rep.name.c_str(), rep.type.c_str(),
				    rep.pci.c_str(), or_dash(rep.iface).c_str(), rep.vuid.c_str(),
				    rep.emulation.empty() ? "net" : ("emulated " + rep.emulation).c_str(),
				    rep.hotplug ? "yes" : "no");
	}
	if (std::string(side) == "host") {
		std::printf("\nhost function -> DPU device and representor (for memory exported to the DPU)\n");
		for (const Device &d : devices)
			std::printf("  %-8s %-13s -> %-4s %-13s via %s\n", d.name.c_str(), d.pci.c_str(),
				    or_dash(d.dpu_manager).c_str(), or_dash(d.dpu_manager_pci).c_str(),
				    or_dash(d.dpu_representor).c_str());
	}
}

int list_devices(bool json)
{
	const char *source = nullptr;
	const char *side = nullptr;
	doca_error_t status = softdpu_topology_get_current(&source, &side);
	if (status != DOCA_SUCCESS) {
		std::fprintf(stderr, "softdpu: cannot list devices (%s): %s\n", doca_error_get_name(status),
			     source != nullptr && *source != '\0' ? source : doca_error_get_descr(status));
		return 1;
	}
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	status = doca_devinfo_create_list(&list, &count);
	if (status != DOCA_SUCCESS) {
		std::fprintf(stderr, "softdpu: cannot list devices (%s): %s\n", doca_error_get_name(status),
			     doca_error_get_descr(status));
		return 1;
	}
	std::vector<Device> devices;
	std::vector<Listing> listings;
	for (uint32_t i = 0; i < count; ++i) {
		listings.push_back(open_and_list(list[i]));
		devices.push_back(describe(list[i], listings.back()));
	}
	doca_devinfo_destroy_list(list);
	if (json)
		print_json(source, side, devices, listings);
	else
		print_table(source, side, devices, listings);
	return 0;
}

} // namespace

void add_devices_command(CLI::App &app)
{
	CLI::App *devices = app.add_subcommand("devices", "list the emulated local devices and representors");
	auto json = std::make_shared<bool>(false);
	devices->add_flag("--json", *json, "JSON instead of a table");
	devices->footer("What a DOCA program on this side (SOFTDPU_SIDE) sees in the topology (SOFTDPU_TOPOLOGY).");
	devices->callback([json] {
		if (int status = list_devices(*json); status != 0)
			throw CommandFailed{status};
	});
}

} // namespace softdpu::cli
