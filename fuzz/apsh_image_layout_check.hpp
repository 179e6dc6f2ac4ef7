// Shared by the image-header fuzz targets (ELF core, LiME): a parser either refuses the input with
// a reason, or accepts ranges that lie inside the input and can be read at both ends.
#pragma once

#include "apsh/source/physical_memory.hpp"

#include <cstdint>

namespace fuzz {

template <typename Parser> int check_image_layout(Parser parse, const uint8_t *data, size_t size)
{
	using namespace softdpu::apsh;
	source::ImageLayout layout;
	auto status = parse({data, size}, layout);
	if (!status.ok())
		return status.reason.empty() ? (__builtin_trap(), 0) : 0;
	std::unique_ptr<source::PhysicalMemory> memory;
	if (!source::PhysicalMemory::over_bytes({data, size}, layout.ranges, memory).ok())
		__builtin_trap(); // the parser already validated these ranges
	for (const RamRange &range : memory->ranges()) {
		if (range.file_offset + (range.gpa_end - range.gpa_start) > size)
			__builtin_trap();
		if (!memory->read_value<uint8_t>(range.gpa_start) || !memory->read_value<uint8_t>(range.gpa_end - 1))
			__builtin_trap();
	}
	return 0;
}

} // namespace fuzz
