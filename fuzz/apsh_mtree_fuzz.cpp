// Fuzz target: QMP `info mtree -f` text. Accepted output is a list of non-empty RAM ranges.
#include "apsh/source/qmp.hpp"

#include <cstdint>
#include <string_view>

using namespace softdpu::apsh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::vector<RamRange> ranges;
	if (!source::parse_mtree_ram_ranges({reinterpret_cast<const char *>(data), size}, ranges).ok())
		return 0;
	for (const RamRange &range : ranges)
		if (range.gpa_end <= range.gpa_start)
			__builtin_trap();
	return 0;
}
