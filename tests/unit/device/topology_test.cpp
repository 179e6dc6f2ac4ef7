// The topology model: the built-in default (the Core guide's example), the JSON loader's
// validation and error messages, capabilities and host <-> DPU matching.
#include "device/topology.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
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

// A fresh directory for one test's files, removed with them afterwards.
class TempDir {
public:
	TempDir()
	    : path_(std::filesystem::temp_directory_path() /
		    ("softdpu_topology_test." + std::to_string(::getpid()) + "." +
		     ::testing::UnitTest::GetInstance()->current_test_info()->name()))
	{
		std::filesystem::create_directories(path_);
	}
	~TempDir()
	{
		std::error_code ignored;
		std::filesystem::remove_all(path_, ignored);
	}
	std::string file(const char *name, const std::string &content) const
	{
		const std::string path = (path_ / name).string();
		std::ofstream(path, std::ios::binary) << content;
		return path;
	}
	std::string path(const char *name) const { return (path_ / name).string(); }

private:
	std::filesystem::path path_;
};

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

// The one host <-> DPU matching rule (mmap and sync event imports): each DPU function against
// each host function, by kind (PF, VF, SF) and port.
TEST(DefaultTopology, DpuFunctionsReachTheHostFunctionsOfTheirPort)
{
	const auto topology = Topology::builtin_default(Side::host).topology;
	const std::vector<std::string> host = {"pf0", "pf0vf0", "pf0vf1", "pf1", "pf1vf0"};
	// DPU function -> the host functions it reaches.
	const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
	    {"p0", {"pf0", "pf0vf0", "pf0vf1"}},   // the PF that manages pf0's representors
	    {"p0s0", {"pf0", "pf0vf0", "pf0vf1"}}, // an SF of that PF
	    {"p1", {"pf1", "pf1vf0"}},
	    {"p1s0", {"pf1", "pf1vf0"}},
	};
	for (const auto &[dpu_name, reached] : expected) {
		const Function *dpu = topology->find_function(dpu_name);
		ASSERT_NE(dpu, nullptr) << dpu_name;
		for (const std::string &host_name : host) {
			const Function *h = topology->find_function(host_name);
			ASSERT_NE(h, nullptr) << host_name;
			const bool want = std::find(reached.begin(), reached.end(), host_name) != reached.end();
			EXPECT_EQ(topology->reaches_over_pci(*dpu, *h), want) << dpu_name << " -> " << host_name;
			// Never the other way round, and never a host function from another.
			EXPECT_FALSE(topology->reaches_over_pci(*h, *dpu)) << host_name << " -> " << dpu_name;
			EXPECT_FALSE(topology->reaches_over_pci(*h, *h)) << host_name;
		}
		// DPU functions do not reach each other over PCI.
		EXPECT_FALSE(topology->reaches_over_pci(*dpu, *topology->find_function("p0")));
	}
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
	EXPECT_EQ(truncated.error.rfind(data_file("truncated.json") + ": $: invalid JSON at line 1, column ", 0), 0u)
	    << truncated.error;

	auto empty = Topology::load_file(data_file("empty_file.json"), Side::host);
	EXPECT_EQ(empty.error, data_file("empty_file.json") + ": $: invalid JSON: the document is empty");

	auto duplicate_key = Topology::load_file(data_file("duplicate_key.json"), Side::host);
	EXPECT_EQ(duplicate_key.error, data_file("duplicate_key.json") + ": $.host: duplicate key");
}

TEST(TopologyFile, OnlyRegularFilesUpToTheSizeLimitAreRead)
{
	const std::string directory = std::string(SOFTDPU_SOURCE_DIR) + "/tests/data/topology";
	EXPECT_EQ(Topology::load_file(directory, Side::host).error, directory + ": is a directory");
	// /dev/zero would grow the text until memory runs out; a FIFO would block the open.
	EXPECT_EQ(Topology::load_file("/dev/zero", Side::host).error,
		  "/dev/zero: not a regular file (a character device)");
	TempDir dir;
	const std::string fifo = dir.path("fifo.json");
	ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
	EXPECT_EQ(Topology::load_file(fifo, Side::host).error, fifo + ": not a regular file (a FIFO)");

	const std::string largest = dir.file("largest.json", "{}" + std::string(Topology::kMaxFileBytes - 2, ' '));
	auto loaded = Topology::load_file(largest, Side::host);
	EXPECT_TRUE(loaded.topology) << loaded.error;
	const std::string larger = dir.file("larger.json", "{}" + std::string(Topology::kMaxFileBytes - 1, ' '));
	EXPECT_EQ(Topology::load_file(larger, Side::host).error,
		  larger + ": larger than 1048576 bytes, the limit for a topology file");
}

TEST(TopologyFile, ReadErrorsAreReportedAsSuch)
{
	// Reading /proc/self/mem at offset 0 fails with EIO: a regular file that cannot be read.
	EXPECT_EQ(Topology::load_file("/proc/self/mem", Side::host).error,
		  "/proc/self/mem: read error: Input/output error");
	if (::geteuid() == 0)
		GTEST_SKIP() << "root reads files whatever their permissions";
	TempDir dir;
	const std::string unreadable = dir.file("unreadable.json", "{}");
	ASSERT_EQ(::chmod(unreadable.c_str(), 0), 0);
	EXPECT_EQ(Topology::load_file(unreadable, Side::host).error,
		  unreadable + ": cannot open file: Permission denied");
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

// kBase (or text) with members added to one object, found by its last member.
std::string add_members(const std::string &last_member, const std::string &members, std::string text)
{
	return replace(std::move(text), last_member, last_member + ", " + members);
}
std::string pf0_with(const std::string &members, std::string text = kBase)
{
	return add_members("\"vuid\": \"H0\"", members, std::move(text));
}
std::string p0_with(const std::string &members, std::string text = kBase)
{
	return add_members("\"vuid\": \"D0\"", members, std::move(text));
}
std::string p1_with(const std::string &members, std::string text = kBase)
{
	return add_members("\"vuid\": \"D1\"", members, std::move(text));
}
std::string hpf0_with(const std::string &members, std::string text = kBase)
{
	return add_members("\"function\": \"pf0\"", members, std::move(text));
}
// kBase (or text) with one more host function ($.host.functions[2]) or representor
// ($.dpu.representors[3]).
std::string with_host_function(const std::string &function, std::string text = kBase)
{
	return replace(std::move(text), "\"vuid\": \"H0V0\" }", "\"vuid\": \"H0V0\" },\n    " + function);
}
std::string with_rep(const std::string &rep, std::string text = kBase)
{
	return replace(std::move(text), "\"function\": \"s0\" }", "\"function\": \"s0\" },\n      " + rep);
}
// An emulated representor "e0" under p0 with these members besides name, manager and emulation.
std::string emulated(const std::string &members, std::string text = kBase)
{
	return with_rep("{ \"name\": \"e0\", \"manager\": \"p0\", \"emulated\": \"nvme\", " + members + " }",
			std::move(text));
}
const char *const kEmulatedMembers = "\"type\": \"pf\", \"pci\": \"0c:00.0\", \"vuid\": \"E0\"";

// `count` copies of `element`, comma-separated.
std::string repeated(const std::string &element, size_t count)
{
	std::string out;
	for (size_t i = 0; i < count; ++i)
		out += (i == 0 ? "" : ",") + element;
	return out;
}

struct InvalidCase {
	const char *what;
	std::string text;
	const char *path;
	const char *reason;
};

void expect_rejected(const std::vector<InvalidCase> &cases)
{
	for (const InvalidCase &c : cases) {
		auto result = Topology::parse(c.text, "case.json", Side::dpu);
		EXPECT_FALSE(result.topology) << c.what;
		const std::string prefix = std::string("case.json: ") + c.path + ": ";
		EXPECT_EQ(result.error.rfind(prefix, 0), 0u) << c.what << ": " << result.error;
		EXPECT_NE(result.error.find(c.reason), std::string::npos) << c.what << ": " << result.error;
	}
}

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
	expect_rejected({
	    {"not JSON", "{ nope", "$", "invalid JSON at line 1, column 4"},
	    {"trailing garbage", b + "x", "$", "invalid JSON at line 13, column 2"},
	    {"root not object", "[]", "$", "expected an object, got array"},
	    {"unknown root key", replace(b, "\"host\"", "\"hosts\": {}, \"host\""), "$.hosts", "unknown key"},
	    {"bad version", replace(b, "{\n  \"host\"", "{ \"version\": 2, \"host\""), "$.version",
	     "unsupported version 2"},
	    {"name wrong type", replace(b, "\"name\": \"pf0\"", "\"name\": 7"), "$.host.functions[0].name",
	     "expected a string, got number"},
	    {"missing vuid", replace(b, ", \"vuid\": \"H0\" }", " }"), "$.host.functions[0].vuid",
	     "missing required key"},
	    {"unknown function key", pf0_with("\"speed\": 100"), "$.host.functions[0].speed", "unknown key"},
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
	    {"duplicate iface", p1_with("\"iface\": \"p0\""), "$.dpu.functions[1].iface", "duplicate iface \"p0\""},
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
	    {"bad mac", p1_with("\"mac\": \"02:00:00:00:00\""), "$.dpu.functions[1].mac", "invalid MAC address"},
	    {"bad mac separator", p1_with("\"mac\": \"02-00-00-00-00-01\""), "$.dpu.functions[1].mac",
	     "invalid MAC address"},
	    {"bad ipv4", p1_with("\"ipv4\": \"10.0.0.256\""), "$.dpu.functions[1].ipv4", "invalid IPv4 address"},
	    {"bad ipv6", p1_with("\"ipv6\": \"fd00::1::2\""), "$.dpu.functions[1].ipv6", "invalid IPv6 address"},
	    {"bad link layer", p1_with("\"link_layer\": \"tokenring\""), "$.dpu.functions[1].link_layer",
	     "unknown link layer"},
	    {"lid on ethernet", p1_with("\"lid\": 3"), "$.dpu.functions[1].lid",
	     "needs \"link_layer\": \"infiniband\""},
	    {"negative lid", p1_with("\"link_layer\": \"infiniband\", \"lid\": -1"), "$.dpu.functions[1].lid",
	     "expected a non-negative integer"},
	    {"available not bool", p1_with("\"available\": \"yes\""), "$.dpu.functions[1].available",
	     "expected true or false"},
	    {"iface too long", replace(b, "\"iface\": \"h0\"", "\"iface\": \"a-very-long-ifname\""),
	     "$.host.functions[0].iface", "longer than 15 characters"},
	    {"name with space", replace(b, "\"name\": \"p1\"", "\"name\": \"p 1\""), "$.dpu.functions[1].name",
	     "may only contain"},
	    {"empty vuid", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"\""), "$.dpu.functions[1].vuid",
	     "must not be empty"},
	    {"unknown cap", p1_with("\"caps\": { \"warp_drive\": true }"), "$.dpu.functions[1].caps.warp_drive",
	     "unknown key"},
	    {"cap wrong type", p1_with("\"caps\": { \"dma_memcpy\": 1 }"), "$.dpu.functions[1].caps.dma_memcpy",
	     "expected true or false, got number"},
	    {"cap zero", p1_with("\"caps\": { \"dma_max_buf_size\": 0 }"), "$.dpu.functions[1].caps.dma_max_buf_size",
	     "out of range"},
	    {"cap too big", p1_with("\"caps\": { \"dma_max_num_tasks\": 4294967296 }"),
	     "$.dpu.functions[1].caps.dma_max_num_tasks", "out of range"},
	    {"cap float", p1_with("\"caps\": { \"dma_max_buf_list_len\": 1.5 }"),
	     "$.dpu.functions[1].caps.dma_max_buf_list_len", "expected an integer, got number"},
	    {"limits zero", replace(b, "\"host\"", "\"limits\": { \"max_open_devices\": 0 }, \"host\""),
	     "$.limits.max_open_devices", "out of range"},
	    {"rep to missing function", replace(b, "\"function\": \"vf0\"", "\"function\": \"vf9\""),
	     "$.dpu.representors[1].function", "function \"vf9\" does not exist"},
	    {"rep of a DPU PF", replace(b, "\"function\": \"vf0\"", "\"function\": \"p1\""),
	     "$.dpu.representors[1].function", "is a DPU PF; representors stand for host PFs/VFs and DPU SFs"},
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
	    {"net rep with pci", hpf0_with("\"pci\": \"0b:00.0\""), "$.dpu.representors[0].pci",
	     "takes it from its function"},
	    {"rep with neither", replace(b, ", \"function\": \"pf0\"", ""), "$.dpu.representors[0].function",
	     "missing required key"},
	    {"rep with both", hpf0_with("\"emulated\": \"nvme\""), "$.dpu.representors[0].function",
	     "give \"function\" or \"emulated\""},
	    {"emulated without pci", emulated("\"type\": \"pf\", \"vuid\": \"E0\""), "$.dpu.representors[3].pci",
	     "missing required key"},
	    {"emulated SF", emulated("\"type\": \"sf\", \"pci\": \"0c:00.0\", \"vuid\": \"E0\""),
	     "$.dpu.representors[3].type", "an emulated function is a PF or a VF"},
	    {"emulated pci clash", emulated("\"type\": \"pf\", \"pci\": \"0b:00.2\", \"vuid\": \"E0\""),
	     "$.dpu.representors[3].pci", "duplicate PCI address \"0000:0b:00.2\""},
	    {"emulated vuid clash", emulated("\"type\": \"pf\", \"pci\": \"0c:00.0\", \"vuid\": \"H0\""),
	     "$.dpu.representors[3].vuid", "duplicate VUID \"H0\""},
	    {"deep nesting", std::string(100, '[') + std::string(100, ']'), "$", "nested deeper than 64 levels"},
	});
}

TEST(TopologyParse, RejectsWrongJsonTypes)
{
	expect_rejected({
	    {"functions not an array", R"({ "host": { "functions": 3 } })", "$.host.functions",
	     "expected an array, got number"},
	    {"representors not an array", R"({ "dpu": { "representors": {} } })", "$.dpu.representors",
	     "expected an array, got object"},
	    {"host not an object", R"({ "host": [] })", "$.host", "expected an object, got array"},
	    {"dpu not an object", R"({ "dpu": 1 })", "$.dpu", "expected an object, got number"},
	    {"limits not an object", R"({ "limits": "many" })", "$.limits", "expected an object, got string"},
	    {"caps not an object", p1_with("\"caps\": []"), "$.dpu.functions[1].caps", "expected an object, got array"},
	    {"function element", R"({ "host": { "functions": [ 3 ] } })", "$.host.functions[0]",
	     "expected an object, got number"},
	    {"representor element", R"({ "dpu": { "representors": [ "hpf0" ] } })", "$.dpu.representors[0]",
	     "expected an object, got string"},
	    {"version string", R"({ "version": "1" })", "$.version", "expected an integer, got string"},
	    {"version negative", R"({ "version": -1 })", "$.version", "expected a non-negative integer, got -1"},
	    {"version float", R"({ "version": 1.0 })", "$.version", "expected an integer, got number"},
	    {"hotplug not bool", hpf0_with("\"hotplug\": \"yes\""), "$.dpu.representors[0].hotplug",
	     "expected true or false, got string"},
	});
}

TEST(TopologyParse, RejectsMissingRequiredKeys)
{
	const std::string b = kBase;
	expect_rejected({
	    {"function name", replace(b, "\"name\": \"p1\", ", ""), "$.dpu.functions[1].name", "missing required key"},
	    {"function type", replace(b, "\"type\": \"pf\", \"pci\": \"03:00.1\"", "\"pci\": \"03:00.1\""),
	     "$.dpu.functions[1].type", "missing required key"},
	    {"function ibdev", replace(b, "\"ibdev\": \"mlx5_1\", ", ""), "$.dpu.functions[1].ibdev",
	     "missing required key"},
	    {"representor manager", replace(b, "\"manager\": \"p0\", \"function\": \"s0\"", "\"function\": \"s0\""),
	     "$.dpu.representors[2].manager", "missing required key"},
	    {"emulated type", emulated("\"pci\": \"0c:00.0\", \"vuid\": \"E0\""), "$.dpu.representors[3].type",
	     "missing required key"},
	    {"emulated vuid", emulated("\"type\": \"pf\", \"pci\": \"0c:00.0\""), "$.dpu.representors[3].vuid",
	     "missing required key"},
	});
}

TEST(TopologyParse, RejectsValuesBeyondLengthAndRangeLimits)
{
	const std::string b = kBase;
	const std::string too_many_functions =
	    R"({ "host": { "functions": [)" +
	    repeated(R"({ "name": "f", "type": "pf", "pci": "01:00.0", "ibdev": "m", "vuid": "v" })", 4097) + "] } }";
	const std::string too_many_reps = R"({ "dpu": { "representors": [)" +
					  repeated(R"({ "name": "r", "manager": "p0", "function": "pf0" })", 4097) +
					  "] } }";
	expect_rejected({
	    {"name of 64", replace(b, "\"name\": \"p1\"", "\"name\": \"" + std::string(64, 'n') + "\""),
	     "$.dpu.functions[1].name", "longer than 63 characters"},
	    {"ibdev of 64", replace(b, "\"mlx5_1\"", "\"" + std::string(64, 'i') + "\""), "$.dpu.functions[1].ibdev",
	     "longer than 63 characters"},
	    {"empty ibdev", replace(b, "\"mlx5_1\"", "\"\""), "$.dpu.functions[1].ibdev", "must not be empty"},
	    {"ibdev with slash", replace(b, "\"mlx5_1\"", "\"mlx5/1\""), "$.dpu.functions[1].ibdev",
	     "may only contain"},
	    {"vuid of 128", replace(b, "\"vuid\": \"D1\"", "\"vuid\": \"" + std::string(128, 'v') + "\""),
	     "$.dpu.functions[1].vuid", "longer than 127 characters"},
	    {"representor iface of 16", hpf0_with("\"iface\": \"" + std::string(16, 'r') + "\""),
	     "$.dpu.representors[0].iface", "longer than 15 characters"},
	    {"emulation with space",
	     with_rep(R"({ "name": "e0", "manager": "p0", "emulated": "virtio net", )" + std::string(kEmulatedMembers) +
		      " }"),
	     "$.dpu.representors[3].emulated", "may only contain"},
	    {"lid above 16 bits", p1_with("\"link_layer\": \"infiniband\", \"lid\": 70000"), "$.dpu.functions[1].lid",
	     "out of range [1, 49151]"},
	    {"max_open_devices above 32 bits",
	     replace(b, "\"host\"", "\"limits\": { \"max_open_devices\": 4294967296 }, \"host\""),
	     "$.limits.max_open_devices", "value 4294967296 out of range [1, 4294967295]"},
	    {"4097 functions", too_many_functions, "$.host.functions", "more than 4096 functions"},
	    {"4097 representors", too_many_reps, "$.dpu.representors", "more than 4096 representors"},
	});
}

TEST(TopologyParse, RejectsDuplicates)
{
	const std::string b = kBase;
	const std::string second_emulated =
	    R"({ "name": "e1", "manager": "p0", "emulated": "nvme", "type": "vf", "pci": "0c:00.0", "vuid": "E1" })";
	expect_rejected({
	    {"JSON key twice: host block", replace(b, "\"host\"", "\"host\": {}, \"host\""), "$.host", "duplicate key"},
	    {"JSON key twice: pci", replace(b, "\"pci\": \"0b:00.2\"", "\"pci\": \"0b:00.2\", \"pci\": \"0b:00.3\""),
	     "$.host.functions[1].pci", "duplicate key"},
	    {"JSON key twice: caps", p1_with("\"caps\": { \"dma_memcpy\": true, \"dma_memcpy\": false }"),
	     "$.dpu.functions[1].caps.dma_memcpy", "duplicate key"},
	    {"JSON key twice: representor",
	     replace(b, "\"function\": \"s0\"", "\"function\": \"s0\", \"function\": \"s0\""),
	     "$.dpu.representors[2].function", "duplicate key"},
	    {"representor named like a function", replace(b, "\"name\": \"rs0\"", "\"name\": \"p1\""),
	     "$.dpu.representors[2].name", "duplicate name \"p1\" (also at $.dpu.functions[1].name)"},
	    {"representor named like a representor", replace(b, "\"name\": \"rs0\"", "\"name\": \"hvf0\""),
	     "$.dpu.representors[2].name", "duplicate name \"hvf0\" (also at $.dpu.representors[1].name)"},
	    {"representor iface of a DPU function", hpf0_with("\"iface\": \"p0\""), "$.dpu.representors[0].iface",
	     "duplicate iface \"p0\" (also at $.dpu.functions[0].iface)"},
	    {"representor iface of a representor",
	     add_members("\"function\": \"vf0\"", "\"iface\": \"r0\"", hpf0_with("\"iface\": \"r0\"")),
	     "$.dpu.representors[1].iface", "duplicate iface \"r0\" (also at $.dpu.representors[0].iface)"},
	    {"host ibdev", replace(b, "\"mlx5_2\"", "\"mlx5_0\""), "$.host.functions[1].ibdev",
	     "duplicate ibdev \"mlx5_0\" (also at $.host.functions[0].ibdev)"},
	    {"host iface", replace(b, "\"ibdev\": \"mlx5_2\"", "\"ibdev\": \"mlx5_2\", \"iface\": \"h0\""),
	     "$.host.functions[1].iface", "duplicate iface \"h0\" (also at $.host.functions[0].iface)"},
	    {"DPU pci", replace(b, "\"03:00.1\"", "\"0000:03:00.0\""), "$.dpu.functions[1].pci",
	     "duplicate PCI address \"0000:03:00.0\" (also at $.dpu.functions[0].pci)"},
	    {"emulated pci of an emulated", with_rep(second_emulated, emulated(kEmulatedMembers)),
	     "$.dpu.representors[4].pci", "duplicate PCI address \"0000:0c:00.0\" (also at $.dpu.representors[3].pci)"},
	    {"net representor with type", hpf0_with("\"type\": \"pf\""), "$.dpu.representors[0].type",
	     "takes it from its function"},
	    {"net representor with vuid", hpf0_with("\"vuid\": \"R0\""), "$.dpu.representors[0].vuid",
	     "takes it from its function"},
	});
}

TEST(TopologyParse, RejectsAddressesThatAreNotUniqueOrNotUnicast)
{
	expect_rejected({
	    {"MAC twice, either case",
	     p1_with("\"mac\": \"02:aa:00:00:00:01\"", pf0_with("\"mac\": \"02:AA:00:00:00:01\"")),
	     "$.dpu.functions[1].mac", "duplicate MAC address \"02:aa:00:00:00:01\" (also at $.host.functions[0].mac)"},
	    {"MAC all zeros", p1_with("\"mac\": \"00:00:00:00:00:00\""), "$.dpu.functions[1].mac", "is all zeros"},
	    {"MAC broadcast", p1_with("\"mac\": \"ff:ff:ff:ff:ff:ff\""), "$.dpu.functions[1].mac",
	     "is the broadcast address"},
	    {"MAC multicast", p1_with("\"mac\": \"01:00:5e:00:00:01\""), "$.dpu.functions[1].mac",
	     "is a multicast address"},
	    {"IPv4 twice", p1_with("\"ipv4\": \"10.0.0.1\"", pf0_with("\"ipv4\": \"10.0.0.1\"")),
	     "$.dpu.functions[1].ipv4", "duplicate IPv4 address \"10.0.0.1\" (also at $.host.functions[0].ipv4)"},
	    {"IPv4 unspecified", p1_with("\"ipv4\": \"0.0.0.0\""), "$.dpu.functions[1].ipv4",
	     "is the unspecified address"},
	    {"IPv4 broadcast", p1_with("\"ipv4\": \"255.255.255.255\""), "$.dpu.functions[1].ipv4",
	     "is the limited broadcast address"},
	    {"IPv4 multicast", p1_with("\"ipv4\": \"239.1.2.3\""), "$.dpu.functions[1].ipv4", "is a multicast address"},
	    {"IPv6 twice, two spellings", p1_with("\"ipv6\": \"fd00:0:0::1\"", pf0_with("\"ipv6\": \"fd00::1\"")),
	     "$.dpu.functions[1].ipv6", "duplicate IPv6 address \"fd00::1\" (also at $.host.functions[0].ipv6)"},
	    {"IPv6 unspecified", p1_with("\"ipv6\": \"::\""), "$.dpu.functions[1].ipv6", "is the unspecified address"},
	    {"IPv6 multicast", p1_with("\"ipv6\": \"ff02::1\""), "$.dpu.functions[1].ipv6", "is a multicast address"},
	});
}

TEST(TopologyParse, RejectsInconsistentLinkLayers)
{
	expect_rejected({
	    {"MAC on InfiniBand", p1_with("\"link_layer\": \"infiniband\", \"lid\": 5, \"mac\": \"02:00:00:00:00:09\""),
	     "$.dpu.functions[1].mac", "an InfiniBand function has no MAC address"},
	    {"LID 0", p1_with("\"link_layer\": \"infiniband\", \"lid\": 0"), "$.dpu.functions[1].lid",
	     "value 0 out of range [1, 49151] (a port LID is unicast"},
	    {"multicast LID", p1_with("\"link_layer\": \"infiniband\", \"lid\": 49152"), "$.dpu.functions[1].lid",
	     "out of range [1, 49151]"},
	    {"InfiniBand without LID", p1_with("\"link_layer\": \"infiniband\""), "$.dpu.functions[1].lid",
	     "missing required key (an InfiniBand port has a LID)"},
	});
}

TEST(TopologyParse, RejectsCapabilitiesAndRepresentorsTheManagerCannotHave)
{
	const char *no_rep_filters = "\"caps\": { \"rep_filter_all\": false, \"rep_filter_net\": false, "
				     "\"rep_filter_emulated\": false }";
	expect_rejected({
	    {"rep filter on a host PF", pf0_with("\"caps\": { \"rep_filter_net\": true }"),
	     "$.host.functions[0].caps.rep_filter_net",
	     "only a DPU PF manages representors and hot-plug, not a host PF"},
	    {"hotplug manager on a DPU SF",
	     replace(kBase, "\"vuid\": \"D0S0\"", "\"vuid\": \"D0S0\", \"caps\": { \"hotplug_manager\": true }"),
	     "$.dpu.functions[2].caps.hotplug_manager", "not a DPU SF"},
	    {"rep_filter_all without a kind",
	     p1_with("\"caps\": { \"rep_filter_net\": false, \"rep_filter_emulated\": false }"),
	     "$.dpu.functions[1].caps.rep_filter_all", "rep_filter_net and rep_filter_emulated are both false"},
	    {"representors under a PF that lists none", p0_with(no_rep_filters), "$.dpu.representors[0].manager",
	     "manager \"p0\" does not list net representors (its rep_filter_net is false)"},
	    {"net representor without rep_filter_net", p0_with("\"caps\": { \"rep_filter_net\": false }"),
	     "$.dpu.representors[0].manager", "does not list net representors"},
	    {"emulated representor without rep_filter_emulated",
	     emulated(kEmulatedMembers, p0_with("\"caps\": { \"rep_filter_emulated\": false }")),
	     "$.dpu.representors[3].manager",
	     "manager \"p0\" does not list emulated representors (its rep_filter_emulated is false)"},
	    {"hot-plugged under a PF that cannot",
	     hpf0_with("\"hotplug\": true", p0_with("\"caps\": { \"hotplug_manager\": false }")),
	     "$.dpu.representors[0].hotplug", "manager \"p0\" is not a hotplug manager"},
	});
}

TEST(TopologyParse, RejectsRepresentorsOutsideTheCoreGuidesModel)
{
	const char *host_sf = R"({ "name": "hs0", "type": "sf", "parent": "pf0", "ibdev": "mlx5_9", "vuid": "HS0" })";
	expect_rejected({
	    {"represented host SF",
	     with_rep(R"({ "name": "rhs0", "manager": "p0", "function": "hs0" })", with_host_function(host_sf)),
	     "$.dpu.representors[3].function",
	     "function \"hs0\" is a host SF; representors stand for host PFs/VFs and DPU SFs"},
	    {"host VF represented without its PF",
	     replace(kBase, "{ \"name\": \"hpf0\", \"manager\": \"p0\", \"function\": \"pf0\" },", ""),
	     "$.dpu.representors[0].function", "host VF \"vf0\" has a representor but its PF \"pf0\" has none"},
	});
}

TEST(TopologyParse, RejectsControlCharactersInMemoryPaths)
{
	expect_rejected({
	    {"NUL in path", hpf0_with(R"("memory": { "kind": "raw", "path": "/tmp/guest\u0000.ram" })"),
	     "$.dpu.representors[0].memory.path", "path \"/tmp/guest\\x00.ram\" contains a control character"},
	    {"newline in qmp",
	     hpf0_with(R"("memory": { "kind": "qemu_shared_ram", "path": "/dev/shm/g", "qmp": "/run/g\n.qmp" })"),
	     "$.dpu.representors[0].memory.qmp", "contains a control character"},
	    {"DEL in path", hpf0_with(R"("memory": { "kind": "raw", "path": "/tmp/g\u007f" })"),
	     "$.dpu.representors[0].memory.path", "contains a control character"},
	});
}

TEST(TopologyParse, UnknownKeysAreEscapedAndTruncatedInPaths)
{
	auto escaped = Topology::parse(pf0_with(R"("sp\u001b[31meed": 1)"), "case.json", Side::dpu);
	EXPECT_EQ(escaped.error, "case.json: $.host.functions[0][\"sp\\x1b[31meed\"]: unknown key");
	auto long_key = Topology::parse(pf0_with("\"" + std::string(5000, 'k') + "\": 1"), "case.json", Side::dpu);
	EXPECT_EQ(long_key.error, "case.json: $.host.functions[0][\"" + std::string(80, 'k') + "...\"]: unknown key");
}

TEST(TopologyParse, SyntaxErrorsGiveLineAndColumnAndStayPrintable)
{
	auto result = Topology::parse("{\n  \"host\": {\n    \"functions\": [ x ] } }", "case.json", Side::dpu);
	EXPECT_EQ(result.error.rfind("case.json: $: invalid JSON at line 3, column 20: syntax error", 0), 0u)
	    << result.error;
	// The reason quotes what was last read: escaped, and bounded however long the token.
	auto long_token = Topology::parse("{ \"a\": \"" + std::string(5000, 's') + "\x01", "case.json", Side::dpu);
	EXPECT_EQ(long_token.error.find('\x01'), std::string::npos);
	EXPECT_LT(long_token.error.size(), 300u) << long_token.error;
	auto empty = Topology::parse(" \n\t", "case.json", Side::dpu);
	EXPECT_EQ(empty.error, "case.json: $: invalid JSON: the document is empty");
}

TEST(TopologyParse, ValuesAtTheLimitsAreAccepted)
{
	std::string text = pf0_with(R"("link_layer": "infiniband", "lid": 49151)");
	text = p1_with(R"("link_layer": "infiniband", "lid": 1, "ipv4": "10.0.0.1", "ipv6": "fd00::1")", text);
	text = replace(text, "\"name\": \"p1\"", "\"name\": \"" + std::string(63, 'n') + "\"");
	text = replace(text, "\"vuid\": \"D0S0\"", "\"vuid\": \"" + std::string(127, 'v') + "\"");
	text = replace(text, "\"mlx5_3\"", "\"" + std::string(63, 'i') + "\"");
	text = hpf0_with("\"iface\": \"" + std::string(15, 'r') + "\", \"hotplug\": true", text);
	// A host SF is a local device of the host (its representor is what the model lacks), and the
	// host and the DPU each have their own interface names.
	text = with_host_function(
	    R"({ "name": "hs0", "type": "sf", "parent": "pf0", "ibdev": "mlx5_9", "iface": "p0", "vuid": "HS0" })",
	    text);
	// A PF that lists net representors only, and an emulated function under the other.
	text = p1_with(R"("caps": { "rep_filter_all": false, "rep_filter_emulated": false, "hotplug_manager": false })",
		       text);
	text = emulated(kEmulatedMembers, text);
	auto result = Topology::parse(text, "edge.json", Side::host);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->find_function("pf0")->lid, 0xbfff);
	const Function *host_sf = result.topology->find_function("hs0");
	ASSERT_NE(host_sf, nullptr);
	EXPECT_EQ(host_sf->pci.to_string(), "0000:0b:00.0"); // its parent PF's
	EXPECT_EQ(result.topology->representor_of(*host_sf), nullptr);
	EXPECT_EQ(local_names(*result.topology), (std::vector<std::string>{"pf0", "vf0", "hs0"}));
}

TEST(TopologyParse, LargestTopologyLoads)
{
	// 4096 functions: one host PF with 4094 VFs, one DPU PF; 4095 representors, each VF checked
	// against its PF's manager.
	std::string host = R"({ "name": "pf", "type": "pf", "pci": "01:00.0", "ibdev": "h", "vuid": "H" })";
	std::string reps = R"({ "name": "rpf", "manager": "p0", "function": "pf" })";
	for (int i = 1; i < 4095; ++i) {
		char bdf[16];
		std::snprintf(bdf, sizeof(bdf), "%02x:%02x.%x", 2 + i / 256, (i / 8) % 32, i % 8);
		const std::string n = std::to_string(i);
		host += R"(,{ "name": "vf)" + n + R"(", "type": "vf", "parent": "pf", "pci": ")" + bdf +
			R"(", "ibdev": "h)" + n + R"(", "vuid": "H)" + n + "\" }";
		reps += R"(,{ "name": "r)" + n + R"(", "manager": "p0", "function": "vf)" + n + "\" }";
	}
	const std::string text =
	    R"({ "host": { "functions": [)" + host +
	    R"(] }, "dpu": { "functions": [{ "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "d", "vuid": "D" }],
	    "representors": [)" +
	    reps + "] } }";
	auto result = Topology::parse(text, "large.json", Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->all_functions().size(), 4096u);
	EXPECT_EQ(result.topology->representors().size(), 4095u);
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
