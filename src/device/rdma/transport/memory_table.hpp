// MemoryTable: this process's memory registrations, published to peers; RemoteTable: a peer's,
// as this process sees it (see transport.hpp for the protocol).
#pragma once

#include "device/rdma/transport/shared_region.hpp"
#include "device/rdma/transport/status.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace softdpu::device::rdma::transport {

inline constexpr uint64_t kTableMagic = 0x4c424154414d4453ull;  // "SDMATABL"
inline constexpr uint64_t kSharedMagic = 0x4853414d44524453ull; // "SDRDMASH"
inline constexpr uint32_t kTableVersion = 1;
inline constexpr uint32_t kTableEntries = 8192;
inline constexpr uint32_t kAccessorSlots = 128;
inline constexpr uint32_t kLockStripes = 1024;
inline constexpr std::chrono::milliseconds kRemoveWait{1000};
inline constexpr std::chrono::milliseconds kLockWait{2000};

// IBV_ACCESS_* bit values (enum ibv_access_flags), so callers can pass verbs' flags unchanged.
inline constexpr uint32_t kAccessLocalWrite = 1;
inline constexpr uint32_t kAccessRemoteWrite = 2;
inline constexpr uint32_t kAccessRemoteRead = 4;
inline constexpr uint32_t kAccessRemoteAtomic = 8;

enum class EntryState : uint32_t { free = 0, valid = 1, removing = 2, retired = 3 };

// ---- The rules file: written by its owner only (sealed with F_SEAL_FUTURE_WRITE) ----

struct alignas(64) TableEntry {
	std::atomic<uint32_t> state; // EntryState
	std::atomic<uint32_t> key;   // index << 8 | tag (tag 1..255)
	std::atomic<uint32_t> access;
	std::atomic<uint32_t> pd_id;
	std::atomic<uint64_t> iova;
	std::atomic<uint64_t> addr; // where iova lies in the owner's address space
	std::atomic<uint64_t> length;
	std::atomic<uint64_t> generation; // bumped by every add of the entry
};

struct alignas(64) TableHeader {
	std::atomic<uint64_t> magic;
	uint32_t version;
	uint32_t num_entries;
	uint32_t owner_pid;
	uint32_t accessor_slots;
	uint32_t lock_stripes;
	uint32_t reserved;
};

struct TableRules {
	TableHeader header;
	TableEntry entries[kTableEntries];
};

// ---- The shared file: written by the owner and every accessing process ----

// One per accessing process: remove() waits until no live accessor is inside an access.
struct alignas(64) AccessorSlot {
	std::atomic<uint32_t> pid; // 0: free
	std::atomic<uint32_t> in_access;
};

// Remote atomics on address A of the owner take stripe (A / 8) % kLockStripes. The word holds the
// holder's pid (0: free); a holder that exited is broken by the next taker.
struct alignas(64) LockStripe {
	std::atomic<uint32_t> holder;
};

struct alignas(64) SharedHeader {
	std::atomic<uint64_t> magic;
	uint32_t owner_pid;
	uint32_t reserved;
};

struct TableShared {
	SharedHeader header;
	AccessorSlot slots[kAccessorSlots];
	LockStripe locks[kLockStripes];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
	      "shared-memory atomics must be lock-free");

struct Registration {
	uint32_t key = 0;
	uint32_t access = 0;
	uint32_t pd_id = 0;
	uint64_t iova = 0;
	uint64_t addr = 0;
	uint64_t length = 0;
};

// Checks [iova, iova + length) of an access against entry (a snapshot, or the live entry of a
// table: read once each). ok with *addr = where iova lies in the owner, or remote_access_error.
// length 0 checks only key, state, access and PD.
Status check_entry(const TableEntry &entry, uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access,
		   uint32_t pd_id, uint64_t *addr) noexcept;

class MemoryTable {
public:
	// This process's table, made on first use (a forked child gets a fresh one). Null when the
	// files cannot be made (logged).
	static MemoryTable *instance() noexcept;

	// Registers [addr, addr + length) seen by peers at [iova, iova + length). *key: index << 8 |
	// tag, never 0, the tag rotating 1..255 across the entry's lives. invalid_argument (length 0 or
	// a wrapping range), no_resources (all kTableEntries in use). Thread-safe.
	Status add(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id,
		   uint32_t *key) noexcept;
	// The same with the caller's tag byte (an mlx5 mkey's variant byte, mkey_7_0): *key = index << 8
	// | tag. Tag 0 is allowed, except that key 0 is never handed out (index 0 is then skipped).
	Status add_tagged(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id, uint8_t tag,
			  uint32_t *key) noexcept;
	// Makes key invalid (no access can start any more), then waits up to `wait` until no live
	// accessor process is inside an access; the entry is reused after that. ok; invalid_argument
	// for a key that is not registered. When an accessor stays inside an access past `wait`
	// (stopped, starved), still ok, logged, and the entry is retired for good (never reused), so
	// a late access can never match a new registration. Thread-safe.
	Status remove(uint32_t key, std::chrono::milliseconds wait = kRemoveWait) noexcept;
	// The registration of key while it is valid.
	std::optional<Registration> lookup(uint32_t key) const noexcept;
	// check_entry() on key's entry, for local (lkey) checks: ok with *addr where iova lies here, or
	// remote_access_error (the caller reports it as a local protection error).
	Status check(uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access, uint32_t pd_id,
		     uint64_t *addr) const noexcept;

	int rules_fd() const noexcept { return rules_.fd(); }
	int shared_fd() const noexcept { return shared_.fd(); }
	uint32_t owner_pid() const noexcept { return owner_pid_; }

	MemoryTable(const MemoryTable &) = delete;
	MemoryTable &operator=(const MemoryTable &) = delete;
	~MemoryTable() = default;

private:
	MemoryTable() = default;
	Status init() noexcept;
	// add and add_tagged: tag < 0 rotates the entry's tag 1..255.
	Status add_entry(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id, int tag,
			 uint32_t *key) noexcept;
	TableRules &rules() const noexcept { return *static_cast<TableRules *>(rules_.data()); }
	TableShared &shared() const noexcept { return *static_cast<TableShared *>(shared_.data()); }

	SharedRegion rules_;
	SharedRegion shared_;
	uint32_t owner_pid_ = 0;
	std::mutex mutex_;
	// Free entries, oldest first (a ring of kTableEntries), so a key's index comes back as late
	// as possible; with the tag, a stale key matches again only after 255 lives of its entry.
	std::vector<uint32_t> free_;
	size_t free_head_ = 0;
	size_t free_count_ = 0;
	std::vector<uint8_t> tags_;
};

// A peer's table, mapped from the descriptors it sent (rules read-only). One per peer table in a
// process: Peers to the same process share it and its accessor slot.
class RemoteTable {
public:
	// Validates (refused, logged): memfds with kRegionSeals (and F_SEAL_FUTURE_WRITE for rules) of
	// exactly the layouts' sizes, magics, version, counts, owner == owner_pid.
	static Status open(int rules_fd, int shared_fd, uint32_t owner_pid, std::shared_ptr<RemoteTable> *out) noexcept;
	~RemoteTable();
	RemoteTable(const RemoteTable &) = delete;
	RemoteTable &operator=(const RemoteTable &) = delete;

	// The accessor protocol: enter (in_access++ on this process's slot), check, copy, leave.
	void enter() noexcept { slot_->in_access.fetch_add(1, std::memory_order_seq_cst); }
	void leave() noexcept { slot_->in_access.fetch_sub(1, std::memory_order_release); }
	// Between enter() and leave() only.
	Status check(uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access, uint32_t pd_id,
		     uint64_t *addr) const noexcept;
	// The stripe lock for remote atomics at owner address addr. lock() never wedges on a holder
	// that exited (it takes the lock over); peer_gone when the owner itself exited while we
	// waited, system_error (logged) when a live process held it longer than kLockWait (a stopped
	// process, or a peer writing its shared file to block us).
	Status lock(uint64_t addr) noexcept;
	void unlock(uint64_t addr) noexcept;
	uint32_t owner_pid() const noexcept { return owner_pid_; }

private:
	RemoteTable() = default;
	LockStripe &stripe(uint64_t addr) const noexcept;

	SharedRegion rules_;
	SharedRegion shared_;
	uint32_t owner_pid_ = 0;
	uint64_t inode_ = 0;
	AccessorSlot *slot_ = nullptr;
};

} // namespace softdpu::device::rdma::transport
