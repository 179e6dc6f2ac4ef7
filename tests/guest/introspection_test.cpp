// App Shield's Linux reader against the test guest's own ground truth, on every kind of memory
// source: the live guest (QEMU's shared RAM file) and the raw, ELF-core and LiME images of it
// taken while paused. The ctest fixture (tests/guest/CMakeLists.txt) boots the guest, takes the
// snapshot and passes its directory in SOFTDPU_GUEST_SNAPSHOT (memory.raw, memory.elf,
// memory.lime, ground-truth.txt, and guest.env, which names the live guest's RAM file and QMP
// socket). Without it every test skips; without a running guest the live source skips. The guest
// idles once it is READY, so the live guest holds the same processes as its ground truth; only
// kernel workers come and go.
#include "apsh/introspection.hpp"
#include "ground_truth.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace {

using namespace softdpu::apsh;
using softdpu::guest::GroundTruth;
using softdpu::guest::GtMapping;
using softdpu::guest::GtProcess;

std::string env_or_empty(const char *name)
{
	const char *value = std::getenv(name);
	return value ? value : "";
}

std::map<std::string, std::string> read_key_values(const std::string &path)
{
	std::map<std::string, std::string> out;
	std::ifstream in(path);
	for (std::string line; std::getline(in, line);) {
		size_t eq = line.find('=');
		if (eq != std::string::npos)
			out[line.substr(0, eq)] = line.substr(eq + 1);
	}
	return out;
}

struct OpenedSource {
	std::unique_ptr<LinuxSystem> system;
	GroundTruth truth;
	std::map<std::string, std::string> guest; // guest.env
};

// One system per source for the whole run: opening is what a user does once, too.
std::map<std::string, OpenedSource> &opened_sources()
{
	static std::map<std::string, OpenedSource> sources;
	return sources;
}

class GuestSource : public ::testing::TestWithParam<std::string> {
protected:
	void SetUp() override
	{
		const std::string snapshot = env_or_empty("SOFTDPU_GUEST_SNAPSHOT");
		const std::string &name = GetParam();
		if (snapshot.empty())
			GTEST_SKIP() << "no test guest (SOFTDPU_GUEST_SNAPSHOT unset); run it through ctest -L guest";
		auto &sources = opened_sources();
		auto it = sources.find(name);
		if (it == sources.end()) {
			OpenedSource opened;
			opened.truth = GroundTruth::load(snapshot + "/ground-truth.txt");
			opened.guest = read_key_values(snapshot + "/guest.env");
			SourceSpec spec;
			if (name == "live") {
				spec.kind = SourceKind::qemu_shared_ram;
				spec.path = opened.guest["RAM_FILE"];
				spec.qmp_socket = opened.guest["QMP_SOCKET"];
				if (access(spec.path.c_str(), R_OK) != 0)
					GTEST_SKIP() << "the guest is not running (no " << spec.path << ")";
			} else if (name == "raw") {
				spec = {SourceKind::raw, snapshot + "/memory.raw", "", {}};
			} else if (name == "elf") {
				spec = {SourceKind::elf_core, snapshot + "/memory.elf", "", {}};
			} else if (name == "lime") {
				spec = {SourceKind::lime, snapshot + "/memory.lime", "", {}};
			} else if (name == "auto_elf") {
				spec = {SourceKind::automatic, snapshot + "/memory.elf", "", {}};
			} else if (name == "auto_lime") {
				spec = {SourceKind::automatic, snapshot + "/memory.lime", "", {}};
			}
			Status status = LinuxSystem::open(spec, KernelHints{}, Limits{}, opened.system);
			ASSERT_TRUE(status.ok()) << name << " (" << spec.path << "): " << status.reason;
			ASSERT_NE(opened.system, nullptr);
			it = sources.emplace(name, std::move(opened)).first;
		}
		system_ = it->second.system.get();
		truth_ = &it->second.truth;
		guest_ = &it->second.guest;

		Status status = system_->processes(processes_);
		ASSERT_TRUE(status.ok()) << status.reason;
		for (const auto &proc : processes_)
			by_pid_[proc.pid] = proc;
	}

	// The reader's process for a ground-truth pid (fails the test when missing).
	const Process &process(uint32_t pid)
	{
		static const Process missing{};
		auto it = by_pid_.find(pid);
		EXPECT_NE(it, by_pid_.end()) << "pid " << pid << " missing from the reader's process list";
		return it == by_pid_.end() ? missing : it->second;
	}

	std::vector<const GtProcess *> user_processes() const
	{
		std::vector<const GtProcess *> out;
		for (const auto *proc : truth_->stable_processes())
			if (!proc->kernel_thread)
				out.push_back(proc);
		return out;
	}

	LinuxSystem *system_ = nullptr;
	const GroundTruth *truth_ = nullptr;
	const std::map<std::string, std::string> *guest_ = nullptr;
	std::vector<Process> processes_;
	std::map<uint32_t, Process> by_pid_;
};

// The /proc state letter of a task_struct.__state value, as the kernel derives it
// (__task_state_index in include/linux/sched.h, 6.1): TASK_REPORT bits, TASK_IDLE apart.
// Modifier bits such as TASK_FREEZABLE (0x2000) do not change the letter.
char state_letter(uint64_t state)
{
	constexpr uint64_t task_report = 0x7f, task_idle = 0x402;
	if (state == task_idle)
		return 'I';
	uint64_t reported = state & task_report;
	int index = 0;
	while (reported) { // fls()
		index++;
		reported >>= 1;
	}
	return "RSDTtXZPI"[index];
}

// task->comm holds 15 characters. procfs shows more for kernel threads: the full name given
// at creation ("rcu_tasks_kthread"), and for a workqueue worker its current queue
// ("kworker/0:1-events").
std::string task_comm(const GtProcess &proc)
{
	std::string comm = proc.comm;
	if (comm.starts_with("kworker/")) {
		size_t dash = comm.find('-');
		if (dash != std::string::npos)
			comm.resize(dash);
	}
	return comm.substr(0, 15);
}

uint32_t protection_of(const GtMapping &m)
{
	return (m.read ? PROT_READ : 0) | (m.write ? PROT_WRITE : 0) | (m.exec ? PROT_EXEC : 0);
}

std::string join(const std::vector<std::string> &parts)
{
	std::string out;
	for (const auto &part : parts)
		out += (out.empty() ? "" : " ") + part;
	return out;
}

// Lowest mapping start of each file, as a loader-built library list reports it.
std::map<std::string, uint64_t> load_addresses(const std::vector<GtMapping> &maps)
{
	std::map<std::string, uint64_t> out;
	for (const auto &m : maps)
		if (m.file_backed() && (!out.contains(m.path) || m.start < out[m.path]))
			out[m.path] = m.start;
	return out;
}

TEST_P(GuestSource, DescribesTheKernelAndPagingDepth)
{
	std::string text = system_->describe();
	EXPECT_NE(text.find(truth_->kernel_release), std::string::npos) << text;
	EXPECT_NE(text.find(guest_->at("PAGING") + "-level"), std::string::npos) << text;
}

TEST_P(GuestSource, ProcessesMatchTheGuest)
{
	for (const auto *gt : truth_->stable_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		auto it = by_pid_.find(gt->pid);
		if (it == by_pid_.end()) {
			// An idle kernel worker may retire between the ground truth and the snapshot.
			EXPECT_TRUE(gt->comm.starts_with("kworker/")) << "missing from the reader's list";
			continue;
		}
		const Process &proc = it->second;
		EXPECT_EQ(proc.ppid, gt->ppid);
		EXPECT_EQ(proc.comm, task_comm(*gt));
		EXPECT_EQ(proc.uid, gt->uid);
		EXPECT_EQ(proc.gid, gt->gid);
		EXPECT_EQ(proc.is_kernel_thread, gt->kernel_thread);
		EXPECT_NE(proc.task, 0u);
		// User processes sleep once the guest is READY; kernel threads change state freely.
		if (!gt->kernel_thread) {
			EXPECT_EQ(state_letter(proc.state), gt->state) << "__state 0x" << std::hex << proc.state;
		}
	}
	for (const auto &proc : processes_) {
		SCOPED_TRACE("reader pid " + std::to_string(proc.pid) + " " + proc.comm);
		const GtProcess *gt = truth_->process(proc.pid);
		if (gt && !gt->transient)
			continue;
		// Only the idle task and kernel workers started later may be unknown to the ground truth.
		EXPECT_TRUE(proc.pid == 0 || (proc.is_kernel_thread && proc.comm.starts_with("kworker/")))
		    << "not in the guest's ground truth";
	}
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	EXPECT_EQ(process(target->pid).comm, "apsh_target");
	const auto *static_target = truth_->target("apsh_static");
	ASSERT_NE(static_target, nullptr);
	EXPECT_EQ(process(static_target->pid).uid, 1000u);
	EXPECT_EQ(process(static_target->pid).gid, 1001u);
}

TEST_P(GuestSource, ThreadsMatchTheGuest)
{
	for (const auto *gt : truth_->stable_processes()) {
		if (!by_pid_.contains(gt->pid))
			continue; // reported by ProcessesMatchTheGuest
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		std::vector<Thread> threads;
		Status status = system_->threads(by_pid_[gt->pid], threads);
		ASSERT_TRUE(status.ok()) << status.reason;
		std::map<uint32_t, std::string> got, want;
		for (const auto &t : threads) {
			EXPECT_EQ(t.pid, gt->pid);
			EXPECT_EQ(t.process_name, task_comm(*gt));
			got[t.tid] = t.thread_name;
		}
		for (const auto &t : truth_->threads_of(gt->pid))
			want[t.tid] = t.comm;
		if (gt->kernel_thread) { // procfs decorates kworker names: compare the tids only
			for (auto &[tid, name] : got)
				name = want.contains(tid) ? want[tid] : name;
		}
		EXPECT_EQ(got, want);
	}
	for (const char *comm : {"apsh_target", "apsh_static"}) {
		const auto *target = truth_->target(comm);
		ASSERT_NE(target, nullptr);
		std::vector<Thread> threads;
		ASSERT_TRUE(system_->threads(process(target->pid), threads).ok());
		EXPECT_EQ(threads.size(), 4u) << comm;
	}
}

TEST_P(GuestSource, MemoryAreasMatchProcMaps)
{
	for (const auto *gt : user_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		auto maps = truth_->maps.find(gt->pid);
		ASSERT_NE(maps, truth_->maps.end()) << "the ground truth has no maps for it";
		std::vector<MemoryArea> areas;
		Status status = system_->memory_areas(process(gt->pid), areas);
		ASSERT_TRUE(status.ok()) << status.reason;
		std::sort(areas.begin(), areas.end(), [](const auto &a, const auto &b) { return a.start < b.start; });
		ASSERT_EQ(areas.size(), maps->second.size());
		for (size_t i = 0; i < areas.size(); i++) {
			const MemoryArea &got = areas[i];
			const GtMapping &want = maps->second[i];
			SCOPED_TRACE("area " + std::to_string(i) + " " + want.path);
			EXPECT_EQ(got.pid, gt->pid);
			EXPECT_EQ(got.process_name, gt->comm);
			EXPECT_EQ(got.start, want.start);
			EXPECT_EQ(got.end, want.end);
			EXPECT_EQ(got.protection, protection_of(want));
			EXPECT_EQ(got.offset, want.offset);
			EXPECT_EQ(got.file_backed, want.file_backed());
			if (want.path == "[vvar]") { // the contract names only heap, stack and vdso
				EXPECT_TRUE(got.file_path.empty() || got.file_path == "[vvar]") << got.file_path;
			} else {
				EXPECT_EQ(got.file_path, want.path);
			}
		}
	}
}

TEST_P(GuestSource, LibrariesMatchTheMappedSharedObjects)
{
	for (const auto *gt : user_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		auto loads = load_addresses(truth_->maps.at(gt->pid));
		std::vector<Library> libs;
		Status status = system_->libraries(process(gt->pid), libs);
		ASSERT_TRUE(status.ok()) << status.reason;
		std::set<std::string> reported;
		for (const auto &lib : libs) {
			EXPECT_EQ(lib.pid, gt->pid);
			ASSERT_TRUE(loads.contains(lib.path)) << lib.path << " is not mapped by the process";
			EXPECT_EQ(lib.load_address, loads[lib.path]) << lib.path;
			reported.insert(lib.path);
		}
		for (const auto &[path, start] : loads) {
			if (path.find(".so") != std::string::npos) {
				EXPECT_TRUE(reported.contains(path)) << path << " not reported";
			}
		}
	}
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	std::vector<Library> libs;
	ASSERT_TRUE(system_->libraries(process(target->pid), libs).ok());
	std::set<std::string> paths;
	for (const auto &lib : libs)
		paths.insert(lib.path);
	EXPECT_TRUE(paths.contains("/lib/x86_64-linux-gnu/libc.so.6"));
	EXPECT_TRUE(paths.contains("/lib64/ld-linux-x86-64.so.2"));
}

TEST_P(GuestSource, ModulesMatchProcModules)
{
	std::vector<Module> modules;
	Status status = system_->modules(modules);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::set<std::tuple<std::string, uint64_t, uint64_t>> got, want;
	for (const auto &m : modules)
		got.emplace(m.name, m.address, m.size);
	for (const auto &m : truth_->modules)
		want.emplace(m.name, m.address, m.size);
	EXPECT_EQ(got, want);
	EXPECT_EQ(want.size(), 1u) << "the guest loads dummy.ko";
}

TEST_P(GuestSource, EnvironmentMatchesProcEnviron)
{
	for (const auto *gt : user_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		std::vector<EnvVar> vars;
		Status status = system_->envars(process(gt->pid), vars);
		ASSERT_TRUE(status.ok()) << status.reason;
		std::vector<std::pair<std::string, std::string>> got;
		for (const auto &v : vars) {
			EXPECT_EQ(v.pid, gt->pid);
			got.emplace_back(v.variable, v.value);
		}
		EXPECT_EQ(got, truth_->environ.at(gt->pid));
	}
}

TEST_P(GuestSource, ParametersMatchCmdlineAndExe)
{
	for (const auto *gt : user_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		ProcessParameters params;
		Status status = system_->parameters(process(gt->pid), params);
		ASSERT_TRUE(status.ok()) << status.reason;
		EXPECT_EQ(params.pid, gt->pid);
		EXPECT_EQ(params.cmd_line, join(gt->argv));
		EXPECT_EQ(params.image_path, gt->exe);
		auto loads = load_addresses(truth_->maps.at(gt->pid));
		ASSERT_TRUE(loads.contains(gt->exe));
		EXPECT_EQ(params.image_base, loads[gt->exe]);
	}
}

// /proc/<pid>/ns/* of every process the guest could read them for, its pid inside its own pid
// namespace (NSpid) and its cgroup (cgroup v2).
TEST_P(GuestSource, NamespacesAndCgroupsMatchProc)
{
	size_t compared = 0, in_own_pid_ns = 0;
	for (const auto *gt : truth_->stable_processes()) {
		if (gt->ns.empty() || !by_pid_.contains(gt->pid))
			continue; // exited before the collector read its links; ProcessesMatchTheGuest reports missing
				  // ones
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		const Process &proc = process(gt->pid);
		const std::pair<const char *, uint32_t> expected[] = {
		    {"pid", proc.ns.pid}, {"mnt", proc.ns.mnt},   {"net", proc.ns.net},      {"uts", proc.ns.uts},
		    {"ipc", proc.ns.ipc}, {"user", proc.ns.user}, {"cgroup", proc.ns.cgroup}};
		for (auto [name, got] : expected) {
			ASSERT_TRUE(gt->ns.contains(name)) << name;
			EXPECT_EQ(got, gt->ns.at(name)) << name;
		}
		EXPECT_EQ(proc.ns_pid, gt->ns_pid);
		EXPECT_EQ(proc.cgroup, gt->cgroup);
		compared++;
		if (gt->ns.at("pid") != truth_->process(1)->ns.at("pid"))
			in_own_pid_ns++;
	}
	EXPECT_GT(compared, 20u);
	EXPECT_GE(in_own_pid_ns, 2u) << "the guest's init starts two processes in pid namespaces of their own";
}

// The guest's init starts a Docker-style container (its cgroup names the ID), processes in a pid
// and mount namespace without a runtime, and one in a network namespace alone. The expected
// grouping is the documented rule applied to the guest's own /proc.
TEST_P(GuestSource, ContainersGroupTheNamespacedProcesses)
{
	std::vector<Container> containers;
	Status status = system_->containers(containers);
	ASSERT_TRUE(status.ok()) << status.reason;

	const auto &host = truth_->process(1)->ns;
	std::map<std::string, std::set<uint32_t>> want;
	for (const auto *gt : truth_->stable_processes()) {
		if (gt->ns.empty() || gt->kernel_thread) // kdevtmpfs has a mount namespace of its own
			continue;
		std::string key;
		const std::string docker = "/system.slice/docker-";
		if (gt->cgroup.starts_with(docker) && gt->cgroup.ends_with(".scope"))
			key = gt->cgroup.substr(docker.size(), gt->cgroup.size() - docker.size() - 6);
		else if (gt->ns.at("mnt") != host.at("mnt"))
			key = "mnt:[" + std::to_string(gt->ns.at("mnt")) + "]";
		else if (gt->ns.at("pid") != host.at("pid"))
			key = "pid:[" + std::to_string(gt->ns.at("pid")) + "]";
		else if (gt->ns.at("net") != host.at("net"))
			key = "net:[" + std::to_string(gt->ns.at("net")) + "]";
		else
			continue;
		want[key].insert(gt->pid);
	}
	ASSERT_EQ(want.size(), 3u) << "the guest's init starts three containers";

	std::map<std::string, std::set<uint32_t>> got;
	int docker = 0;
	for (const Container &c : containers) {
		SCOPED_TRACE(c.id);
		EXPECT_FALSE(c.processes.empty());
		for (const Process &p : c.processes) {
			EXPECT_TRUE(got[c.id].insert(p.pid).second) << "pid " << p.pid << " twice";
			EXPECT_EQ(p.container_id.empty() ? c.id : p.container_id, c.id);
		}
		if (c.id.size() == 64) {
			docker++;
			EXPECT_EQ(c.runtime, "docker");
			EXPECT_EQ(c.cgroup, "/system.slice/docker-" + c.id + ".scope");
			ASSERT_EQ(c.net_namespaces.size(), 1u);
			EXPECT_NE(c.net_namespaces[0], host.at("net"));
		} else {
			EXPECT_EQ(c.runtime, "");
		}
	}
	EXPECT_EQ(docker, 1);
	EXPECT_EQ(got, want);
}

TEST_P(GuestSource, ConnectionsMatchProcNet)
{
	using Key = std::tuple<uint32_t, int, int, std::string, uint16_t, std::string, uint16_t, int, uint32_t>;
	std::set<Key> got, want;
	std::vector<Connection> connections;
	Status status = system_->connections(connections);
	ASSERT_TRUE(status.ok()) << status.reason;
	for (const auto &c : connections) {
		got.emplace(c.pid, c.protocol, c.family, c.local_addr, c.local_port, c.remote_addr, c.remote_port,
			    c.state, c.net_ns);
		const GtProcess *owner = truth_->process(c.pid);
		ASSERT_NE(owner, nullptr) << "connection of unknown pid " << c.pid;
		EXPECT_EQ(c.comm, owner->comm);
	}
	for (const auto &s : truth_->sockets)
		for (uint32_t pid : s.owners)
			want.emplace(pid, s.protocol, s.family, s.local_addr, s.local_port, s.remote_addr,
				     s.remote_port, s.state, s.net_ns);
	EXPECT_EQ(got, want);
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const uint32_t host_net = truth_->process(1)->ns.at("net");
	EXPECT_TRUE(got.contains(Key{target->pid, IPPROTO_TCP, AF_INET, "0.0.0.0", 4444, "0.0.0.0", 0, 10, host_net}));
	EXPECT_TRUE(got.contains(Key{target->pid, IPPROTO_UDP, AF_INET, "127.0.0.1", 5353, "0.0.0.0", 0, 7, host_net}));
	EXPECT_TRUE(got.contains(Key{target->pid, IPPROTO_TCP, AF_INET6, "::", 6666, "::", 0, 10, host_net}));
	// The listeners in the container's and the lone network namespace's (init), each in its own.
	std::set<uint32_t> listener_namespaces;
	for (const auto &c : connections)
		if (c.local_port == 8080 || c.local_port == 9090) {
			EXPECT_NE(c.net_ns, host_net) << c.local_port;
			listener_namespaces.insert(c.net_ns);
		}
	EXPECT_EQ(listener_namespaces.size(), 2u);
}

// Volatility's malfind rule: executable and (writable or not file-backed); the vDSO is the
// kernel's own code and is not reported.
TEST_P(GuestSource, InjectionsAreTheAnonymousExecutableAreas)
{
	for (const auto *gt : user_processes()) {
		SCOPED_TRACE("pid " + std::to_string(gt->pid) + " " + gt->comm);
		std::set<uint64_t> want, got;
		for (const auto &m : truth_->maps.at(gt->pid))
			if (m.exec && (m.write || !m.file_backed()) && m.path != "[vdso]" && m.path != "[vsyscall]")
				want.insert(m.start);
		std::vector<Injection> injections;
		Status status = system_->injections(process(gt->pid), injections);
		ASSERT_TRUE(status.ok()) << status.reason;
		for (const auto &inj : injections) {
			EXPECT_EQ(inj.pid, gt->pid);
			EXPECT_LE(inj.area.start, inj.suspected_start);
			EXPECT_LT(inj.suspected_start, inj.suspected_end);
			EXPECT_LE(inj.suspected_end, inj.area.end);
			got.insert(inj.area.start);
		}
		EXPECT_EQ(got, want);
	}
	for (const char *comm : {"apsh_target", "apsh_static"}) {
		const auto *target = truth_->target(comm);
		ASSERT_NE(target, nullptr);
		std::vector<Injection> injections;
		ASSERT_TRUE(system_->injections(process(target->pid), injections).ok());
		ASSERT_EQ(injections.size(), 1u) << comm;
		EXPECT_EQ(injections[0].area.start, target->rwx.start);
		EXPECT_EQ(injections[0].area.end, target->rwx.end);
		EXPECT_EQ(injections[0].area.protection, static_cast<uint32_t>(PROT_READ | PROT_WRITE | PROT_EXEC));
	}
}

TEST_P(GuestSource, ReadsTheMarkersTheTargetsPlaced)
{
	for (const char *comm : {"apsh_target", "apsh_static"}) {
		SCOPED_TRACE(comm);
		const auto *target = truth_->target(comm);
		ASSERT_NE(target, nullptr);
		const Process &proc = process(target->pid);

		const std::string heap_marker = "APSH_HEAP_MARKER_5e1f0d2c";
		std::vector<uint8_t> bytes(heap_marker.size());
		ASSERT_EQ(system_->read_user(proc, target->heap_marker, bytes), bytes.size());
		EXPECT_EQ(std::string(bytes.begin(), bytes.end()), heap_marker);

		// The RWX page: nop, nop, ret, then its marker.
		std::array<uint8_t, 4096> page{};
		ASSERT_TRUE(system_->read_user_page(proc, target->rwx.start, page));
		const std::string rwx_marker = "APSH_RWX_MARKER_9b7c3e41";
		EXPECT_EQ(page[0], 0x90);
		EXPECT_EQ(page[1], 0x90);
		EXPECT_EQ(page[2], 0xc3);
		EXPECT_EQ(std::string(page.begin() + 3, page.begin() + 3 + static_cast<long>(rwx_marker.size())),
			  rwx_marker);

		// User space below the first mapping is never present.
		EXPECT_FALSE(system_->read_user_page(proc, 0x1000, page));
	}
	const auto *target = truth_->target("apsh_target");
	ASSERT_TRUE(target->file_map.has_value());
	std::array<uint8_t, 4096> page{};
	ASSERT_TRUE(system_->read_user_page(process(target->pid), target->file_map->start, page));
	const std::string page_marker = "APSH_MAPPED_PAGE_1_7d3a91e5";
	EXPECT_EQ(std::string(page.begin(), page.begin() + static_cast<long>(page_marker.size())), page_marker);
}

INSTANTIATE_TEST_SUITE_P(Sources, GuestSource, ::testing::Values("live", "raw", "elf", "lime", "auto_elf", "auto_lime"),
			 [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
