// App Shield configuration files: see config_files.hpp and docs/apsh.md.
#include "apsh/api/config_files.hpp"

#include "common/bytes.hpp"
#include "common/json_object.hpp"
#include "common/regular_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace softdpu::apsh::api {

namespace {

using Json = nlohmann::json;

constexpr size_t kMaxNesting = 64;

struct ConfigError : std::runtime_error {
	explicit ConfigError(const std::string &what) : std::runtime_error(what) {}
};

[[noreturn]] void fail(const std::string &name, const std::string &path, const std::string &reason)
{
	throw ConfigError(name + ": " + path + ": " + reason);
}

Status invalid(std::string reason)
{
	return {DOCA_ERROR_INVALID_VALUE, std::move(reason)};
}

bool is_blank(std::string_view text)
{
	return std::all_of(text.begin(), text.end(),
			   [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

Json parse_json(std::string_view text, const std::string &name)
{
	Json doc;
	try {
		// A repeated key is not refused: its last value counts (nlohmann's rule), as it always did.
		doc = softdpu::json::parse(text, {.max_depth = kMaxNesting, .reject_duplicate_keys = false});
	} catch (const softdpu::json::Error &error) {
		fail(name, error.path, error.what());
	}
	if (!doc.is_object())
		fail(name, "$", std::string("expected an object, got ") + doc.type_name());
	return doc;
}

// An address: a non-negative integer, or a string "0x..." (hex) / decimal digits.
uint64_t address(const Json &value, const std::string &name, const std::string &path)
{
	if (value.is_number_unsigned())
		return value.get<uint64_t>();
	if (value.is_number_integer()) {
		if (value.get<int64_t>() < 0)
			fail(name, path, "negative address " + value.dump());
		return static_cast<uint64_t>(value.get<int64_t>());
	}
	if (value.is_string()) {
		const std::string text = value.get<std::string>();
		std::string_view digits = text;
		int base = 10;
		if (digits.starts_with("0x") || digits.starts_with("0X")) {
			digits.remove_prefix(2);
			base = 16;
		}
		if (digits.empty() || digits.size() > (base == 16 ? 16u : 20u))
			fail(name, path, "expected an address, got \"" + text.substr(0, 40) + "\"");
		uint64_t result = 0;
		for (char c : digits) {
			const int digit = base == 16 ? common::hex_digit(c) : c >= '0' && c <= '9' ? c - '0' : -1;
			if (digit < 0)
				fail(name, path, "expected an address, got \"" + text.substr(0, 40) + "\"");
			if (result > (UINT64_MAX - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base))
				fail(name, path, "address out of range");
			result = result * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
		}
		return result;
	}
	fail(name, path, std::string("expected an address, got ") + value.type_name());
}

void reject_unknown(const Json &object, const std::string &name, const std::string &path,
		    std::initializer_list<std::string_view> known)
{
	for (const auto &[key, value] : object.items()) {
		(void)value;
		if (std::find(known.begin(), known.end(), key) == known.end())
			fail(name, path + ("." + key), "unknown key");
	}
}

std::string path_join(const std::string &dir, const std::string &file)
{
	if (file.empty() || file[0] == '/' || dir.empty())
		return file;
	return dir + "/" + file;
}

void parse_isf(const Json &doc, const std::string &name, KernelHints &hints)
{
	const Json &symbols = doc.at("symbols");
	if (!symbols.is_object())
		fail(name, "$.symbols", std::string("expected an object, got ") + symbols.type_name());
	std::unordered_map<std::string, uint64_t> found;
	for (const auto &[symbol, entry] : symbols.items()) {
		const std::string path = "$.symbols." + symbol;
		if (!entry.is_object())
			fail(name, path, std::string("expected an object, got ") + entry.type_name());
		if (!entry.contains("address"))
			fail(name, path + ".address", "missing required key");
		found[symbol] = address(entry.at("address"), name, path + ".address");
	}
	hints.symbols = std::move(found);
	// dwarf2json writes the link-time (unslid) addresses; the reader finds the KASLR slide.
	hints.symbols_are_slid = false;
}

void parse_compact_map(const Json &doc, const std::string &name, const std::string &base_dir, KernelHints &hints)
{
	reject_unknown(doc, name, "$", {"format", "version", "kernel", "slid", "symbols", "btf"});
	if (doc.contains("format") && doc.at("format") != "softdpu-symbol-map")
		fail(name, "$.format", "expected \"softdpu-symbol-map\"");
	if (doc.contains("version") && doc.at("version") != 1)
		fail(name, "$.version", "unsupported version " + doc.at("version").dump() + " (expected 1)");
	if (doc.contains("kernel") && !doc.at("kernel").is_string())
		fail(name, "$.kernel", "expected a string");
	bool slid = true;
	if (doc.contains("slid")) {
		if (!doc.at("slid").is_boolean())
			fail(name, "$.slid", std::string("expected true or false, got ") + doc.at("slid").type_name());
		slid = doc.at("slid").get<bool>();
	}
	std::unordered_map<std::string, uint64_t> found;
	if (doc.contains("symbols")) {
		const Json &symbols = doc.at("symbols");
		if (!symbols.is_object())
			fail(name, "$.symbols", std::string("expected an object, got ") + symbols.type_name());
		for (const auto &[symbol, value] : symbols.items()) {
			if (symbol.empty())
				fail(name, "$.symbols", "empty symbol name");
			found[symbol] = address(value, name, "$.symbols." + symbol);
		}
	}
	std::vector<uint8_t> btf;
	if (doc.contains("btf")) {
		if (!doc.at("btf").is_string() || doc.at("btf").get<std::string>().empty())
			fail(name, "$.btf", "expected the path of a BTF file");
		const std::string btf_path = path_join(base_dir, doc.at("btf").get<std::string>());
		std::string blob;
		Status status = read_file(btf_path, kMaxBtfBytes, blob);
		if (!status.ok())
			fail(name, "$.btf", status.reason);
		btf.assign(blob.begin(), blob.end());
	}
	hints.symbols = std::move(found);
	hints.symbols_are_slid = slid;
	hints.btf = std::move(btf);
}

} // namespace

Status read_file(const std::string &path, size_t max_bytes, std::string &out)
{
	// Regular files only: a FIFO would block the open, a device never ends (common/regular_file).
	std::string error;
	if (!common::read_small_file(path, max_bytes, "this file", out, error))
		return invalid(path + ": " + error);
	return Status::success();
}

Status parse_symbol_map(std::string_view text, const std::string &name, const std::string &base_dir, KernelHints &hints)
{
	if (is_blank(text))
		return Status::success();
	try {
		const Json doc = parse_json(text, name);
		if (doc.empty())
			return Status::success();
		KernelHints parsed = hints;
		if (doc.contains("metadata") && doc.contains("symbols"))
			parse_isf(doc, name, parsed);
		else
			parse_compact_map(doc, name, base_dir, parsed);
		hints = std::move(parsed);
		return Status::success();
	} catch (const ConfigError &error) {
		return invalid(error.what());
	} catch (const std::exception &error) {
		return invalid(name + ": $: " + error.what());
	}
}

Status parse_mem_regions(std::string_view text, const std::string &name, std::vector<RamRange> &ranges)
{
	if (is_blank(text)) {
		ranges.clear();
		return Status::success();
	}
	try {
		const Json doc = parse_json(text, name);
		std::vector<RamRange> parsed;
		if (doc.contains("allowed_regions")) {
			// NVIDIA's format: decimal start/length per "System RAM" line; the length is one byte
			// short when it was computed from /proc/iomem's inclusive end.
			reject_unknown(doc, name, "$", {"allowed_regions"});
			const Json &regions = doc.at("allowed_regions");
			if (!regions.is_object())
				fail(name, "$.allowed_regions",
				     std::string("expected an object, got ") + regions.type_name());
			for (const auto &[key, region] : regions.items()) {
				const std::string path = "$.allowed_regions." + key;
				if (!region.is_object())
					fail(name, path, std::string("expected an object, got ") + region.type_name());
				reject_unknown(region, name, path, {"start", "length"});
				if (!region.contains("start"))
					fail(name, path + ".start", "missing required key");
				if (!region.contains("length"))
					fail(name, path + ".length", "missing required key");
				const uint64_t start = address(region.at("start"), name, path + ".start");
				uint64_t length = address(region.at("length"), name, path + ".length");
				if (length == 0)
					fail(name, path + ".length", "empty region");
				if (((start + length + 1) & 0xfff) == 0 && ((start + length) & 0xfff) != 0)
					++length; // the iomem quirk: inclusive end taken as exclusive
				if (start + length < start)
					fail(name, path, "region wraps around the address space");
				parsed.push_back({start, start + length, start});
				if (parsed.size() > kMaxRamRanges)
					fail(name, "$.allowed_regions",
					     "more than " + std::to_string(kMaxRamRanges) + " regions");
			}
		} else if (doc.contains("ranges")) {
			reject_unknown(doc, name, "$", {"format", "version", "ranges"});
			if (doc.contains("version") && doc.at("version") != 1)
				fail(name, "$.version",
				     "unsupported version " + doc.at("version").dump() + " (expected 1)");
			const Json &list = doc.at("ranges");
			if (!list.is_array())
				fail(name, "$.ranges", std::string("expected an array, got ") + list.type_name());
			if (list.size() > kMaxRamRanges)
				fail(name, "$.ranges", "more than " + std::to_string(kMaxRamRanges) + " ranges");
			for (size_t i = 0; i < list.size(); ++i) {
				const std::string path = "$.ranges[" + std::to_string(i) + "]";
				const Json &range = list[i];
				if (!range.is_object())
					fail(name, path, std::string("expected an object, got ") + range.type_name());
				reject_unknown(range, name, path, {"gpa_start", "gpa_end", "file_offset"});
				for (const char *key : {"gpa_start", "gpa_end"})
					if (!range.contains(key))
						fail(name, path + "." + key, "missing required key");
				RamRange parsed_range;
				parsed_range.gpa_start = address(range.at("gpa_start"), name, path + ".gpa_start");
				parsed_range.gpa_end = address(range.at("gpa_end"), name, path + ".gpa_end");
				parsed_range.file_offset =
				    range.contains("file_offset")
					? address(range.at("file_offset"), name, path + ".file_offset")
					: parsed_range.gpa_start;
				if (parsed_range.gpa_end <= parsed_range.gpa_start)
					fail(name, path + ".gpa_end",
					     "must be greater than gpa_start (the end is exclusive)");
				if (parsed_range.file_offset + (parsed_range.gpa_end - parsed_range.gpa_start) <
				    parsed_range.file_offset)
					fail(name, path + ".file_offset", "range runs past the end of a 64-bit file");
				parsed.push_back(parsed_range);
			}
		} else if (!doc.empty()) {
			fail(name, "$", "expected \"allowed_regions\" (NVIDIA's format) or \"ranges\"");
		}
		std::sort(parsed.begin(), parsed.end(),
			  [](const RamRange &a, const RamRange &b) { return a.gpa_start < b.gpa_start; });
		for (size_t i = 1; i < parsed.size(); ++i)
			if (parsed[i].gpa_start < parsed[i - 1].gpa_end)
				fail(name, "$",
				     "regions overlap at guest-physical address " + common::hex(parsed[i].gpa_start));
		ranges = std::move(parsed);
		return Status::success();
	} catch (const ConfigError &error) {
		return invalid(error.what());
	} catch (const std::exception &error) {
		return invalid(name + ": $: " + error.what());
	}
}

Status parse_kpgd_file(std::string_view text, const std::string &name, KernelHints &hints)
{
	std::vector<std::string_view> lines;
	while (!text.empty()) {
		const size_t end = text.find('\n');
		std::string_view line = text.substr(0, end);
		while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
			line.remove_suffix(1);
		while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
			line.remove_prefix(1);
		if (!line.empty())
			lines.push_back(line);
		if (end == std::string_view::npos)
			break;
		text.remove_prefix(end + 1);
	}
	if (lines.empty())
		return invalid(name +
			       ": line 1: empty file (expected the kernel page table's physical address in hex)");
	if (lines.size() > 2)
		return invalid(name + ": line 3: unexpected content (at most two lines: kpgd, init_task)");
	auto hex = [&](std::string_view line, int number, uint64_t &value) -> Status {
		std::string_view digits = line;
		if (digits.starts_with("0x") || digits.starts_with("0X"))
			digits.remove_prefix(2);
		const auto parsed = common::parse_hex(digits);
		if (!parsed)
			return invalid(name + ": line " + std::to_string(number) + ": expected a hex address, got \"" +
				       std::string(line.substr(0, 40)) + "\"");
		value = *parsed;
		return Status::success();
	};
	uint64_t kpgd = 0;
	if (Status status = hex(lines[0], 1, kpgd); !status.ok())
		return status;
	if (kpgd & 0xfff)
		return invalid(name + ": line 1: the page table address must be 4 KiB aligned");
	uint64_t init_task = 0;
	if (lines.size() == 2)
		if (Status status = hex(lines[1], 2, init_task); !status.ok())
			return status;
	hints.kpgd = kpgd;
	if (lines.size() == 2 && (hints.symbols.empty() || hints.symbols_are_slid))
		hints.symbols["init_task"] = init_task;
	return Status::success();
}

namespace {
std::string dir_of(const std::string &path)
{
	const size_t slash = path.rfind('/');
	return slash == std::string::npos ? std::string() : path.substr(0, slash);
}
} // namespace

Status load_symbol_map(const std::string &path, KernelHints &hints)
{
	if (path.empty())
		return Status::success();
	std::string text;
	if (Status status = read_file(path, kMaxConfigFileBytes, text); !status.ok())
		return status;
	return parse_symbol_map(text, path, dir_of(path), hints);
}

Status load_mem_regions(const std::string &path, std::vector<RamRange> &ranges)
{
	if (path.empty()) {
		ranges.clear();
		return Status::success();
	}
	std::string text;
	if (Status status = read_file(path, kMaxMemRegionsFileBytes, text); !status.ok())
		return status;
	return parse_mem_regions(text, path, ranges);
}

Status load_kpgd_file(const std::string &path, KernelHints &hints)
{
	std::string text;
	if (Status status = read_file(path, kMaxKpgdFileBytes, text); !status.ok())
		return status;
	return parse_kpgd_file(text, path, hints);
}

} // namespace softdpu::apsh::api
