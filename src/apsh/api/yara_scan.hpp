// YARA scanning of process memory in windows (DOCA's scan window size and step), with libyara.
//
// A memory area is read page by page; runs of present pages are scanned in windows that start at
// area_start + k * step and are `size` bytes long (clipped where the run of present pages ends;
// windows that start on a page that is not present are skipped). Every (rule, window) pair that
// matches is reported. Rules whose conditions only become truer with more data ("any of them",
// "all of them": every built-in rule) allow a prefilter: a run is first scanned as a whole, and
// its windows only when some rule matched there.
#pragma once

#include "apsh/introspection.hpp"

#include <doca_apsh.h>

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct YR_RULES;

namespace softdpu::apsh::api {

// Compiled rules. Thread-safe to scan concurrently (each scan has its own scanner).
class YaraRules {
public:
	~YaraRules();
	YaraRules(const YaraRules &) = delete;
	YaraRules &operator=(const YaraRules &) = delete;

	// Compiles rule text; errors carry the source name, line and libyara's message.
	static Status compile(std::string_view text, const std::string &source_name, bool monotonic,
			      std::shared_ptr<YaraRules> &out);
	// DOCA's three rules (Hello_World, Reflective_Dll_Injection, Mimikatz), compiled once.
	static std::shared_ptr<YaraRules> builtin();
	static std::string_view builtin_text() noexcept;

	YR_RULES *rules() const noexcept { return rules_; }
	bool monotonic() const noexcept { return monotonic_.load(std::memory_order_relaxed); }
	void set_monotonic(bool monotonic) noexcept { monotonic_.store(monotonic, std::memory_order_relaxed); }
	const std::vector<std::string> &rule_names() const noexcept { return names_; }

private:
	YaraRules() = default;
	YR_RULES *rules_ = nullptr;
	std::atomic<bool> monotonic_{false};
	std::vector<std::string> names_;
};

struct WindowSettings {
	uint32_t size = 4096;
	uint32_t step = 4096;
};

struct YaraHit {
	std::string rule;
	uint64_t window_addr = 0;
	uint64_t window_len = 0;
};

// Which rule names count (empty: all of the rule set).
using RuleFilter = std::vector<std::string>;

// A doca_apsh_yara_get scan type: DOCA_APSH_YARA_SCAN_VMA and/or DOCA_APSH_YARA_SCAN_HEAP, nothing
// else. INVALID_VALUE (with the reason) otherwise.
Status check_scan_type(uint64_t scan_type);
// The names of DOCA's built-in rules (doca_apsh_yara_rule values, read as plain integers: a caller
// may pass values outside the enum), appended to filter. INVALID_VALUE for an unknown rule.
Status builtin_rule_filter(const doca_apsh_yara_rule *rules, uint32_t count, RuleFilter &filter);

class WindowScanner {
public:
	WindowScanner(std::shared_ptr<YaraRules> rules, RuleFilter filter, WindowSettings window, size_t max_hits);
	~WindowScanner();
	WindowScanner(const WindowScanner &) = delete;
	WindowScanner &operator=(const WindowScanner &) = delete;

	Status ok() const { return init_; }

	// Scans one memory area [start, end) read through read_page (false: page not present).
	using PageReader = std::function<bool(uint64_t page_va, std::span<uint8_t, 4096> out)>;
	Status scan_area(uint64_t start, uint64_t end, const PageReader &read_page);
	// The same, reading many pages per call: read_run copies from the page-aligned va until the
	// first page that is not present (or out is full) and returns the bytes copied (whole pages;
	// a partial page counts as not present). As LinuxSystem::read_user does.
	using RunReader = std::function<size_t(uint64_t va, std::span<uint8_t> out)>;
	Status scan_area_runs(uint64_t start, uint64_t end, const RunReader &read_run);
	// Scans windows over bytes already in memory: windows start at area_start + k * step, those
	// starting in [run_va, limit_va) are scanned, clipped to the end of the bytes.
	Status scan_run(std::span<const uint8_t> bytes, uint64_t run_va, uint64_t area_start, uint64_t limit_va);

	std::vector<YaraHit> &hits() noexcept { return hits_; }
	// Forgets the hits and the truncation, keeping the libyara scanner and the buffer (for a caller
	// that scans one process after another: the watch).
	void clear_hits() noexcept
	{
		hits_.clear();
		truncated_ = false;
	}
	const WindowSettings &window() const noexcept { return window_; }
	bool truncated() const noexcept { return truncated_; }
	// Work done so far (for benchmarks): libyara scans and the bytes they covered.
	uint64_t scans() const noexcept { return scans_; }
	uint64_t scanned_bytes() const noexcept { return scanned_bytes_; }

private:
	// Names of the rules (in the filter) matching these bytes.
	Status scan_bytes(std::span<const uint8_t> bytes, std::vector<const char *> &matched);

	std::shared_ptr<YaraRules> rules_;
	RuleFilter filter_;
	WindowSettings window_;
	size_t max_hits_;
	struct Scanner;
	std::unique_ptr<Scanner> scanner_;
	Status init_;
	std::vector<YaraHit> hits_;
	bool truncated_ = false;
	uint64_t scans_ = 0;
	uint64_t scanned_bytes_ = 0;
	std::vector<uint8_t> buffer_;
};

// Scans a process's memory areas as doca_apsh_yara_get does: all of them, or only "[heap]".
Status scan_process_areas(LinuxSystem &guest, const Process &process, const std::vector<MemoryArea> &areas,
			  bool all_areas, WindowScanner &scanner);

// Baseline for the benchmark: libyara over a flat buffer, one scan. Returns the matching rule count.
Status scan_flat_baseline(const YaraRules &rules, std::span<const uint8_t> bytes, size_t &matches);

} // namespace softdpu::apsh::api
