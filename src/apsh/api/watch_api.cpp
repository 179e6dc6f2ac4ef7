// softdpu/apsh.h, the continuous watch: thin forwarders over Watch (watch.hpp).
#include "apsh/api/objects.hpp"
#include "apsh/api/watch.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <softdpu/apsh.h>

#include <cstring>
#include <new>
#include <type_traits>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;
using softdpu::common::api_barrier;
using softdpu::common::api_barrier_void;

struct softdpu_apsh_watch {
	explicit softdpu_apsh_watch(std::shared_ptr<System> system, uint32_t kinds) : watch(std::move(system), kinds) {}
	Watch watch;
	std::vector<WatchEvent> events; // reused from poll to poll
};

namespace {

bool valid_scan_type(uint64_t scan_type, const char *function)
{
	if (scan_type == 0 || (scan_type & ~uint64_t{DOCA_APSH_YARA_SCAN_VMA | DOCA_APSH_YARA_SCAN_HEAP}) != 0) {
		SDK_LOG_ERR("%s: invalid scan type 0x%llx (DOCA_APSH_YARA_SCAN_VMA and/or DOCA_APSH_YARA_SCAN_HEAP)",
			    function, static_cast<unsigned long long>(scan_type));
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
		for (uint32_t i = 0; i < num_rules; ++i) {
			// Read as a plain integer: a caller may pass values outside the enum.
			std::underlying_type_t<doca_apsh_yara_rule> raw;
			std::memcpy(&raw, &rules[i], sizeof(raw));
			switch (static_cast<int>(raw)) {
			case DOCA_APSH_YARA_RULE_HELLO_WORLD:
				filter.emplace_back("Hello_World");
				break;
			case DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION:
				filter.emplace_back("Reflective_Dll_Injection");
				break;
			case DOCA_APSH_YARA_RULE_MIMIKATZ:
				filter.emplace_back("Mimikatz");
				break;
			default:
				SDK_LOG_ERR("%s: unknown rule %d", function, static_cast<int>(raw));
				return DOCA_ERROR_INVALID_VALUE;
			}
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
	return api_barrier(
	    __func__,
	    [&] {
		    watch->events.clear();
		    if (Status status = watch->watch.ready(); !status.ok()) {
			    SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
			    return DOCA_ERROR_BAD_STATE;
		    }
		    if (Status status = watch->watch.poll(watch->events); !status.ok()) {
			    SDK_LOG_ERR("%s: %s", function,
					status.reason.empty() ? "poll failed" : status.reason.c_str());
			    return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY
								       : DOCA_ERROR_INITIALIZATION;
		    }
		    if (num_events != nullptr)
			    *num_events = static_cast<uint32_t>(watch->events.size());
		    if (callback != nullptr)
			    for (const WatchEvent &event : watch->events) {
				    const softdpu_apsh_watch_event out = c_event(event);
				    callback(&out, user_data);
			    }
		    return DOCA_SUCCESS;
	    },
	    DOCA_ERROR_INITIALIZATION);
}

void softdpu_apsh_watch_destroy(softdpu_apsh_watch *watch)
{
	api_barrier_void(__func__, [&] { delete watch; });
}

} // extern "C"
