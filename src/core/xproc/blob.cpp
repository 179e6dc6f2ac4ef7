#include "core/xproc/blob.hpp"

#include "common/bytes.hpp"

#include <doca_types.h>

#include <cstdio>
#include <cstring>

namespace softdpu::xproc {

namespace {

// Field offsets (see docs/host-dpu.md).
constexpr size_t kMagic = 0, kVersion = 4, kKind = 6, kAccess = 8, kRegistryFd = 12, kBase = kBlobOffsetBase,
		 kLength = kBlobOffsetLength, kExportId = 32, kGeneration = kBlobOffsetGeneration,
		 kSecret = kBlobOffsetSecret, kPid = 64, kUid = kBlobOffsetUid, kStartTime = 72, kBootId = 80,
		 kInode = 96, kEntry = 104, kDevSide = 108, kDevType = 109, kReserved16 = 110, kDevPci = 112,
		 kReserved32 = 116, kDevName = 120, kChecksum = kBlobChecksumOffset;
static_assert(kDevName + kDeviceNameSize == kChecksum);

constexpr uint32_t kAllAccess = (DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING << 1) - 1;

template <class T> void put(uint8_t *bytes, size_t offset, T value) noexcept
{
	common::store_le<T>(bytes + offset, value);
}

template <class T> T get(const uint8_t *bytes, size_t offset) noexcept
{
	return common::load_le<T>(bytes + offset);
}

} // namespace

const char *to_string(ExportKind kind) noexcept
{
	switch (kind) {
	case ExportKind::pci:
		return "PCI export";
	case ExportKind::rdma:
		return "RDMA export";
	case ExportKind::sync_event:
		return "sync event export";
	}
	return "unknown export";
}

uint64_t blob_checksum(const uint8_t *bytes) noexcept
{
	uint64_t hash = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < kChecksum; ++i) {
		hash ^= bytes[i];
		hash *= 0x100000001b3ull;
	}
	return hash;
}

void encode(const ExportBlob &blob, BlobBytes &out) noexcept
{
	uint8_t *b = out.data();
	std::memset(b, 0, out.size());
	put<uint32_t>(b, kMagic, kBlobMagic);
	put<uint16_t>(b, kVersion, kBlobVersion);
	put<uint16_t>(b, kKind, static_cast<uint16_t>(blob.kind));
	put<uint32_t>(b, kAccess, blob.access);
	put<int32_t>(b, kRegistryFd, blob.registry_fd);
	put<uint64_t>(b, kBase, blob.base);
	put<uint64_t>(b, kLength, blob.length);
	put<uint64_t>(b, kExportId, blob.export_id);
	put<uint64_t>(b, kGeneration, blob.generation);
	put<uint64_t>(b, kSecret, blob.secret[0]);
	put<uint64_t>(b, kSecret + 8, blob.secret[1]);
	put<uint32_t>(b, kPid, blob.exporter_pid);
	put<uint32_t>(b, kUid, blob.uid);
	put<uint64_t>(b, kStartTime, blob.exporter_start_time);
	std::memcpy(b + kBootId, blob.boot_id.data(), blob.boot_id.size());
	put<uint64_t>(b, kInode, blob.registry_inode);
	put<uint32_t>(b, kEntry, blob.entry_index);
	b[kDevSide] = blob.dev_side;
	b[kDevType] = blob.dev_type;
	put<uint32_t>(b, kDevPci, blob.dev_pci);
	std::memcpy(b + kDevName, blob.dev_name.data(), kDeviceNameSize);
	b[kDevName + kDeviceNameSize - 1] = '\0';
	put<uint64_t>(b, kChecksum, blob_checksum(b));
}

doca_error_t decode(const void *data, size_t len, ExportBlob *blob, const char **why) noexcept
{
	const auto fail = [why](const char *reason) {
		*why = reason;
		return DOCA_ERROR_INVALID_VALUE;
	};
	if (data == nullptr)
		return fail("no descriptor");
	if (len < kBlobSize)
		return fail("descriptor is truncated");
	if (len > kBlobSize)
		return fail("descriptor is longer than any softdpu export descriptor");
	const auto *b = static_cast<const uint8_t *>(data);
	if (get<uint32_t>(b, kMagic) != kBlobMagic)
		return fail("not a softdpu export descriptor (bad magic)");
	if (get<uint16_t>(b, kVersion) != kBlobVersion)
		return fail("unsupported export descriptor version");
	if (get<uint64_t>(b, kChecksum) != blob_checksum(b))
		return fail("export descriptor is corrupted (checksum mismatch)");
	const uint16_t kind = get<uint16_t>(b, kKind);
	if (kind < 1 || kind > 3)
		return fail("unknown export kind");
	ExportBlob out;
	out.kind = static_cast<ExportKind>(kind);
	out.access = get<uint32_t>(b, kAccess);
	if ((out.access & ~kAllAccess) != 0)
		return fail("unknown access flags");
	out.registry_fd = get<int32_t>(b, kRegistryFd);
	if (out.registry_fd < 0)
		return fail("bad registry descriptor number");
	out.base = get<uint64_t>(b, kBase);
	out.length = get<uint64_t>(b, kLength);
	if (out.length == 0 || out.base > UINT64_MAX - out.length)
		return fail("bad memory range");
	out.export_id = get<uint64_t>(b, kExportId);
	out.generation = get<uint64_t>(b, kGeneration);
	out.secret[0] = get<uint64_t>(b, kSecret);
	out.secret[1] = get<uint64_t>(b, kSecret + 8);
	out.exporter_pid = get<uint32_t>(b, kPid);
	if (out.exporter_pid == 0 || out.exporter_pid > (1u << 22))
		return fail("bad exporter pid");
	out.uid = get<uint32_t>(b, kUid);
	out.exporter_start_time = get<uint64_t>(b, kStartTime);
	std::memcpy(out.boot_id.data(), b + kBootId, out.boot_id.size());
	out.registry_inode = get<uint64_t>(b, kInode);
	out.entry_index = get<uint32_t>(b, kEntry);
	out.dev_side = b[kDevSide];
	out.dev_type = b[kDevType];
	if (out.dev_side > 1 || out.dev_type > 2)
		return fail("bad device identity");
	if (get<uint16_t>(b, kReserved16) != 0 || get<uint32_t>(b, kReserved32) != 0)
		return fail("reserved fields are not zero");
	out.dev_pci = get<uint32_t>(b, kDevPci);
	std::memcpy(out.dev_name.data(), b + kDevName, kDeviceNameSize);
	if (std::memchr(out.dev_name.data(), '\0', kDeviceNameSize) == nullptr || out.dev_name[0] == '\0')
		return fail("bad device name");
	*blob = out;
	return DOCA_SUCCESS;
}

void set_exporting_device(ExportBlob &blob, const device::Function &function) noexcept
{
	blob.dev_side = function.side == device::Side::host ? 0 : 1;
	blob.dev_type = static_cast<uint8_t>(function.type);
	blob.dev_pci = static_cast<uint32_t>(function.pci.domain) << 16 | static_cast<uint32_t>(function.pci.bus) << 8 |
		       static_cast<uint32_t>(function.pci.device) << 3 | function.pci.function;
	std::snprintf(blob.dev_name.data(), blob.dev_name.size(), "%s", function.name.c_str());
}

} // namespace softdpu::xproc
