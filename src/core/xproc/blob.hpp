// The export descriptor ("blob") that doca_mmap_export_pci/_rdma and
// doca_sync_event_export_to_dpu hand out and that the create_from_export calls take back, in
// another process. Fixed size, little-endian, versioned; see docs/host-dpu.md for the layout.
// decode() trusts nothing: it is fed whatever the application passes (and the fuzzer).
#pragma once

#include "core/xproc/identity.hpp"
#include "device/topology.hpp"

#include <doca_error.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace softdpu::xproc {

enum class ExportKind : uint16_t { pci = 1, rdma = 2, sync_event = 3 };

const char *to_string(ExportKind kind) noexcept;

inline constexpr uint32_t kBlobMagic = 0x58504453; // "SDPX"
inline constexpr uint16_t kBlobVersion = 1;
inline constexpr size_t kBlobSize = 192;
inline constexpr size_t kDeviceNameSize = 64;

struct ExportBlob {
	ExportKind kind = ExportKind::pci;
	uint32_t access = 0; // DOCA_ACCESS_FLAG_* of the export
	int32_t registry_fd = -1;
	uint64_t base = 0;
	uint64_t length = 0;
	uint64_t export_id = 0;
	uint64_t generation = 0;
	std::array<uint64_t, 2> secret{};
	uint32_t exporter_pid = 0;
	uint32_t uid = 0;
	uint64_t exporter_start_time = 0;
	BootId boot_id{};
	uint64_t registry_inode = 0;
	uint32_t entry_index = 0;
	// The exporting device: side (0 host, 1 DPU), PCI function type, PCI address, topology name.
	uint8_t dev_side = 0;
	uint8_t dev_type = 0;
	uint32_t dev_pci = 0; // domain << 16 | bus << 8 | device << 3 | function
	std::array<char, kDeviceNameSize> dev_name{};
};

using BlobBytes = std::array<uint8_t, kBlobSize>;

// Records the exporting device (the dev_* fields).
void set_exporting_device(ExportBlob &blob, const device::Function &function) noexcept;

// Serializes with the checksum.
void encode(const ExportBlob &blob, BlobBytes &out) noexcept;

// Parses and checks the structure (size, magic, version, checksum, kind, field ranges). On error
// returns DOCA_ERROR_INVALID_VALUE and points *why at a static explanation.
doca_error_t decode(const void *data, size_t len, ExportBlob *blob, const char **why) noexcept;

// The checksum decode() verifies (FNV-1a 64 of the bytes before it). Exposed for tests that
// patch a field and want the blob to pass the structural checks.
uint64_t blob_checksum(const uint8_t *bytes) noexcept;
inline constexpr size_t kBlobChecksumOffset = kBlobSize - 8;

// Offsets of fields tests patch (uid, secret, generation) to simulate forged blobs.
inline constexpr size_t kBlobOffsetGeneration = 40;
inline constexpr size_t kBlobOffsetSecret = 48;
inline constexpr size_t kBlobOffsetUid = 68;
inline constexpr size_t kBlobOffsetBase = 16;
inline constexpr size_t kBlobOffsetLength = 24;

} // namespace softdpu::xproc
