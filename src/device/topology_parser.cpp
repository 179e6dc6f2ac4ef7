// Topology JSON parser and validator (schema: docs/topology.md). Builds a complete Topology or
// reports the first problem as "<source>: <json path>: <reason>"; nothing half-built escapes.
#include "device/topology.hpp"

#include "common/bytes.hpp"
#include "common/json_object.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace softdpu::device {

namespace {

constexpr size_t kMaxNameLength = 63;
constexpr size_t kMaxIbdevLength = 63; // DOCA_DEVINFO_IBDEV_NAME_SIZE - 1
constexpr size_t kMaxIfaceLength = 15; // Linux IFNAMSIZ - 1 (DOCA's buffer is larger)
constexpr size_t kMaxVuidLength = 127; // DOCA_DEVINFO_VUID_SIZE - 1
constexpr size_t kMaxNesting = 64;     // deeper documents are rejected before parsing
constexpr size_t kMaxFunctions = 4096;
constexpr size_t kMaxRepresentors = 4096;
constexpr uint64_t kMinLid = 0x0001; // unicast LIDs; 0 is reserved and 0xC000.. are multicast
constexpr uint64_t kMaxLid = 0xbfff;

using softdpu::json::fail;
using softdpu::json::Json;
using softdpu::json::member_segment;
using softdpu::json::ObjectReader;
using softdpu::json::shown;

bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '.';
}

void check_identifier(const std::string &path, const std::string &value, size_t max_length, const char *what)
{
	if (value.empty())
		fail(path, std::string(what) + " must not be empty");
	if (value.size() > max_length)
		fail(path, std::string(what) + " " + shown(value) + " longer than " + std::to_string(max_length) +
			       " characters");
	for (char c : value)
		if (!is_name_char(c))
			fail(path, std::string(what) + " " + shown(value) +
				       " may only contain letters, digits, '_', '-' and '.'");
}

FuncType parse_func_type(const std::string &path, const std::string &text)
{
	if (text == "pf")
		return FuncType::pf;
	if (text == "vf")
		return FuncType::vf;
	if (text == "sf")
		return FuncType::sf;
	fail(path, "unknown function type " + shown(text) + " (expected \"pf\", \"vf\" or \"sf\")");
}

PciAddress parse_pci(const std::string &path, const std::string &text)
{
	auto address = PciAddress::parse(text);
	if (!address)
		fail(path, "invalid PCI address " + shown(text) + " (expected \"DDDD:BB:DD.F\" or \"BB:DD.F\" in hex)");
	return *address;
}

MacAddress parse_mac(const std::string &path, const std::string &text)
{
	MacAddress mac{};
	bool ok = text.size() == 17;
	for (size_t i = 0; ok && i < 6; ++i) {
		const int high = common::hex_digit(text[i * 3]);
		const int low = common::hex_digit(text[i * 3 + 1]);
		if (high < 0 || low < 0 || (i < 5 && text[i * 3 + 2] != ':'))
			ok = false;
		else
			mac[i] = static_cast<uint8_t>(high * 16 + low);
	}
	if (!ok)
		fail(path,
		     "invalid MAC address " + shown(text) + " (expected six hex octets like \"02:00:00:00:00:01\")");
	// A port's own address is a unicast one.
	const std::string prefix = "MAC address " + shown(text);
	if (mac == MacAddress{})
		fail(path, prefix + " is all zeros");
	if (mac == MacAddress{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		fail(path, prefix + " is the broadcast address");
	if (mac[0] & 0x01)
		fail(path, prefix + " is a multicast address (group bit set in the first octet)");
	return mac;
}

Ipv4Address parse_ipv4(const std::string &path, const std::string &text)
{
	Ipv4Address address{};
	if (text.find('\0') != std::string::npos || inet_pton(AF_INET, text.c_str(), address.data()) != 1)
		fail(path, "invalid IPv4 address " + shown(text) + " (expected dotted quad like \"192.168.100.1\")");
	// An interface address is a unicast one.
	const std::string prefix = "IPv4 address " + shown(text);
	if (address == Ipv4Address{})
		fail(path, prefix + " is the unspecified address");
	if (address == Ipv4Address{255, 255, 255, 255})
		fail(path, prefix + " is the limited broadcast address");
	if ((address[0] & 0xf0) == 0xe0)
		fail(path, prefix + " is a multicast address (224.0.0.0/4)");
	return address;
}

Ipv6Address parse_ipv6(const std::string &path, const std::string &text)
{
	Ipv6Address address{};
	if (text.find('\0') != std::string::npos || inet_pton(AF_INET6, text.c_str(), address.data()) != 1)
		fail(path, "invalid IPv6 address " + shown(text));
	const std::string prefix = "IPv6 address " + shown(text);
	if (address == Ipv6Address{})
		fail(path, prefix + " is the unspecified address");
	if (address[0] == 0xff)
		fail(path, prefix + " is a multicast address (ff00::/8)");
	return address;
}

// File paths are handed to open() and QEMU: an embedded NUL would cut them short, and control
// characters are never meant.
void check_file_path(const std::string &path, const std::string &value)
{
	if (value.empty())
		fail(path, "empty path");
	for (unsigned char c : value)
		if (c < 0x20 || c == 0x7f)
			fail(path, "path " + shown(value) + " contains a control character");
}

// "host PF", "DPU SF", ...: how messages name a kind of function.
std::string function_kind(Side side, FuncType type)
{
	std::string kind = side == Side::host ? "host " : "DPU ";
	for (const char *c = to_string(type); *c != '\0'; ++c)
		kind += static_cast<char>(*c - 'a' + 'A');
	return kind;
}

void read_caps(const Json &value, const std::string &path, Capabilities &caps)
{
	ObjectReader reader(value, path,
			    {"dma_memcpy", "dma_max_buf_size", "dma_max_buf_list_len", "dma_max_num_tasks",
			     "mmap_export_pci", "mmap_export_rdma", "mmap_create_from_export_pci",
			     "sync_event_export_to_dpu", "sync_event_create_from_export", "hotplug_manager",
			     "rep_filter_all", "rep_filter_net", "rep_filter_emulated", "mmap_max_devices"});
	auto flag = [&](const char *key, bool &field) {
		if (auto v = reader.boolean(key))
			field = *v;
	};
	flag("dma_memcpy", caps.dma_memcpy);
	flag("mmap_export_pci", caps.mmap_export_pci);
	flag("mmap_export_rdma", caps.mmap_export_rdma);
	flag("mmap_create_from_export_pci", caps.mmap_create_from_export_pci);
	flag("sync_event_export_to_dpu", caps.sync_event_export_to_dpu);
	flag("sync_event_create_from_export", caps.sync_event_create_from_export);
	flag("hotplug_manager", caps.hotplug_manager);
	flag("rep_filter_all", caps.rep_filter_all);
	flag("rep_filter_net", caps.rep_filter_net);
	flag("rep_filter_emulated", caps.rep_filter_emulated);
	if (auto v = reader.unsigned_integer("dma_max_buf_size", 1, UINT64_MAX))
		caps.dma_max_buf_size = *v;
	if (auto v = reader.unsigned_integer("dma_max_buf_list_len", 1, UINT32_MAX))
		caps.dma_max_buf_list_len = static_cast<uint32_t>(*v);
	if (auto v = reader.unsigned_integer("dma_max_num_tasks", 1, UINT32_MAX))
		caps.dma_max_num_tasks = static_cast<uint32_t>(*v);
	if (auto v = reader.unsigned_integer("mmap_max_devices", 1, UINT32_MAX))
		caps.mmap_max_devices = static_cast<uint32_t>(*v);
}

// Representors and hot-plug belong to the eswitch managers, the DPU PFs (docs/topology.md); other
// functions default to false and must not claim them.
void check_manager_caps(const std::string &caps_path, Side side, FuncType type, const Capabilities &caps)
{
	const std::pair<const char *, bool> manager_caps[] = {{"hotplug_manager", caps.hotplug_manager},
							      {"rep_filter_all", caps.rep_filter_all},
							      {"rep_filter_net", caps.rep_filter_net},
							      {"rep_filter_emulated", caps.rep_filter_emulated}};
	if (side != Side::dpu || type != FuncType::pf)
		for (const auto &[key, value] : manager_caps)
			if (value)
				fail(caps_path + member_segment(key),
				     std::string("only a DPU PF manages representors and hot-plug, not a ") +
					 function_kind(side, type));
	// doca_devinfo_rep_cap_is_filter_all_supported: true means at least one kind is supported.
	if (caps.rep_filter_all && !caps.rep_filter_net && !caps.rep_filter_emulated)
		fail(caps_path + member_segment("rep_filter_all"),
		     "rep_filter_all is true but rep_filter_net and rep_filter_emulated are both false (a device "
		     "that lists all representors supports at least one kind)");
}

} // namespace

// Builds a Topology in two passes: read every entry, then resolve names and check consistency.
class TopologyBuilder {
public:
	TopologyBuilder(Side side, std::string_view source) : topology_(new Topology())
	{
		topology_->side_ = side;
		topology_->source_ = source;
	}

	std::shared_ptr<const Topology> build(const Json &document)
	{
		ObjectReader root(document, "$", {"version", "limits", "host", "dpu"});
		if (root.has("version")) {
			auto version = root.unsigned_integer("version", 0, UINT32_MAX);
			if (*version != 1)
				fail("$.version", "unsupported version " + std::to_string(*version) + " (expected 1)");
		}
		if (root.has("limits")) {
			ObjectReader limits(root.raw("limits"), "$.limits", {"max_open_devices"});
			if (auto v = limits.unsigned_integer("max_open_devices", 1, UINT32_MAX))
				topology_->max_open_devices_ = static_cast<uint32_t>(*v);
		}
		if (root.has("host")) {
			ObjectReader host(root.raw("host"), "$.host", {"functions"});
			read_functions(host, Side::host);
		}
		if (root.has("dpu")) {
			ObjectReader dpu(root.raw("dpu"), "$.dpu", {"functions", "representors"});
			read_functions(dpu, Side::dpu);
			read_entries(
			    dpu, "representors", topology_->representors_, kMaxRepresentors,
			    [&](const Json &value, const std::string &path) { read_representor(value, path); });
		}
		index_names();
		resolve_parents();
		resolve_representors();
		check_uniqueness();
		for (const auto &function : topology_->functions_)
			if (function->side == topology_->side_)
				topology_->local_.push_back(function.get());
		return std::shared_ptr<const Topology>(topology_.release());
	}

private:
	// Reads each element of the array object.key, refusing more than `limit` entries in all (both
	// sides count towards the limit on functions).
	template <typename Entries, typename Read>
	static void read_entries(const ObjectReader &object, const char *key, const Entries &entries, size_t limit,
				 Read read)
	{
		const Json *array = object.array(key, false);
		if (array == nullptr)
			return;
		const std::string path = object.member_path(key);
		for (size_t i = 0; i < array->size(); ++i) {
			if (entries.size() >= limit)
				fail(path, "more than " + std::to_string(limit) + " " + key);
			read((*array)[i], path + "[" + std::to_string(i) + "]");
		}
	}

	void read_functions(const ObjectReader &side_object, Side side)
	{
		read_entries(side_object, "functions", topology_->functions_, kMaxFunctions,
			     [&](const Json &value, const std::string &path) { read_function(value, side, path); });
	}

	void read_function(const Json &value, Side side, const std::string &path)
	{
		ObjectReader reader(value, path,
				    {"name", "type", "parent", "pci", "ibdev", "iface", "vuid", "mac", "ipv4", "ipv6",
				     "link_layer", "lid", "available", "caps"});
		auto function = std::make_unique<Function>();
		function->side = side;
		function->name = *reader.string("name", true);
		check_identifier(reader.member_path("name"), function->name, kMaxNameLength, "name");
		function->type = parse_func_type(reader.member_path("type"), *reader.string("type", true));

		auto parent = reader.string("parent", false);
		if (function->type == FuncType::pf && parent)
			fail(reader.member_path("parent"), "a PF has no parent");
		if (function->type != FuncType::pf && !parent)
			fail(reader.member_path("parent"), std::string("missing required key (a ") +
							       to_string(function->type) + " needs its parent PF)");
		if (parent)
			pending_parents_.push_back({function.get(), *parent, reader.member_path("parent")});

		auto pci = reader.string("pci", function->type != FuncType::sf);
		if (pci && function->type == FuncType::sf)
			fail(reader.member_path("pci"),
			     "an SF has no PCI address of its own (it uses its parent PF's)");
		if (pci)
			function->pci = parse_pci(reader.member_path("pci"), *pci);

		function->ibdev = *reader.string("ibdev", true);
		check_identifier(reader.member_path("ibdev"), function->ibdev, kMaxIbdevLength, "ibdev");
		if (auto iface = reader.string("iface", false)) {
			check_identifier(reader.member_path("iface"), *iface, kMaxIfaceLength, "iface");
			function->iface = *iface;
		}
		function->vuid = *reader.string("vuid", true);
		check_identifier(reader.member_path("vuid"), function->vuid, kMaxVuidLength, "vuid");
		if (auto layer = reader.string("link_layer", false)) {
			if (*layer == "ethernet")
				function->link_layer = LinkLayer::ethernet;
			else if (*layer == "infiniband")
				function->link_layer = LinkLayer::infiniband;
			else
				fail(reader.member_path("link_layer"),
				     "unknown link layer " + shown(*layer) +
					 " (expected \"ethernet\" or \"infiniband\")");
		}
		const bool infiniband = function->link_layer == LinkLayer::infiniband;
		if (auto lid =
			reader.unsigned_integer("lid", kMinLid, kMaxLid, "a port LID is unicast, 0x0001..0xbfff")) {
			if (!infiniband)
				fail(reader.member_path("lid"), "a LID needs \"link_layer\": \"infiniband\"");
			function->lid = static_cast<uint16_t>(*lid);
		} else if (infiniband) {
			// doca_devinfo_get_lid must have a LID to return.
			fail(reader.member_path("lid"), "missing required key (an InfiniBand port has a LID)");
		}
		if (auto mac = reader.string("mac", false)) {
			if (infiniband)
				fail(reader.member_path("mac"),
				     "an InfiniBand function has no MAC address (MACs are Ethernet/RoCE only)");
			function->mac = parse_mac(reader.member_path("mac"), *mac);
		}
		if (auto ipv4 = reader.string("ipv4", false))
			function->ipv4 = parse_ipv4(reader.member_path("ipv4"), *ipv4);
		if (auto ipv6 = reader.string("ipv6", false))
			function->ipv6 = parse_ipv6(reader.member_path("ipv6"), *ipv6);
		if (auto available = reader.boolean("available"))
			function->available = *available;
		function->caps = default_capabilities(side, function->type);
		if (reader.has("caps")) {
			read_caps(reader.raw("caps"), reader.member_path("caps"), function->caps);
			check_manager_caps(reader.member_path("caps"), side, function->type, function->caps);
		}
		paths_[function.get()] = path;
		topology_->functions_.push_back(std::move(function));
	}

	// App Shield: the memory of the system behind a representor (docs/apsh.md).
	static MemorySource read_memory_source(const Json &value, const std::string &path)
	{
		ObjectReader reader(value, path, {"kind", "path", "qmp"});
		MemorySource source;
		const std::string kind = *reader.string("kind", true);
		auto parsed = memory_kind_from_string(kind);
		if (!parsed)
			fail(
			    reader.member_path("kind"),
			    "unknown memory kind " + shown(kind) +
				" (expected qemu, raw, elf, lime, auto, pid, qemu-name or libvirt; or qemu_shared_ram, "
				"elf_core, qemu_name)");
		source.kind = *parsed;
		// The file's path, or the PID, QEMU -name or libvirt domain of a running QEMU.
		source.path = *reader.string("path", true);
		if (is_process_kind(source.kind)) {
			std::string error;
			if (!check_memory_target(source.kind, source.path, error))
				fail(reader.member_path("path"), error);
		} else {
			check_file_path(reader.member_path("path"), source.path);
		}
		if (auto qmp = reader.string("qmp", false)) {
			check_file_path(reader.member_path("qmp"), *qmp);
			if (source.kind != MemoryKind::qemu_shared_ram && source.kind != MemoryKind::automatic &&
			    !is_process_kind(source.kind))
				fail(reader.member_path("qmp"),
				     "a QMP socket only goes with kind \"qemu_shared_ram\", \"pid\", \"qemu_name\" or "
				     "\"libvirt\"");
			source.qmp_socket = *qmp;
		}
		return source;
	}

	void read_representor(const Json &value, const std::string &path)
	{
		ObjectReader reader(
		    value, path,
		    {"name", "manager", "function", "emulated", "type", "pci", "vuid", "iface", "hotplug", "memory"});
		auto rep = std::make_unique<Representor>();
		rep->name = *reader.string("name", true);
		check_identifier(reader.member_path("name"), rep->name, kMaxNameLength, "name");
		pending_managers_.push_back(
		    {rep.get(), *reader.string("manager", true), reader.member_path("manager")});
		if (auto iface = reader.string("iface", false)) {
			check_identifier(reader.member_path("iface"), *iface, kMaxIfaceLength, "iface");
			rep->iface = *iface;
		}
		if (auto hotplug = reader.boolean("hotplug"))
			rep->hotplug = *hotplug;
		if (reader.has("memory"))
			rep->memory = read_memory_source(reader.raw("memory"), reader.member_path("memory"));

		auto emulation = reader.string("emulated", false);
		auto function = reader.string("function", false);
		if (emulation && function)
			fail(
			    reader.member_path("function"),
			    "an emulated representor stands for no listed function; give \"function\" or \"emulated\"");
		if (!emulation && !function)
			fail(reader.member_path("function"),
			     "missing required key (name the represented function, or give \"emulated\")");
		if (function) {
			// Type, address and VUID come from the represented function.
			for (const char *derived : {"type", "pci", "vuid"})
				if (reader.has(derived))
					fail(reader.member_path(derived), "only emulated representors set this; a net "
									  "representor takes it from its function");
			pending_functions_.push_back({rep.get(), *function, reader.member_path("function")});
		} else {
			check_identifier(reader.member_path("emulated"), *emulation, kMaxNameLength, "emulation type");
			rep->emulation = *emulation;
			rep->type = parse_func_type(reader.member_path("type"), *reader.string("type", true));
			if (rep->type == FuncType::sf)
				fail(reader.member_path("type"), "an emulated function is a PF or a VF");
			rep->pci = parse_pci(reader.member_path("pci"), *reader.string("pci", true));
			rep->vuid = *reader.string("vuid", true);
			check_identifier(reader.member_path("vuid"), rep->vuid, kMaxVuidLength, "vuid");
		}
		rep_paths_[rep.get()] = path;
		topology_->representors_.push_back(std::move(rep));
	}

	// Names resolve through an index: up to 4096 functions and as many representors each name
	// one or two of them. A repeated name keeps its first function; check_uniqueness reports it.
	void index_names()
	{
		for (const auto &function : topology_->functions_)
			by_name_.emplace(function->name, function.get());
	}

	Function *find_function(const std::string &name) const
	{
		auto it = by_name_.find(name);
		return it != by_name_.end() ? it->second : nullptr;
	}

	void resolve_parents()
	{
		for (const auto &pending : pending_parents_) {
			const Function *parent = find_function(pending.name);
			if (parent == nullptr)
				fail(pending.path, "parent " + shown(pending.name) + " does not exist");
			if (parent->side != pending.object->side)
				fail(pending.path, "parent " + shown(pending.name) + " is on the other side");
			if (parent->type != FuncType::pf)
				fail(pending.path, "parent " + shown(pending.name) + " is not a PF");
			pending.object->parent = parent;
			if (pending.object->type == FuncType::sf)
				pending.object->pci = parent->pci;
		}
	}

	void resolve_representors()
	{
		for (const auto &pending : pending_managers_) {
			const Function *manager = find_function(pending.name);
			if (manager == nullptr)
				fail(pending.path, "manager " + shown(pending.name) + " does not exist");
			if (manager->side != Side::dpu || manager->type != FuncType::pf)
				fail(pending.path, "manager " + shown(pending.name) + " is not a DPU PF");
			pending.object->manager = manager;
			check_manager_lists(*pending.object, pending.path);
		}
		std::map<const Function *, const Representor *> representor_of;
		for (const auto &pending : pending_functions_) {
			Representor &rep = *pending.object;
			const Function *function = find_function(pending.name);
			if (function == nullptr)
				fail(pending.path, "function " + shown(pending.name) + " does not exist");
			// The Core guide's model: a representor per host PF/VF, and one per DPU SF.
			const bool sf = function->type == FuncType::sf;
			if (function->side == Side::host ? sf : !sf)
				fail(pending.path, "function " + shown(pending.name) + " is a " +
						       function_kind(function->side, function->type) +
						       "; representors stand for host PFs/VFs and DPU SFs");
			if (function->side == Side::dpu && function->parent != rep.manager)
				fail(pending.path, "DPU SF " + shown(pending.name) + " belongs to " +
						       shown(function->parent->name) + ", not to manager " +
						       shown(rep.manager->name));
			if (!representor_of.emplace(function, &rep).second)
				fail(pending.path, "function " + shown(pending.name) + " already has a representor");
			rep.represents = function;
			rep.type = function->type;
			rep.pci = function->pci;
			rep.vuid = function->vuid;
		}
		// A host VF sits on the same port as its PF, so the DPU PF that manages the PF's
		// representor must manage the VF's too; without the PF's there is no port to match.
		for (const auto &rep : topology_->representors_) {
			const Function *function = rep->represents;
			if (function == nullptr || function->side != Side::host || function->type != FuncType::vf)
				continue;
			const std::string &path = rep_paths_.at(rep.get());
			auto pf = representor_of.find(function->parent);
			if (pf == representor_of.end())
				fail(path + ".function", "host VF " + shown(function->name) +
							     " has a representor but its PF " +
							     shown(function->parent->name) + " has none");
			if (pf->second->manager != rep->manager)
				fail(path + ".manager", "host VF " + shown(function->name) + " is managed by " +
							    shown(rep->manager->name) + " but its PF " +
							    shown(function->parent->name) + " by " +
							    shown(pf->second->manager->name));
		}
	}

	// A representor its manager could never list, or a hot-plugged one under a manager that cannot
	// hot-plug, would silently vanish from doca_devinfo_rep_create_list: refuse it instead.
	void check_manager_lists(const Representor &rep, const std::string &manager_path) const
	{
		const Function &manager = *rep.manager;
		const bool listed = rep.is_emulated() ? manager.caps.rep_filter_emulated : manager.caps.rep_filter_net;
		if (!listed)
			fail(manager_path,
			     "manager " + shown(manager.name) + " does not list " +
				 (rep.is_emulated() ? "emulated representors (its rep_filter_emulated is false)"
						    : "net representors (its rep_filter_net is false)"));
		if (rep.hotplug && !manager.caps.hotplug_manager)
			fail(rep_paths_.at(&rep) + ".hotplug",
			     "manager " + shown(manager.name) +
				 " is not a hotplug manager (its hotplug_manager is false)");
	}

	template <typename Key>
	void check_unique(std::map<Key, std::string> &seen, const Key &key, const std::string &path,
			  const std::string &what, const std::string &value)
	{
		auto [it, inserted] = seen.emplace(key, path);
		if (!inserted)
			fail(path, "duplicate " + what + " " + shown(value) + " (also at " + it->second + ")");
	}

	void check_uniqueness()
	{
		std::map<std::string, std::string> names, vuids, host_ibdevs, dpu_ibdevs, host_ifaces, dpu_ifaces;
		std::map<std::pair<int, PciAddress>, std::string> pcis;
		// Addresses are unique in the whole file: host and DPU share the network.
		std::map<MacAddress, std::string> macs;
		std::map<Ipv4Address, std::string> ipv4s;
		std::map<Ipv6Address, std::string> ipv6s;
		for (const auto &function : topology_->functions_) {
			const std::string &path = paths_.at(function.get());
			const bool host = function->side == Side::host;
			check_unique(names, function->name, path + ".name", "name", function->name);
			check_unique(vuids, function->vuid, path + ".vuid", "VUID", function->vuid);
			check_unique(host ? host_ibdevs : dpu_ibdevs, function->ibdev, path + ".ibdev", "ibdev",
				     function->ibdev);
			if (!function->iface.empty())
				check_unique(host ? host_ifaces : dpu_ifaces, function->iface, path + ".iface", "iface",
					     function->iface);
			if (function->type != FuncType::sf)
				check_unique(pcis, std::make_pair(static_cast<int>(function->side), function->pci),
					     path + ".pci", "PCI address", function->pci.to_string());
			if (function->mac)
				check_unique(macs, *function->mac, path + ".mac", "MAC address",
					     to_string(*function->mac));
			if (function->ipv4)
				check_unique(ipv4s, *function->ipv4, path + ".ipv4", "IPv4 address",
					     to_string(*function->ipv4));
			if (function->ipv6)
				check_unique(ipv6s, *function->ipv6, path + ".ipv6", "IPv6 address",
					     to_string(*function->ipv6));
		}
		for (const auto &rep : topology_->representors_) {
			const std::string &path = rep_paths_.at(rep.get());
			check_unique(names, rep->name, path + ".name", "name", rep->name);
			if (!rep->iface.empty())
				check_unique(dpu_ifaces, rep->iface, path + ".iface", "iface", rep->iface);
			if (rep->is_emulated()) {
				// Emulated functions live on the host's PCI bus next to the host's own.
				check_unique(vuids, rep->vuid, path + ".vuid", "VUID", rep->vuid);
				check_unique(pcis, std::make_pair(static_cast<int>(Side::host), rep->pci),
					     path + ".pci", "PCI address", rep->pci.to_string());
			}
		}
	}

	template <typename T> struct Pending {
		T *object;
		std::string name;
		std::string path;
	};

	std::unique_ptr<Topology> topology_;
	std::vector<Pending<Function>> pending_parents_;
	std::vector<Pending<Representor>> pending_managers_;
	std::vector<Pending<Representor>> pending_functions_;
	std::map<const Function *, std::string> paths_;
	std::map<const Representor *, std::string> rep_paths_;
	std::map<std::string_view, Function *> by_name_;
};

Topology::ParseResult Topology::parse(std::string_view text, std::string_view source, Side side)
{
	const std::string source_name(source);
	try {
		Json document = softdpu::json::parse(text, {.max_depth = kMaxNesting, .reject_duplicate_keys = true});
		const softdpu::json::DismantledOnExit dismantled(document);
		TopologyBuilder builder(side, source);
		return {builder.build(document), {}};
	} catch (const softdpu::json::Error &error) {
		return {nullptr, source_name + ": " + error.path + ": " + error.what()};
	} catch (const std::bad_alloc &) {
		return {nullptr, source_name + ": out of memory", true};
	} catch (const std::exception &error) {
		return {nullptr, source_name + ": " + error.what()};
	}
}

} // namespace softdpu::device
