// Fuzz target: the export descriptor parser (doca_mmap_create_from_export and
// doca_sync_event_create_from_export feed it whatever the application passes). It must accept or
// reject any bytes with a reason, never crash, and what it accepts must re-encode to the same bytes.
#include "core/xproc/blob.hpp"

#include <cstdint>
#include <cstring>

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	softdpu::xproc::ExportBlob blob;
	const char *why = nullptr;
	const doca_error_t result = softdpu::xproc::decode(data, size, &blob, &why);
	if (result != DOCA_SUCCESS) {
		require(result == DOCA_ERROR_INVALID_VALUE && why != nullptr && why[0] != '\0');
		return 0;
	}
	require(size == softdpu::xproc::kBlobSize);
	require(blob.length != 0 && blob.base <= UINT64_MAX - blob.length);
	require(std::memchr(blob.dev_name.data(), '\0', blob.dev_name.size()) != nullptr);
	softdpu::xproc::BlobBytes again;
	softdpu::xproc::encode(blob, again);
	require(std::memcmp(again.data(), data, size) == 0);
	return 0;
}
