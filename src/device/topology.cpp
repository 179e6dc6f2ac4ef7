// Process-wide topology state, capability defaults and lookups. Parsing is in topology_parser.cpp.
#include "device/topology.hpp"

#include "common/env.hpp"
#include "common/regular_file.hpp"
#include "common/sdk_log.hpp"

#include <arpa/inet.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace softdpu::device {

const char *to_string(Side side) noexcept
{
	return side == Side::host ? "host" : "dpu";
}

const char *to_string(FuncType type) noexcept
{
	switch (type) {
	case FuncType::pf:
		return "pf";
	case FuncType::vf:
		return "vf";
	case FuncType::sf:
		return "sf";
	}
	return "?";
}

const char *to_string(LinkLayer layer) noexcept
{
	return layer == LinkLayer::ethernet ? "ethernet" : "infiniband";
}

std::string to_string(const MacAddress &mac)
{
	char text[18];
	std::snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		      mac[5]);
	return text;
}

std::string to_string(const Ipv4Address &address)
{
	char text[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, address.data(), text, sizeof(text));
	return text;
}

std::string to_string(const Ipv6Address &address)
{
	char text[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, address.data(), text, sizeof(text));
	return text;
}

Capabilities default_capabilities(Side side, FuncType type) noexcept
{
	Capabilities caps; // DMA and mmap export on every function
	if (side == Side::host) {
		// The host exports memory and sync events towards the DPU; it has no representors.
		caps.sync_event_export_to_dpu = true;
		return caps;
	}
	// The DPU imports what the host exports. Only its PFs (the eswitch managers) own
	// representors and hot-plug emulated functions.
	caps.sync_event_create_from_export = true;
	if (type == FuncType::pf) {
		caps.mmap_create_from_export_pci = true;
		caps.hotplug_manager = true;
		caps.rep_filter_all = true;
		caps.rep_filter_net = true;
		caps.rep_filter_emulated = true;
	}
	return caps;
}

std::optional<Side> side_from_environment() noexcept
{
	const auto value = common::env_value("SOFTDPU_SIDE");
	if (!value || *value == "dpu")
		return Side::dpu;
	if (*value == "host")
		return Side::host;
	return std::nullopt;
}

Topology::ParseResult Topology::load_file(const std::string &path, Side side)
{
	// Regular files only (checked before opening and again on what was opened), read up to the
	// limit (checked again while reading: the file may grow).
	std::string text, error;
	if (!common::read_small_file(path, kMaxFileBytes, "a topology file", text, error))
		return {nullptr, path + ": " + error};
	return parse(text, path, side);
}

Topology::ParseResult Topology::builtin_default(Side side)
{
	return parse(builtin_default_text(), "<built-in default topology>", side);
}

namespace {

struct ProcessTopology {
	std::once_flag once;
	std::mutex mutex;       // guards topology/error/retired/installed (test overrides)
	bool installed = false; // a test override is current: a late first load must not replace it
	std::shared_ptr<const Topology> topology;
	std::string error;
	std::atomic<const Topology *> fast{nullptr};
	// Every topology that was ever current: devices opened on it keep pointing into it.
	std::vector<std::shared_ptr<const Topology>> retired;
};

ProcessTopology &process_topology() noexcept
{
	static ProcessTopology state;
	return state;
}

// Runs once per process (under call_once). Running out of memory throws std::bad_alloc out of it
// so that call_once does not count the run: a later call tries again.
void load_process_topology(ProcessTopology &state)
{
	std::optional<Side> side = side_from_environment();
	Topology::ParseResult result;
	if (!side) {
		result.error = std::string("SOFTDPU_SIDE: expected \"host\" or \"dpu\", got \"");
		result.error += common::env_value("SOFTDPU_SIDE").value_or("");
		result.error += '"';
	} else if (const auto path = common::env_value("SOFTDPU_TOPOLOGY")) {
		result = Topology::load_file(std::string(*path), *side);
	} else {
		result = Topology::builtin_default(*side);
	}
	if (result.out_of_memory)
		throw std::bad_alloc();
	if (!result.topology)
		SDK_LOG_ERR("failed to load the emulated device topology: %s", result.error.c_str());
	std::lock_guard lock(state.mutex);
	if (state.installed)
		return;
	state.topology = std::move(result.topology);
	state.error = std::move(result.error);
	state.fast.store(state.topology.get(), std::memory_order_release);
}

ProcessTopology &loaded_process_topology(bool *out_of_memory = nullptr) noexcept
{
	ProcessTopology &state = process_topology();
	try {
		std::call_once(state.once, load_process_topology, std::ref(state));
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to load the emulated device topology: out of memory (will try again)");
		if (out_of_memory != nullptr)
			*out_of_memory = true;
	}
	return state;
}

// Installs a topology (or an error) as current; returns what was current before.
std::pair<std::shared_ptr<const Topology>, std::string> swap_current(std::shared_ptr<const Topology> topology,
								     std::string error)
{
	ProcessTopology &state = loaded_process_topology();
	std::lock_guard lock(state.mutex);
	state.installed = true;
	if (state.topology)
		state.retired.push_back(state.topology);
	auto previous = std::make_pair(std::move(state.topology), std::move(state.error));
	state.topology = std::move(topology);
	state.error = std::move(error);
	state.fast.store(state.topology.get(), std::memory_order_release);
	return previous;
}

} // namespace

const Topology *Topology::current() noexcept
{
	return loaded_process_topology().fast.load(std::memory_order_acquire);
}

std::shared_ptr<const Topology> Topology::current_shared(bool *out_of_memory) noexcept
{
	ProcessTopology &state = loaded_process_topology(out_of_memory);
	std::lock_guard lock(state.mutex);
	return state.topology;
}

const std::string &Topology::current_error() noexcept
{
	return loaded_process_topology().error;
}

std::vector<const Representor *> Topology::representors_of_manager(const Function &manager) const
{
	std::vector<const Representor *> result;
	for (const auto &rep : representors_)
		if (rep->manager == &manager)
			result.push_back(rep.get());
	return result;
}

const Function *Topology::find_function(std::string_view name) const noexcept
{
	for (const auto &function : functions_)
		if (function->name == name)
			return function.get();
	return nullptr;
}

const Function *Topology::find_function(Side side, const PciAddress &pci) const noexcept
{
	for (const auto &function : functions_)
		if (function->side == side && function->type != FuncType::sf && function->pci == pci)
			return function.get();
	return nullptr;
}

const Function *Topology::find_function_by_vuid(std::string_view vuid) const noexcept
{
	for (const auto &function : functions_)
		if (function->vuid == vuid)
			return function.get();
	return nullptr;
}

const Representor *Topology::find_representor(std::string_view name) const noexcept
{
	for (const auto &rep : representors_)
		if (rep->name == name)
			return rep.get();
	return nullptr;
}

const Representor *Topology::representor_of(const Function &function) const noexcept
{
	for (const auto &rep : representors_)
		if (rep->represents == &function)
			return rep.get();
	return nullptr;
}

const Function *Topology::dpu_manager_of(const Function &host_function) const noexcept
{
	if (host_function.side != Side::host)
		return nullptr;
	const Representor *rep = representor_of(host_function);
	return rep != nullptr ? rep->manager : nullptr;
}

bool Topology::reaches_over_pci(const Function &dpu_function, const Function &host_function) const noexcept
{
	const Function *manager = dpu_manager_of(host_function);
	return manager != nullptr && dpu_function.side == Side::dpu &&
	       (&dpu_function == manager || dpu_function.parent == manager);
}

std::vector<const Function *> Topology::host_functions_of(const Function &dpu_manager) const
{
	std::vector<const Function *> result;
	for (const auto &rep : representors_)
		if (rep->manager == &dpu_manager && rep->represents != nullptr && rep->represents->side == Side::host)
			result.push_back(rep->represents);
	return result;
}

namespace testing {

ScopedTopology::ScopedTopology(std::shared_ptr<const Topology> topology)
{
	std::tie(previous_, previous_error_) = swap_current(std::move(topology), {});
}

ScopedTopology::~ScopedTopology()
{
	swap_current(std::move(previous_), std::move(previous_error_));
}

ScopedTopologyError::ScopedTopologyError(std::string error)
{
	std::tie(previous_, previous_error_) = swap_current(nullptr, std::move(error));
}

ScopedTopologyError::~ScopedTopologyError()
{
	swap_current(std::move(previous_), std::move(previous_error_));
}

} // namespace testing

} // namespace softdpu::device
