// Fuzz target: VMCOREINFO text, and the scan for it in RAM-like bytes.
#include "apsh/kernel/vmcoreinfo.hpp"

#include <cstdint>
#include <string_view>

using namespace softdpu::apsh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kernel::VmcoreInfo info;
	auto status = kernel::parse_vmcoreinfo({reinterpret_cast<const char *>(data), size}, info);
	if (status.ok() && info.osrelease.empty())
		__builtin_trap();
	(void)info.phys_base();
	(void)info.five_level();
	std::unique_ptr<source::PhysicalMemory> memory;
	if (size > 0 && source::PhysicalMemory::over_bytes({data, size}, {{0, size, 0}}, memory).ok()) {
		uint64_t at = 0;
		if (kernel::find_vmcoreinfo(*memory, info, &at).ok() && (at >= size || !info.kernel_offset))
			__builtin_trap();
	}
	return 0;
}
