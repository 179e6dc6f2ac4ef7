// The continuous watch behind softdpu_apsh_watch (softdpu/apsh.h; C forwarders in watch_api.cpp).
//
// A WatchState is what one poll saw, each kind keyed by its identity (softdpu/apsh.h): processes by
// pid + start time (+ task address), modules by name + address, listening sockets by network
// namespace + protocol + family + address + port, attestation failures, YARA matches and injections
// by their process and address. diff_states compares two states; Watch reads the guest into a state
// (reusing its buffers) and keeps the last one that was read completely.
#pragma once

#include "apsh/api/exec_hash.hpp"
#include "apsh/api/system.hpp"
#include "apsh/api/yara_scan.hpp"
#include "apsh/introspection.hpp"

#include <softdpu/apsh.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace softdpu::apsh::api {

struct WatchEvent {
	softdpu_apsh_watch_event_type type = SOFTDPU_APSH_WATCH_PROCESS_STARTED;
	uint64_t timestamp_ns = 0;
	uint32_t pid = 0;
	uint32_t ppid = 0;
	uint64_t start_time_ns = 0;
	std::string comm;
	bool kernel_thread = false;
	std::string name;
	uint64_t address = 0;
	uint64_t size = 0;
	std::string path;
	std::string protection;
	uint32_t pages_present = 0;
	uint32_t matching_pages = 0;
	std::string protocol;
	int ip_version = 0;
	std::string local_addr;
	uint16_t local_port = 0;
	uint32_t net_ns = 0;
};

// A process's identity: a pid reused by another process has another start time (and, where the
// kernel does not record one, usually another task_struct).
struct ProcessKey {
	uint32_t pid = 0;
	uint64_t start_time_ns = 0;
	uint64_t task = 0;
	auto operator<=>(const ProcessKey &) const = default;
};

struct ModuleKey {
	std::string name;
	uint64_t address = 0;
	auto operator<=>(const ModuleKey &) const = default;
};

struct SocketKey {
	uint32_t net_ns = 0;
	int protocol = 0;
	int family = 0;
	std::string local_addr;
	uint16_t local_port = 0;
	auto operator<=>(const SocketKey &) const = default;
};

// Something found in a process at an address (an area, a YARA window); name: the rule, if any.
struct FindingKey {
	ProcessKey process;
	uint64_t address = 0;
	std::string name;
	auto operator<=>(const FindingKey &) const = default;
};

struct WatchState {
	std::map<ProcessKey, WatchEvent> processes;
	std::map<ModuleKey, WatchEvent> modules;
	std::map<SocketKey, WatchEvent> sockets;
	std::map<FindingKey, WatchEvent> attestation_failures;
	std::map<FindingKey, WatchEvent> yara_matches;
	std::map<FindingKey, WatchEvent> injections;

	void clear();
};

// The events that lead from `before` to `after` (see softdpu_apsh_watch_poll for the order), each
// stamped with timestamp_ns. Only kinds in `kinds` (SOFTDPU_APSH_WATCH_KIND_* bits) are compared.
void diff_states(const WatchState &before, const WatchState &after, uint32_t kinds, uint64_t timestamp_ns,
		 std::vector<WatchEvent> &events);

// The identities of guest records, and the events they stand for (timestamp left 0).
ProcessKey process_key(const Process &process);
WatchEvent process_event(const Process &process);
WatchEvent module_event(const Module &module);
// Whether the connection is a listening one (TCP LISTEN, or UDP bound and unconnected).
bool is_listening(const Connection &connection);
SocketKey socket_key(const Connection &connection);
WatchEvent socket_event(const Connection &connection);

class Watch {
public:
	Watch(std::shared_ptr<System> system, uint32_t kinds) : system_(std::move(system)), kinds_(kinds) {}

	// The hash map for attestation (load_exec_hash_map's errors).
	Status set_hash_map(const std::string &path);
	// The YARA rules (filter: rule names that count; empty: all) and scan type (checked by the caller).
	void set_yara(std::shared_ptr<YaraRules> rules, RuleFilter filter, uint64_t scan_type);

	// BAD_STATE when a watched kind lacks its hash map or rules.
	Status ready() const;
	// Reads the guest and appends the changes since the last successful poll to events (none on the
	// first). On error the state is that of the last successful poll. Takes the system's lock.
	Status poll(std::vector<WatchEvent> &events);

	uint32_t kinds() const noexcept { return kinds_; }

private:
	// Reads the guest into next_ (the caller holds the system's lock).
	Status read(LinuxSystem &guest);
	Status attest(LinuxSystem &guest, const Process &process, const WatchEvent &identity);
	Status scan_yara(LinuxSystem &guest, const Process &process, const WatchEvent &identity);

	std::shared_ptr<System> system_;
	uint32_t kinds_;
	std::optional<ExecHashMap> hash_map_;
	std::shared_ptr<YaraRules> yara_rules_;
	RuleFilter yara_filter_;
	bool yara_all_areas_ = true;
	bool have_state_ = false;
	WatchState state_;
	WatchState next_;
	// Buffers reused from poll to poll.
	std::vector<Process> processes_;
	std::vector<Module> modules_;
	std::vector<Connection> connections_;
	std::vector<Injection> injections_;
	std::vector<MemoryArea> areas_;
};

} // namespace softdpu::apsh::api
