// softdpu apsh watch (apsh_watch.hpp): a baseline poll, a "watch-started" line, then one JSON line per
// change at every interval, through the public softdpu_apsh_watch_* calls only. docs/apsh-cli.md
// describes the events.
#include "apsh_watch.hpp"

#include "commands.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace softdpu::cli {

namespace {

using Json = nlohmann::ordered_json;

volatile std::sig_atomic_t stop_signal = 0;

void on_stop_signal(int signal)
{
	stop_signal = signal;
}

struct KindName {
	const char *name;
	uint32_t kind;
};

constexpr KindName kKindNames[] = {
    {"process", SOFTDPU_APSH_WATCH_KIND_PROCESSES}, {"module", SOFTDPU_APSH_WATCH_KIND_MODULES},
    {"socket", SOFTDPU_APSH_WATCH_KIND_SOCKETS},    {"attest", SOFTDPU_APSH_WATCH_KIND_ATTESTATION},
    {"yara", SOFTDPU_APSH_WATCH_KIND_YARA},         {"injection", SOFTDPU_APSH_WATCH_KIND_INJECTIONS},
    {"all", SOFTDPU_APSH_WATCH_KIND_ALL},           {"default", SOFTDPU_APSH_WATCH_KIND_DEFAULT},
};

const char *type_name(softdpu_apsh_watch_event_type type)
{
	switch (type) {
	case SOFTDPU_APSH_WATCH_PROCESS_STARTED:
		return "process-started";
	case SOFTDPU_APSH_WATCH_PROCESS_EXITED:
		return "process-exited";
	case SOFTDPU_APSH_WATCH_MODULE_LOADED:
		return "module-loaded";
	case SOFTDPU_APSH_WATCH_MODULE_UNLOADED:
		return "module-unloaded";
	case SOFTDPU_APSH_WATCH_SOCKET_LISTENING:
		return "socket-listening";
	case SOFTDPU_APSH_WATCH_SOCKET_CLOSED:
		return "socket-closed";
	case SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE:
		return "attestation-failure";
	case SOFTDPU_APSH_WATCH_YARA_MATCH:
		return "yara-match";
	case SOFTDPU_APSH_WATCH_INJECTION:
		return "injection";
	}
	return "unknown";
}

std::string hex(uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

// "2026-11-26T18:45:00.123Z"
std::string utc_time(uint64_t ns)
{
	const std::time_t seconds = static_cast<std::time_t>(ns / 1000000000u);
	std::tm tm{};
	::gmtime_r(&seconds, &tm);
	char text[40];
	const size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	std::snprintf(text + length, sizeof(text) - length, ".%03uZ", static_cast<unsigned>(ns / 1000000u % 1000u));
	return text;
}

uint64_t realtime_ns()
{
	timespec now{};
	::clock_gettime(CLOCK_REALTIME, &now);
	return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

Json header(const char *type, uint64_t ns)
{
	Json line;
	line["type"] = type;
	line["time"] = utc_time(ns);
	line["timestamp_ns"] = ns;
	return line;
}

void print(const Json &line)
{
	const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace);
	std::fprintf(stdout, "%s\n", text.c_str());
}

void add_process(Json &line, const softdpu_apsh_watch_event &event)
{
	line["pid"] = event.pid;
	line["comm"] = event.comm;
	line["start_time_ns"] = event.start_time_ns;
}

// One event as a JSON object: its type, time and the fields that identify it.
Json event_json(const softdpu_apsh_watch_event &event)
{
	Json line = header(type_name(event.type), event.timestamp_ns);
	switch (event.type) {
	case SOFTDPU_APSH_WATCH_PROCESS_STARTED:
	case SOFTDPU_APSH_WATCH_PROCESS_EXITED:
		add_process(line, event);
		line["ppid"] = event.ppid;
		line["kernel_thread"] = event.kernel_thread;
		break;
	case SOFTDPU_APSH_WATCH_MODULE_LOADED:
	case SOFTDPU_APSH_WATCH_MODULE_UNLOADED:
		line["name"] = event.name;
		line["address"] = hex(event.address);
		line["size"] = event.size;
		break;
	case SOFTDPU_APSH_WATCH_SOCKET_LISTENING:
	case SOFTDPU_APSH_WATCH_SOCKET_CLOSED:
		line["pid"] = event.pid;
		line["comm"] = event.comm;
		line["protocol"] = event.protocol;
		line["ip_version"] = event.ip_version;
		line["local_addr"] = event.local_addr;
		line["local_port"] = event.local_port;
		line["net_ns"] = event.net_ns;
		break;
	case SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE:
		add_process(line, event);
		line["path"] = event.path;
		line["address"] = hex(event.address);
		line["size"] = event.size;
		line["protection"] = event.protection;
		line["pages_present"] = event.pages_present;
		line["matching_pages"] = event.matching_pages;
		break;
	case SOFTDPU_APSH_WATCH_YARA_MATCH:
		add_process(line, event);
		line["rule"] = event.name;
		line["address"] = hex(event.address);
		line["size"] = event.size;
		break;
	case SOFTDPU_APSH_WATCH_INJECTION:
		add_process(line, event);
		line["address"] = hex(event.address);
		line["size"] = event.size;
		line["protection"] = event.protection;
		line["path"] = event.path;
		break;
	}
	return line;
}

void print_event(const softdpu_apsh_watch_event *event, void *)
{
	print(event_json(*event));
}

std::string error_name(doca_error_t status)
{
	return std::string(doca_error_get_name(status)) + " (" + doca_error_get_descr(status) + ")";
}

// What the SDK logged about the failure, one line.
std::string sdk_reasons()
{
	std::string text;
	for (const std::string &message : sdk_messages())
		text += (text.empty() ? "" : "; ") + message;
	sdk_messages().clear();
	return text;
}

// Ends the stream with an error event; exit status 1.
int error_event(const std::string &message)
{
	Json line = header("error", realtime_ns());
	line["message"] = message;
	print(line);
	std::fflush(stdout);
	std::fprintf(stderr, "softdpu apsh watch: %s\n", message.c_str());
	return 1;
}

class ScopedSignals {
public:
	ScopedSignals()
	{
		stop_signal = 0;
		struct sigaction action {};
		action.sa_handler = on_stop_signal;
		sigemptyset(&action.sa_mask);
		action.sa_flags = 0; // no SA_RESTART: the sleep between polls ends at once
		::sigaction(SIGINT, &action, &old_int_);
		::sigaction(SIGTERM, &action, &old_term_);
	}
	~ScopedSignals()
	{
		::sigaction(SIGINT, &old_int_, nullptr);
		::sigaction(SIGTERM, &old_term_, nullptr);
	}
	ScopedSignals(const ScopedSignals &) = delete;
	ScopedSignals &operator=(const ScopedSignals &) = delete;

private:
	struct sigaction old_int_ {};
	struct sigaction old_term_ {};
};

struct WatchHandle {
	softdpu_apsh_watch *watch = nullptr;
	doca_apsh_user_yara_rules *rules = nullptr;
	~WatchHandle()
	{
		softdpu_apsh_watch_destroy(watch);
		doca_apsh_user_yara_rules_destroy(rules);
	}
};

int configure(doca_apsh_system *system, const WatchSettings &settings, WatchHandle &handle)
{
	doca_error_t status = softdpu_apsh_watch_create(system, settings.kinds, &handle.watch);
	if (status != DOCA_SUCCESS)
		return error_event("cannot create the watch: " + error_name(status) + " " + sdk_reasons());
	if (settings.kinds & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) {
		status = softdpu_apsh_watch_set_hash_map(handle.watch, settings.hash_map.c_str());
		if (status != DOCA_SUCCESS)
			return error_event("--hash-map " + settings.hash_map + ": " + sdk_reasons());
	}
	if (settings.kinds & SOFTDPU_APSH_WATCH_KIND_YARA) {
		const uint64_t scan_type = settings.heap_only ? DOCA_APSH_YARA_SCAN_HEAP : DOCA_APSH_YARA_SCAN_VMA;
		if (!settings.user_rules.empty()) {
			status = doca_apsh_user_yara_rules_create_from_file(settings.user_rules.c_str(), &handle.rules);
			if (status != DOCA_SUCCESS)
				return error_event("--rules " + settings.user_rules + ": " + sdk_reasons());
			doca_apsh_user_yara_rules_set_monotonic(handle.rules, settings.monotonic);
			status = softdpu_apsh_watch_set_user_yara_rules(handle.watch, handle.rules, scan_type);
		} else {
			status =
			    softdpu_apsh_watch_set_yara_rules(handle.watch, settings.rules.data(),
							      static_cast<uint32_t>(settings.rules.size()), scan_type);
		}
		if (status != DOCA_SUCCESS)
			return error_event("cannot set the YARA rules: " + error_name(status) + " " + sdk_reasons());
	}
	return 0;
}

// Sleeps until `deadline` or a stop signal.
void sleep_until(std::chrono::steady_clock::time_point deadline)
{
	while (stop_signal == 0) {
		const auto now = std::chrono::steady_clock::now();
		if (now >= deadline)
			return;
		const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
		timespec wait{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
		if (::nanosleep(&wait, nullptr) != 0 && errno != EINTR)
			return;
	}
}

} // namespace

std::optional<uint32_t> parse_watch_kinds(const std::string &text, std::string &why)
{
	uint32_t kinds = 0;
	std::stringstream stream(text);
	std::string name;
	while (std::getline(stream, name, ',')) {
		const auto *found = std::find_if(std::begin(kKindNames), std::end(kKindNames),
						 [&](const KindName &kind) { return name == kind.name; });
		if (found == std::end(kKindNames)) {
			why = "unknown event kind \"" + name +
			      "\" (process, module, socket, attest, yara, injection, all, default)";
			return std::nullopt;
		}
		kinds |= found->kind;
	}
	if (kinds == 0) {
		why = "no event kind given";
		return std::nullopt;
	}
	return kinds;
}

int run_watch(doca_apsh_system *system, const WatchSettings &settings)
{
	ScopedSignals signals;
	WatchHandle handle;
	if (int status = configure(system, settings, handle); status != 0)
		return status;
	const auto started = std::chrono::steady_clock::now();
	const auto interval = std::chrono::milliseconds(settings.interval_ms);
	doca_error_t status = softdpu_apsh_watch_poll(handle.watch, nullptr, nullptr, nullptr);
	if (status != DOCA_SUCCESS)
		return error_event("cannot read the guest: " + error_name(status) + ": " + sdk_reasons());
	sdk_messages().clear();
	Json line = header("watch-started", realtime_ns());
	line["interval_ms"] = settings.interval_ms;
	Json kinds = Json::array();
	for (const KindName &kind : kKindNames)
		if (kind.kind != SOFTDPU_APSH_WATCH_KIND_ALL && kind.kind != SOFTDPU_APSH_WATCH_KIND_DEFAULT &&
		    (settings.kinds & kind.kind))
			kinds.push_back(kind.name);
	line["events"] = std::move(kinds);
	print(line);
	std::fflush(stdout);

	auto next = started + interval;
	const char *reason = "count";
	for (uint64_t refreshes = 0; !settings.count || refreshes < *settings.count; ++refreshes) {
		if (settings.duration_ms) {
			const auto end = started + std::chrono::milliseconds(*settings.duration_ms);
			sleep_until(std::min(next, end));
			if (stop_signal == 0 && std::chrono::steady_clock::now() >= end) {
				reason = "duration";
				break;
			}
		} else {
			sleep_until(next);
		}
		if (stop_signal != 0)
			break;
		const uint64_t refresh_started_ns = realtime_ns();
		status = softdpu_apsh_watch_poll(handle.watch, print_event, nullptr, nullptr);
		if (status != DOCA_SUCCESS)
			return error_event("cannot read the guest: " + error_name(status) + ": " + sdk_reasons());
		sdk_messages().clear();
		if (settings.heartbeat) {
			// After the refresh's events: a reader knows which refresh saw each change.
			Json beat = header("refresh", realtime_ns());
			beat["refresh"] = refreshes + 1;
			beat["started_ns"] = refresh_started_ns;
			print(beat);
		}
		std::fflush(stdout);
		// A poll longer than the interval: the next one starts at once, then the beat resumes.
		next += interval;
		if (const auto now = std::chrono::steady_clock::now(); next < now)
			next = now;
	}
	Json stopped = header("watch-stopped", realtime_ns());
	stopped["reason"] = stop_signal == SIGINT ? "SIGINT" : stop_signal == SIGTERM ? "SIGTERM" : reason;
	print(stopped);
	std::fflush(stdout);
	return 0;
}

} // namespace softdpu::cli
