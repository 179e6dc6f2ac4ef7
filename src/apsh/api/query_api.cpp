// doca_apsh.h: the queries (snapshots), their free functions and the info getters.
#include <doca_apsh.h>

#include "apsh/api/exec_hash.hpp"
#include "apsh/api/snapshots.hpp"
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

// Validates a system query and returns its started state, or an error.
doca_error_t system_for_query(doca_apsh_system *system, const void *out, const void *size, const char *function,
			      doca_error_t not_started, std::shared_ptr<SystemState> &state)
{
	if (system == nullptr || out == nullptr || size == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!system->state->started()) {
		SDK_LOG_ERR("%s: the system is not started (doca_apsh_system_start)", function);
		return not_started;
	}
	state = system->state;
	return DOCA_SUCCESS;
}

doca_error_t process_for_query(doca_apsh_process *process, const void *out, const void *size, const char *function)
{
	if (process == nullptr || out == nullptr || size == nullptr || process->system == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

template <typename T> std::unique_ptr<Snapshot<T>> new_snapshot(std::shared_ptr<SystemState> system)
{
	if (allocation_should_fail())
		return nullptr;
	auto snapshot = std::unique_ptr<Snapshot<T>>(new (std::nothrow) Snapshot<T>());
	if (snapshot)
		snapshot->system = std::move(system);
	return snapshot;
}

template <typename T> void free_array(T **array, const char *function)
{
	std::unique_ptr<SnapshotBase> snapshot = take_snapshot(array, function);
	(void)snapshot;
}

template <typename T> void truncate(std::vector<T> &items, uint32_t limit)
{
	if (items.size() > limit)
		items.resize(limit);
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

} // namespace

extern "C" {

/* ---- processes ---- */

doca_error_t doca_apsh_processes_get(doca_apsh_system *system, doca_apsh_process ***processes, int *processes_size)
{
	std::shared_ptr<SystemState> state;
	if (doca_error_t r =
		system_for_query(system, processes, processes_size, __func__, DOCA_ERROR_INVALID_VALUE, state);
	    r != DOCA_SUCCESS)
		return r;
	std::lock_guard lock(state->mutex);
	std::vector<Process> found;
	if (Status status = state->guest->processes(found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY});
	truncate(found, state->settings.limits.processes);
	auto snapshot = new_snapshot<doca_apsh_process>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Process &p : found) {
		doca_apsh_process &item = snapshot->add();
		item.system = state;
		item.p = std::move(p);
	}
	return publish(std::move(snapshot), processes, processes_size, false);
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
	default:
		return bad_attr("doca_apsh_process_info_get", attr);
	}
}

/* ---- modules ---- */

doca_error_t doca_apsh_modules_get(doca_apsh_system *system, doca_apsh_module ***modules, int *modules_size)
{
	std::shared_ptr<SystemState> state;
	if (doca_error_t r = system_for_query(system, modules, modules_size, __func__, DOCA_ERROR_INVALID_VALUE, state);
	    r != DOCA_SUCCESS)
		return r;
	std::lock_guard lock(state->mutex);
	std::vector<Module> found;
	if (Status status = state->guest->modules(found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY});
	truncate(found, state->settings.limits.modules);
	auto snapshot = new_snapshot<doca_apsh_module>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Module &m : found)
		snapshot->add().m = std::move(m);
	return publish(std::move(snapshot), modules, modules_size, false);
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
	std::shared_ptr<SystemState> state;
	if (doca_error_t r =
		system_for_query(system, connections, connections_size, __func__, DOCA_ERROR_BAD_STATE, state);
	    r != DOCA_SUCCESS)
		return r;
	std::lock_guard lock(state->mutex);
	std::vector<Connection> found;
	if (Status status = state->guest->connections(found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_SUPPORTED});
	auto snapshot = new_snapshot<doca_apsh_netscan>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Connection &c : found) {
		doca_apsh_netscan &item = snapshot->add();
		item.protocol = std::string(c.protocol == 17 ? "UDP" : "TCP") + (c.family == 10 ? "v6" : "v4");
		item.state = netscan_state(c);
		item.c = std::move(c);
	}
	return publish(std::move(snapshot), connections, connections_size, false);
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
	}
	return bad_attr("doca_apsh_netscan_info_get", attr);
}

/* ---- threads ---- */

doca_error_t doca_apsh_threads_get(doca_apsh_process *process, doca_apsh_thread ***threads, int *threads_size)
{
	if (doca_error_t r = process_for_query(process, threads, threads_size, __func__); r != DOCA_SUCCESS)
		return r;
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	std::vector<Thread> found;
	if (Status status = state->guest->threads(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY});
	truncate(found, state->settings.limits.threads);
	auto snapshot = new_snapshot<doca_apsh_thread>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Thread &t : found)
		snapshot->add().t = std::move(t);
	return publish(std::move(snapshot), threads, threads_size, true);
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
	if (doca_error_t r = process_for_query(process, libs, libs_size, __func__); r != DOCA_SUCCESS)
		return r;
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	std::vector<Library> found;
	if (Status status = state->guest->libraries(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY});
	truncate(found, state->settings.limits.libs);
	auto snapshot = new_snapshot<doca_apsh_lib>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Library &l : found)
		snapshot->add().l = std::move(l);
	return publish(std::move(snapshot), libs, libs_size, true);
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
	if (doca_error_t r = process_for_query(process, vads, vads_size, __func__); r != DOCA_SUCCESS)
		return r;
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	std::vector<MemoryArea> found;
	if (Status status = state->guest->memory_areas(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_FOUND});
	truncate(found, state->settings.limits.vads);
	auto snapshot = new_snapshot<doca_apsh_vad>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (MemoryArea &a : found) {
		doca_apsh_vad &item = snapshot->add();
		item.protection = protection_string(a.protection);
		item.a = std::move(a);
	}
	return publish(std::move(snapshot), vads, vads_size, true);
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
	if (doca_error_t r = process_for_query(process, envars, envars_size, __func__); r != DOCA_SUCCESS)
		return r;
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	std::vector<EnvVar> found;
	if (Status status = state->guest->envars(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY});
	auto snapshot = new_snapshot<doca_apsh_envar>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (EnvVar &e : found)
		snapshot->add().e = std::move(e);
	return publish(std::move(snapshot), envars, envars_size, true);
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
	if (doca_error_t r = process_for_query(process, suspected_injections, suspected_injections_size, __func__);
	    r != DOCA_SUCCESS)
		return r;
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	std::vector<Injection> found;
	if (Status status = state->guest->injections(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_NOT_FOUND});
	auto snapshot = new_snapshot<doca_apsh_injection_detect>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	for (Injection &i : found) {
		doca_apsh_injection_detect &item = snapshot->add();
		item.protection = protection_string(i.area.protection);
		item.i = std::move(i);
	}
	return publish(std::move(snapshot), suspected_injections, suspected_injections_size, true);
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
	std::shared_ptr<SystemState> state = process->system;
	std::lock_guard lock(state->mutex);
	ProcessParameters found;
	if (Status status = state->guest->parameters(process->p, found); !status.ok())
		return failure(status, __func__, {DOCA_ERROR_NO_MEMORY, DOCA_ERROR_BAD_STATE});
	auto snapshot = new_snapshot<doca_apsh_process_parameters>(state);
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	doca_apsh_process_parameters &item = snapshot->add();
	item.p = std::move(found);
	*process_parameters = &item;
	register_snapshot(&item, std::move(snapshot));
	return DOCA_SUCCESS;
}

void doca_apsh_process_parameters_free(doca_apsh_process_parameters *process_parameters)
{
	std::unique_ptr<SnapshotBase> snapshot = take_snapshot(process_parameters, __func__);
	(void)snapshot;
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
