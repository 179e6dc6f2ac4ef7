// Packet links (src/device/link): which functions get a link, its two ends and their memif roles,
// the socket under the run-time directory, the buffer defaults; and the public query
// (softdpu/link.h) over the process topology.
#include "device/link/links.hpp"

#include "support/scoped_env.h"

#include <softdpu/link.h>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace softdpu::device;

namespace {

std::shared_ptr<const Topology> parse(std::string_view text)
{
	auto result = Topology::parse(text, "<test>", Side::dpu);
	EXPECT_TRUE(result.topology) << result.error;
	return result.topology;
}

std::shared_ptr<const Topology> default_topology()
{
	auto result = Topology::builtin_default(Side::dpu);
	EXPECT_TRUE(result.topology) << result.error;
	return result.topology;
}

const Link *by_name(const LinkTable &table, std::string_view name)
{
	for (const Link &link : table.links)
		if (link.name == name)
			return &link;
	return nullptr;
}

TEST(LinkModel, DefaultTopologyHasOneLinkPerRepresentedFunctionAndOnePerUplink)
{
	const auto topology = default_topology();
	const LinkTable table = links_of(*topology, "/run/x");
	ASSERT_TRUE(table.error.empty()) << table.error;
	std::vector<std::string> names;
	for (const Link &link : table.links)
		names.push_back(link.name + ":" + to_string(link.kind));
	// Topology order: the host functions, then the DPU's (its PFs are uplinks, its SFs represented).
	EXPECT_EQ(names, (std::vector<std::string>{"hpf0:representor", "hpf1:representor", "hpf0vf0:representor",
						   "hpf0vf1:representor", "hpf1vf0:representor", "p0:uplink",
						   "p1:uplink", "pf0sf0:representor", "pf1sf0:representor"}));
}

TEST(LinkModel, HostPf0AndItsRepresentorAreTheTwoEndsOfOneLink)
{
	const auto topology = default_topology();
	const LinkTable table = links_of(*topology, "/run/x");
	const Link *link = by_name(table, "hpf0");
	ASSERT_NE(link, nullptr);
	EXPECT_EQ(link->kind, LinkKind::representor);
	EXPECT_EQ(link->socket, "/run/x/links/hpf0.sock");
	EXPECT_EQ(link->interface_id, 0u);
	EXPECT_EQ(link->buffer_size, 16384u); // a 9000-byte frame fits one buffer
	EXPECT_GE(link->buffer_size, 9000u);
	EXPECT_EQ(link->log2_ring_size, 10u);
	// The DPU end serves, the host function connects.
	EXPECT_EQ(link->server.owner, "hpf0");
	EXPECT_EQ(link->server.iface, "pf0hpf");
	EXPECT_EQ(link->server.side, Side::dpu);
	EXPECT_EQ(link->server.role, LinkRole::server);
	EXPECT_EQ(link->client.owner, "pf0");
	EXPECT_EQ(link->client.iface, "enp11s0f0np0");
	EXPECT_EQ(link->client.side, Side::host);
	EXPECT_EQ(link->client.role, LinkRole::client);
}

TEST(LinkModel, UplinkIsServedByTheDpuPfAndConnectedFromOutside)
{
	const auto topology = default_topology();
	const LinkTable table = links_of(*topology, "/run/x");
	const Link *link = by_name(table, "p1");
	ASSERT_NE(link, nullptr);
	EXPECT_EQ(link->kind, LinkKind::uplink);
	EXPECT_EQ(link->socket, "/run/x/links/p1.sock");
	EXPECT_EQ(link->server.owner, "p1");
	EXPECT_EQ(link->server.iface, "p1");
	EXPECT_EQ(link->server.side, Side::dpu);
	EXPECT_TRUE(link->client.is_outside());
	EXPECT_FALSE(link->server.is_outside());
}

TEST(LinkModel, DpuSfAndItsRepresentorAreBothOnTheDpu)
{
	const auto topology = default_topology();
	const LinkTable table = links_of(*topology, "/run/x");
	const Link *link = by_name(table, "pf1sf0");
	ASSERT_NE(link, nullptr);
	EXPECT_EQ(link->server.owner, "pf1sf0");
	EXPECT_EQ(link->client.owner, "p1s0");
	EXPECT_EQ(link->client.iface, "en3f1pf1sf0");
	EXPECT_EQ(link->client.side, Side::dpu);
}

TEST(LinkModel, FunctionsWithoutIfaceOrOnInfinibandOrEmulatedHaveNoLink)
{
	const auto topology = parse(R"({
	  "host": { "functions": [
	    { "name": "a", "type": "pf", "pci": "0b:00.0", "ibdev": "m0", "iface": "ha", "vuid": "A" },
	    { "name": "b", "type": "pf", "pci": "0b:00.1", "ibdev": "m1", "vuid": "B" },
	    { "name": "c", "type": "pf", "pci": "0b:00.2", "ibdev": "m2", "iface": "hc", "vuid": "C",
	      "link_layer": "infiniband", "lid": 7 },
	    { "name": "d", "type": "pf", "pci": "0b:00.3", "ibdev": "m3", "iface": "hd", "vuid": "D" } ] },
	  "dpu": { "functions": [
	    { "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "m0", "iface": "p0", "vuid": "P0" },
	    { "name": "p1", "type": "pf", "pci": "03:00.1", "ibdev": "m1", "vuid": "P1" } ],
	    "representors": [
	      { "name": "ra", "manager": "p0", "function": "a", "iface": "pf0hpf" },
	      { "name": "rb", "manager": "p0", "function": "b", "iface": "pf0hpfb" },
	      { "name": "rc", "manager": "p0", "function": "c" },
	      { "name": "virt", "manager": "p0", "emulated": "virtio-net", "type": "pf", "pci": "0b:01.0",
	        "vuid": "V", "iface": "virt0" } ] }
	})");
	ASSERT_TRUE(topology);
	const LinkTable table = links_of(*topology, "/r");
	std::vector<std::string> names;
	for (const Link &link : table.links)
		names.push_back(link.name + ":" + to_string(link.kind));
	// a: represented; b: no iface; c: InfiniBand; d: no representor (external); p0 uplink; p1 no iface;
	// the emulated virtio-net has no local function behind it (not linked yet).
	EXPECT_EQ(names, (std::vector<std::string>{"ra:representor", "d:external", "p0:uplink"}));
	const Link *representor_without_iface = by_name(table, "ra");
	ASSERT_NE(representor_without_iface, nullptr);
	const Link *external = by_name(table, "d");
	ASSERT_NE(external, nullptr);
	EXPECT_EQ(external->server.owner, "d");
	EXPECT_EQ(external->server.side, Side::host);
	EXPECT_TRUE(external->client.is_outside());
	EXPECT_FALSE(find_link_end(table, "b"));
	EXPECT_FALSE(find_link_end(table, "rb"));
	EXPECT_FALSE(find_link_end(table, "virt"));
}

TEST(LinkModel, FindLinkEndNamesTheEndAndItsRole)
{
	const auto topology = default_topology();
	const LinkTable table = links_of(*topology, "/r");
	const auto host = find_link_end(table, "pf0vf1");
	ASSERT_TRUE(host);
	EXPECT_EQ(host->link->name, "hpf0vf1");
	EXPECT_FALSE(host->is_server);
	const auto rep = find_link_end(table, "hpf0vf1");
	ASSERT_TRUE(rep);
	EXPECT_EQ(rep->link, host->link);
	EXPECT_TRUE(rep->is_server);
	const auto uplink = find_link_end(table, "p0");
	ASSERT_TRUE(uplink);
	EXPECT_EQ(uplink->link->kind, LinkKind::uplink);
	EXPECT_TRUE(uplink->is_server);
	EXPECT_FALSE(find_link_end(table, ""));
	EXPECT_FALSE(find_link_end(table, "nosuch"));
}

TEST(LinkModel, SocketPaths)
{
	EXPECT_EQ(link_socket_directory("/run/user/1000/softdpu"), "/run/user/1000/softdpu/links");
	EXPECT_EQ(link_socket_directory("/tmp/x//"), "/tmp/x/links");
	EXPECT_EQ(link_socket_directory("/"), "/links");
	EXPECT_EQ(link_socket_path("/tmp/x", "hpf0"), "/tmp/x/links/hpf0.sock");
}

TEST(LinkModel, SocketPathLongerThanAUnixAddressIsAnError)
{
	const auto topology = default_topology();
	// "/links/hpf0vf0.sock" is 19 bytes: a run directory of 89 bytes makes 108, one too many.
	const std::string long_dir = "/" + std::string(88, 'd');
	const LinkTable table = links_of(*topology, long_dir);
	EXPECT_TRUE(table.links.empty());
	EXPECT_NE(table.error.find("longer than 107 bytes"), std::string::npos) << table.error;
	EXPECT_NE(table.error.find("SOFTDPU_RUN_DIR"), std::string::npos) << table.error;
	const LinkTable fits = links_of(*topology, long_dir.substr(0, 88));
	EXPECT_TRUE(fits.error.empty()) << fits.error;
	EXPECT_EQ(fits.links.size(), 9u);
}

// --- softdpu/link.h over the process topology ----------------------------------------------

TEST(LinkApi, FindGivesTheSocketUnderSoftdpuRunDir)
{
	softdpu_test::ScopedEnv run_dir("SOFTDPU_RUN_DIR", "/tmp/softdpu-link-test");
	softdpu_link link{};
	uint8_t is_master = 7;
	ASSERT_EQ(softdpu_link_find("pf0", &link, &is_master), DOCA_SUCCESS);
	EXPECT_STREQ(link.name, "hpf0");
	EXPECT_EQ(link.kind, SOFTDPU_LINK_KIND_REPRESENTOR);
	EXPECT_STREQ(link.socket, "/tmp/softdpu-link-test/links/hpf0.sock");
	EXPECT_EQ(is_master, 0);
	EXPECT_EQ(link.buffer_size, 16384u);
	EXPECT_EQ(link.log2_ring_size, 10);
	EXPECT_EQ(link.interface_id, 0u);
	EXPECT_STREQ(link.server.owner, "hpf0");
	EXPECT_STREQ(link.server.iface, "pf0hpf");
	EXPECT_STREQ(link.server.side, "dpu");
	EXPECT_EQ(link.server.is_master, 1);
	EXPECT_STREQ(link.client.owner, "pf0");
	EXPECT_STREQ(link.client.side, "host");
	EXPECT_EQ(link.client.is_master, 0);
	ASSERT_EQ(softdpu_link_find("hpf0", &link, &is_master), DOCA_SUCCESS);
	EXPECT_EQ(is_master, 1);
	ASSERT_EQ(softdpu_link_find("p0", &link, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(link.kind, SOFTDPU_LINK_KIND_UPLINK);
	EXPECT_STREQ(link.client.side, "outside");
	EXPECT_STREQ(link.client.owner, "");
}

TEST(LinkApi, RunDirectoryFallsBackToXdgRuntimeDirThenTmp)
{
	softdpu_test::ScopedEnv run_dir("SOFTDPU_RUN_DIR", "");
	softdpu_link link{};
	{
		softdpu_test::ScopedEnv xdg("XDG_RUNTIME_DIR", "/run/user/4242");
		ASSERT_EQ(softdpu_link_find("pf1", &link, nullptr), DOCA_SUCCESS);
		EXPECT_STREQ(link.socket, "/run/user/4242/softdpu/links/hpf1.sock");
	}
	softdpu_test::ScopedEnv xdg("XDG_RUNTIME_DIR", nullptr);
	ASSERT_EQ(softdpu_link_find("pf1", &link, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(std::string(link.socket), "/tmp/softdpu-" + std::to_string(geteuid()) + "/links/hpf1.sock");
}

TEST(LinkApi, ListAndErrors)
{
	softdpu_test::ScopedEnv run_dir("SOFTDPU_RUN_DIR", "/tmp/softdpu-link-test");
	uint32_t count = 0;
	ASSERT_EQ(softdpu_link_get_count(&count), DOCA_SUCCESS);
	EXPECT_EQ(count, 9u);
	softdpu_link link{};
	ASSERT_EQ(softdpu_link_get(0, &link), DOCA_SUCCESS);
	EXPECT_STREQ(link.name, "hpf0");
	ASSERT_EQ(softdpu_link_get(count - 1, &link), DOCA_SUCCESS);
	EXPECT_STREQ(link.name, "pf1sf0");
	EXPECT_EQ(softdpu_link_get(count, &link), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(softdpu_link_get(0, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_get_count(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_find(nullptr, &link, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_find("pf0", nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_find("nosuch", &link, nullptr), DOCA_ERROR_NOT_FOUND);

	softdpu_test::ScopedEnv too_long("SOFTDPU_RUN_DIR", ("/" + std::string(100, 'x')).c_str());
	EXPECT_EQ(softdpu_link_get_count(&count), DOCA_ERROR_INITIALIZATION);
	EXPECT_EQ(softdpu_link_find("pf0", &link, nullptr), DOCA_ERROR_INITIALIZATION);
}

TEST(LinkApi, TopologyThatCannotLoadIsAnInitializationError)
{
	softdpu::device::testing::ScopedTopologyError broken("bad.json: $: broken");
	uint32_t count = 0;
	EXPECT_EQ(softdpu_link_get_count(&count), DOCA_ERROR_INITIALIZATION);
}

TEST(LinkApi, SocketDirIsCreatedOnRequest)
{
	const std::filesystem::path base =
	    std::filesystem::temp_directory_path() / ("softdpu-linkdir-" + std::to_string(getpid()));
	std::filesystem::remove_all(base);
	softdpu_test::ScopedEnv run_dir("SOFTDPU_RUN_DIR", (base / "run").c_str());
	char dir[256];
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 0), DOCA_SUCCESS);
	EXPECT_EQ(std::string(dir), (base / "run" / "links").string());
	EXPECT_FALSE(std::filesystem::exists(dir)); // not created without asking
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_SUCCESS);
	struct stat st {};
	ASSERT_EQ(stat(dir, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(st.st_mode & 0777, 0700u);
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_SUCCESS); // exists already: fine
	EXPECT_EQ(softdpu_link_get_socket_dir(dir, 5, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_get_socket_dir(nullptr, 5, 0), DOCA_ERROR_INVALID_VALUE);

	// A file where the run directory should be.
	const std::filesystem::path file = base / "file";
	{
		FILE *f = std::fopen(file.c_str(), "w");
		ASSERT_NE(f, nullptr);
		std::fclose(f);
	}
	softdpu_test::ScopedEnv blocked("SOFTDPU_RUN_DIR", file.c_str());
	EXPECT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_ERROR_OPERATING_SYSTEM);
	std::filesystem::remove_all(base);
}

} // namespace
