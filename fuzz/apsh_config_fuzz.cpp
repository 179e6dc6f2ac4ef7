// Fuzz target: App Shield's configuration parsers (symbol map, memory regions, kpgd file, exec
// hash map) must accept or reject any bytes with a reason, never crash or hang, and what they
// accept must be consistent.
#include "apsh/api/config_files.hpp"
#include "apsh/api/exec_hash.hpp"

#include <cstdint>
#include <string_view>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;

namespace {
void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const std::string_view text(reinterpret_cast<const char *>(data), size);

	KernelHints hints;
	Status status = parse_symbol_map(text, "symbols.json", "/nonexistent", hints);
	require(status.ok() ||
		(status.code == DOCA_ERROR_INVALID_VALUE && status.reason.rfind("symbols.json", 0) == 0) ||
		status.reason.find("/nonexistent") != std::string::npos);

	std::vector<RamRange> ranges;
	status = parse_mem_regions(text, "mem_regions.json", ranges);
	require(status.ok() || status.reason.rfind("mem_regions.json: ", 0) == 0);
	if (status.ok()) {
		require(ranges.size() <= kMaxRamRanges);
		for (size_t i = 0; i < ranges.size(); ++i) {
			require(ranges[i].gpa_start < ranges[i].gpa_end);
			if (i > 0)
				require(ranges[i - 1].gpa_end <= ranges[i].gpa_start);
		}
	}

	KernelHints kpgd_hints;
	status = parse_kpgd_file(text, "kpgd_file.conf", kpgd_hints);
	require(status.ok() == kpgd_hints.kpgd.has_value());
	if (status.ok())
		require((*kpgd_hints.kpgd & 0xfff) == 0);

	ExecHashMap map;
	status = parse_exec_hash_map(text, "hash.json", map);
	require(status.ok() || status.reason.rfind("hash.json: ", 0) == 0);

	ExecHashFile file;
	(void)hash_file_bytes({data, size}, "file", file);
	return 0;
}
