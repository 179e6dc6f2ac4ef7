// Container identity: the container IDs runtimes put in cgroup paths, and the grouping of
// processes into containers (src/apsh/linux/containers.cpp).
#include "apsh/linux/containers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace softdpu::apsh;
using softdpu::apsh::os::container_of_cgroup;
using softdpu::apsh::os::group_containers;

const std::string kId = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39281706f5e4d3c2b1a090";

TEST(ApshContainers, RuntimeIdsInCgroupPaths)
{
	ASSERT_EQ(kId.size(), 64u);
	struct Case {
		std::string path, id, runtime;
	} cases[] = {
	    {"/system.slice/docker-" + kId + ".scope", kId, "docker"},
	    {"/docker/" + kId, kId, "docker"},
	    {"/machine.slice/libpod-" + kId + ".scope", kId, "podman"},
	    {"/machine.slice/libpod-" + kId + ".scope/container", kId, "podman"},
	    {"/libpod_parent/" + kId, kId, "podman"},
	    {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/crio-" + kId + ".scope", kId,
	     "cri-o"},
	    {"/kubepods.slice/kubepods-pod1234.slice/cri-containerd-" + kId + ".scope", kId, "containerd"},
	    {"/kubepods/besteffort/pod1234/" + kId, kId, ""},
	    {"/lxc.payload.web", "web", "lxc"},
	    {"/lxc/web", "web", "lxc"},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.path);
		auto found = container_of_cgroup(c.path);
		EXPECT_EQ(found.id, c.id);
		EXPECT_EQ(found.runtime, c.runtime);
	}
}

TEST(ApshContainers, PathsThatNameNoContainer)
{
	for (std::string path :
	     {std::string("/"), std::string(""), std::string("/system.slice/sshd.service"),
	      "/system.slice/docker-" + kId.substr(1) + ".scope", // 63 hex digits
	      "/system.slice/docker-" + kId + "0.scope",          // 65
	      "/system.slice/docker-" + std::string(64, 'G') + ".scope",
	      "/machine.slice/libpod-conmon-" + kId + ".scope", "/system.slice/crio-conmon-" + kId + ".scope",
	      std::string("/user.slice/user-1000.slice/session-2.scope")}) {
		SCOPED_TRACE(path);
		auto found = container_of_cgroup(path);
		EXPECT_EQ(found.id, "");
		EXPECT_EQ(found.runtime, "");
	}
}

Process make_process(uint32_t pid, Namespaces ns, std::string container_id = "")
{
	Process p;
	p.pid = pid;
	p.ns = ns;
	p.container_id = std::move(container_id);
	p.runtime = p.container_id.empty() ? "" : "docker";
	p.cgroup = p.container_id.empty() ? "/" : "/docker/" + p.container_id;
	return p;
}

TEST(ApshContainers, GroupsByIdThenByOwnNamespaces)
{
	const Namespaces host{.pid = 1, .mnt = 2, .net = 3, .uts = 4, .ipc = 5, .user = 6, .cgroup = 7};
	Namespaces ctr = host;
	ctr.pid = 11;
	ctr.mnt = 12;
	ctr.net = 13;
	Namespaces half = host; // the runtime's parent: the container's mount and network, the host's pids
	half.mnt = 12;
	half.net = 13;
	Namespaces mnt_only = host;
	mnt_only.mnt = 22;
	Namespaces pid_only = host;
	pid_only.pid = 31;
	Namespaces net_only = host;
	net_only.net = 43;
	Process kthread = make_process(2, mnt_only);
	kthread.is_kernel_thread = true;
	std::vector<Process> processes = {
	    make_process(1, host),       kthread,
	    make_process(10, half, kId), make_process(11, ctr, kId),
	    make_process(20, mnt_only),  make_process(21, mnt_only),
	    make_process(30, pid_only),  make_process(40, net_only),
	    make_process(41, net_only),  make_process(50, host),
	};
	auto containers = group_containers(processes, host);
	ASSERT_EQ(containers.size(), 4u);
	EXPECT_EQ(containers[0].id, kId);
	EXPECT_EQ(containers[0].runtime, "docker");
	EXPECT_EQ(containers[0].cgroup, "/docker/" + kId);
	EXPECT_EQ(containers[0].ns, ctr); // its first process's in a pid namespace of its own
	EXPECT_EQ(containers[0].net_namespaces, std::vector<uint32_t>{13});
	ASSERT_EQ(containers[0].processes.size(), 2u);
	EXPECT_EQ(containers[0].processes[1].pid, 11u);
	EXPECT_EQ(containers[1].id, "mnt:[22]");
	EXPECT_EQ(containers[1].processes.size(), 2u);
	EXPECT_TRUE(containers[1].net_namespaces.empty());
	EXPECT_EQ(containers[2].id, "pid:[31]");
	EXPECT_EQ(containers[3].id, "net:[43]");
	EXPECT_EQ(containers[3].processes.size(), 2u);
	EXPECT_EQ(containers[3].runtime, "");
	// Processes whose namespaces are unknown (0) are the host's.
	EXPECT_TRUE(group_containers({make_process(60, Namespaces{})}, host).empty());
}

} // namespace
