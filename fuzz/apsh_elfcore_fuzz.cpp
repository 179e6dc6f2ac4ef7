// Fuzz target: QEMU ELF core headers. Accepted layouts have sorted, non-overlapping ranges
// that lie inside the input, and reads through them stay in bounds.
#include "apsh_image_layout_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz::check_image_layout(softdpu::apsh::source::parse_elf_core, data, size);
}
