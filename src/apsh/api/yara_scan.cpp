// YARA window scanning: see yara_scan.hpp.
#include "apsh/api/yara_scan.hpp"

#include "apsh/api/testing.hpp"

#include <yara.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>

namespace softdpu::apsh::api {

namespace {

// Our own rule texts for DOCA's three built-in rule names.
constexpr std::string_view kBuiltinRules = R"yara(
rule Hello_World
{
	strings:
		$text = "Hello World" ascii wide
	condition:
		$text
}

rule Reflective_Dll_Injection
{
	strings:
		$export = "ReflectiveLoader" ascii wide
		$decorated = "_ReflectiveLoader@" ascii
		$self_locate = { E8 00 00 00 00 5B 48 81 EB }
	condition:
		any of them
}

rule Mimikatz
{
	strings:
		$name = "mimikatz" ascii wide nocase
		$author = "gentilkiwi" ascii wide nocase
		$command1 = "sekurlsa::logonpasswords" ascii wide nocase
		$command2 = "lsadump::sam" ascii wide nocase
		$banner = "Benjamin DELPY" ascii wide
	condition:
		any of them
}
)yara";

// libyara's global state is reference counted; we hold one reference for the process.
Status ensure_yara()
{
	static std::once_flag once;
	static int result = ERROR_SUCCESS;
	std::call_once(once, [] { result = yr_initialize(); });
	if (result != ERROR_SUCCESS)
		return {DOCA_ERROR_INITIALIZATION,
			"libyara initialisation failed (error " + std::to_string(result) + ")"};
	return Status::success();
}

struct CompileErrors {
	std::string source;
	std::string text;
};

void compiler_callback(int level, const char *file, int line, const YR_RULE *, const char *message, void *user)
{
	(void)file;
	if (level != YARA_ERROR_LEVEL_ERROR)
		return;
	auto *errors = static_cast<CompileErrors *>(user);
	if (!errors->text.empty())
		return; // the first error is the useful one
	errors->text = errors->source + ": line " + std::to_string(line) + ": " + message;
}

} // namespace

YaraRules::~YaraRules()
{
	if (rules_ != nullptr)
		yr_rules_destroy(rules_);
}

Status YaraRules::compile(std::string_view text, const std::string &source_name, bool monotonic,
			  std::shared_ptr<YaraRules> &out)
{
	if (Status status = ensure_yara(); !status.ok())
		return status;
	YR_COMPILER *compiler = nullptr;
	if (yr_compiler_create(&compiler) != ERROR_SUCCESS)
		return {DOCA_ERROR_NO_MEMORY, "cannot create a YARA compiler"};
	CompileErrors errors{source_name, {}};
	yr_compiler_set_callback(compiler, compiler_callback, &errors);
	const std::string copy(text); // libyara wants a NUL-terminated string
	const int failures = yr_compiler_add_string(compiler, copy.c_str(), nullptr);
	if (failures != 0) {
		yr_compiler_destroy(compiler);
		return {DOCA_ERROR_INVALID_VALUE,
			errors.text.empty() ? source_name + ": YARA compilation failed" : errors.text};
	}
	YR_RULES *rules = nullptr;
	const int got = yr_compiler_get_rules(compiler, &rules);
	yr_compiler_destroy(compiler);
	if (got != ERROR_SUCCESS)
		return {DOCA_ERROR_NO_MEMORY, source_name + ": cannot build the compiled YARA rules"};
	std::shared_ptr<YaraRules> compiled(new YaraRules());
	compiled->rules_ = rules;
	compiled->monotonic_ = monotonic;
	YR_RULE *rule;
	yr_rules_foreach(rules, rule) compiled->names_.emplace_back(rule->identifier);
	if (compiled->names_.empty())
		return {DOCA_ERROR_INVALID_VALUE, source_name + ": no rules"};
	out = std::move(compiled);
	return Status::success();
}

Status check_scan_type(uint64_t scan_type)
{
	if (scan_type == 0 || (scan_type & ~uint64_t{DOCA_APSH_YARA_SCAN_VMA | DOCA_APSH_YARA_SCAN_HEAP}) != 0) {
		char reason[128];
		std::snprintf(reason, sizeof(reason),
			      "invalid scan type 0x%llx (DOCA_APSH_YARA_SCAN_VMA and/or DOCA_APSH_YARA_SCAN_HEAP)",
			      static_cast<unsigned long long>(scan_type));
		return {DOCA_ERROR_INVALID_VALUE, reason};
	}
	return Status::success();
}

Status builtin_rule_filter(const doca_apsh_yara_rule *rules, uint32_t count, RuleFilter &filter)
{
	for (uint32_t i = 0; i < count; ++i) {
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
			return {DOCA_ERROR_INVALID_VALUE, "unknown rule " + std::to_string(static_cast<int>(raw))};
		}
	}
	return Status::success();
}

std::string_view YaraRules::builtin_text() noexcept
{
	return kBuiltinRules;
}

namespace {

// testing::fail_builtin_yara_rules.
std::atomic<bool> g_builtin_fails{false};

} // namespace

namespace testing {

void fail_builtin_yara_rules(bool fail) noexcept
{
	g_builtin_fails = fail;
}

} // namespace testing

std::shared_ptr<YaraRules> YaraRules::builtin()
{
	if (g_builtin_fails)
		return nullptr;
	static std::mutex mutex;
	static std::shared_ptr<YaraRules> rules;
	std::lock_guard lock(mutex);
	if (!rules)
		(void)compile(kBuiltinRules, "<built-in rules>", true, rules);
	return rules;
}

struct WindowScanner::Scanner {
	YR_SCANNER *scanner = nullptr;
	~Scanner()
	{
		if (scanner != nullptr)
			yr_scanner_destroy(scanner);
	}
};

namespace {
int scan_callback(YR_SCAN_CONTEXT *, int message, void *data, void *user)
{
	if (message != CALLBACK_MSG_RULE_MATCHING)
		return CALLBACK_CONTINUE;
	auto *state = static_cast<std::pair<std::vector<const char *> *, const RuleFilter *> *>(user);
	const char *name = static_cast<YR_RULE *>(data)->identifier;
	const RuleFilter &filter = *state->second;
	if (filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end())
		state->first->push_back(name);
	return CALLBACK_CONTINUE;
}
} // namespace

WindowScanner::WindowScanner(std::shared_ptr<YaraRules> rules, RuleFilter filter, WindowSettings window,
			     size_t max_hits)
    : rules_(std::move(rules)), filter_(std::move(filter)), window_(window), max_hits_(max_hits),
      scanner_(std::make_unique<Scanner>())
{
	if (!rules_) {
		init_ = {DOCA_ERROR_INITIALIZATION, "YARA rules unavailable"};
		return;
	}
	if (window_.size == 0 || window_.step == 0 || window_.size % window_.step != 0) {
		init_ = {DOCA_ERROR_INVALID_VALUE, "invalid scan window size/step"};
		return;
	}
	if (yr_scanner_create(rules_->rules(), &scanner_->scanner) != ERROR_SUCCESS) {
		init_ = {DOCA_ERROR_NO_MEMORY, "cannot create a YARA scanner"};
		return;
	}
	yr_scanner_set_flags(scanner_->scanner, SCAN_FLAGS_FAST_MODE);
}

WindowScanner::~WindowScanner() = default;

Status WindowScanner::scan_bytes(std::span<const uint8_t> bytes, std::vector<const char *> &matched)
{
	matched.clear();
	++scans_;
	scanned_bytes_ += bytes.size();
	std::pair<std::vector<const char *> *, const RuleFilter *> state{&matched, &filter_};
	yr_scanner_set_callback(scanner_->scanner, scan_callback, &state);
	const int result = yr_scanner_scan_mem(scanner_->scanner, bytes.data(), bytes.size());
	if (result != ERROR_SUCCESS)
		return {DOCA_ERROR_INITIALIZATION, "YARA scan failed (libyara error " + std::to_string(result) + ")"};
	return Status::success();
}

Status WindowScanner::scan_run(std::span<const uint8_t> bytes, uint64_t run_va, uint64_t area_start, uint64_t limit_va)
{
	if (bytes.empty() || limit_va <= run_va)
		return Status::success();
	// Offsets from run_va (no address arithmetic that could wrap at the top of the address space).
	const uint64_t run_len = std::min<uint64_t>(bytes.size(), ~uint64_t{0} - run_va);
	const uint64_t limit = std::min<uint64_t>(limit_va - run_va, run_len);
	// First window start at or after run_va on the grid area_start + k * step.
	uint64_t first = 0;
	if (area_start > run_va) {
		first = area_start - run_va;
	} else if (const uint64_t into = (run_va - area_start) % window_.step; into != 0) {
		first = window_.step - into;
	}
	if (first >= limit)
		return Status::success();
	std::vector<const char *> matched;
	if (rules_->monotonic()) {
		// Every window scanned below lies within these bytes: no match here, none in a window.
		const uint64_t last_end = std::min<uint64_t>(run_len, limit + window_.size);
		if (Status status = scan_bytes(bytes.subspan(first, last_end - first), matched); !status.ok())
			return status;
		if (matched.empty())
			return Status::success();
	}
	for (uint64_t offset = first; offset < limit; offset += window_.step) {
		const uint64_t len = std::min<uint64_t>(window_.size, run_len - offset);
		if (Status status = scan_bytes(bytes.subspan(offset, len), matched); !status.ok())
			return status;
		for (const char *name : matched) {
			if (hits_.size() >= max_hits_) {
				truncated_ = true;
				return Status::success();
			}
			hits_.push_back({name, run_va + offset, len});
		}
	}
	return Status::success();
}

Status WindowScanner::scan_area(uint64_t start, uint64_t end, const PageReader &read_page)
{
	return scan_area_runs(start, end, [&](uint64_t va, std::span<uint8_t> out) {
		size_t done = 0;
		while (done + 4096 <= out.size() &&
		       read_page(va + done, std::span<uint8_t, 4096>(out.data() + done, 4096)))
			done += 4096;
		return done;
	});
}

Status WindowScanner::scan_area_runs(uint64_t start, uint64_t end, const RunReader &read_run)
{
	if (!init_.ok())
		return init_;
	// Runs of present pages are read in chunks of kChunk bytes plus one window's worth of pages,
	// so that the windows starting in a chunk lie wholly in the buffer; the next chunk starts
	// kChunk further (its first pages are read again). One read per chunk: reading page by page
	// costs a translation set-up per page.
	constexpr uint64_t kChunk = 1u << 20;
	const uint64_t pad = (static_cast<uint64_t>(window_.size) + 4095) & ~uint64_t{4095};
	start &= ~uint64_t{4095};
	// end rounded up to a page (down at the very top of the address space: no wrap-around).
	const uint64_t end_page = (end & 4095) == 0       ? end
				  : end > ~uint64_t{4095} ? end & ~uint64_t{4095}
							  : (end | 4095) + 1;
	if (end_page <= start)
		return Status::success();
	try {
		const uint64_t need = std::min<uint64_t>(kChunk + pad, end_page - start);
		if (buffer_.size() < need)
			buffer_.resize(need);
	} catch (const std::bad_alloc &) {
		return {DOCA_ERROR_NO_MEMORY,
			"no memory for a scan buffer of " + std::to_string(kChunk + pad) + " bytes"};
	}
	uint64_t va = start;
	while (va < end_page && !truncated_) {
		const uint64_t want = std::min<uint64_t>(kChunk + pad, end_page - va);
		const size_t got = read_run(va, {buffer_.data(), static_cast<size_t>(want)}) & ~size_t{4095};
		if (got == 0) {
			va += 4096; // a page that is not present
			continue;
		}
		const uint64_t run_va = va;
		const uint64_t run_end = run_va + std::min<uint64_t>(got, want);
		// Full chunk with more of the area after it: only the windows starting in the first kChunk
		// bytes are complete here.
		const bool stopped_for_size = got >= kChunk + pad && run_end < end;
		const uint64_t limit = stopped_for_size ? run_va + kChunk : std::min(run_end, end);
		if (Status status = scan_run({buffer_.data(), static_cast<size_t>(std::min(run_end, end) - run_va)},
					     run_va, start, limit);
		    !status.ok())
			return status;
		va = stopped_for_size ? run_va + kChunk : run_end;
	}
	return Status::success();
}

Status scan_process_areas(LinuxSystem &guest, const Process &process, const std::vector<MemoryArea> &areas,
			  bool all_areas, WindowScanner &scanner)
{
	for (const MemoryArea &area : areas) {
		if (!all_areas && area.file_path != "[heap]")
			continue;
		Status status = scanner.scan_area_runs(area.start, area.end, [&](uint64_t va, std::span<uint8_t> out) {
			return guest.read_user(process, va, out);
		});
		if (!status.ok())
			return status;
		if (scanner.truncated())
			break;
	}
	// Pages of a memory image that shrank meanwhile read as absent: that is an error, not a result.
	return guest.source_failure();
}

Status scan_flat_baseline(const YaraRules &rules, std::span<const uint8_t> bytes, size_t &matches)
{
	std::vector<const char *> matched;
	RuleFilter filter;
	std::pair<std::vector<const char *> *, const RuleFilter *> state{&matched, &filter};
	const int result = yr_rules_scan_mem(rules.rules(), bytes.data(), bytes.size(), SCAN_FLAGS_FAST_MODE,
					     scan_callback, &state, 0);
	if (result != ERROR_SUCCESS)
		return {DOCA_ERROR_INITIALIZATION, "YARA scan failed (libyara error " + std::to_string(result) + ")"};
	matches = matched.size();
	return Status::success();
}

} // namespace softdpu::apsh::api
