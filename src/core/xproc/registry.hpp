// The export registry: two memfds every exporting process keeps (no name anywhere, so nothing can
// leak, even on kill -9). Importers open them through /proc/<exporter>/fd/<n> (same uid, the same
// rule as process_vm_readv):
//
//   - the access rules (RegistryLayout): an entry per export {id, generation, state, base, length,
//     access, 128-bit secret}. Only the exporter writes them: the file is sealed against writes
//     through any other mapping or descriptor (F_SEAL_FUTURE_WRITE), so importers map it
//     read-only and no peer can widen an export;
//   - the shared state (SharedLayout): per entry, each importing process's accessor slot {pid,
//     start time, accesses in progress, imports held} and a sync event's value and futex word.
//     Both sides write it.
//
// Both files are sealed against shrinking and growing, so no peer can make another process's
// mapping fault (SIGBUS). Each importer marks every access in its slot: in_access++ -> re-check
// state and generation -> copy -> re-check -> in_access--; revoke marks the entry revoked, then
// waits until no live importer is inside an access (seq_cst on both sides).
//
// An import is bound to the address space the export was made in: writes go through
// /proc/<exporter>/mem opened at import (it keeps referring to that address space, and fails once
// the exporter exits or calls exec), reads prove the address space in the same process_vm_readv
// (a random nonce read from the exporter's own mapping of the rules file). See docs/host-dpu.md.
#pragma once

#include "core/xproc/blob.hpp"

#include <doca_error.h>

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace softdpu::xproc {

inline constexpr uint64_t kRegistryMagic = 0x5853494745525844ull; // "DXREGISX"
inline constexpr uint64_t kSharedMagic = 0x4552414853584450ull;   // "PDXSHARE"
inline constexpr uint32_t kRegistryVersion = 2;
inline constexpr uint32_t kRegistryEntries = 1024;
inline constexpr uint32_t kAccessorSlots = 16;

enum EntryState : uint32_t { entry_free = 0, entry_active = 1, entry_revoked = 2, entry_quarantined = 3 };

// ---- The access rules: written by the exporter only ----

struct alignas(64) RegistryEntry {
	std::atomic<uint32_t> state;
	std::atomic<uint32_t> kind;
	std::atomic<uint64_t> generation;
	std::atomic<uint64_t> export_id;
	std::atomic<uint64_t> base;
	std::atomic<uint64_t> length;
	std::atomic<uint64_t> secret[2];
	std::atomic<uint32_t> access;
};

struct alignas(64) RegistryHeader {
	std::atomic<uint64_t> magic;
	uint32_t version;
	uint32_t num_entries;
	uint32_t owner_pid;
	int32_t shared_fd; // the shared-state memfd's descriptor number in the exporter
	uint64_t owner_start_time;
	uint64_t shared_inode;
	// Random, and where this header lies in the exporter: reading the nonce there proves an access
	// reaches the address space the registry was made in (not a program the exporter exec'd).
	uint64_t nonce[2];
	uint64_t mapped_at;
};

struct RegistryLayout {
	RegistryHeader header;
	RegistryEntry entries[kRegistryEntries];
};

// ---- The shared state: written by the exporter and its importers ----

struct AccessorSlot {
	std::atomic<uint32_t> pid;        // importing process, 0 when the slot is free
	std::atomic<uint32_t> in_access;  // accesses of that process in progress
	std::atomic<uint64_t> start_time; // of that process (pid reuse guard); 0 while being claimed
	std::atomic<uint64_t> generation; // of the entry's life the imports were made in
	std::atomic<uint32_t> users;      // imports of the entry held by that process
	uint32_t reserved;
};

struct alignas(64) SharedEntry {
	// Sync events: the value, a futex word bumped after every update, and sleeping waiters.
	alignas(64) uint64_t value; // accessed with std::atomic_ref only
	std::atomic<uint32_t> futex_word;
	std::atomic<uint32_t> waiters;
	alignas(64) AccessorSlot slots[kAccessorSlots];
};

struct alignas(64) SharedHeader {
	std::atomic<uint64_t> magic;
	uint32_t owner_pid;
	uint32_t reserved;
	uint64_t owner_start_time;
};

struct SharedLayout {
	SharedHeader header;
	SharedEntry entries[kRegistryEntries];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
	      "shared-memory atomics must be lock-free");

// True when the entry's accessor slot belongs to a process that is certainly gone (a slot being
// claimed, or whose owner /proc cannot tell about, is not).
bool slot_owner_dead(const AccessorSlot &slot) noexcept;

// The importing processes of one life (generation) of an entry: none came, at least one is alive,
// or every one that came has died.
enum class Importers { none, alive, all_dead };
Importers importers_of(const SharedEntry &entry, uint64_t generation) noexcept;

// ---- Exporter side ----

class Registry {
public:
	// The registry of this process, created on first use; null (and *error set) if it cannot be.
	// A forked child gets a registry of its own. The registry files failing to be made
	// (memfd_create, ftruncate, sealing), or random bytes for the nonce or a secret, is what a
	// failing device driver is on a BlueField: DOCA_ERROR_DRIVER, as DOCA documents for mmap
	// exports. Mapping the files failing and a full registry are DOCA_ERROR_NO_MEMORY.
	static Registry *instance(doca_error_t *error) noexcept;

	// Publishes an active entry and fills the blob fields that describe it. Thread-safe.
	doca_error_t publish(ExportKind kind, uint64_t base, uint64_t length, uint32_t access, ExportBlob *blob,
			     uint32_t *index) noexcept;
	// Marks the entry revoked (no access can start any more) and waits, at most `wait`, until no
	// live importer is inside an access. True when none is: then no access is in progress and none
	// can start, and the entry may be released. False when a live importer is still inside one
	// (stalled: page faults, SIGSTOP, starvation): the entry stays revoked; call again later.
	bool revoke(uint32_t index, std::chrono::milliseconds wait) noexcept;
	// Frees a revoked entry whose accesses have drained (revoke returned true) for reuse.
	void release(uint32_t index) noexcept;
	// Retires a revoked entry for good (never reused): for state that lives in the registry
	// itself (sync events), where a late access can land only in the entry.
	void quarantine(uint32_t index) noexcept;

	RegistryEntry &entry(uint32_t index) noexcept { return layout_->entries[index]; }
	SharedEntry &shared(uint32_t index) noexcept { return shared_->entries[index]; }
	int fd() const noexcept { return fd_; }
	int shared_fd() const noexcept { return shared_fd_; }

	Registry(const Registry &) = delete;
	Registry &operator=(const Registry &) = delete;
	~Registry();

private:
	Registry() = default;
	doca_error_t init() noexcept;

	int fd_ = -1;
	int shared_fd_ = -1;
	uint64_t inode_ = 0;
	uint32_t owner_pid_ = 0;
	RegistryLayout *layout_ = nullptr;
	SharedLayout *shared_ = nullptr;
	std::mutex mutex_;
	std::vector<uint32_t> free_;
	uint64_t next_export_id_ = 1;
};

// How long doca_mmap_stop/destroy and sync event destroy wait for importers to leave an access.
inline constexpr std::chrono::milliseconds kRevokeWait{1000};

// ---- Importer side ----

// One import of one registry entry: read-only mappings of the exporter's access rules, a mapping
// of the shared state with a claimed accessor slot, a pidfd on the exporter and a handle on its
// address space (/proc/<pid>/mem). Implements remote reads and writes under the access protocol.
class Import {
public:
	// Validates blob against the exporter's live registry entry. Errors (logged):
	// NOT_PERMITTED (other user, exporter gone or exec'd, registry not reachable or not sealed,
	// forged, revoked or replayed), NOT_SUPPORTED (other host), NO_MEMORY.
	static doca_error_t open(const ExportBlob &blob, std::unique_ptr<Import> *out) noexcept;
	~Import();
	Import(const Import &) = delete;
	Import &operator=(const Import &) = delete;

	const ExportBlob &blob() const noexcept { return blob_; }
	SharedEntry &shared() noexcept { return *shared_; }
	// The exporter still runs the address space the export was made in (it has not exited and has
	// not called exec). Two system calls; not for the data path.
	bool exporter_alive() const noexcept;
	// The export is still active with the generation this import was made from.
	bool export_active() const noexcept;

	// local[i] <-> remote[i] scatter/gather (walked in order on both sides, equal totals). write:
	// local -> remote. Remote ranges must lie inside the export and the export must grant the
	// access. NOT_CONNECTED: export revoked (before or during the copy), exporter gone or exec'd;
	// NOT_PERMITTED: out of bounds or no right; IO_FAILED: the copy failed otherwise (e.g. the
	// exporter unmapped the memory). A failed read leaves nothing of another program in local.
	doca_error_t transfer(bool write, const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept;

	// Accessor protocol, for users that touch shared state other than through transfer(). False
	// when the export was revoked, or in a forked child of the importing process.
	bool begin_access() noexcept;
	void end_access() noexcept;

private:
	Import() = default;
	bool in_owner() const noexcept;
	// mem_fd_ still reaches the address space that holds the registry (reads its nonce there).
	bool same_address_space() const noexcept;
	doca_error_t read_all(const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept;
	doca_error_t read_batch(struct iovec *local_v, struct iovec *remote_v, size_t pieces, size_t total) noexcept;
	doca_error_t write_all(const struct iovec *local, size_t local_count, const struct iovec *remote,
			       size_t remote_count) noexcept;
	doca_error_t write_run(const struct iovec *run, size_t pieces, uint64_t start, size_t total) noexcept;

	ExportBlob blob_;
	const void *rules_ = nullptr; // RegistryLayout, read-only
	void *state_ = nullptr;       // SharedLayout
	const RegistryEntry *entry_ = nullptr;
	SharedEntry *shared_ = nullptr;
	AccessorSlot *slot_ = nullptr;
	uint64_t fork_epoch_ = 0; // this process's (an import is unusable in a forked child)
	int pidfd_ = -1;
	int mem_fd_ = -1;         // /proc/<exporter>/mem: the address space of the export
	uint64_t nonce_[2] = {};  // the registry's nonce ...
	uint64_t nonce_addr_ = 0; // ... and where it lies in the exporter
};

} // namespace softdpu::xproc
