// Fuzz target: the BTF reader accepts or rejects any bytes with a reason, and every query on an
// accepted blob (sizes, members, arrays, qualifier chains) stays in bounds and terminates.
#include "apsh/kernel/btf.hpp"

#include <cstdint>
#include <string_view>

using softdpu::apsh::kernel::Btf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Btf btf;
	auto status = Btf::parse({data, size}, btf);
	if (!status.ok()) {
		if (status.reason.empty())
			__builtin_trap();
		return 0;
	}
	uint32_t types = static_cast<uint32_t>(btf.type_count());
	for (uint32_t id = 0; id <= types + 1 && id < 4096; id++) {
		(void)btf.size_of(id);
		(void)btf.array_info(id);
		uint32_t resolved = btf.resolve(id);
		std::string_view name = btf.name(resolved);
		if (!name.empty()) {
			(void)btf.struct_size(name);
			(void)btf.member(name, name);
		}
		(void)btf.member(id, "a");
		(void)btf.member(id, "a.b.c");
	}
	return 0;
}
