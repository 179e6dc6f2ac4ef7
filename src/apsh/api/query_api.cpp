// doca_apsh.h: the queries (snapshots), their free functions and the info getters. Every query is
// one run_query over the System (system.hpp); the info getters read the items it handed out.
#include <doca_apsh.h>
#include <softdpu/apsh.h>

#include "apsh/api/snapshots.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <algorithm>
#include <initializer_list>
#include <new>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;

namespace {

const void *value(uint64_t number) noexcept
{
	return reinterpret_cast<const void *>(static_cast<uintptr_t>(number));
}

const void *text(const std::string &string) noexcept
{
	return string.c_str();
}

const void *bad_attr(const char *function, int attr)
{
	SDK_LOG_ERR("%s: attribute %d is unknown or does not apply to Linux systems", function, attr);
	return nullptr;
}

// A reader failure becomes a code the function documents; anything else is INITIALIZATION.
doca_error_t failure(const Status &status, const char *function, std::initializer_list<doca_error_t> documented)
{
	SDK_LOG_ERR("%s: %s", function, status.reason.empty() ? "query failed" : status.reason.c_str());
	for (doca_error_t code : documented)
		if (code == status.code)
			return code;
	return DOCA_ERROR_INITIALIZATION;
}

// What distinguishes one query from another: which reader it runs and how a found record becomes
// an item of the array. Everything else (argument checks, the system's lock, the limit, the
// snapshot, publishing, the exception barrier) is written once, in run_query.
struct QueryRules {
	// The reader failures the function documents (others become INITIALIZATION).
	std::initializer_list<doca_error_t> documented;
	// The sys_config limit on the number of items, if any.
	uint32_t Limits::*limit = nullptr;
	// Whether an empty result is handed out as NULL (process queries) or as an empty array.
	bool null_when_empty = false;
};

template <typename T> std::unique_ptr<Snapshot<T>> new_snapshot(const std::shared_ptr<System> &system)
{
	if (allocation_should_fail())
		return nullptr;
	auto snapshot = std::unique_ptr<Snapshot<T>>(new (std::nothrow) Snapshot<T>());
	if (snapshot)
		snapshot->system = system;
	return snapshot;
}

template <typename T> void truncate(std::vector<T> &items, uint32_t limit)
{
	if (items.size() > limit)
		items.resize(limit);
}

// Hands out a snapshot as its array (freed by the array's pointer)...
template <typename Item>
doca_error_t hand_out(std::unique_ptr<Snapshot<Item>> snapshot, Item ***array, int *size, bool null_when_empty)
{
	return publish(std::move(snapshot), array, size, null_when_empty);
}

// ...or, for a query of one record, as that item (freed by the item's pointer).
template <typename Item> doca_error_t hand_out(std::unique_ptr<Snapshot<Item>> snapshot, Item **item, int *, bool)
{
	Item *first = snapshot->items.front().get();
	register_snapshot(first, std::move(snapshot));
	*item = first;
	return DOCA_SUCCESS;
}

// Runs read(guest, found) under the system's lock, truncates to the limit and hands out one Item
// per found record (fill(item, record)). Nothing thrown crosses: std::bad_alloc is NO_MEMORY,
// anything else INITIALIZATION; a failed query leaves no snapshot behind.
template <typename Item, typename Found, typename Out, typename Read, typename Fill>
doca_error_t run_query(const char *function, const std::shared_ptr<System> &system, const QueryRules &rules, Out *out,
		       int *size, Read &&read, Fill &&fill) noexcept
{
	return softdpu::common::api_barrier(
	    function,
	    [&]() -> doca_error_t {
		    std::lock_guard lock(system->mutex());
		    std::vector<Found> found;
		    if (Status status = read(system->guest(), found); !status.ok())
			    return failure(status, function, rules.documented);
		    if (rules.limit != nullptr)
			    truncate(found, system->settings().limits.*rules.limit);
		    auto snapshot = new_snapshot<Item>(system);
		    if (!snapshot)
			    return DOCA_ERROR_NO_MEMORY;
		    for (Found &record : found)
			    fill(snapshot->add(), record);
		    return hand_out(std::move(snapshot), out, size, rules.null_when_empty);
	    },
	    DOCA_ERROR_INITIALIZATION);
}

// A query over a whole system (processes, modules, netscan): checks the arguments and that the
// system is started (not_started is the code the function documents for that).
template <typename Item, typename Found, typename Read, typename Fill>
doca_error_t system_query(const char *function, doca_apsh_system *system, Item ***out, int *size,
			  doca_error_t not_started, const QueryRules &rules, Read &&read, Fill &&fill) noexcept
{
	if (system == nullptr || out == nullptr || size == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!system->system->started()) {
		SDK_LOG_ERR("%s: the system is not started (doca_apsh_system_start)", function);
		return not_started;
	}
	return run_query<Item, Found>(function, system->system, rules, out, size, std::forward<Read>(read),
				      std::forward<Fill>(fill));
}

// A query over one process of a snapshot (threads, libs, vads, envars, injections): read gets the
// process too.
template <typename Item, typename Found, typename Read, typename Fill>
doca_error_t process_query(const char *function, doca_apsh_process *process, Item ***out, int *size,
			   const QueryRules &rules, Read &&read, Fill &&fill) noexcept
{
	if (process == nullptr || out == nullptr || size == nullptr || process->system == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return run_query<Item, Found>(
	    function, process->system, rules, out, size,
	    [&](LinuxSystem &guest, std::vector<Found> &found) { return read(guest, process->p, found); },
	    std::forward<Fill>(fill));
}

// Frees what a query handed out (an array, or the one item of process_parameters_get).
template <typename T> void free_array(T *array, const char *function) noexcept
{
	// take_snapshot locks and erases (no allocation); the snapshot is destroyed here.
	softdpu::common::api_barrier_void(function, [&] {
		std::unique_ptr<SnapshotBase> snapshot = take_snapshot(array, function);
		(void)snapshot;
	});
}

doca_error_t windows_only(doca_apsh_process *process, const void *out, const void *size, const char *function)
{
	if (process == nullptr || out == nullptr || size == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_ERR("%s: supported for Windows systems only; this system runs Linux", function);
	return DOCA_ERROR_NOT_SUPPORTED;
}

std::string netscan_state(const Connection &c)
{
	if (c.protocol == 17)
		return c.state == 1 ? "ESTABLISHED" : "UNCONNECTED";
	static const char *const kTcp[] = {"",          "ESTABLISHED", "SYN_SENT",    "SYN_RECV",   "FIN_WAIT1",
					   "FIN_WAIT2", "TIME_WAIT",   "CLOSE",       "CLOSE_WAIT", "LAST_ACK",
					   "LISTEN",    "CLOSING",     "NEW_SYN_RECV"};
	if (c.state > 0 && c.state < static_cast<int>(sizeof(kTcp) / sizeof(kTcp[0])))
		return kTcp[c.state];
	return "UNKNOWN";
}

void fill_netscan(doca_apsh_netscan &item, Connection &c)
{
	item.protocol = std::string(c.protocol == 17 ? "UDP" : "TCP") + (c.family == 10 ? "v6" : "v4");
	item.state = netscan_state(c);
	item.c = std::move(c);
}

} // namespace

extern "C" {

/* ---- processes ---- */

doca_error_t doca_apsh_processes_get(doca_apsh_system *system, doca_apsh_process ***processes, int *processes_size)
{
	return system_query<doca_apsh_process, Process>(
	    __func__, system, processes, processes_size, DOCA_ERROR_INVALID_VALUE,
	    {.documented = {DOCA_ERROR_NO_MEMORY}, .limit = &Limits::processes},
	    [](LinuxSystem &guest, std::vector<Process> &found) { return guest.processes(found); },
	    [&](doca_apsh_process &item, Process &p) {
		    item.system = system->system;
		    item.p = std::move(p);
	    });
}

void doca_apsh_processes_free(doca_apsh_process **processes)
{
	free_array(processes, __func__);
}

const void *__doca_apsh_process_info_get(doca_apsh_process *process, enum doca_apsh_process_attr attr)
{
	if (process == nullptr)
		return bad_attr("doca_apsh_process_info_get: NULL process;", attr);
	const Process &p = process->p;
	switch (attr) {
	case DOCA_APSH_PROCESS_PID:
		return value(p.pid);
	case DOCA_APSH_PROCESS_PPID:
		return value(p.ppid);
	case DOCA_APSH_PROCESS_COMM:
		return text(p.comm);
	case DOCA_APSH_PROCESS_CPU_TIME:
		return value(p.cpu_time_ns * 1000); // DOCA reports picoseconds
	case DOCA_APSH_PROCESS_LINUX_GID:
		return value(p.gid);
	case DOCA_APSH_PROCESS_LINUX_UID:
		return value(p.uid);
	case DOCA_APSH_PROCESS_LINUX_STATE:
		return value(p.state);
	case DOCA_APSH_PROCESS_LINUX_NS_PID:
		return value(p.ns.pid);
	case DOCA_APSH_PROCESS_LINUX_NS_MNT:
		return value(p.ns.mnt);
	case DOCA_APSH_PROCESS_LINUX_NS_NET:
		return value(p.ns.net);
	default:
		return bad_attr("doca_apsh_process_info_get", attr);
	}
}

const void *softdpu_apsh_process_attr_get(doca_apsh_process *process, enum softdpu_apsh_process_attr attr)
{
	if (process == nullptr)
		return bad_attr("softdpu_apsh_process_info_get: NULL process;", attr);
	const Process &p = process->p;
	switch (attr) {
	case SOFTDPU_APSH_PROCESS_LINUX_NS_UTS:
		return value(p.ns.uts);
	case SOFTDPU_APSH_PROCESS_LINUX_NS_IPC:
		return value(p.ns.ipc);
	case SOFTDPU_APSH_PROCESS_LINUX_NS_USER:
		return value(p.ns.user);
	case SOFTDPU_APSH_PROCESS_LINUX_NS_CGROUP:
		return value(p.ns.cgroup);
	case SOFTDPU_APSH_PROCESS_LINUX_NS_PID_NR:
		return value(p.ns_pid);
	case SOFTDPU_APSH_PROCESS_LINUX_CGROUP:
		return text(p.cgroup);
	case SOFTDPU_APSH_PROCESS_LINUX_CONTAINER_ID:
		return text(p.container_id);
	}
	return bad_attr("softdpu_apsh_process_info_get", attr);
}

/* ---- containers (after DOCA 2.5) ---- */

doca_error_t doca_apsh_containers_get(doca_apsh_system *system, doca_apsh_container ***containers, int *containers_size)
{
	return system_query<doca_apsh_container, Container>(
	    __func__, system, containers, containers_size, DOCA_ERROR_INVALID_VALUE,
	    {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_SUPPORTED}, .null_when_empty = true},
	    [](LinuxSystem &guest, std::vector<Container> &found) { return guest.containers(found); },
	    [&](doca_apsh_container &item, Container &c) {
		    item.system = system->system;
		    item.c = std::move(c);
	    });
}

void doca_apsh_containers_free(doca_apsh_container **containers)
{
	free_array(containers, __func__);
}

const void *__doca_apsh_container_info_get(doca_apsh_container *container, enum doca_apsh_container_attr attr)
{
	if (container == nullptr)
		return bad_attr("doca_apsh_container_info_get: NULL container;", attr);
	switch (attr) {
	case DOCA_APSH_CONTAINER_ID:
		return text(container->c.id);
	}
	return bad_attr("doca_apsh_container_info_get", attr);
}

const void *softdpu_apsh_container_attr_get(doca_apsh_container *container, enum softdpu_apsh_container_attr attr)
{
	if (container == nullptr)
		return bad_attr("softdpu_apsh_container_info_get: NULL container;", attr);
	const Container &c = container->c;
	switch (attr) {
	case SOFTDPU_APSH_CONTAINER_RUNTIME:
		return text(c.runtime);
	case SOFTDPU_APSH_CONTAINER_CGROUP:
		return text(c.cgroup);
	case SOFTDPU_APSH_CONTAINER_NS_PID:
		return value(c.ns.pid);
	case SOFTDPU_APSH_CONTAINER_NS_MNT:
		return value(c.ns.mnt);
	case SOFTDPU_APSH_CONTAINER_NS_NET:
		return value(c.ns.net);
	case SOFTDPU_APSH_CONTAINER_PROCESSES:
		return value(static_cast<uint32_t>(c.processes.size()));
	}
	return bad_attr("softdpu_apsh_container_info_get", attr);
}

doca_error_t doca_apsh_container_processes_get(doca_apsh_container *container, doca_apsh_process ***processes,
					       int *processes_size)
{
	if (container == nullptr || processes == nullptr || processes_size == nullptr || container->system == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	// The container's own snapshot: no guest read, so no failure but running out of memory.
	return run_query<doca_apsh_process, Process>(
	    __func__, container->system, {.documented = {DOCA_ERROR_NO_MEMORY}, .null_when_empty = true}, processes,
	    processes_size,
	    [&](LinuxSystem &, std::vector<Process> &found) {
		    found = container->c.processes;
		    return Status::success();
	    },
	    [&](doca_apsh_process &item, Process &p) {
		    item.system = container->system;
		    item.p = std::move(p);
	    });
}

doca_error_t softdpu_apsh_container_netscan_get(doca_apsh_container *container, doca_apsh_netscan ***connections,
						int *connections_size)
{
	if (container == nullptr || connections == nullptr || connections_size == nullptr ||
	    container->system == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	const Container &c = container->c;
	return run_query<doca_apsh_netscan, Connection>(
	    __func__, container->system, {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_SUPPORTED}}, connections,
	    connections_size,
	    [&](LinuxSystem &guest, std::vector<Connection> &found) {
		    Status status = guest.connections(found);
		    std::erase_if(found, [&](const Connection &connection) {
			    bool own_namespace = std::find(c.net_namespaces.begin(), c.net_namespaces.end(),
							   connection.net_ns) != c.net_namespaces.end();
			    bool own_process = std::any_of(c.processes.begin(), c.processes.end(),
							   [&](const Process &p) { return p.pid == connection.pid; });
			    return !own_namespace && !own_process;
		    });
		    return status;
	    },
	    fill_netscan);
}

/* ---- modules ---- */

doca_error_t doca_apsh_modules_get(doca_apsh_system *system, doca_apsh_module ***modules, int *modules_size)
{
	return system_query<doca_apsh_module, Module>(
	    __func__, system, modules, modules_size, DOCA_ERROR_INVALID_VALUE,
	    {.documented = {DOCA_ERROR_NO_MEMORY}, .limit = &Limits::modules},
	    [](LinuxSystem &guest, std::vector<Module> &found) { return guest.modules(found); },
	    [](doca_apsh_module &item, Module &m) { item.m = std::move(m); });
}

void doca_apsh_module_free(doca_apsh_module **modules)
{
	free_array(modules, __func__);
}

const void *__doca_apsh_module_info_get(doca_apsh_module *module, enum doca_apsh_module_attr attr)
{
	if (module == nullptr)
		return bad_attr("doca_apsh_module_info_get: NULL module;", attr);
	switch (attr) {
	case DOCA_APSH_MODULES_OFFSET:
		return value(module->m.address);
	case DOCA_APSH_MODULES_NAME:
		return text(module->m.name);
	case DOCA_APSH_MODULES_SIZE:
		return value(static_cast<uint32_t>(module->m.size));
	}
	return bad_attr("doca_apsh_module_info_get", attr);
}

/* ---- netscan ---- */

doca_error_t doca_apsh_netscan_get(doca_apsh_system *system, doca_apsh_netscan ***connections, int *connections_size)
{
	return system_query<doca_apsh_netscan, Connection>(
	    __func__, system, connections, connections_size, DOCA_ERROR_BAD_STATE,
	    {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_SUPPORTED}},
	    [](LinuxSystem &guest, std::vector<Connection> &found) { return guest.connections(found); }, fill_netscan);
}

void doca_apsh_netscan_free(doca_apsh_netscan **connections)
{
	free_array(connections, __func__);
}

const void *__doca_apsh_netscan_info_get(doca_apsh_netscan *connection, enum doca_apsh_netscan_attr attr)
{
	if (connection == nullptr)
		return bad_attr("doca_apsh_netscan_info_get: NULL connection;", attr);
	const Connection &c = connection->c;
	switch (attr) {
	case DOCA_APSH_NETSCAN_PID:
		return value(c.pid);
	case DOCA_APSH_NETSCAN_COMM:
		return text(c.comm);
	case DOCA_APSH_NETSCAN_PROTOCOL:
		return text(connection->protocol);
	case DOCA_APSH_NETSCAN_LOCAL_ADDR:
		return text(c.local_addr);
	case DOCA_APSH_NETSCAN_REMOTE_ADDR:
		return text(c.remote_addr);
	case DOCA_APSH_NETSCAN_LOCAL_PORT:
		return value(c.local_port);
	case DOCA_APSH_NETSCAN_REMOTE_PORT:
		return value(c.remote_port);
	case DOCA_APSH_NETSCAN_STATE:
		return text(connection->state);
	case DOCA_APSH_NETSCAN_TIME:
		return text(connection->time);
	case DOCA_APSH_NETSCAN_LINUX_NET_NAMESPACE:
		return value(c.net_ns);
	}
	return bad_attr("doca_apsh_netscan_info_get", attr);
}

/* ---- threads ---- */

doca_error_t doca_apsh_threads_get(doca_apsh_process *process, doca_apsh_thread ***threads, int *threads_size)
{
	return process_query<doca_apsh_thread, Thread>(
	    __func__, process, threads, threads_size,
	    {.documented = {DOCA_ERROR_NO_MEMORY}, .limit = &Limits::threads, .null_when_empty = true},
	    [](LinuxSystem &guest, const Process &p, std::vector<Thread> &found) { return guest.threads(p, found); },
	    [](doca_apsh_thread &item, Thread &t) { item.t = std::move(t); });
}

void doca_apsh_threads_free(doca_apsh_thread **threads)
{
	free_array(threads, __func__);
}

const void *__doca_apsh_thread_info_get(doca_apsh_thread *thread, enum doca_apsh_thread_attr attr)
{
	if (thread == nullptr)
		return bad_attr("doca_apsh_thread_info_get: NULL thread;", attr);
	const Thread &t = thread->t;
	switch (attr) {
	case DOCA_APSH_THREAD_PID:
		return value(t.pid);
	case DOCA_APSH_THREAD_TID:
		return value(t.tid);
	case DOCA_APSH_THREAD_STATE:
		return value(t.state);
	case DOCA_APSH_THREAD_LINUX_PROC_NAME:
		return text(t.process_name);
	case DOCA_APSH_THREAD_LINUX_THREAD_NAME:
		return text(t.thread_name);
	default:
		return bad_attr("doca_apsh_thread_info_get", attr);
	}
}

/* ---- libs ---- */

doca_error_t doca_apsh_libs_get(doca_apsh_process *process, doca_apsh_lib ***libs, int *libs_size)
{
	return process_query<doca_apsh_lib, Library>(
	    __func__, process, libs, libs_size,
	    {.documented = {DOCA_ERROR_NO_MEMORY}, .limit = &Limits::libs, .null_when_empty = true},
	    [](LinuxSystem &guest, const Process &p, std::vector<Library> &found) { return guest.libraries(p, found); },
	    [](doca_apsh_lib &item, Library &l) { item.l = std::move(l); });
}

void doca_apsh_libs_free(doca_apsh_lib **libs)
{
	free_array(libs, __func__);
}

const void *__doca_apsh_lib_info_get(doca_apsh_lib *lib, enum doca_apsh_lib_attr attr)
{
	if (lib == nullptr)
		return bad_attr("doca_apsh_lib_info_get: NULL lib;", attr);
	switch (attr) {
	case DOCA_APSH_LIB_PID:
		return value(lib->l.pid);
	case DOCA_APSH_LIB_LIBRARY_PATH:
		return text(lib->l.path);
	case DOCA_APSH_LIB_LOAD_ADRESS:
	case DOCA_APSH_LIB_LINUX_LOAD_ADRESS:
		return value(lib->l.load_address);
	default:
		return bad_attr("doca_apsh_lib_info_get", attr);
	}
}

/* ---- vads ---- */

doca_error_t doca_apsh_vads_get(doca_apsh_process *process, doca_apsh_vad ***vads, int *vads_size)
{
	return process_query<doca_apsh_vad, MemoryArea>(
	    __func__, process, vads, vads_size,
	    {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_FOUND},
	     .limit = &Limits::vads,
	     .null_when_empty = true},
	    [](LinuxSystem &guest, const Process &p, std::vector<MemoryArea> &found) {
		    return guest.memory_areas(p, found);
	    },
	    [](doca_apsh_vad &item, MemoryArea &a) {
		    item.protection = protection_string(a.protection);
		    item.a = std::move(a);
	    });
}

void doca_apsh_vads_free(doca_apsh_vad **vads)
{
	free_array(vads, __func__);
}

const void *__doca_apsh_vad_info_get(doca_apsh_vad *vad, enum doca_apsh_vad_attr attr)
{
	if (vad == nullptr)
		return bad_attr("doca_apsh_vad_info_get: NULL vad;", attr);
	const MemoryArea &a = vad->a;
	switch (attr) {
	case DOCA_APSH_VMA_PID:
		return value(a.pid);
	case DOCA_APSH_VMA_OFFSET:
		return value(a.offset);
	case DOCA_APSH_VMA_PROTECTION:
		return text(vad->protection);
	case DOCA_APSH_VMA_VM_START:
		return value(a.start);
	case DOCA_APSH_VMA_VM_END:
		return value(a.end);
	case DOCA_APSH_VMA_PROCESS_NAME:
		return text(a.process_name);
	case DOCA_APSH_VMA_FILE_PATH:
		return text(a.file_path);
	default:
		return bad_attr("doca_apsh_vad_info_get", attr);
	}
}

/* ---- envars (Linux: a softdpu extension) ---- */

doca_error_t doca_apsh_envars_get(doca_apsh_process *process, doca_apsh_envar ***envars, int *envars_size)
{
	return process_query<doca_apsh_envar, EnvVar>(
	    __func__, process, envars, envars_size, {.documented = {DOCA_ERROR_NO_MEMORY}, .null_when_empty = true},
	    [](LinuxSystem &guest, const Process &p, std::vector<EnvVar> &found) { return guest.envars(p, found); },
	    [](doca_apsh_envar &item, EnvVar &e) { item.e = std::move(e); });
}

void doca_apsh_envars_free(doca_apsh_envar **envars)
{
	free_array(envars, __func__);
}

const void *__doca_apsh_envar_info_get(doca_apsh_envar *envar, enum doca_apsh_envar_attr attr)
{
	if (envar == nullptr)
		return bad_attr("doca_apsh_envar_info_get: NULL envar;", attr);
	switch (attr) {
	case DOCA_APSH_ENVARS_PID:
		return value(envar->e.pid);
	case DOCA_APSH_ENVARS_VARIABLE:
		return text(envar->e.variable);
	case DOCA_APSH_ENVARS_VALUE:
		return text(envar->e.value);
	default:
		return bad_attr("doca_apsh_envar_info_get", attr);
	}
}

/* ---- injection detection (Linux: a softdpu extension) ---- */

doca_error_t doca_apsh_injection_detect_get(doca_apsh_process *process,
					    doca_apsh_injection_detect ***suspected_injections,
					    int *suspected_injections_size)
{
	return process_query<doca_apsh_injection_detect, Injection>(
	    __func__, process, suspected_injections, suspected_injections_size,
	    {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_FOUND}, .null_when_empty = true},
	    [](LinuxSystem &guest, const Process &p, std::vector<Injection> &found) {
		    return guest.injections(p, found);
	    },
	    [](doca_apsh_injection_detect &item, Injection &i) {
		    item.protection = protection_string(i.area.protection);
		    item.i = std::move(i);
	    });
}

void doca_apsh_injection_detect_free(doca_apsh_injection_detect **suspected_injections)
{
	free_array(suspected_injections, __func__);
}

const void *__doca_apsh_injection_detect_info_get(doca_apsh_injection_detect *suspected_injection,
						  enum doca_apsh_injection_detect_attr attr)
{
	if (suspected_injection == nullptr)
		return bad_attr("doca_apsh_injection_detect_info_get: NULL injection;", attr);
	const Injection &i = suspected_injection->i;
	switch (attr) {
	case DOCA_APSH_INJECTION_DETECT_PID:
		return value(i.pid);
	case DOCA_APSH_INJECTION_DETECT_VAD_START:
		return value(i.area.start);
	case DOCA_APSH_INJECTION_DETECT_VAD_END:
		return value(i.area.end);
	case DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION:
		return text(suspected_injection->protection);
	case DOCA_APSH_INJECTION_DETECT_VAD_TAG:
		return text(suspected_injection->tag);
	case DOCA_APSH_INJECTION_DETECT_VAD_FILE_PATH:
		return text(i.area.file_path);
	case DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START:
		return value(i.suspected_start);
	case DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_END:
		return value(i.suspected_end);
	}
	return bad_attr("doca_apsh_injection_detect_info_get", attr);
}

/* ---- process parameters (Linux: a softdpu extension) ---- */

doca_error_t doca_apsh_process_parameters_get(doca_apsh_process *process,
					      doca_apsh_process_parameters **process_parameters)
{
	if (process == nullptr || process_parameters == nullptr || process->system == nullptr) {
		SDK_LOG_ERR("doca_apsh_process_parameters_get: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return run_query<doca_apsh_process_parameters, ProcessParameters>(
	    __func__, process->system, {.documented = {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_BAD_STATE}}, process_parameters,
	    nullptr,
	    [&](LinuxSystem &guest, std::vector<ProcessParameters> &found) {
		    found.resize(1);
		    return guest.parameters(process->p, found.front());
	    },
	    [](doca_apsh_process_parameters &item, ProcessParameters &p) { item.p = std::move(p); });
}

void doca_apsh_process_parameters_free(doca_apsh_process_parameters *process_parameters)
{
	free_array(process_parameters, __func__);
}

const void *__doca_apsh_process_parameters_info_get(doca_apsh_process_parameters *process_parameters,
						    enum doca_apsh_process_parameters_attr attr)
{
	if (process_parameters == nullptr)
		return bad_attr("doca_apsh_process_parameters_info_get: NULL parameters;", attr);
	const ProcessParameters &p = process_parameters->p;
	switch (attr) {
	case DOCA_APSH_PROCESS_PARAMETERS_PID:
		return value(p.pid);
	case DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE:
		return text(p.cmd_line);
	case DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR:
		return value(p.image_base);
	case DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH:
		return text(p.image_path);
	}
	return bad_attr("doca_apsh_process_parameters_info_get", attr);
}

/* ---- Windows only ---- */

doca_error_t doca_apsh_privileges_get(doca_apsh_process *process, doca_apsh_privilege ***privileges,
				      int *privileges_size)
{
	return windows_only(process, privileges, privileges_size, __func__);
}

void doca_apsh_privileges_free(doca_apsh_privilege **privileges)
{
	free_array(privileges, __func__);
}

const void *__doca_apsh_privilege_info_get(doca_apsh_privilege *privilege, enum doca_apsh_privilege_attr attr)
{
	(void)privilege;
	return bad_attr("doca_apsh_privilege_info_get", attr);
}

doca_error_t doca_apsh_handles_get(doca_apsh_process *process, doca_apsh_handle ***handles, int *handles_size)
{
	return windows_only(process, handles, handles_size, __func__);
}

void doca_apsh_handles_free(doca_apsh_handle **handles)
{
	free_array(handles, __func__);
}

const void *__doca_apsh_handle_info_get(doca_apsh_handle *handle, enum doca_apsh_handle_attr attr)
{
	(void)handle;
	return bad_attr("doca_apsh_handle_info_get", attr);
}

doca_error_t doca_apsh_ldrmodules_get(doca_apsh_process *process, doca_apsh_ldrmodule ***ldrmodules,
				      int *ldrmodules_size)
{
	return windows_only(process, ldrmodules, ldrmodules_size, __func__);
}

void doca_apsh_ldrmodules_free(doca_apsh_ldrmodule **ldrmodules)
{
	free_array(ldrmodules, __func__);
}

const void *__doca_apsh_ldrmodule_info_get(doca_apsh_ldrmodule *ldrmodule, enum doca_apsh_ldrmodule_attr attr)
{
	(void)ldrmodule;
	return bad_attr("doca_apsh_ldrmodule_info_get", attr);
}

doca_error_t doca_apsh_sids_get(doca_apsh_process *process, doca_apsh_sid ***sids, int *sids_size)
{
	return windows_only(process, sids, sids_size, __func__);
}

void doca_apsh_sids_free(doca_apsh_sid **sids)
{
	free_array(sids, __func__);
}

const void *__doca_apsh_sid_info_get(doca_apsh_sid *sid, enum doca_apsh_sid_attr attr)
{
	(void)sid;
	return bad_attr("doca_apsh_sid_info_get", attr);
}

} // extern "C"
