// doca_apsh.h: attestation and YARA; softdpu/apsh.h: user YARA rules.
#include <doca_apsh.h>
#include <softdpu/apsh.h>

#include "apsh/api/attestation.hpp"
#include "apsh/api/config_files.hpp"
#include "apsh/api/exec_hash.hpp"
#include "apsh/api/snapshots.hpp"
#include "apsh/api/yara_scan.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <algorithm>
#include <new>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;
using softdpu::common::api_barrier;
using softdpu::common::api_barrier_void;

namespace {

// Most matches one YARA query returns (a rule matching everywhere must not exhaust memory).
constexpr size_t kMaxYaraMatches = 65536;

// Builds the attestation of one process (the caller holds the system's mutex).
doca_error_t attest(System &state, const Process &process, const ExecHashMap &map,
		    Snapshot<doca_apsh_attestation> &snapshot, const char *function)
{
	std::vector<MemoryArea> areas;
	if (Status status = state.guest().memory_areas(process, areas); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		if (status.code == DOCA_ERROR_NOT_FOUND || status.code == DOCA_ERROR_NO_MEMORY)
			return status.code;
		return DOCA_ERROR_INITIALIZATION;
	}
	std::vector<AreaAttestation> results;
	AttestationReads reads;
	Attester(state.page_digests())
	    .attest(state.guest(), process, areas, map, state.settings().hashtest_limit, true, results, reads);
	for (const AreaAttestation &result : results) {
		doca_apsh_attestation &item = snapshot.add();
		item.pid = process.pid;
		item.comm = process.comm;
		item.path = result.area->file_path;
		item.protection = protection_string(result.area->protection);
		item.start = result.area->start;
		item.end = result.area->end;
		item.hash_data_is_present = result.file != nullptr;
		item.pages_number = static_cast<int>(result.hashed);
		item.pages_present = static_cast<int>(result.present);
		item.matching_hashes = static_cast<int>(result.matching);
	}
	// Pages of a memory image that shrank meanwhile read as absent: that is an error, not a result.
	if (Status status = state.guest().source_failure(); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	return DOCA_SUCCESS;
}

doca_error_t attestation_snapshot(const std::shared_ptr<System> &state, const Process &process,
				  const std::string &map_path, doca_apsh_attestation ***attestation, int *size,
				  const char *function)
{
	std::shared_ptr<const ExecHashMap> map;
	if (Status status = state->exec_hash_maps().get(map_path, map); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (allocation_should_fail())
		return DOCA_ERROR_NO_MEMORY;
	auto snapshot = std::unique_ptr<AttestationSnapshot>(new (std::nothrow) AttestationSnapshot());
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	snapshot->system = state;
	snapshot->process = process;
	snapshot->map_path = map_path;
	std::lock_guard lock(state->mutex());
	if (doca_error_t result = attest(*state, process, *map, *snapshot, function); result != DOCA_SUCCESS)
		return result;
	std::unique_ptr<Snapshot<doca_apsh_attestation>> base(snapshot.release());
	// Attestation arrays are never NULL, so that doca_apsh_attst_refresh can find the process.
	return publish(std::move(base), attestation, size, false);
}

doca_error_t yara_scan(doca_apsh_process *process, std::shared_ptr<YaraRules> rules, RuleFilter filter,
		       uint64_t scan_type, doca_apsh_yara ***matches, int *size, const char *function)
{
	if (Status status = check_scan_type(scan_type); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	if (!rules) {
		SDK_LOG_ERR("%s: the YARA rules could not be compiled", function);
		return DOCA_ERROR_INITIALIZATION;
	}
	std::shared_ptr<System> state = process->system;
	std::lock_guard lock(state->mutex());
	std::vector<MemoryArea> areas;
	if (Status status = state->guest().memory_areas(process->p, areas); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		if (status.code == DOCA_ERROR_NOT_FOUND || status.code == DOCA_ERROR_NO_MEMORY)
			return status.code;
		return DOCA_ERROR_INITIALIZATION;
	}
	WindowScanner scanner(std::move(rules), std::move(filter), state->settings().window, kMaxYaraMatches);
	if (Status status = scanner.ok(); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INITIALIZATION;
	}
	const bool all_areas = (scan_type & DOCA_APSH_YARA_SCAN_VMA) != 0;
	const Process &p = process->p;
	if (Status status = scan_process_areas(state->guest(), p, areas, all_areas, scanner); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INITIALIZATION;
	}
	if (scanner.truncated())
		SDK_LOG_WARN("%s: more than %zu matches; the rest are dropped", function, kMaxYaraMatches);
	if (allocation_should_fail())
		return DOCA_ERROR_NO_MEMORY;
	auto snapshot = std::unique_ptr<Snapshot<doca_apsh_yara>>(new (std::nothrow) Snapshot<doca_apsh_yara>());
	if (!snapshot)
		return DOCA_ERROR_NO_MEMORY;
	snapshot->system = state;
	for (YaraHit &hit : scanner.hits()) {
		doca_apsh_yara &item = snapshot->add();
		item.pid = p.pid;
		item.comm = p.comm;
		item.rule = std::move(hit.rule);
		item.window_addr = hit.window_addr;
		item.window_len = hit.window_len;
	}
	return publish(std::move(snapshot), matches, size, true);
}

doca_error_t compile_user_rules(std::string_view text, const std::string &name, doca_apsh_user_yara_rules **rules)
{
	std::shared_ptr<YaraRules> compiled;
	if (Status status = YaraRules::compile(text, name, false, compiled); !status.ok()) {
		SDK_LOG_ERR("doca_apsh_user_yara_rules_create: %s", status.reason.c_str());
		return status.code == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INVALID_VALUE;
	}
	auto *created = new (std::nothrow) doca_apsh_user_yara_rules{std::move(compiled)};
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	*rules = created;
	return DOCA_SUCCESS;
}

} // namespace

extern "C" {

doca_error_t doca_apsh_attestation_get(doca_apsh_process *process, const char *exec_hash_map_path,
				       doca_apsh_attestation ***attestation, int *attestation_size)
{
	if (process == nullptr || exec_hash_map_path == nullptr || attestation == nullptr ||
	    attestation_size == nullptr || process->system == nullptr) {
		SDK_LOG_ERR("doca_apsh_attestation_get: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(
	    __func__,
	    [&] {
		    return attestation_snapshot(process->system, process->p, exec_hash_map_path, attestation,
						attestation_size, api_name);
	    },
	    DOCA_ERROR_INITIALIZATION);
}

doca_error_t doca_apsh_attst_refresh(doca_apsh_attestation ***attestation, int *attestation_size)
{
	if (attestation == nullptr || *attestation == nullptr || attestation_size == nullptr) {
		SDK_LOG_ERR("doca_apsh_attst_refresh: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(
	    __func__,
	    [&]() -> doca_error_t {
		    auto *old = dynamic_cast<AttestationSnapshot *>(find_snapshot(*attestation));
		    if (old == nullptr) {
			    SDK_LOG_ERR("doca_apsh_attst_refresh: %p is not an attestation array",
					static_cast<void *>(*attestation));
			    return DOCA_ERROR_INVALID_VALUE;
		    }
		    const std::shared_ptr<System> state = old->system;
		    const Process process = old->process;
		    const std::string map_path = old->map_path;
		    doca_apsh_attestation **fresh = nullptr;
		    int fresh_size = 0;
		    if (doca_error_t result = attestation_snapshot(state, process, map_path, &fresh, &fresh_size,
								   "doca_apsh_attst_refresh");
			result != DOCA_SUCCESS)
			    return result;
		    doca_apsh_attestation_free(*attestation);
		    *attestation = fresh;
		    *attestation_size = fresh_size;
		    return DOCA_SUCCESS;
	    },
	    DOCA_ERROR_INITIALIZATION);
}

void doca_apsh_attestation_free(doca_apsh_attestation **attestation)
{
	const char *const function = __func__; // __func__ in the lambda would be "operator()"
	api_barrier_void(__func__, [&] { take_snapshot(attestation, function); });
}

const void *__doca_apsh_attst_info_get(doca_apsh_attestation *attestation, enum doca_apsh_attestation_attr attr)
{
	if (attestation == nullptr) {
		SDK_LOG_ERR("doca_apsh_attst_info_get: NULL attestation");
		return nullptr;
	}
	auto value = [](uint64_t number) { return reinterpret_cast<const void *>(static_cast<uintptr_t>(number)); };
	switch (attr) {
	case DOCA_APSH_ATTESTATION_PID:
		return value(attestation->pid);
	case DOCA_APSH_ATTESTATION_COMM:
		return attestation->comm.c_str();
	case DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA:
		return attestation->path.c_str();
	case DOCA_APSH_ATTESTATION_PROTECTION:
		return attestation->protection.c_str();
	case DOCA_APSH_ATTESTATION_START_ADDRESS:
		return value(attestation->start);
	case DOCA_APSH_ATTESTATION_END_ADDRESS:
		return value(attestation->end);
	case DOCA_APSH_ATTESTATION_PAGES_NUMBER:
		return value(static_cast<uint32_t>(attestation->pages_number));
	case DOCA_APSH_ATTESTATION_PAGES_PRESENT:
		return value(static_cast<uint32_t>(attestation->pages_present));
	case DOCA_APSH_ATTESTATION_MATCHING_HASHES:
		return value(static_cast<uint32_t>(attestation->matching_hashes));
	case DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT:
		return value(attestation->hash_data_is_present ? 1 : 0);
	}
	SDK_LOG_ERR("doca_apsh_attst_info_get: unknown attribute %d", static_cast<int>(attr));
	return nullptr;
}

doca_error_t doca_apsh_yara_get(doca_apsh_process *process, enum doca_apsh_yara_rule *yara_rules_arr,
				uint32_t yara_rules_arr_size, uint64_t scan_type, doca_apsh_yara ***yara_matches,
				int *yara_matches_size)
{
	if (process == nullptr || yara_rules_arr == nullptr || yara_rules_arr_size == 0 || yara_matches == nullptr ||
	    yara_matches_size == nullptr || process->system == nullptr) {
		SDK_LOG_ERR("doca_apsh_yara_get: NULL argument or no rules");
		return DOCA_ERROR_INVALID_VALUE;
	}
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(
	    __func__,
	    [&]() -> doca_error_t {
		    RuleFilter filter;
		    if (Status status = builtin_rule_filter(yara_rules_arr, yara_rules_arr_size, filter);
			!status.ok()) {
			    SDK_LOG_ERR("%s: %s", api_name, status.reason.c_str());
			    return status.code;
		    }
		    return yara_scan(process, YaraRules::builtin(), std::move(filter), scan_type, yara_matches,
				     yara_matches_size, api_name);
	    },
	    DOCA_ERROR_INITIALIZATION);
}

void doca_apsh_yara_free(doca_apsh_yara **yara_matches)
{
	const char *const function = __func__; // __func__ in the lambda would be "operator()"
	api_barrier_void(__func__, [&] { take_snapshot(yara_matches, function); });
}

const void *__doca_apsh_yara_info_get(doca_apsh_yara *yara, enum doca_apsh_yara_attr attr)
{
	if (yara == nullptr) {
		SDK_LOG_ERR("doca_apsh_yara_info_get: NULL match");
		return nullptr;
	}
	switch (attr) {
	case DOCA_APSH_YARA_PID:
		return reinterpret_cast<const void *>(static_cast<uintptr_t>(yara->pid));
	case DOCA_APSH_YARA_COMM:
		return yara->comm.c_str();
	case DOCA_APSH_YARA_RULE:
		return yara->rule.c_str();
	case DOCA_APSH_YARA_MATCH_WINDOW_ADDR:
		return reinterpret_cast<const void *>(static_cast<uintptr_t>(yara->window_addr));
	case DOCA_APSH_YARA_MATCH_WINDOW_LEN:
		return reinterpret_cast<const void *>(static_cast<uintptr_t>(yara->window_len));
	}
	SDK_LOG_ERR("doca_apsh_yara_info_get: unknown attribute %d", static_cast<int>(attr));
	return nullptr;
}

doca_error_t doca_apsh_user_yara_rules_create_from_string(const char *rules_text, doca_apsh_user_yara_rules **rules)
{
	if (rules_text == nullptr || rules == nullptr) {
		SDK_LOG_ERR("doca_apsh_user_yara_rules_create_from_string: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] { return compile_user_rules(rules_text, "<rules text>", rules); });
}

doca_error_t doca_apsh_user_yara_rules_create_from_file(const char *rules_path, doca_apsh_user_yara_rules **rules)
{
	if (rules_path == nullptr || rules == nullptr) {
		SDK_LOG_ERR("doca_apsh_user_yara_rules_create_from_file: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] {
		std::string text;
		if (Status status = read_file(rules_path, 64u << 20, text); !status.ok()) {
			SDK_LOG_ERR("doca_apsh_user_yara_rules_create_from_file: %s", status.reason.c_str());
			return DOCA_ERROR_INVALID_VALUE;
		}
		return compile_user_rules(text, rules_path, rules);
	});
}

doca_error_t doca_apsh_user_yara_rules_set_monotonic(doca_apsh_user_yara_rules *rules, bool monotonic)
{
	if (rules == nullptr) {
		SDK_LOG_ERR("doca_apsh_user_yara_rules_set_monotonic: NULL rules");
		return DOCA_ERROR_INVALID_VALUE;
	}
	rules->rules->set_monotonic(monotonic);
	return DOCA_SUCCESS;
}

void doca_apsh_user_yara_rules_destroy(doca_apsh_user_yara_rules *rules)
{
	delete rules;
}

doca_error_t doca_apsh_user_yara_get(doca_apsh_process *process, const doca_apsh_user_yara_rules *rules,
				     uint64_t scan_type, doca_apsh_yara ***yara_matches, int *yara_matches_size)
{
	if (process == nullptr || rules == nullptr || yara_matches == nullptr || yara_matches_size == nullptr ||
	    process->system == nullptr) {
		SDK_LOG_ERR("doca_apsh_user_yara_get: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(
	    __func__,
	    [&] { return yara_scan(process, rules->rules, {}, scan_type, yara_matches, yara_matches_size, api_name); },
	    DOCA_ERROR_INITIALIZATION);
}

} // extern "C"
