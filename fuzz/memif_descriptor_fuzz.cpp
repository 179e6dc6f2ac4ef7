// Fuzz target: descriptor validation. Whatever region table and descriptors the peer makes up,
// resolve_descriptor returns either nullptr or a range wholly inside the named region; the test
// touches every byte it is given, so AddressSanitizer catches any range that escapes.
#include "memif/protocol.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

using softdpu::memif::Descriptor;
using softdpu::memif::RegionBounds;
using softdpu::memif::resolve_descriptor;

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	// Byte 0: number of regions (0..3); then 2 bytes of size per region (up to 64 KiB each).
	const size_t region_count = data[0] % 4;
	size_t at = 1;
	if (size < at + 2 * region_count)
		return 0;
	std::vector<std::vector<uint8_t>> memory(region_count);
	std::vector<RegionBounds> regions(region_count);
	for (size_t i = 0; i < region_count; ++i, at += 2) {
		// Never empty: a mapped region has at least one byte (empty ones are refused earlier).
		const size_t region_size = 1 + (size_t(data[at]) | (size_t(data[at + 1]) << 8));
		memory[i].resize(region_size);
		regions[i] = RegionBounds{memory[i].data(), region_size};
	}
	// The rest: 16-byte descriptors exactly as they lie in a ring.
	for (; at + sizeof(Descriptor) <= size; at += sizeof(Descriptor)) {
		Descriptor desc;
		std::memcpy(&desc, data + at, sizeof desc);
		uint8_t *resolved = resolve_descriptor(regions, desc);
		const bool inside =
		    desc.region < region_count && uint64_t(desc.offset) + desc.length <= regions[desc.region].size;
		require((resolved != nullptr) == inside);
		if (resolved != nullptr) {
			require(resolved == regions[desc.region].base + desc.offset);
			std::memset(resolved, 0xa5, desc.length);
		}
	}
	return 0;
}
