// softdpu/apsh.h, the continuous watch: thin forwarders over Watch (watch.hpp).
#include "apsh/api/objects.hpp"
#include "apsh/api/watch.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <softdpu/apsh.h>

#include <new>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;
using softdpu::common::api_barrier;
using softdpu::common::api_barrier_void;

struct softdpu_apsh_watch {
	explicit softdpu_apsh_watch(std::shared_ptr<System> system, uint32_t kinds) : watch(std::move(system), kinds) {}
	Watch watch;
	std::vector<WatchEvent> events;  // reused from poll to poll (its capacity)
	bool polling = false;            // a poll is calling the callback
	bool destroy_after_poll = false; // softdpu_apsh_watch_destroy from the callback
};

namespace {

bool valid_scan_type(uint64_t scan_type, const char *function)
{
	if (Status status = check_scan_type(scan_type); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return false;
	}
	return true;
}

softdpu_apsh_watch_event c_event(const WatchEvent &event)
{
	softdpu_apsh_watch_event out{};
	out.type = event.type;
	out.timestamp_ns = event.timestamp_ns;
	out.pid = event.pid;
	out.ppid = event.ppid;
	out.start_time_ns = event.start_time_ns;
	out.comm = event.comm.c_str();
	out.kernel_thread = event.kernel_thread;
	out.name = event.name.c_str();
	out.address = event.address;
	out.size = event.size;
	out.path = event.path.c_str();
	out.protection = event.protection.c_str();
	out.pages_present = event.pages_present;
	out.matching_pages = event.matching_pages;
	out.protocol = event.protocol.c_str();
	out.ip_version = event.ip_version;
	out.local_addr = event.local_addr.c_str();
	out.local_port = event.local_port;
	out.net_ns = event.net_ns;
	return out;
}

} // namespace

extern "C" {

doca_error_t softdpu_apsh_watch_create(doca_apsh_system *system, uint32_t kinds, softdpu_apsh_watch **watch)
{
	if (system == nullptr || watch == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (kinds == 0 || (kinds & ~uint32_t{SOFTDPU_APSH_WATCH_KIND_ALL}) != 0) {
		SDK_LOG_ERR("%s: invalid kinds 0x%x (SOFTDPU_APSH_WATCH_KIND_* bits, at least one)", __func__, kinds);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!system->system->started()) {
		SDK_LOG_ERR("%s: the system is not started (doca_apsh_system_start)", __func__);
		return DOCA_ERROR_BAD_STATE;
	}
	return api_barrier(__func__, [&] {
		*watch = new softdpu_apsh_watch(system->system, kinds);
		return DOCA_SUCCESS;
	});
}

doca_error_t softdpu_apsh_watch_set_hash_map(softdpu_apsh_watch *watch, const char *exec_hash_map_path)
{
	const char *const function = __func__; // __func__ in a lambda is "operator()"
	if (watch == nullptr || exec_hash_map_path == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] {
		if (Status status = watch->watch.set_hash_map(exec_hash_map_path); !status.ok()) {
			SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
			return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	});
}

doca_error_t softdpu_apsh_watch_set_yara_rules(softdpu_apsh_watch *watch, const enum doca_apsh_yara_rule *rules,
					       uint32_t num_rules, uint64_t scan_type)
{
	const char *const function = __func__; // __func__ in a lambda is "operator()"
	if (watch == nullptr || (rules == nullptr && num_rules > 0)) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!valid_scan_type(scan_type, __func__))
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		RuleFilter filter;
		if (Status status = builtin_rule_filter(rules, num_rules, filter); !status.ok()) {
			SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
			return status.code;
		}
		auto builtin = YaraRules::builtin();
		if (!builtin) {
			SDK_LOG_ERR("%s: the built-in YARA rules could not be compiled", function);
			return DOCA_ERROR_INITIALIZATION;
		}
		watch->watch.set_yara(std::move(builtin), std::move(filter), scan_type);
		return DOCA_SUCCESS;
	});
}

doca_error_t softdpu_apsh_watch_set_user_yara_rules(softdpu_apsh_watch *watch, const doca_apsh_user_yara_rules *rules,
						    uint64_t scan_type)
{
	if (watch == nullptr || rules == nullptr || !rules->rules) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!valid_scan_type(scan_type, __func__))
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		watch->watch.set_yara(rules->rules, {}, scan_type);
		return DOCA_SUCCESS;
	});
}

doca_error_t softdpu_apsh_watch_poll(softdpu_apsh_watch *watch, softdpu_apsh_watch_callback callback, void *user_data,
				     uint32_t *num_events)
{
	const char *const function = __func__; // __func__ in a lambda is "operator()"
	if (num_events != nullptr)
		*num_events = 0;
	if (watch == nullptr) {
		SDK_LOG_ERR("%s: NULL argument", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (watch->polling) {
		SDK_LOG_ERR("%s: called from the watch's own callback (a poll of this watch is under way)", __func__);
		return DOCA_ERROR_BAD_STATE;
	}
	return api_barrier(
	    __func__,
	    [&] {
		    // The events move to a local vector (their capacity comes back after the callbacks), so that
		    // nothing the callback does to the watch touches what is being iterated.
		    std::vector<WatchEvent> events = std::move(watch->events);
		    events.clear();
		    if (Status status = watch->watch.ready(); !status.ok()) {
			    SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
			    watch->events = std::move(events);
			    return DOCA_ERROR_BAD_STATE;
		    }
		    if (Status status = watch->watch.poll(events); !status.ok()) {
			    SDK_LOG_ERR("%s: %s", function,
					status.reason.empty() ? "poll failed" : status.reason.c_str());
			    watch->events = std::move(events);
			    return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY
								       : DOCA_ERROR_INITIALIZATION;
		    }
		    if (callback != nullptr) {
			    watch->polling = true;
			    struct Reset {
				    bool &flag;
				    ~Reset() { flag = false; }
			    } reset{watch->polling}; // also when the callback throws
			    for (const WatchEvent &event : events) {
				    const softdpu_apsh_watch_event out = c_event(event);
				    callback(&out, user_data);
				    if (watch->destroy_after_poll)
					    break; // destroyed from the callback: no more events
			    }
		    }
		    // After the callbacks: a refused poll from one of them may have zeroed the same counter.
		    if (num_events != nullptr)
			    *num_events = static_cast<uint32_t>(events.size());
		    if (watch->destroy_after_poll) {
			    delete watch;
			    return DOCA_SUCCESS;
		    }
		    events.clear();
		    watch->events = std::move(events);
		    return DOCA_SUCCESS;
	    },
	    DOCA_ERROR_INITIALIZATION);
}

void softdpu_apsh_watch_destroy(softdpu_apsh_watch *watch)
{
	if (watch != nullptr && watch->polling) {
		// From the watch's own callback: the poll destroys it when the callback returns.
		watch->destroy_after_poll = true;
		return;
	}
	api_barrier_void(__func__, [&] { delete watch; });
}

} // extern "C"
