// softdpu devices [--json]: what a DOCA program on this side sees, listed through the doca_dev.h
// API itself, with the emulated details (VUID, capabilities) read from the topology.
#include "commands.hpp"

#include "core/dev/dev.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace softdpu::cli {

namespace {

using device::Function;
using device::Representor;

// An optional address as text, "-" when absent.
template <typename Address> std::string address_or_dash(const std::optional<Address> &address)
{
	return address ? device::to_string(*address) : "-";
}

std::string or_dash(const std::string &text)
{
	return text.empty() ? "-" : text;
}

std::string rep_kind(const Representor &rep)
{
	return rep.is_emulated() ? "emulated " + rep.emulation : "net";
}

// The representors a local device lists with DOCA_DEVINFO_REP_FILTER_ALL; empty when it has none.
struct RepListing {
	std::vector<const Representor *> reps;
	doca_error_t status = DOCA_ERROR_NOT_SUPPORTED;
};

RepListing list_representors(doca_devinfo *devinfo)
{
	RepListing listing;
	if (!devinfo->exposes_representors())
		return listing;
	doca_dev *dev = nullptr;
	listing.status = doca_dev_open(devinfo, &dev);
	if (listing.status != DOCA_SUCCESS)
		return listing;
	doca_devinfo_rep **reps = nullptr;
	uint32_t count = 0;
	listing.status = doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &count);
	if (listing.status == DOCA_SUCCESS) {
		for (uint32_t i = 0; i < count; ++i)
			listing.reps.push_back(&reps[i]->representor());
		doca_devinfo_rep_destroy_list(reps);
	}
	doca_dev_close(dev);
	return listing;
}

nlohmann::json caps_json(const device::Capabilities &caps)
{
	return {{"dma_memcpy", caps.dma_memcpy},
		{"dma_max_buf_size", caps.dma_max_buf_size},
		{"dma_max_buf_list_len", caps.dma_max_buf_list_len},
		{"dma_max_num_tasks", caps.dma_max_num_tasks},
		{"mmap_export_pci", caps.mmap_export_pci},
		{"mmap_export_rdma", caps.mmap_export_rdma},
		{"mmap_create_from_export_pci", caps.mmap_create_from_export_pci},
		{"mmap_max_devices", caps.mmap_max_devices},
		{"sync_event_export_to_dpu", caps.sync_event_export_to_dpu},
		{"sync_event_create_from_export", caps.sync_event_create_from_export},
		{"hotplug_manager", caps.hotplug_manager},
		{"rep_filter_all", caps.rep_filter_all},
		{"rep_filter_net", caps.rep_filter_net},
		{"rep_filter_emulated", caps.rep_filter_emulated}};
}

void print_json(const device::Topology &topology, doca_devinfo **list, uint32_t count)
{
	nlohmann::json devices = nlohmann::json::array();
	for (uint32_t i = 0; i < count; ++i) {
		const Function &f = list[i]->function();
		nlohmann::json entry = {{"name", f.name},
					{"type", device::to_string(f.type)},
					{"pci", f.pci.to_string()},
					{"parent", f.parent ? nlohmann::json(f.parent->name) : nlohmann::json(nullptr)},
					{"ibdev", f.ibdev},
					{"iface", f.iface},
					{"vuid", f.vuid},
					{"mac", address_or_dash(f.mac)},
					{"ipv4", address_or_dash(f.ipv4)},
					{"ipv6", address_or_dash(f.ipv6)},
					{"link_layer", device::to_string(f.link_layer)},
					{"available", f.available},
					{"caps", caps_json(f.caps)}};
		if (f.side == device::Side::host) {
			const Function *manager = topology.dpu_manager_of(f);
			const Representor *rep = topology.representor_of(f);
			entry["dpu_device"] = manager ? nlohmann::json(manager->name) : nlohmann::json(nullptr);
			entry["dpu_representor"] = rep ? nlohmann::json(rep->name) : nlohmann::json(nullptr);
		}
		RepListing listing = list_representors(list[i]);
		if (listing.status == DOCA_SUCCESS) {
			nlohmann::json reps = nlohmann::json::array();
			for (const Representor *rep : listing.reps)
				reps.push_back({{"name", rep->name},
						{"type", device::to_string(rep->type)},
						{"pci", rep->pci.to_string()},
						{"vuid", rep->vuid},
						{"iface", rep->iface},
						{"kind", rep->is_emulated() ? rep->emulation : "net"},
						{"hotplug", rep->hotplug},
						{"represents", rep->represents ? nlohmann::json(rep->represents->name)
									       : nlohmann::json(nullptr)}});
			entry["representors"] = std::move(reps);
		}
		devices.push_back(std::move(entry));
	}
	nlohmann::json out = {
	    {"side", device::to_string(topology.side())}, {"topology", topology.source()}, {"devices", devices}};
	std::printf("%s\n", out.dump(2).c_str());
}

void print_table(const device::Topology &topology, doca_devinfo **list, uint32_t count)
{
	std::printf("softdpu %s side, topology %s: %u local device(s)\n\n", device::to_string(topology.side()),
		    topology.source().c_str(), count);
	std::printf("%-8s %-3s %-13s %-8s %-14s %-18s %-16s %-16s %s\n", "NAME", "FN", "PCI", "IBDEV", "IFACE", "MAC",
		    "IPV4", "VUID", "DMA");
	for (uint32_t i = 0; i < count; ++i) {
		const Function &f = list[i]->function();
		std::printf("%-8s %-3s %-13s %-8s %-14s %-18s %-16s %-16s %s\n", f.name.c_str(),
			    device::to_string(f.type), f.pci.to_string().c_str(), f.ibdev.c_str(),
			    or_dash(f.iface).c_str(), address_or_dash(f.mac).c_str(), address_or_dash(f.ipv4).c_str(),
			    f.vuid.c_str(), f.caps.dma_memcpy ? "yes" : "no");
	}
	for (uint32_t i = 0; i < count; ++i) {
		RepListing listing = list_representors(list[i]);
		if (listing.status != DOCA_SUCCESS)
			continue;
		const Function &f = list[i]->function();
		std::printf("\nrepresentors of %s (%s): %zu\n", f.name.c_str(), f.pci.to_string().c_str(),
			    listing.reps.size());
		if (listing.reps.empty())
			continue;
		std::printf("  %-10s %-3s %-13s %-8s %-18s %-20s %s\n", "NAME", "FN", "PCI", "IFACE", "VUID", "KIND",
			    "HOTPLUG");
		for (const Representor *rep : listing.reps)
			std::printf("  %-10s %-3s %-13s %-8s %-18s %-20s %s\n", rep->name.c_str(),
				    device::to_string(rep->type), rep->pci.to_string().c_str(),
				    or_dash(rep->iface).c_str(), rep->vuid.c_str(), rep_kind(*rep).c_str(),
				    rep->hotplug ? "yes" : "no");
	}
	if (topology.side() == device::Side::host) {
		std::printf("\nhost function -> DPU device and representor (for memory exported to the DPU)\n");
		for (uint32_t i = 0; i < count; ++i) {
			const Function &f = list[i]->function();
			const Function *manager = topology.dpu_manager_of(f);
			const Representor *rep = topology.representor_of(f);
			std::printf("  %-8s %-13s -> %-4s %-13s via %s\n", f.name.c_str(), f.pci.to_string().c_str(),
				    manager ? manager->name.c_str() : "-",
				    manager ? manager->pci.to_string().c_str() : "-", rep ? rep->name.c_str() : "-");
		}
	}
}

} // namespace

int devices_command(Arguments args)
{
	bool json = false;
	for (std::string_view arg : args) {
		if (arg == "--json") {
			json = true;
		} else {
			std::fprintf(stderr, "usage: softdpu devices [--json]\n");
			return 2;
		}
	}
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	doca_error_t status = doca_devinfo_create_list(&list, &count);
	if (status != DOCA_SUCCESS) {
		const std::string &why = device::Topology::current_error();
		std::fprintf(stderr, "softdpu: cannot list devices (%s): %s\n", doca_error_get_name(status),
			     why.empty() ? doca_error_get_descr(status) : why.c_str());
		return 1;
	}
	const device::Topology &topology = *device::Topology::current();
	if (json)
		print_json(topology, list, count);
	else
		print_table(topology, list, count);
	doca_devinfo_destroy_list(list);
	return 0;
}

} // namespace softdpu::cli
