// Fuzz target: QEMU ELF core headers. Accepted layouts have sorted, non-overlapping ranges
// that lie inside the input, and reads through them stay in bounds.
#include "apsh_image_layout_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	// The span overload: it parses through the same file reader (ReadAt) as an image file.
	auto parse = [](std::span<const uint8_t> file, softdpu::apsh::source::ImageLayout &layout) {
		return softdpu::apsh::source::parse_elf_core(file, layout);
	};
	return fuzz::check_image_layout(parse, data, size);
}
