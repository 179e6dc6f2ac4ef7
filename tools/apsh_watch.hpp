// softdpu apsh watch: the guest's changes as JSON lines, through softdpu_apsh_watch_* (softdpu/apsh.h).
#pragma once

#include <doca_apsh.h>
#include <softdpu/apsh.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace softdpu::cli {

struct WatchSettings {
	uint32_t interval_ms = 1000;
	uint32_t kinds = SOFTDPU_APSH_WATCH_KIND_DEFAULT;
	std::optional<uint64_t> count;       // refreshes after the baseline, then stop
	std::optional<uint64_t> duration_ms; // then stop
	bool heartbeat = false;              // a "refresh" line after every refresh
	std::string hash_map;
	std::vector<doca_apsh_yara_rule> rules; // built-in rules (empty: all three)
	std::string user_rules;                 // a file of user rules instead
	bool monotonic = false;
	bool heap_only = false;
};

// "process,module,socket,attest,yara,injection" (or "all", "default") as SOFTDPU_APSH_WATCH_KIND_*
// bits; nullopt (and why) for an unknown name.
std::optional<uint32_t> parse_watch_kinds(const std::string &text, std::string &why);

// Watches a started system until the count or duration is reached or SIGINT/SIGTERM arrives
// (exit status 0), or the guest cannot be read (an "error" event, exit status 1).
int run_watch(doca_apsh_system *system, const WatchSettings &settings);

} // namespace softdpu::cli
