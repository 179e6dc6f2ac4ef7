// The topology model: the built-in default (the Core guide's example), the JSON loader's
// validation and error messages, capabilities and host <-> DPU matching.
#include "device/topology.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

using namespace softdpu::device;

namespace {

std::shared_ptr<const Topology> default_topology(Side side)
{
	auto result = Topology::builtin_default(side);
	EXPECT_TRUE(result.topology) << result.error;
	return result.topology;
}

std::string data_file(const char *name)
{
	return std::string(SOFTDPU_SOURCE_DIR) + "/tests/data/topology/" + name;
}

std::vector<std::string> local_names(const Topology &topology)
{
	std::vector<std::string> names;
	for (const Function *function : topology.local_functions())
		names.push_back(function->name);
	return names;
}

} // namespace

TEST(PciAddress, ParsesLongAndShortForms)
{
	auto long_form = PciAddress::parse("0000:3a:00.0");
	auto short_form = PciAddress::parse("3a:00.0");
	ASSERT_TRUE(long_form && short_form);
	EXPECT_EQ(*long_form, *short_form);
	EXPECT_EQ(long_form->bus, 0x3a);
	auto upper = PciAddress::parse("00A1:FF:1F.7");
	ASSERT_TRUE(upper);
	EXPECT_EQ(upper->domain, 0xa1);
	EXPECT_EQ(upper->bus, 0xff);
	EXPECT_EQ(upper->device, 0x1f);
	EXPECT_EQ(upper->function, 7);
	EXPECT_EQ(upper->to_string(), "00a1:ff:1f.7");
	EXPECT_EQ(upper->bdf_string(), "ff:1f.7");
}

TEST(PciAddress, RejectsMalformedAddresses)
{
	for (const char *bad : {"", "3a:00", "3a:00.8", "3a:20.0", "g0:00.0", "0000:3a:00.0 ", " 3a:00.0",
				"000:3a:00.0", "3a-00.0", "3a:00:0", "00000:3a:00.0", "0000.3a:00.0", "3a:0.00"})
		EXPECT_FALSE(PciAddress::parse(bad)) << bad;
}

TEST(DefaultTopology, HostSeesTheGuidesFiveFunctions)
{
	auto topology = default_topology(Side::host);
	ASSERT_TRUE(topology);
	EXPECT_EQ(topology->side(), Side::host);
	EXPECT_EQ(local_names(*topology), (std::vector<std::string>{"pf0", "pf1", "pf0vf0", "pf0vf1", "pf1vf0"}));
	const Function *vf1 = topology->find_function("pf0vf1");
	ASSERT_NE(vf1, nullptr);
	EXPECT_EQ(vf1->type, FuncType::vf);
	EXPECT_EQ(vf1->pci.to_string(), "0000:0b:00.3");
	ASSERT_NE(vf1->parent, nullptr);
	EXPECT_EQ(vf1->parent->name, "pf0");
	EXPECT_EQ(topology->find_function("pf1vf0")->parent->name, "pf1");
}

TEST(DefaultTopology, DpuSeesTwoPfsTwoSfsAndSevenRepresentors)
{
	auto topology = default_topology(Side::dpu);
	ASSERT_TRUE(topology);
	EXPECT_EQ(local_names(*topology), (std::vector<std::string>{"p0", "p1", "p0s0", "p1s0"}));
	const Function *p0 = topology->find_function("p0");
	const Function *p1 = topology->find_function("p1");
	EXPECT_EQ(p0->pci.to_string(), "0000:03:00.0");
	EXPECT_EQ(p1->pci.to_string(), "0000:03:00.1");
	// An SF has no PCI function of its own: it reports its parent's address.
	EXPECT_EQ(topology->find_function("p0s0")->pci, p0->pci);

	std::vector<std::string> p0_reps, p1_reps;
	for (const Representor *rep : topology->representors_of_manager(*p0))
		p0_reps.push_back(rep->name);
	for (const Representor *rep : topology->representors_of_manager(*p1))
		p1_reps.push_back(rep->name);
	EXPECT_EQ(p0_reps, (std::vector<std::string>{"hpf0", "hpf0vf0", "hpf0vf1", "pf0sf0"}));
	EXPECT_EQ(p1_reps, (std::vector<std::string>{"hpf1", "hpf1vf0", "pf1sf0"}));
	EXPECT_TRUE(topology->representors_of_manager(*topology->find_function("p0s0")).empty());
}

TEST(DefaultTopology, RepresentorsCarryTheHostFunctionsAddressAndVuid)
{
	auto topology = default_topology(Side::dpu);
	ASSERT_TRUE(topology);
	// The Core guide's matching table: host function, DPU representor, DPU device.
	struct Row {
		const char *host, *pci, *rep, *dpu, *dpu_pci;
	};
	for (const Row &row : {Row{"pf0", "0000:0b:00.0", "hpf0", "p0", "0000:03:00.0"},
			       Row{"pf0vf0", "0000:0b:00.2", "hpf0vf0", "p0", "0000:03:00.0"},
			       Row{"pf0vf1", "0000:0b:00.3", "hpf0vf1", "p0", "0000:03:00.0"},
			       Row{"pf1", "0000:0b:00.1", "hpf1", "p1", "0000:03:00.1"},
			       Row{"pf1vf0", "0000:0b:00.4", "hpf1vf0", "p1", "0000:03:00.1"}}) {
		const Function *host = topology->find_function(row.host);
		ASSERT_NE(host, nullptr) << row.host;
		EXPECT_EQ(host->pci.to_string(), row.pci);
		const Representor *rep = topology->representor_of(*host);
		ASSERT_NE(rep, nullptr) << row.host;
		EXPECT_EQ(rep->name, row.rep);
		EXPECT_EQ(rep->pci, host->pci);
		EXPECT_EQ(rep->vuid, host->vuid);
		EXPECT_EQ(rep->type, host->type);
		const Function *dpu = topology->dpu_manager_of(*host);
		ASSERT_NE(dpu, nullptr);
		EXPECT_EQ(dpu->name, row.dpu);
		EXPECT_EQ(dpu->pci.to_string(), row.dpu_pci);
	}
	std::vector<std::string> host_of_p1;
	for (const Function *function : topology->host_functions_of(*topology->find_function("p1")))
		host_of_p1.push_back(function->name);
	EXPECT_EQ(host_of_p1, (std::vector<std::string>{"pf1", "pf1vf0"}));
	// A DPU function has no DPU manager of its own.
	EXPECT_EQ(topology->dpu_manager_of(*topology->find_function("p0")), nullptr);
}

TEST(DefaultTopology, EveryFunctionHasDistinctIdentity)
{
	auto topology = default_topology(Side::dpu);
	ASSERT_TRUE(topology);
	std::set<std::string> vuids;
	for (const auto &function : topology->all_functions()) {
		EXPECT_TRUE(vuids.insert(function->vuid).second) << function->vuid;
		EXPECT_FALSE(function->ibdev.empty());
		EXPECT_FALSE(function->iface.empty());
		EXPECT_TRUE(function->mac && function->ipv4 && function->ipv6) << function->name;
		EXPECT_EQ(topology->find_function_by_vuid(function->vuid), function.get());
	}
	EXPECT_EQ(topology->find_function(Side::host, *PciAddress::parse("0b:00.4"))->name, "pf1vf0");
	EXPECT_EQ(topology->find_function(Side::dpu, *PciAddress::parse("03:00.1"))->name, "p1");
	EXPECT_EQ(topology->find_function(Side::dpu, *PciAddress::parse("03:00.7")), nullptr);
	EXPECT_EQ(topology->find_representor("pf1sf0")->represents, topology->find_function("p1s0"));
}

TEST(Capabilities, DefaultsFollowSideAndFunctionType)
{
	auto topology = default_topology(Side::dpu);
	ASSERT_TRUE(topology);
	const Capabilities &host = topology->find_function("pf0")->caps;
	const Capabilities &dpu_pf = topology->find_function("p0")->caps;
	const Capabilities &dpu_sf = topology->find_function("p0s0")->caps;
	EXPECT_TRUE(host.dma_memcpy && dpu_pf.dma_memcpy && dpu_sf.dma_memcpy);
	EXPECT_EQ(dpu_pf.dma_max_buf_size, 2ull << 30);
	EXPECT_GE(dpu_pf.dma_max_buf_list_len, 16u);
	EXPECT_EQ(dpu_pf.dma_max_num_tasks, 65536u);
	EXPECT_TRUE(host.mmap_export_pci && host.sync_event_export_to_dpu);
	EXPECT_FALSE(host.mmap_create_from_export_pci || host.hotplug_manager || host.rep_filter_all);
	EXPECT_TRUE(dpu_pf.mmap_create_from_export_pci && dpu_pf.sync_event_create_from_export);
	EXPECT_TRUE(dpu_pf.hotplug_manager && dpu_pf.rep_filter_all && dpu_pf.rep_filter_net &&
		    dpu_pf.rep_filter_emulated);
	EXPECT_FALSE(dpu_pf.sync_event_export_to_dpu);
	EXPECT_FALSE(dpu_sf.rep_filter_all || dpu_sf.hotplug_manager || dpu_sf.mmap_create_from_export_pci);
	EXPECT_EQ(host, default_capabilities(Side::host, FuncType::pf));
}

TEST(TopologyFile, RichFileLoadsWithOverrides)
{
	auto result = Topology::load_file(data_file("rich.json"), Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	const Topology &topology = *result.topology;
	EXPECT_EQ(topology.max_open_devices(), 4u);
	EXPECT_EQ(topology.source(), data_file("rich.json"));
	const Function *p0 = topology.find_function("p0");
	EXPECT_EQ(p0->caps.dma_max_buf_size, 65536u);
	EXPECT_EQ(p0->caps.dma_max_buf_list_len, 4u);
	EXPECT_EQ(p0->caps.dma_max_num_tasks, 128u);
	EXPECT_TRUE(p0->caps.rep_filter_all); // untouched keys keep their defaults
	EXPECT_FALSE(topology.find_function("pf0vf0")->caps.dma_memcpy);
	const Function *ib0 = topology.find_function("ib0");
	EXPECT_EQ(ib0->link_layer, LinkLayer::infiniband);
	EXPECT_EQ(ib0->lid, 42);
	EXPECT_FALSE(ib0->available);
	const Representor *virtio = topology.find_representor("virtio0");
	ASSERT_NE(virtio, nullptr);
	EXPECT_TRUE(virtio->is_emulated());
	EXPECT_EQ(virtio->emulation, "virtio-net");
	EXPECT_TRUE(virtio->hotplug);
	EXPECT_EQ(virtio->represents, nullptr);
	EXPECT_EQ(virtio->pci.to_string(), "0000:0c:00.0");
	EXPECT_EQ(topology.find_representor("nvme0")->type, FuncType::vf);
}

TEST(TopologyFile, ErrorsNameTheFile)
{
	auto missing = Topology::load_file("/nonexistent/topology.json", Side::dpu);
	EXPECT_FALSE(missing.topology);
	EXPECT_NE(missing.error.find("/nonexistent/topology.json: cannot open file"), std::string::npos)
	    << missing.error;

	auto duplicate = Topology::load_file(data_file("duplicate_pci.json"), Side::host);
	EXPECT_FALSE(duplicate.topology);
	EXPECT_EQ(duplicate.error, data_file("duplicate_pci.json") +
				       ": $.host.functions[1].pci: duplicate PCI address \"0000:0b:00.0\" (also at "
				       "$.host.functions[0].pci)");

	auto truncated = Topology::load_file(data_file("truncated.json"), Side::host);
	EXPECT_FALSE(truncated.topology);
	EXPECT_EQ(truncated.error.rfind(data_file("truncated.json") + ": $: invalid JSON", 0), 0u) << truncated.error;
}

namespace {

// A valid base document; each invalid case edits one thing in it.
const char *const kBase = R"({
  "host": { "functions": [
    { "name": "pf0", "type": "pf", "pci": "0b:00.0", "ibdev": "mlx5_0", "iface": "h0", "vuid": "H0" },
    { "name": "vf0", "type": "vf", "parent": "pf0", "pci": "0b:00.2", "ibdev": "mlx5_2", "vuid": "H0V0" } ] },
  "dpu": { "functions": [
    { "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "mlx5_0", "iface": "p0", "vuid": "D0" },
    { "name": "p1", "type": "pf", "pci": "03:00.1", "ibdev": "mlx5_1", "vuid": "D1" },
    { "name": "s0", "type": "sf", "parent": "p0", "ibdev": "mlx5_3", "vuid": "D0S0" } ],
    "representors": [
      { "name": "hpf0", "manager": "p0", "function": "pf0" },
      { "name": "hvf0", "manager": "p0", "function": "vf0" },
      { "name": "rs0", "manager": "p0", "function": "s0" } ] }
})";

std::string replace(std::string text, const std::string &from, const std::string &to)
{
	size_t at = text.find(from);
	EXPECT_NE(at, std::string::npos) << from;
	if (at != std::string::npos)
		text.replace(at, from.size(), to);
	return text;
}

struct InvalidCase {
	const char *what;
	std::string text;
	const char *path;
	const char *reason;
};

} // namespace

TEST(TopologyParse, BaseDocumentIsValid)
{
	auto result = Topology::parse(kBase, "base", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->local_functions().size(), 3u);
	EXPECT_EQ(result.topology->find_function("s0")->pci.to_string(), "0000:03:00.0");
}

TEST(TopologyParse, RejectsInconsistentDocumentsWithPathAndReason)
{
	const std::string b = kBase;
	const std::vector<InvalidCase> cases = {
	    {"not JSON", "{ nope", "$", "invalid JSON"},
	    {"trailing garbage", b + "x", "$", "invalid JSON"},
	    {"root not object", "[]", "$", "expected an object, got array"},
	    {"unknown root key", replace(b, "\"host\"", "\"hosts\": {}, \"host\""), "$.hosts", "unknown key"},
	    {"bad version", replace(b, "{\n  \"host\"", "{ \"version\": 2, \"host\""), "$.version",
	     "unsupported version 2"},
	    {"functions wrong type",
	     replace(b, "\"host\": { \"functions\": [", "\"host\": { \"functions\": 3, \"x\": ["), "$.host.x",
	     "unknown key"},
	    {"name wrong type", replace(b, "\"name\": \"pf0\"", "\"name\": 7"), "$.host.functions[0].name",
	     "expected a string, got number"},
	    {"missing vuid", replace(b, ", \"vuid\": \"H0\" }", " }"), "$.host.functions[0].vuid",
	     "missing required key"},
	    {"unknown function key", replace(b, "\"vuid\": \"H0\"", "\"vuid\": \"H0\", \"speed\": 100"),
	     "$.host.functions[0].speed", "unknown key"},
	    {"bad type", replace(b, "\"type\": \"pf\", \"pci\": \"0b", "\"type\": \"xf\", \"pci\": \"0b"),
	     "$.host.functions[0].type", "unknown function type \"xf\""},
	    {"bad pci", replace(b, "\"0b:00.2\"", "\"0b:00.9\""), "$.host.functions[1].pci", "invalid PCI address"},
	    {"duplicate pci", replace(b, "\"0b:00.2\"", "\"0000:0b:00.0\""), "$.host.functions[1].pci",
	     "duplicate PCI address \"0000:0b:00.0\""},
	    {"duplicate vuid", replace(b, "\"H0V0\"", "\"D1\""), "$.dpu.functions[1].vuid", "duplicate VUID \"D1\""},
	    {"duplicate name", replace(b, "\"name\": \"p1\"", "\"name\": \"vf0\""), "$.dpu.functions[1].name",
	     "duplicate name \"vf0\""},
	    {"duplicate ibdev", replace(b, "\"mlx5_1\"", "\"mlx5_0\""), "$.dpu.functions[1].ibdev",
	     "duplicate ibdev \"mlx5_0\""},
	    {"duplicate iface", replace(b, "\"ibdev\": \"mlx5_1\"", "\"ibdev\": \"mlx5_1\", \"iface\": \"p0\""),
	     "$.dpu.functions[1].iface", "duplicate iface \"p0\""},
	    {"missing parent", replace(b, "\"parent\": \"pf0\"", "\"parent\": \"pf9\""), "$.host.functions[1].parent",
	     "parent \"pf9\" does not exist"},
	    {"parent on other side", replace(b, "\"parent\": \"pf0\"", "\"parent\": \"p0\""),
	     "$.host.functions[1].parent", "on the other side"},
	    {"parent not a PF", replace(b, "\"parent\": \"pf0\"", "\"parent\": \"vf0\""), "$.host.functions[1].parent",
	     "is not a PF"},
	    {"VF without parent", replace(b, "\"parent\": \"pf0\", ", ""), "$.host.functions[1].parent",
	     "missing required key"},
	    {"PF with parent",
	     replace(b, "\"type\": \"pf\", \"pci\": \"03:00.1\"",
		     "\"type\": \"pf\", \"parent\": \"p0\", \"pci\": \"03:00.1\""),
	     "$.dpu.functions[1].parent", "a PF has no parent"},
	    {"SF with pci", replace(b, "\"parent\": \"p0\",", "\"parent\": \"p0\", \"pci\": \"03:00.5\","),
	     "$.dpu.functions[2].pci", "an SF has no PCI address"},
	    {"bad mac", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"mac\": \"02:00:00:00:00\""),
	     "$.dpu.functions[1].mac", "invalid MAC address"},
	    {"bad mac separator", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"mac\": \"02-00-00-00-00-01\""),
	     "$.dpu.functions[1].mac", "invalid MAC address"},
	    {"bad ipv4", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"ipv4\": \"10.0.0.256\""),
	     "$.dpu.functions[1].ipv4", "invalid IPv4 address"},
	    {"bad ipv6", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"ipv6\": \"fd00::1::2\""),
	     "$.dpu.functions[1].ipv6", "invalid IPv6 address"},
	    {"bad link layer", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"link_layer\": \"tokenring\""),
	     "$.dpu.functions[1].link_layer", "unknown link layer"},
	    {"lid on ethernet", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"lid\": 3"),
	     "$.dpu.functions[1].lid", "needs \"link_layer\": \"infiniband\""},
	    {"negative lid",
	     replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"link_layer\": \"infiniband\", \"lid\": -1"),
	     "$.dpu.functions[1].lid", "expected a non-negative integer"},
	    {"available not bool", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"available\": \"yes\""),
	     "$.dpu.functions[1].available", "expected true or false"},
	    {"iface too long", replace(b, "\"iface\": \"h0\"", "\"iface\": \"a-very-long-ifname\""),
	     "$.host.functions[0].iface", "longer than 15 characters"},
	    {"name with space", replace(b, "\"name\": \"p1\"", "\"name\": \"p 1\""), "$.dpu.functions[1].name",
	     "may only contain"},
	    {"empty vuid", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"\""), "$.dpu.functions[1].vuid",
	     "must not be empty"},
	    {"unknown cap", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"caps\": { \"warp_drive\": true }"),
	     "$.dpu.functions[1].caps.warp_drive", "unknown key"},
	    {"cap wrong type", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"caps\": { \"dma_memcpy\": 1 }"),
	     "$.dpu.functions[1].caps.dma_memcpy", "expected true or false, got number"},
	    {"cap zero", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"caps\": { \"dma_max_buf_size\": 0 }"),
	     "$.dpu.functions[1].caps.dma_max_buf_size", "out of range"},
	    {"cap too big",
	     replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"caps\": { \"dma_max_num_tasks\": 4294967296 }"),
	     "$.dpu.functions[1].caps.dma_max_num_tasks", "out of range"},
	    {"cap float",
	     replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"D1\", \"caps\": { \"dma_max_buf_list_len\": 1.5 }"),
	     "$.dpu.functions[1].caps.dma_max_buf_list_len", "expected an integer, got number"},
	    {"limits zero", replace(b, "\"host\"", "\"limits\": { \"max_open_devices\": 0 }, \"host\""),
	     "$.limits.max_open_devices", "out of range"},
	    {"rep to missing function", replace(b, "\"function\": \"vf0\"", "\"function\": \"vf9\""),
	     "$.dpu.representors[1].function", "function \"vf9\" does not exist"},
	    {"rep of a DPU PF", replace(b, "\"function\": \"vf0\"", "\"function\": \"p1\""),
	     "$.dpu.representors[1].function", "is a DPU PF/VF"},
	    {"rep manager missing",
	     replace(b, "\"manager\": \"p0\", \"function\": \"vf0\"", "\"manager\": \"p7\", \"function\": \"vf0\""),
	     "$.dpu.representors[1].manager", "manager \"p7\" does not exist"},
	    {"rep manager not DPU PF",
	     replace(b, "\"manager\": \"p0\", \"function\": \"vf0\"", "\"manager\": \"s0\", \"function\": \"vf0\""),
	     "$.dpu.representors[1].manager", "is not a DPU PF"},
	    {"rep twice", replace(b, "\"function\": \"vf0\"", "\"function\": \"pf0\""),
	     "$.dpu.representors[1].function", "already has a representor"},
	    {"VF managed apart from its PF",
	     replace(b, "\"manager\": \"p0\", \"function\": \"vf0\"", "\"manager\": \"p1\", \"function\": \"vf0\""),
	     "$.dpu.representors[1].manager", "host VF \"vf0\" is managed by \"p1\" but its PF \"pf0\" by \"p0\""},
	    {"SF rep under the other PF",
	     replace(b, "\"manager\": \"p0\", \"function\": \"s0\"", "\"manager\": \"p1\", \"function\": \"s0\""),
	     "$.dpu.representors[2].function", "belongs to \"p0\", not to manager \"p1\""},
	    {"net rep with pci", replace(b, "\"function\": \"pf0\"", "\"function\": \"pf0\", \"pci\": \"0b:00.0\""),
	     "$.dpu.representors[0].pci", "takes it from its function"},
	    {"rep with neither", replace(b, ", \"function\": \"pf0\"", ""), "$.dpu.representors[0].function",
	     "missing required key"},
	    {"rep with both", replace(b, "\"function\": \"pf0\"", "\"function\": \"pf0\", \"emulated\": \"nvme\""),
	     "$.dpu.representors[0].function", "give \"function\" or \"emulated\""},
	    {"emulated without pci",
	     replace(b, "\"function\": \"pf0\"", "\"emulated\": \"nvme\", \"type\": \"pf\", \"vuid\": \"E\""),
	     "$.dpu.representors[0].pci", "missing required key"},
	    {"emulated SF",
	     replace(b, "\"function\": \"pf0\"",
		     "\"emulated\": \"nvme\", \"type\": \"sf\", \"pci\": \"0c:00.0\", \"vuid\": \"E\""),
	     "$.dpu.representors[0].type", "an emulated function is a PF or a VF"},
	    {"emulated pci clash",
	     replace(b, "\"function\": \"pf0\"",
		     "\"emulated\": \"nvme\", \"type\": \"pf\", \"pci\": \"0b:00.2\", \"vuid\": \"E\""),
	     "$.dpu.representors[0].pci", "duplicate PCI address \"0000:0b:00.2\""},
	    {"emulated vuid clash",
	     replace(b, "\"function\": \"pf0\"",
		     "\"emulated\": \"nvme\", \"type\": \"pf\", \"pci\": \"0c:00.0\", \"vuid\": \"H0\""),
	     "$.dpu.representors[0].vuid", "duplicate VUID \"H0\""},
	    {"deep nesting", std::string(100, '[') + std::string(100, ']'), "$", "nested deeper than 64 levels"},
	};
	for (const InvalidCase &c : cases) {
		auto result = Topology::parse(c.text, "case.json", Side::dpu);
		EXPECT_FALSE(result.topology) << c.what;
		const std::string prefix = std::string("case.json: ") + c.path + ": ";
		EXPECT_EQ(result.error.rfind(prefix, 0), 0u) << c.what << ": " << result.error;
		EXPECT_NE(result.error.find(c.reason), std::string::npos) << c.what << ": " << result.error;
	}
}

TEST(TopologyParse, NonPrintableBytesAreEscapedInMessages)
{
	std::string text = replace(kBase, "\"0b:00.2\"", "\"\\u0001\\u001b[31m\"");
	auto result = Topology::parse(text, "case.json", Side::host);
	ASSERT_FALSE(result.topology);
	EXPECT_NE(result.error.find("\\x01\\x1b[31m"), std::string::npos) << result.error;
	EXPECT_EQ(result.error.find('\x1b'), std::string::npos);
}

TEST(TopologyParse, EmptyDocumentHasNoDevices)
{
	auto result = Topology::parse("{}", "empty", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_TRUE(result.topology->local_functions().empty());
	EXPECT_TRUE(result.topology->representors().empty());
}

TEST(TopologyParse, BuiltInDefaultIsValidJsonForUsersToStartFrom)
{
	auto result = Topology::parse(Topology::builtin_default_text(), "copy.json", Side::host);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->all_functions().size(), 9u);
	EXPECT_EQ(result.topology->representors().size(), 7u);
}

TEST(ProcessTopology, TestEnvironmentSelectsTheHostViewOfTheDefault)
{
	// tests/support/test_env.cpp sets SOFTDPU_SIDE=host and clears SOFTDPU_TOPOLOGY.
	const Topology *topology = Topology::current();
	ASSERT_NE(topology, nullptr) << Topology::current_error();
	EXPECT_EQ(topology, Topology::current()); // loaded once
	EXPECT_EQ(topology->side(), Side::host);
	EXPECT_EQ(local_names(*topology), (std::vector<std::string>{"pf0", "pf1", "pf0vf0", "pf0vf1", "pf1vf0"}));
	EXPECT_TRUE(Topology::current_error().empty());
}

TEST(ProcessTopology, SideComesFromTheEnvironment)
{
	const char *saved = std::getenv("SOFTDPU_SIDE");
	std::string saved_value = saved ? saved : "";
	setenv("SOFTDPU_SIDE", "dpu", 1);
	EXPECT_EQ(side_from_environment(), Side::dpu);
	setenv("SOFTDPU_SIDE", "host", 1);
	EXPECT_EQ(side_from_environment(), Side::host);
	setenv("SOFTDPU_SIDE", "HOST", 1);
	EXPECT_EQ(side_from_environment(), std::nullopt);
	unsetenv("SOFTDPU_SIDE");
	EXPECT_EQ(side_from_environment(), Side::dpu); // the documented default
	if (saved)
		setenv("SOFTDPU_SIDE", saved_value.c_str(), 1);
}

TEST(ProcessTopology, ScopedOverridesRestoreThePrevious)
{
	const Topology *original = Topology::current();
	auto dpu = default_topology(Side::dpu);
	{
		softdpu::device::testing::ScopedTopology scoped(dpu);
		EXPECT_EQ(Topology::current(), dpu.get());
		{
			softdpu::device::testing::ScopedTopologyError failing("broken.json: $: bad");
			EXPECT_EQ(Topology::current(), nullptr);
			EXPECT_EQ(Topology::current_error(), "broken.json: $: bad");
		}
		EXPECT_EQ(Topology::current(), dpu.get());
	}
	EXPECT_EQ(Topology::current(), original);
}
