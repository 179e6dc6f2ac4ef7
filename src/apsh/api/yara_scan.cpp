// YARA window scanning: see yara_scan.hpp.
#include "apsh/api/yara_scan.hpp"

#include <yara.h>

#include <algorithm>
#include <cstring>
#include <mutex>

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

std::string_view YaraRules::builtin_text() noexcept
{
	return kBuiltinRules;
}

std::shared_ptr<YaraRules> YaraRules::builtin()
{
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
	const uint64_t run_end = run_va + bytes.size();
	// First window start at or after run_va on the grid area_start + k * step.
	uint64_t first = area_start;
	if (run_va > area_start)
		first = area_start + (run_va - area_start + window_.step - 1) / window_.step * window_.step;
	if (first >= limit_va || first >= run_end)
		return Status::success();
	std::vector<const char *> matched;
	if (rules_->monotonic()) {
		// Every window scanned below lies within these bytes: no match here, none in a window.
		const uint64_t last_end = std::min<uint64_t>(run_end, limit_va + window_.size);
		if (Status status = scan_bytes(bytes.subspan(first - run_va, last_end - first), matched); !status.ok())
			return status;
		if (matched.empty())
			return Status::success();
	}
	for (uint64_t w = first; w < limit_va && w < run_end; w += window_.step) {
		const uint64_t len = std::min<uint64_t>(window_.size, run_end - w);
		if (Status status = scan_bytes(bytes.subspan(w - run_va, len), matched); !status.ok())
			return status;
		for (const char *name : matched) {
			if (hits_.size() >= max_hits_) {
				truncated_ = true;
				return Status::success();
			}
			hits_.push_back({name, w, len});
		}
	}
	return Status::success();
}

Status WindowScanner::scan_area(uint64_t start, uint64_t end, const PageReader &read_page)
{
	if (!init_.ok())
		return init_;
	constexpr uint64_t kChunk = 1u << 20;
	const uint64_t pad = (static_cast<uint64_t>(window_.size) + 4095) & ~uint64_t{4095};
	start &= ~uint64_t{4095};
	uint64_t va = start;
	while (va < end && !truncated_) {
		buffer_.clear();
		const uint64_t run_va = va;
		bool stopped_for_size = false;
		while (va < end) {
			if (buffer_.size() >= kChunk + pad) {
				stopped_for_size = true;
				break;
			}
			const size_t at = buffer_.size();
			buffer_.resize(at + 4096);
			if (!read_page(va, std::span<uint8_t, 4096>(buffer_.data() + at, 4096))) {
				buffer_.resize(at);
				break;
			}
			va += 4096;
		}
		if (buffer_.empty()) {
			va += 4096; // a page that is not present
			continue;
		}
		const uint64_t run_end = run_va + buffer_.size();
		const uint64_t limit = stopped_for_size ? run_va + kChunk : std::min(run_end, end);
		if (Status status = scan_run({buffer_.data(), std::min<uint64_t>(buffer_.size(), end - run_va)}, run_va,
					     start, limit);
		    !status.ok())
			return status;
		if (stopped_for_size)
			va = run_va + kChunk;
	}
	return Status::success();
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
