// The export registry: a table every exporting process keeps in a memfd (no name anywhere, so
// nothing can leak, even on kill -9). Importers open it through /proc/<exporter>/fd/<n> (same uid,
// the same rule as process_vm_readv) and map it shared, so both sides see one table:
//
//   - the exporter publishes an entry per export {id, generation, state, base, length, access,
//     128-bit secret} and revokes it at doca_mmap_stop/destroy;
//   - each importing process claims an accessor slot in the entry (pid + start time) and marks
//     every access in it: in_access++ -> re-check state and generation -> copy -> in_access--;
//   - revoke marks the entry revoked, then waits (bounded) until no live importer is inside an
//     access, so once it returns no access can be in progress or start (seq_cst on both sides).
//
// Sync events keep their 64-bit value in their entry (a futex word next to it): see
// src/sync_event/ and docs/host-dpu.md.
#pragma once

#include "core/xproc/blob.hpp"

#include <doca_error.h>

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace softdpu::xproc {

inline constexpr uint64_t kRegistryMagic = 0x5853494745525844ull; // "DXREGISX"
inline constexpr uint32_t kRegistryVersion = 1;
inline constexpr uint32_t kRegistryEntries = 1024;
inline constexpr uint32_t kAccessorSlots = 16;

enum EntryState : uint32_t { kEntryFree = 0, kEntryActive = 1, kEntryRevoked = 2, kEntryQuarantined = 3 };

struct AccessorSlot {
	std::atomic<uint32_t> pid;        // importing process, 0 when the slot is free
	std::atomic<uint32_t> in_access;  // accesses of that process in progress
	std::atomic<uint64_t> start_time; // of that process (pid reuse guard)
	std::atomic<uint32_t> users;      // imports of the entry held by that process
	uint32_t reserved;
};

struct alignas(64) RegistryEntry {
	std::atomic<uint32_t> state;
	std::atomic<uint32_t> kind;
	std::atomic<uint64_t> generation;
	std::atomic<uint64_t> export_id;
	std::atomic<uint64_t> base;
	std::atomic<uint64_t> length;
	std::atomic<uint64_t> secret[2];
	std::atomic<uint32_t> access;
	std::atomic<uint32_t> importers_died; // set by whoever finds a dead importer in a slot
	// Sync events: the value, a futex word bumped after every update, and sleeping waiters.
	alignas(64) uint64_t value; // accessed with std::atomic_ref only
	std::atomic<uint32_t> futex_word;
	std::atomic<uint32_t> waiters;
	alignas(64) AccessorSlot slots[kAccessorSlots];
};

struct alignas(64) RegistryHeader {
	std::atomic<uint64_t> magic;
	uint32_t version;
	uint32_t num_entries;
	uint32_t owner_pid;
	uint32_t reserved;
	uint64_t owner_start_time;
};

struct RegistryLayout {
	RegistryHeader header;
	RegistryEntry entries[kRegistryEntries];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
	      "shared-memory atomics must be lock-free");

// True when the entry's accessor slot belongs to a process that is gone.
bool slot_owner_dead(const AccessorSlot &slot) noexcept;

// ---- Exporter side ----

class Registry {
public:
	// The registry of this process, created on first use; null (and *error set) if it cannot be.
	// A forked child gets a registry of its own. The registry file failing to be made (memfd_create,
	// ftruncate), or the secret's random bytes in publish, is what a failing device driver is on a
	// BlueField: DOCA_ERROR_DRIVER, as DOCA documents for mmap exports. Mapping the file failing and
	// a full registry are DOCA_ERROR_NO_MEMORY.
	static Registry *instance(doca_error_t *error) noexcept;

	// Publishes an active entry and fills the blob fields that describe it. Thread-safe.
	doca_error_t publish(ExportKind kind, uint64_t base, uint64_t length, uint32_t access, ExportBlob *blob,
			     uint32_t *index) noexcept;
	// Marks the entry revoked, waits (at most kRevokeWait) for live importers to leave their
	// accesses, then frees it for reuse. After it returns no importer access is in progress.
	void revoke(uint32_t index) noexcept;

	RegistryEntry &entry(uint32_t index) noexcept { return layout_->entries[index]; }
	int fd() const noexcept { return fd_; }

	Registry(const Registry &) = delete;
	Registry &operator=(const Registry &) = delete;
	~Registry();

private:
	Registry() = default;
	doca_error_t init() noexcept;

	int fd_ = -1;
	uint64_t inode_ = 0;
	uint32_t owner_pid_ = 0;
	RegistryLayout *layout_ = nullptr;
	std::mutex mutex_;
	std::vector<uint32_t> free_;
	uint64_t next_export_id_ = 1;
};

// ---- Importer side ----

// One import of one registry entry: the mapping of the exporter's registry, a pidfd on the
// exporter and a claimed accessor slot. Implements remote reads and writes with
// process_vm_readv/writev under the entry's access protocol.
class Import {
public:
	// Validates blob against the exporter's live registry entry. Errors (logged):
	// NOT_PERMITTED (other user, exporter gone, forged, revoked or replayed), NOT_SUPPORTED
	// (other host), INVALID_VALUE (registry unusable), NO_MEMORY.
	static doca_error_t open(const ExportBlob &blob, std::unique_ptr<Import> *out) noexcept;
	~Import();
	Import(const Import &) = delete;
	Import &operator=(const Import &) = delete;

	const ExportBlob &blob() const noexcept { return blob_; }
	RegistryEntry &entry() noexcept { return *entry_; }
	// The exporter is still running (pidfd not readable).
	bool exporter_alive() const noexcept;
	// The export is still active with the generation this import was made from.
	bool export_active() const noexcept;

	// local[i] <-> remote[i] scatter/gather in one system call when possible. write: local ->
	// remote. Remote ranges must lie inside the export and the export must grant the access.
	// NOT_CONNECTED: export revoked or exporter gone; NOT_PERMITTED: out of bounds or no right;
	// IO_FAILED: the copy failed otherwise (e.g. the exporter unmapped the memory).
	doca_error_t transfer(bool write, const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept;

	// Accessor protocol, for users that touch shared state other than through transfer().
	bool begin_access() noexcept;
	void end_access() noexcept;

private:
	Import() = default;

	ExportBlob blob_;
	void *mapping_ = nullptr;
	size_t mapping_len_ = 0;
	RegistryEntry *entry_ = nullptr;
	AccessorSlot *slot_ = nullptr;
	int pidfd_ = -1;
};

} // namespace softdpu::xproc
