// doca_dpdk_port_probe on the DPU side: a DPU PF probed with representor= brings up one more port
// per representor, each DPDK's net_memif serving that representor's link; every refusal; the
// ports a failed call made are gone again; frames between a representor's port and the host
// function's end; a host end that is killed and comes back (a real process, link_echo).
#include "bridge_support.hpp"

#include "device/topology.hpp"

#include <doca_dev.h>
#include <doca_dpdk.h>
#include <softdpu/link.h>

#include <gtest/gtest.h>

#include <rte_dev.h>
#include <rte_ethdev.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern char **environ;

using softdpu::device::Side;
using softdpu::device::Topology;
using softdpu::device::testing::ScopedTopology;

namespace {

// The port DPDK knows by this name, or -1.
int port_named(const char *name)
{
	uint16_t port_id = 0;
	return rte_eth_dev_get_port_by_name(name, &port_id) == 0 ? port_id : -1;
}

class RepresentorPorts : public softdpu_test::PortLinks {
protected:
	void SetUp() override
	{
		PortLinks::SetUp();
		ports_before = rte_eth_dev_count_avail();
	}

	// From here on, this process sees the DPU side of the built-in topology.
	void use_dpu()
	{
		auto dpu = Topology::builtin_default(Side::dpu);
		ASSERT_TRUE(dpu.topology) << dpu.error;
		scoped = std::make_unique<ScopedTopology>(dpu.topology);
	}

	doca_dev *open(const char *iface)
	{
		doca_dev *dev = open_by_iface(iface);
		if (dev != nullptr)
			devs.push_back(dev);
		return dev;
	}

	void TearDown() override
	{
		PortLinks::TearDown(); // every port goes, the ones a test probed and never started too
		EXPECT_EQ(rte_eth_dev_count_avail(), 0u);
	}

	std::unique_ptr<ScopedTopology> scoped;
	uint16_t ports_before = 0;
};

TEST_F(RepresentorPorts, RepresentorsOnlyOnADpuPf)
{
	// A host function has no representors.
	doca_dev *host_pf = open("enp11s0f0np0");
	ASSERT_NE(host_pf, nullptr);
	EXPECT_EQ(doca_dpdk_port_probe(host_pf, "dv_flow_en=2,representor=vf0"), DOCA_ERROR_INVALID_VALUE);
	use_dpu();
	// Nor has a DPU SF.
	doca_dev *sf = open("en3f0pf0sf0");
	ASSERT_NE(sf, nullptr);
	EXPECT_EQ(doca_dpdk_port_probe(sf, "representor=sf0"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before) << "no port was made";
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(sf, &port_id), DOCA_ERROR_NOT_FOUND);
}

TEST_F(RepresentorPorts, MalformedOrUnknownRepresentorsAreRefusedBeforeAnyPort)
{
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	for (const char *devargs : {
		 "representor=",                                    // empty
		 "representor=pf0xf0",                              // malformed
		 "representor=vf[0,1",                              // unclosed (the devargs themselves)
		 "representor=[pf0vf0,pf0vf1",                      // unclosed list
		 "representor=c1pf0vf0",                            // a controller
		 "representor=vf2",                                 // host pf0 has VFs 0 and 1
		 "representor=vf[0-2]",                             // vf2 again, after two that exist
		 "representor=pf1vf1",                              // host pf1 has one VF
		 "representor=sf1",                                 // p0 has one SF
		 "representor=pf2",                                 // no DPU PF 2
		 "dv_flow_en=2,representor=vf0,representor=pf0vf9", // the second item
	     }) {
		EXPECT_EQ(doca_dpdk_port_probe(p0, devargs), DOCA_ERROR_INVALID_VALUE) << devargs;
	}
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before) << "no port was made";
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(p0, &port_id), DOCA_ERROR_NOT_FOUND);
	// And the device can be probed properly afterwards.
	EXPECT_EQ(doca_dpdk_port_probe(p0, "representor=vf0"), DOCA_SUCCESS);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 2u);
}

// The PF's own port first (the uplink's server), then one per representor in the order named, each
// serving its link under a stable vdev name; every one is the PF's device's.
TEST_F(RepresentorPorts, EachRepresentorIsAPortOfThePfDevice)
{
	use_dpu();
	doca_dev *p0 = open("p0");
	doca_dev *p1 = open("p1");
	ASSERT_NE(p0, nullptr);
	ASSERT_NE(p1, nullptr);
	ASSERT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2,dv_xmeta_en=4,representor=[pf0,vf1,pf0sf0,pf0vf65535],"
					   "representor=pf1vf0"),
		  DOCA_SUCCESS);
	const char *names[] = {"net_memif_softdpu_p0_s", "net_memif_softdpu_hpf0_s", "net_memif_softdpu_hpf0vf1_s",
			       "net_memif_softdpu_pf0sf0_s", "net_memif_softdpu_hpf1vf0_s"};
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 5u) << "pf0 and pf0vf65535 are one representor";
	std::vector<int> ids;
	for (const char *name : names) {
		ids.push_back(port_named(name));
		ASSERT_GE(ids.back(), 0) << name;
	}
	for (size_t i = 1; i < ids.size(); ++i)
		EXPECT_GT(ids[i], ids[i - 1]) << "ports are made in order";
	uint16_t first = 0;
	ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, ids[0]) << "the PF's own port";
	for (const int id : ids) {
		doca_dev *dev = nullptr;
		ASSERT_EQ(doca_dpdk_port_as_dev(static_cast<uint16_t>(id), &dev), DOCA_SUCCESS);
		EXPECT_EQ(dev, p0);
	}
	// Each port serves its link: the socket of the link is there.
	char dir[SOFTDPU_LINK_SOCKET_SIZE];
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 0), DOCA_SUCCESS);
	for (const char *link : {"p0", "hpf0", "hpf0vf1", "pf0sf0", "hpf1vf0"})
		EXPECT_TRUE(std::filesystem::exists(std::string(dir) + "/" + link + ".sock")) << link;

	// p1 with the host PF's representor by its mlx5 number, relative to p1.
	ASSERT_EQ(doca_dpdk_port_probe(p1, "representor=vf-1"), DOCA_SUCCESS);
	const int hpf1 = port_named("net_memif_softdpu_hpf1_s");
	ASSERT_GE(hpf1, 0);
	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_dpdk_port_as_dev(static_cast<uint16_t>(hpf1), &dev), DOCA_SUCCESS);
	EXPECT_EQ(dev, p1);
	ASSERT_EQ(doca_dpdk_get_first_port_id(p1, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, port_named("net_memif_softdpu_p1_s"));
	// A PF probed again: refused, as before.
	EXPECT_EQ(doca_dpdk_port_probe(p1, "representor=vf-1"), DOCA_ERROR_DRIVER);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 7u);
}

// DPDK refuses the third port (a port of that name exists already): the two this call made are
// removed again, and nothing is the device's.
TEST_F(RepresentorPorts, AFailedProbeRemovesEveryPortItMade)
{
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	char dir[SOFTDPU_LINK_SOCKET_SIZE];
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_SUCCESS);
	const std::string blocker = "net_memif_softdpu_hpf0vf1_s";
	ASSERT_EQ(rte_dev_probe((blocker + ",socket=" + dir + "/blocker.sock,socket-abstract=no,role=server").c_str()),
		  0);
	EXPECT_EQ(doca_dpdk_port_probe(p0, "representor=[pf0vf0,pf0vf1]"), DOCA_ERROR_DRIVER);
	EXPECT_EQ(port_named("net_memif_softdpu_p0_s"), -1);
	EXPECT_EQ(port_named("net_memif_softdpu_hpf0vf0_s"), -1);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 1u) << "only the test's own port is left";
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(p0, &port_id), DOCA_ERROR_NOT_FOUND);

	const int blocker_port = port_named(blocker.c_str());
	ASSERT_GE(blocker_port, 0);
	ASSERT_EQ(rte_eth_dev_close(static_cast<uint16_t>(blocker_port)), 0);
	ASSERT_EQ(rte_eal_hotplug_remove("vdev", blocker.c_str()), 0);
	EXPECT_EQ(doca_dpdk_port_probe(p0, "representor=[pf0vf0,pf0vf1]"), DOCA_SUCCESS);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 3u);
}

// A DPU program's representor port and the host function's end of the same link (a plain
// net_memif client in this process): frames of 64 to 9000 bytes both ways.
TEST_F(RepresentorPorts, ARepresentorPortCarriesFramesToAndFromTheHostFunction)
{
	allow_memif_disconnect_bug();
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	ASSERT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2,representor=pf0vf0"), DOCA_SUCCESS);
	const int rep = port_named("net_memif_softdpu_hpf0vf0_s");
	ASSERT_GE(rep, 0);
	uint16_t host_vf = 0;
	ASSERT_TRUE(probe_peer("hpf0vf0", "net_memif_test_pf0vf0", host_vf));
	start_port(static_cast<uint16_t>(rep)); // the server first
	start_port(host_vf);
	ASSERT_TRUE(wait_up(static_cast<uint16_t>(rep), host_vf));
	exchange(static_cast<uint16_t>(rep), host_vf, 3000);
	exchange(host_vf, static_cast<uint16_t>(rep), 3000);
}

#ifdef SOFTDPU_LINK_ECHO
// The host end of a representor's link, link_echo in a child process, killed with SIGKILL while
// the representor's port is up: the port's link goes down; a new link_echo brings it up again and
// frames flow again.
class EchoPeer {
public:
	explicit EchoPeer(const char *name)
	{
		const std::string path = SOFTDPU_LINK_ECHO;
		std::vector<std::string> args = {path, "--name", name, "--timeout", "120"};
		std::vector<char *> argv;
		for (std::string &arg : args)
			argv.push_back(arg.data());
		argv.push_back(nullptr);
		// The child inherits SOFTDPU_RUN_DIR and SOFTDPU_SIDE=host (tests/support/test_env.cpp).
		if (posix_spawn(&pid_, path.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
			pid_ = -1;
	}
	~EchoPeer() { kill_now(); }
	EchoPeer(const EchoPeer &) = delete;
	EchoPeer &operator=(const EchoPeer &) = delete;

	bool running() const { return pid_ > 0; }
	// SIGKILL, and the child reaped; true when it was still running until then.
	bool kill_now()
	{
		if (pid_ <= 0)
			return false;
		int status = 0;
		const bool alive = waitpid(pid_, &status, WNOHANG) == 0;
		if (alive) {
			(void)kill(pid_, SIGKILL);
			(void)waitpid(pid_, &status, 0);
		}
		pid_ = -1;
		return alive;
	}

private:
	pid_t pid_ = -1;
};

// How many unix sockets bound to `path` listen: lines of /proc/net/unix with the listening flag
// (__SO_ACCEPTCON, 00010000) and that path. DPDK 22.11's net_memif keeps the listening socket of a
// server port open after the port is removed (bound to a path whose file is gone, and inherited by
// the processes this one starts), so a test counts the listeners before it starts a server and
// waits for one more.
int listeners(const std::string &path)
{
	std::ifstream table("/proc/net/unix");
	std::string line;
	int count = 0;
	while (std::getline(table, line)) {
		std::istringstream fields(line);
		std::string num, refcount, protocol, flags, type, state, inode, bound;
		if ((fields >> num >> refcount >> protocol >> flags >> type >> state >> inode >> bound) &&
		    bound == path && flags == "00010000")
			++count;
	}
	return count;
}

bool wait_link(uint16_t port_id, bool up, int timeout_ms)
{
	for (int waited = 0;; waited += 10) {
		rte_eth_link link{};
		if (rte_eth_link_get_nowait(port_id, &link) == 0 && (link.link_status == RTE_ETH_LINK_UP) == up)
			return true;
		if (waited >= timeout_ms)
			return false;
		usleep(10000);
	}
}

TEST_F(RepresentorPorts, APeerThatIsKilledTakesTheLinkDownAndBackUpWhenItReturns)
{
	allow_memif_disconnect_bug();
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	ASSERT_EQ(doca_dpdk_port_probe(p0, "representor=vf1"), DOCA_SUCCESS);
	const int found = port_named("net_memif_softdpu_hpf0vf1_s");
	ASSERT_GE(found, 0);
	const auto rep = static_cast<uint16_t>(found);
	start_port(rep);
	EXPECT_TRUE(wait_link(rep, false, 0)) << "nobody is connected yet";

	for (int round = 0; round < 2; ++round) {
		EchoPeer host_vf("pf0vf1");
		ASSERT_TRUE(host_vf.running());
		ASSERT_TRUE(wait_link(rep, true, 30000)) << "round " << round;
		// Every frame comes back from the host end: both directions, in order, every byte.
		exchange(rep, rep, 1500);
		ASSERT_TRUE(host_vf.kill_now()) << "link_echo left by itself";
		EXPECT_TRUE(wait_link(rep, false, 10000)) << "round " << round;
		// Nothing arrives from a dead peer; sending is harmless.
		rte_mbuf *got[4];
		EXPECT_EQ(rte_eth_rx_burst(rep, 0, got, 4), 0);
	}
}

// The other way round: a host PF's port (a memif client) whose server, link_echo serving the
// representor's end, is killed. The link goes down; DPDK's net_memif client connects only when it
// starts, so once a server is back the application restarts the port, and frames flow again.
TEST_F(RepresentorPorts, AClientPortWhoseServerIsKilledIsDownUntilRestarted)
{
	allow_memif_disconnect_bug();
	doca_dev *pf = open("enp11s0f0np0");
	ASSERT_NE(pf, nullptr);
	ASSERT_EQ(doca_dpdk_port_probe(pf, "dv_flow_en=2"), DOCA_SUCCESS);
	uint16_t port = 0;
	ASSERT_EQ(doca_dpdk_get_first_port_id(pf, &port), DOCA_SUCCESS);
	char dir[SOFTDPU_LINK_SOCKET_SIZE];
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_SUCCESS);
	const std::string socket = std::string(dir) + "/hpf0.sock";
	// A killed server leaves its socket file behind: gone again after the test, whatever happens.
	const std::unique_ptr<const std::string, void (*)(const std::string *)> leftover(
	    &socket, [](const std::string *path) { std::filesystem::remove(*path); });
	// Served: the socket listens (the file alone is there from bind, before listen).
	const auto wait_served = [&](int before) {
		for (int i = 0; i < 3000; ++i) {
			if (listeners(socket) > before)
				return true;
			usleep(10000);
		}
		return false;
	};
	std::filesystem::remove(socket);
	{
		const int stale = listeners(socket);
		EchoPeer representor("hpf0");
		ASSERT_TRUE(representor.running());
		ASSERT_TRUE(wait_served(stale));
		start_port(port);
		ASSERT_TRUE(wait_link(port, true, 30000)) << "the first server";
		exchange(port, port, 1500);
		ASSERT_TRUE(representor.kill_now());
		EXPECT_TRUE(wait_link(port, false, 10000));
	}
	std::filesystem::remove(socket); // a killed server leaves its socket file behind
	const int stale = listeners(socket);
	EchoPeer representor("hpf0");
	ASSERT_TRUE(representor.running());
	ASSERT_TRUE(wait_served(stale));
	EXPECT_FALSE(wait_link(port, true, 1000)) << "DPDK's net_memif client connects only in rte_eth_dev_start";
	ASSERT_EQ(rte_eth_dev_stop(port), 0);
	ASSERT_EQ(rte_eth_dev_start(port), 0);
	ASSERT_TRUE(wait_link(port, true, 30000)) << "the second server, after the restart";
	exchange(port, port, 1500);
}
#endif

} // namespace

namespace {

// Sets SOFTDPU_RUN_DIR while it lives; the previous value comes back after.
class ScopedRunDir {
public:
	explicit ScopedRunDir(const std::string &dir)
	{
		if (const char *old = std::getenv("SOFTDPU_RUN_DIR"))
			previous = old;
		(void)setenv("SOFTDPU_RUN_DIR", dir.c_str(), 1);
	}
	~ScopedRunDir() { (void)setenv("SOFTDPU_RUN_DIR", previous.c_str(), 1); }
	ScopedRunDir(const ScopedRunDir &) = delete;
	ScopedRunDir &operator=(const ScopedRunDir &) = delete;

private:
	std::string previous;
};

} // namespace

// A DPU PF without an Ethernet network interface has no link, so no port: INVALID_VALUE.
TEST_F(RepresentorPorts, ADeviceWithoutANetworkInterfaceHasNoPort)
{
	auto parsed = Topology::parse(R"({
	  "host": { "functions": [
	    { "name": "a", "type": "pf", "pci": "0b:00.0", "ibdev": "h0", "iface": "ha", "vuid": "A" } ] },
	  "dpu": { "functions": [
	    { "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "m0", "iface": "p0", "vuid": "P0" },
	    { "name": "p1", "type": "pf", "pci": "03:00.1", "ibdev": "m1", "vuid": "P1" } ],
	    "representors": [ { "name": "ra", "manager": "p0", "function": "a", "iface": "pf0hpf" } ] }
	})",
				      "<test>", Side::dpu);
	ASSERT_TRUE(parsed.topology) << parsed.error;
	scoped = std::make_unique<ScopedTopology>(parsed.topology);
	doca_dev *p1 = softdpu_test::open_first_device([](doca_devinfo *info) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = {};
		return doca_devinfo_get_ibdev_name(info, name, sizeof(name)) == DOCA_SUCCESS &&
		       std::string(name) == "m1";
	});
	ASSERT_NE(p1, nullptr);
	devs.push_back(p1);
	EXPECT_EQ(doca_dpdk_port_probe(p1, "dv_flow_en=2"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before) << "no port was made";
	uint16_t port_id = 0;
	EXPECT_EQ(doca_dpdk_get_first_port_id(p1, &port_id), DOCA_ERROR_NOT_FOUND);
	// p0 of the same topology has its uplink.
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_SUCCESS);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 1u);
}

// What keeps softdpu from making the port is DOCA_ERROR_DRIVER, one of the probe's documented codes:
// the topology cannot be loaded, the socket path is too long, the socket directory cannot be made,
// DPDK refuses the vdev (rte_dev_probe fails). No port is left behind, and the device is probed fine afterwards.
TEST_F(RepresentorPorts, WhatKeepsThePortFromBeingMadeIsADriverError)
{
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	uint16_t port_id = 0;
	{
		const softdpu::device::testing::ScopedTopologyError broken("<test>: a broken topology");
		EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_ERROR_DRIVER);
	}
	{
		// <run dir>/links/p0.sock is longer than a socket address holds.
		const ScopedRunDir too_long("/tmp/" + std::string(100, 'r'));
		EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_ERROR_DRIVER);
		EXPECT_FALSE(std::filesystem::exists("/tmp/" + std::string(100, 'r')));
	}
	char dir[SOFTDPU_LINK_SOCKET_SIZE];
	ASSERT_EQ(softdpu_link_get_socket_dir(dir, sizeof(dir), 1), DOCA_SUCCESS);
	const std::string run_dir = std::filesystem::path(dir).parent_path().string();
	{
		// A file where the socket directory should be.
		const std::string blocked = run_dir + "/blocked";
		ASSERT_TRUE(std::filesystem::create_directory(blocked));
		std::ofstream(blocked + "/links") << "not a directory\n";
		{
			const ScopedRunDir in_blocked(blocked);
			EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_ERROR_DRIVER);
		}
		std::filesystem::remove_all(blocked);
	}
	{
		// p0's port closed but its vdev left on DPDK's bus (no rte_eal_hotplug_remove): the bridge
		// forgets the port, and DPDK refuses the vdev of that name again ("already plugged").
		ASSERT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_SUCCESS);
		ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &port_id), DOCA_SUCCESS);
		ASSERT_EQ(rte_eth_dev_close(port_id), 0);
		expect_eal_error("Failed to attach device on primary process");
		expect_eal_error("Cannot find plugged device (net_memif_softdpu_p0_s)");
		EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_ERROR_DRIVER);
		EXPECT_EQ(port_named("net_memif_softdpu_p0_s"), -1);
		// DPDK's failed attach took the stale vdev off its bus as well.
		EXPECT_NE(rte_eal_hotplug_remove("vdev", "net_memif_softdpu_p0_s"), 0);
	}
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before) << "no port was made";
	EXPECT_EQ(doca_dpdk_get_first_port_id(p0, &port_id), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_SUCCESS);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 1u);
}

// The PF's own port closed while its representor ports are open: the first port is the first
// representor port still open; the representors cannot be probed again while their ports are open
// (their vdev names exist), the PF alone can, and its new port is the first port again.
TEST_F(RepresentorPorts, ThePfsOwnPortClosedLeavesItsRepresentorPorts)
{
	use_dpu();
	doca_dev *p0 = open("p0");
	ASSERT_NE(p0, nullptr);
	ASSERT_EQ(doca_dpdk_port_probe(p0, "representor=[vf0,vf1]"), DOCA_SUCCESS);
	const int own = port_named("net_memif_softdpu_p0_s");
	const int vf0 = port_named("net_memif_softdpu_hpf0vf0_s");
	const int vf1 = port_named("net_memif_softdpu_hpf0vf1_s");
	ASSERT_GE(own, 0);
	ASSERT_GE(vf0, 0);
	ASSERT_GE(vf1, 0);
	uint16_t first = 0;
	ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, own);

	ASSERT_EQ(rte_eth_dev_close(static_cast<uint16_t>(own)), 0);
	ASSERT_EQ(rte_eal_hotplug_remove("vdev", "net_memif_softdpu_p0_s"), 0);
	ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, vf0) << "the first representor port still open";
	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_dpdk_port_as_dev(static_cast<uint16_t>(vf1), &dev), DOCA_SUCCESS);
	EXPECT_EQ(dev, p0);

	// The same representor again: its port exists, DPDK's refusal. Nothing new is left behind.
	EXPECT_EQ(doca_dpdk_port_probe(p0, "representor=vf1"), DOCA_ERROR_DRIVER);
	EXPECT_EQ(port_named("net_memif_softdpu_p0_s"), -1);
	EXPECT_EQ(rte_eth_dev_count_avail(), ports_before + 2u);
	// The PF alone: its own port again, the first port once more (made after the representors').
	ASSERT_EQ(doca_dpdk_port_probe(p0, "dv_flow_en=2"), DOCA_SUCCESS);
	const int again = port_named("net_memif_softdpu_p0_s");
	ASSERT_GE(again, 0);
	ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, again);
	// Its representors closed as well: the PF's port is all that is left of the device.
	for (const int id : {vf0, vf1})
		ASSERT_EQ(rte_eth_dev_close(static_cast<uint16_t>(id)), 0);
	for (const char *name : {"net_memif_softdpu_hpf0vf0_s", "net_memif_softdpu_hpf0vf1_s"})
		ASSERT_EQ(rte_eal_hotplug_remove("vdev", name), 0) << name;
	ASSERT_EQ(doca_dpdk_get_first_port_id(p0, &first), DOCA_SUCCESS);
	EXPECT_EQ(first, again);
	EXPECT_EQ(doca_dpdk_port_as_dev(static_cast<uint16_t>(vf0), &dev), DOCA_ERROR_NOT_FOUND);
}
