// Fuzz target: QEMU ELF core headers. Accepted layouts have sorted, non-overlapping ranges that
// lie inside the input, and reads through them stay in bounds.
#include "apsh/source/physical_memory.hpp"

#include <cstdint>

using namespace softdpu::apsh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	source::ImageLayout layout;
	auto status = source::parse_elf_core({data, size}, layout);
	if (!status.ok())
		return status.reason.empty() ? (__builtin_trap(), 0) : 0;
	std::unique_ptr<source::PhysicalMemory> memory;
	if (!source::PhysicalMemory::over_bytes({data, size}, layout.ranges, memory).ok())
		__builtin_trap(); // parse_elf_core already validated these ranges
	for (const RamRange &range : memory->ranges()) {
		if (range.file_offset + (range.gpa_end - range.gpa_start) > size)
			__builtin_trap();
		if (!memory->read_value<uint8_t>(range.gpa_start) || !memory->read_value<uint8_t>(range.gpa_end - 1))
			__builtin_trap();
	}
	return 0;
}
