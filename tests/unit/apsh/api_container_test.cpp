// The container queries added after DOCA 2.5 (doca_apsh_containers_get and its getters, the
// DOCA_APSH_PROCESS_LINUX_NS_* and netscan namespace attributes, softdpu/apsh.h's extras) against
// a fake guest.
#include "api_fixture.hpp"

#include <softdpu/apsh.h>

#include <set>
#include <string>

using namespace apsh_test;

namespace {

// One container of two processes with namespaces of their own, and a socket in its network
// namespace held by a host process (as a socket passed out of a container would be).
void add_container(FakeGuest &guest)
{
	Namespaces ns{.pid = 4026532200,
		      .mnt = 4026532201,
		      .net = 4026532202,
		      .uts = 4026532203,
		      .ipc = 4026532204,
		      .user = 4026531837,
		      .cgroup = 4026531835};
	Container c;
	c.id = "ab" + std::string(62, 'c');
	c.runtime = "docker";
	c.cgroup = "/system.slice/docker-" + c.id + ".scope";
	c.ns = ns;
	c.net_namespaces = {ns.net};
	for (uint32_t pid : {70u, 71u}) {
		Process p;
		p.task = 0xffff888000700000 + pid;
		p.pid = pid;
		p.ppid = 1;
		p.comm = "ctr_" + std::to_string(pid);
		p.ns = ns;
		p.ns_pid = pid - 69;
		p.cgroup = c.cgroup;
		p.container_id = c.id;
		p.runtime = c.runtime;
		c.processes.push_back(p);
		guest.processes.push_back(p);
	}
	guest.containers = {c};
	Connection inside = guest.connections.front(); // pid 42 (a host process), in the container's namespace
	inside.local_port = 8080;
	inside.net_ns = ns.net;
	Connection own = inside; // held by the container's process, in the container's namespace
	own.pid = 71;
	own.local_port = 8081;
	for (Connection &c : guest.connections)
		c.net_ns = 4026531840; // the host's
	guest.connections.push_back(inside);
	guest.connections.push_back(own);
}

} // namespace

TEST_F(ApshApi, ContainersTheirAttributesAndProcesses)
{
	add_container(*guest_);
	start();
	doca_apsh_container **containers = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 1);
	ASSERT_NE(containers, nullptr);
	EXPECT_EQ(containers[1], nullptr);
	const std::string id = "ab" + std::string(62, 'c');
	EXPECT_EQ(std::string(doca_apsh_container_info_get(containers[0], DOCA_APSH_CONTAINER_ID)), id);
	EXPECT_STREQ(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_RUNTIME), "docker");
	EXPECT_EQ(std::string(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_CGROUP)),
		  "/system.slice/docker-" + id + ".scope");
	EXPECT_EQ(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_NS_PID), 4026532200u);
	EXPECT_EQ(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_NS_MNT), 4026532201u);
	EXPECT_EQ(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_NS_NET), 4026532202u);
	EXPECT_EQ(softdpu_apsh_container_info_get(containers[0], SOFTDPU_APSH_CONTAINER_PROCESSES), 2u);
	EXPECT_EQ(__doca_apsh_container_info_get(containers[0], static_cast<doca_apsh_container_attr>(1)), nullptr);
	EXPECT_EQ(__doca_apsh_container_info_get(nullptr, DOCA_APSH_CONTAINER_ID), nullptr);
	EXPECT_EQ(softdpu_apsh_container_attr_get(nullptr, SOFTDPU_APSH_CONTAINER_RUNTIME), nullptr);

	doca_apsh_process **processes = nullptr;
	ASSERT_EQ(doca_apsh_container_processes_get(containers[0], &processes, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2);
	doca_apsh_process *p = processes[1];
	EXPECT_EQ(doca_apsh_process_info_get(p, DOCA_APSH_PROCESS_PID), 71u);
	EXPECT_STREQ(doca_apsh_process_info_get(p, DOCA_APSH_PROCESS_COMM), "ctr_71");
	EXPECT_EQ(doca_apsh_process_info_get(p, DOCA_APSH_PROCESS_LINUX_NS_PID), 4026532200u);
	EXPECT_EQ(doca_apsh_process_info_get(p, DOCA_APSH_PROCESS_LINUX_NS_MNT), 4026532201u);
	EXPECT_EQ(doca_apsh_process_info_get(p, DOCA_APSH_PROCESS_LINUX_NS_NET), 4026532202u);
	EXPECT_EQ(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_NS_UTS), 4026532203u);
	EXPECT_EQ(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_NS_IPC), 4026532204u);
	EXPECT_EQ(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_NS_USER), 4026531837u);
	EXPECT_EQ(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_NS_CGROUP), 4026531835u);
	EXPECT_EQ(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_NS_PID_NR), 2u);
	EXPECT_EQ(std::string(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_CONTAINER_ID)), id);
	EXPECT_EQ(std::string(softdpu_apsh_process_info_get(p, SOFTDPU_APSH_PROCESS_LINUX_CGROUP)),
		  "/system.slice/docker-" + id + ".scope");
	EXPECT_EQ(softdpu_apsh_process_attr_get(p, static_cast<softdpu_apsh_process_attr>(7)), nullptr);
	EXPECT_EQ(softdpu_apsh_process_attr_get(nullptr, SOFTDPU_APSH_PROCESS_LINUX_NS_UTS), nullptr);
	// The container's processes work with every process query.
	doca_apsh_thread **threads = nullptr;
	EXPECT_EQ(doca_apsh_threads_get(p, &threads, &n), DOCA_SUCCESS);
	doca_apsh_threads_free(threads);
	doca_apsh_processes_free(processes);

	// Its connections: those in its own network namespace, and those its processes hold.
	doca_apsh_netscan **connections = nullptr;
	ASSERT_EQ(softdpu_apsh_container_netscan_get(containers[0], &connections, &n), DOCA_SUCCESS);
	std::set<uint16_t> ports;
	for (int i = 0; i < n; ++i) {
		ports.insert(doca_apsh_netscan_info_get(connections[i], DOCA_APSH_NETSCAN_LOCAL_PORT));
		EXPECT_EQ(doca_apsh_netscan_info_get(connections[i], DOCA_APSH_NETSCAN_LINUX_NET_NAMESPACE),
			  4026532202u);
	}
	EXPECT_EQ(ports, (std::set<uint16_t>{8080, 8081}));
	doca_apsh_netscan_free(connections);

	// The system's netscan has every socket with its namespace.
	ASSERT_EQ(doca_apsh_netscan_get(system_, &connections, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 4);
	EXPECT_EQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_LINUX_NET_NAMESPACE), 4026531840u);
	doca_apsh_netscan_free(connections);

	// Arrays outlive the system: free the containers last.
	doca_apsh_containers_free(containers);
}

TEST_F(ApshApi, ContainerQueryErrors)
{
	doca_apsh_container **containers = nullptr;
	int n = 0;
	EXPECT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_ERROR_INVALID_VALUE) << "not started";
	start();
	EXPECT_EQ(doca_apsh_containers_get(nullptr, &containers, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_containers_get(system_, nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_containers_get(system_, &containers, nullptr), DOCA_ERROR_INVALID_VALUE);

	// No container: NULL and 0, as the process queries hand out empty results.
	containers = reinterpret_cast<doca_apsh_container **>(0x1);
	n = -1;
	ASSERT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_SUCCESS);
	EXPECT_EQ(containers, nullptr);
	EXPECT_EQ(n, 0);

	// A kernel without the namespace structures in its BTF.
	guest_->fail = Status{DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks task_struct.nsproxy (namespaces)"};
	guest_->fail_only = "containers";
	EXPECT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_ERROR_NOT_SUPPORTED);
	guest_->fail = Status{DOCA_ERROR_BAD_STATE, "task list is torn"};
	EXPECT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_ERROR_INITIALIZATION);
	guest_->fail = Status::success();

	add_container(*guest_);
	ASSERT_EQ(doca_apsh_containers_get(system_, &containers, &n), DOCA_SUCCESS);
	doca_apsh_process **processes = nullptr;
	doca_apsh_netscan **connections = nullptr;
	EXPECT_EQ(doca_apsh_container_processes_get(nullptr, &processes, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_container_processes_get(containers[0], nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_container_processes_get(containers[0], &processes, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_container_netscan_get(nullptr, &connections, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_apsh_container_netscan_get(containers[0], nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	guest_->fail = Status{DOCA_ERROR_NOT_SUPPORTED, "no address for socket_file_ops"};
	guest_->fail_only = "connections";
	EXPECT_EQ(softdpu_apsh_container_netscan_get(containers[0], &connections, &n), DOCA_ERROR_NOT_SUPPORTED);
	guest_->fail = Status::success();
	doca_apsh_containers_free(containers);
	doca_apsh_containers_free(containers); // twice: ignored, logged
}
