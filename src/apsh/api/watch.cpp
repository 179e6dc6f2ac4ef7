// The continuous watch (watch.hpp).
#include "apsh/api/watch.hpp"

#include "apsh/api/objects.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <ctime>
#include <mutex>

namespace softdpu::apsh::api {

namespace {

constexpr int kTcpListen = 10;
constexpr int kTcpClose = 7;
// Most YARA matches one process contributes to a poll.
constexpr size_t kMaxYaraMatchesPerProcess = 4096;

uint64_t realtime_ns()
{
	timespec now{};
	::clock_gettime(CLOCK_REALTIME, &now);
	return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// Appends, with the given type, what is in `from` and not in `other`.
template <typename Map>
void added(const Map &from, const Map &other, softdpu_apsh_watch_event_type type, uint64_t timestamp_ns,
	   std::vector<WatchEvent> &events)
{
	for (const auto &[key, event] : from) {
		if (other.count(key) != 0)
			continue;
		events.push_back(event);
		events.back().type = type;
		events.back().timestamp_ns = timestamp_ns;
	}
}

// The process part of a finding's event.
WatchEvent finding_event(const WatchEvent &process, softdpu_apsh_watch_event_type type)
{
	WatchEvent event;
	event.type = type;
	event.pid = process.pid;
	event.ppid = process.ppid;
	event.start_time_ns = process.start_time_ns;
	event.comm = process.comm;
	event.kernel_thread = process.kernel_thread;
	return event;
}

// Not-found (the process exited meanwhile) and bad-state (no user memory) end one process's reads
// without failing the poll.
bool process_gone(const Status &status)
{
	return status.code == DOCA_ERROR_NOT_FOUND || status.code == DOCA_ERROR_BAD_STATE;
}

} // namespace

void WatchState::clear()
{
	processes.clear();
	modules.clear();
	sockets.clear();
	attestation_failures.clear();
	yara_matches.clear();
	injections.clear();
}

void diff_states(const WatchState &before, const WatchState &after, uint32_t kinds, uint64_t timestamp_ns,
		 std::vector<WatchEvent> &events)
{
	const bool processes = (kinds & SOFTDPU_APSH_WATCH_KIND_PROCESSES) != 0;
	const bool modules = (kinds & SOFTDPU_APSH_WATCH_KIND_MODULES) != 0;
	const bool sockets = (kinds & SOFTDPU_APSH_WATCH_KIND_SOCKETS) != 0;
	if (processes)
		added(after.processes, before.processes, SOFTDPU_APSH_WATCH_PROCESS_STARTED, timestamp_ns, events);
	if (modules)
		added(after.modules, before.modules, SOFTDPU_APSH_WATCH_MODULE_LOADED, timestamp_ns, events);
	if (sockets)
		added(after.sockets, before.sockets, SOFTDPU_APSH_WATCH_SOCKET_LISTENING, timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_ATTESTATION)
		added(after.attestation_failures, before.attestation_failures, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE,
		      timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_YARA)
		added(after.yara_matches, before.yara_matches, SOFTDPU_APSH_WATCH_YARA_MATCH, timestamp_ns, events);
	if (kinds & SOFTDPU_APSH_WATCH_KIND_INJECTIONS)
		added(after.injections, before.injections, SOFTDPU_APSH_WATCH_INJECTION, timestamp_ns, events);
	if (processes)
		added(before.processes, after.processes, SOFTDPU_APSH_WATCH_PROCESS_EXITED, timestamp_ns, events);
	if (modules)
		added(before.modules, after.modules, SOFTDPU_APSH_WATCH_MODULE_UNLOADED, timestamp_ns, events);
	if (sockets)
		added(before.sockets, after.sockets, SOFTDPU_APSH_WATCH_SOCKET_CLOSED, timestamp_ns, events);
}

ProcessKey process_key(const Process &process)
{
	return {process.pid, process.start_time_ns, process.task};
}

WatchEvent process_event(const Process &process)
{
	WatchEvent event;
	event.pid = process.pid;
	event.ppid = process.ppid;
	event.start_time_ns = process.start_time_ns;
	event.comm = process.comm;
	event.kernel_thread = process.is_kernel_thread;
	return event;
}

WatchEvent module_event(const Module &module)
{
	WatchEvent event;
	event.type = SOFTDPU_APSH_WATCH_MODULE_LOADED;
	event.name = module.name;
	event.address = module.address;
	event.size = module.size;
	return event;
}

bool is_listening(const Connection &connection)
{
	if (connection.protocol == IPPROTO_TCP)
		return connection.state == kTcpListen;
	return connection.protocol == IPPROTO_UDP && connection.state == kTcpClose && connection.remote_port == 0;
}

SocketKey socket_key(const Connection &connection)
{
	return {connection.net_ns, connection.protocol, connection.family, connection.local_addr,
		connection.local_port};
}

WatchEvent socket_event(const Connection &connection)
{
	WatchEvent event;
	event.type = SOFTDPU_APSH_WATCH_SOCKET_LISTENING;
	event.pid = connection.pid;
	event.comm = connection.comm;
	event.protocol = connection.protocol == IPPROTO_TCP ? "tcp" : "udp";
	event.ip_version = connection.family == AF_INET6 ? 6 : 4;
	event.local_addr = connection.local_addr;
	event.local_port = connection.local_port;
	event.net_ns = connection.net_ns;
	return event;
}

Status Watch::set_hash_map(const std::string &path)
{
	ExecHashMap map;
	if (Status status = load_exec_hash_map(path, map); !status.ok())
		return status;
	hash_map_ = std::move(map);
	return Status::success();
}

void Watch::set_yara(std::shared_ptr<YaraRules> rules, RuleFilter filter, uint64_t scan_type)
{
	yara_rules_ = std::move(rules);
	yara_filter_ = std::move(filter);
	yara_all_areas_ = (scan_type & DOCA_APSH_YARA_SCAN_VMA) != 0;
}

Status Watch::ready() const
{
	if ((kinds_ & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) && !hash_map_)
		return {DOCA_ERROR_BAD_STATE, "attestation is watched but no hash map was set"};
	if ((kinds_ & SOFTDPU_APSH_WATCH_KIND_YARA) && !yara_rules_)
		return {DOCA_ERROR_BAD_STATE, "YARA is watched but no rules were set"};
	return Status::success();
}

Status Watch::poll(std::vector<WatchEvent> &events)
{
	if (Status status = ready(); !status.ok())
		return status;
	std::lock_guard lock(system_->mutex());
	next_.clear();
	if (Status status = read(system_->guest()); !status.ok())
		return status;
	if (have_state_)
		diff_states(state_, next_, kinds_, realtime_ns(), events);
	std::swap(state_, next_);
	have_state_ = true;
	return Status::success();
}

Status Watch::read(LinuxSystem &guest)
{
	constexpr uint32_t per_process =
	    SOFTDPU_APSH_WATCH_KIND_ATTESTATION | SOFTDPU_APSH_WATCH_KIND_YARA | SOFTDPU_APSH_WATCH_KIND_INJECTIONS;
	const Limits &limits = system_->settings().limits;
	if (kinds_ & (SOFTDPU_APSH_WATCH_KIND_PROCESSES | per_process)) {
		processes_.clear();
		if (Status status = guest.processes(processes_); !status.ok())
			return status;
		if (processes_.size() > limits.processes)
			processes_.resize(limits.processes);
		for (const Process &process : processes_)
			next_.processes.emplace(process_key(process), process_event(process));
	}
	if (kinds_ & SOFTDPU_APSH_WATCH_KIND_MODULES) {
		modules_.clear();
		if (Status status = guest.modules(modules_); !status.ok())
			return status;
		for (const Module &module : modules_)
			next_.modules.emplace(ModuleKey{module.name, module.address}, module_event(module));
	}
	if (kinds_ & SOFTDPU_APSH_WATCH_KIND_SOCKETS) {
		connections_.clear();
		if (Status status = guest.connections(connections_); !status.ok())
			return status;
		for (const Connection &connection : connections_)
			if (is_listening(connection))
				next_.sockets.emplace(socket_key(connection), socket_event(connection));
	}
	if (kinds_ & per_process) {
		for (const Process &process : processes_) {
			if (process.is_kernel_thread)
				continue;
			const WatchEvent identity = process_event(process);
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_INJECTIONS) {
				injections_.clear();
				Status status = guest.injections(process, injections_);
				if (process_gone(status))
					continue;
				if (!status.ok())
					return status;
				for (const Injection &injection : injections_) {
					WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_INJECTION);
					event.address = injection.suspected_start;
					event.size = injection.suspected_end - injection.suspected_start;
					event.path = injection.area.file_path;
					event.protection = protection_string(injection.area.protection);
					next_.injections.emplace(FindingKey{process_key(process), event.address, {}},
								 std::move(event));
				}
			}
			if (kinds_ & (SOFTDPU_APSH_WATCH_KIND_ATTESTATION | SOFTDPU_APSH_WATCH_KIND_YARA)) {
				areas_.clear();
				Status status = guest.memory_areas(process, areas_);
				if (process_gone(status))
					continue;
				if (!status.ok())
					return status;
			}
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_ATTESTATION)
				if (Status status = attest(guest, process, identity); !status.ok())
					return status;
			if (kinds_ & SOFTDPU_APSH_WATCH_KIND_YARA)
				if (Status status = scan_yara(guest, process, identity); !status.ok())
					return status;
		}
	}
	// A memory image that shrank (or failed to read) reads as absent pages: an error, not a result.
	return guest.source_failure();
}

Status Watch::attest(LinuxSystem &guest, const Process &process, const WatchEvent &identity)
{
	std::array<uint8_t, kPageSize> page;
	uint32_t attested = 0;
	for (const MemoryArea &area : areas_) {
		if (!(area.protection & 4) || area.end <= area.start || area.file_path.empty())
			continue;
		if (attested++ >= system_->settings().hashtest_limit)
			break;
		const ExecHashFile *file = hash_map_->find(area.file_path);
		if (file == nullptr)
			continue;
		uint32_t hashed = 0, present = 0, matching = 0;
		const uint64_t pages = (area.end - area.start + kPageSize - 1) / kPageSize;
		for (uint64_t i = 0; i < pages; ++i) {
			auto expected = file->pages.find(area.offset + i * kPageSize);
			if (expected != file->pages.end())
				++hashed;
			if (!guest.read_user_page(process, area.start + i * kPageSize, page))
				continue;
			++present;
			if (expected != file->pages.end() && hash_page(page) == expected->second)
				++matching;
		}
		// As attest's verdict "modified": a page in memory that the map does not vouch for.
		if (hashed == 0 || present == 0 || matching >= present)
			continue;
		WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE);
		event.address = area.start;
		event.size = area.end - area.start;
		event.path = area.file_path;
		event.protection = protection_string(area.protection);
		event.pages_present = present;
		event.matching_pages = matching;
		next_.attestation_failures.emplace(FindingKey{process_key(process), area.start, {}}, std::move(event));
	}
	return Status::success();
}

Status Watch::scan_yara(LinuxSystem &guest, const Process &process, const WatchEvent &identity)
{
	WindowScanner scanner(yara_rules_, yara_filter_, system_->settings().window, kMaxYaraMatchesPerProcess);
	if (Status status = scanner.ok(); !status.ok())
		return status;
	if (Status status = scan_process_areas(guest, process, areas_, yara_all_areas_, scanner); !status.ok())
		return process_gone(status) ? Status::success() : status;
	for (YaraHit &hit : scanner.hits()) {
		WatchEvent event = finding_event(identity, SOFTDPU_APSH_WATCH_YARA_MATCH);
		event.name = std::move(hit.rule);
		event.address = hit.window_addr;
		event.size = hit.window_len;
		FindingKey key{process_key(process), event.address, event.name};
		next_.yara_matches.emplace(std::move(key), std::move(event));
	}
	return Status::success();
}

} // namespace softdpu::apsh::api
