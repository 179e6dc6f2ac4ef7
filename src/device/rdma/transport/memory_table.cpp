#include "device/rdma/transport/memory_table.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

#include "common/cpu.hpp"
#include "common/process_access.hpp"
#include "common/sdk_log.hpp"

namespace softdpu::device::rdma::transport {

Status check_entry(const TableEntry &entry, uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access,
		   uint32_t pd_id, uint64_t *addr) noexcept
{
	if (entry.state.load(std::memory_order_acquire) != static_cast<uint32_t>(EntryState::valid) ||
	    entry.key.load(std::memory_order_acquire) != key)
		return Status::remote_access_error;
	const uint64_t base = entry.iova.load(std::memory_order_relaxed);
	const uint64_t size = entry.length.load(std::memory_order_relaxed);
	const uint64_t where = entry.addr.load(std::memory_order_relaxed);
	if ((entry.access.load(std::memory_order_relaxed) & required_access) != required_access ||
	    entry.pd_id.load(std::memory_order_relaxed) != pd_id)
		return Status::remote_access_error;
	if (length == 0) {
		*addr = where;
		return Status::ok;
	}
	if (iova < base || iova - base > size || length > size - (iova - base))
		return Status::remote_access_error;
	*addr = where + (iova - base);
	return Status::ok;
}

// ---- MemoryTable ----

MemoryTable *MemoryTable::instance() noexcept
{
	static std::mutex mutex;
	static MemoryTable *current = nullptr;
	std::lock_guard lock(mutex);
	const auto pid = static_cast<uint32_t>(getpid());
	if (current != nullptr && current->owner_pid_ == pid)
		return current;
	// First use, or a forked child still holding its parent's table: that one stays the parent's
	// (leaked on purpose: objects inherited from the parent may still point at it).
	auto *created = new (std::nothrow) MemoryTable();
	if (created == nullptr) {
		SDK_LOG_ERR("rdma transport: cannot create the memory table: out of memory");
		return nullptr;
	}
	if (created->init() != Status::ok) {
		delete created;
		return nullptr;
	}
	current = created;
	return current;
}

Status MemoryTable::init() noexcept
{
	try {
		free_.resize(kTableEntries);
		tags_.assign(kTableEntries, 0);
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("rdma transport: cannot create the memory table: out of memory");
		return Status::no_resources;
	}
	for (uint32_t i = 0; i < kTableEntries; ++i)
		free_[i] = i;
	free_count_ = kTableEntries;
	Status status = SharedRegion::create(sizeof(TableShared), "softdpu-rdma-table-state", &shared_);
	if (status != Status::ok)
		return status;
	// The rules file is written through this mapping only: no other can be made writable.
	status = SharedRegion::create(sizeof(TableRules), "softdpu-rdma-table", &rules_, F_SEAL_FUTURE_WRITE);
	if (status != Status::ok)
		return status;
	owner_pid_ = static_cast<uint32_t>(getpid());
	TableShared &state = shared();
	state.header.owner_pid = owner_pid_;
	state.header.magic.store(kSharedMagic, std::memory_order_release);
	TableHeader &header = rules().header;
	header.version = kTableVersion;
	header.num_entries = kTableEntries;
	header.owner_pid = owner_pid_;
	header.accessor_slots = kAccessorSlots;
	header.lock_stripes = kLockStripes;
	header.magic.store(kTableMagic, std::memory_order_release);
	common::allow_same_user_access();
	return Status::ok;
}

Status MemoryTable::add(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id,
			uint32_t *key) noexcept
{
	return add_entry(addr, length, iova, access, pd_id, -1, key);
}

Status MemoryTable::add_tagged(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id,
			       uint8_t tag, uint32_t *key) noexcept
{
	return add_entry(addr, length, iova, access, pd_id, tag, key);
}

Status MemoryTable::add_entry(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t pd_id, int tag,
			      uint32_t *key) noexcept
{
	if (length == 0 || addr + length < addr || iova + length < iova) {
		SDK_LOG_ERR(
		    "rdma transport: cannot register %llu bytes at 0x%llx (iova 0x%llx): empty or wrapping range",
		    (unsigned long long)length, (unsigned long long)addr, (unsigned long long)iova);
		return Status::invalid_argument;
	}
	std::lock_guard lock(mutex_);
	if (free_count_ == 0) {
		SDK_LOG_ERR("rdma transport: cannot register memory: all %u memory table entries are in use",
			    kTableEntries);
		return Status::no_resources;
	}
	uint32_t index = free_[free_head_];
	free_head_ = (free_head_ + 1) % kTableEntries;
	--free_count_;
	if (index == 0 && tag == 0) {
		// Key 0 is never handed out: index 0 goes back to the end of the ring.
		if (free_count_ == 0) {
			free_head_ = (free_head_ + kTableEntries - 1) % kTableEntries;
			++free_count_;
			SDK_LOG_ERR("rdma transport: cannot register memory with tag 0: no entry other than 0 is free");
			return Status::no_resources;
		}
		free_[(free_head_ + free_count_) % kTableEntries] = index;
		index = free_[free_head_];
		free_head_ = (free_head_ + 1) % kTableEntries;
	}
	tags_[index] = tag < 0 ? static_cast<uint8_t>(tags_[index] % 255 + 1) : static_cast<uint8_t>(tag);
	const uint32_t new_key = index << 8 | tags_[index];
	TableEntry &e = rules().entries[index];
	e.generation.fetch_add(1, std::memory_order_relaxed);
	e.iova.store(iova, std::memory_order_relaxed);
	e.addr.store(addr, std::memory_order_relaxed);
	e.length.store(length, std::memory_order_relaxed);
	e.access.store(access, std::memory_order_relaxed);
	e.pd_id.store(pd_id, std::memory_order_relaxed);
	e.key.store(new_key, std::memory_order_release);
	e.state.store(static_cast<uint32_t>(EntryState::valid), std::memory_order_seq_cst);
	*key = new_key;
	return Status::ok;
}

Status MemoryTable::remove(uint32_t key, std::chrono::milliseconds wait) noexcept
{
	const uint32_t index = key >> 8;
	if (index >= kTableEntries) {
		SDK_LOG_ERR("rdma transport: cannot deregister key 0x%x: no such key", key);
		return Status::invalid_argument;
	}
	TableEntry &e = rules().entries[index];
	{
		std::lock_guard lock(mutex_);
		if (e.state.load(std::memory_order_relaxed) != static_cast<uint32_t>(EntryState::valid) ||
		    e.key.load(std::memory_order_relaxed) != key) {
			SDK_LOG_ERR("rdma transport: cannot deregister key 0x%x: no such key", key);
			return Status::invalid_argument;
		}
		// From here no access can start: accessors enter (seq_cst), then check the state.
		e.state.store(static_cast<uint32_t>(EntryState::removing), std::memory_order_seq_cst);
	}
	bool drained = true;
	const auto deadline = std::chrono::steady_clock::now() + wait;
	for (AccessorSlot &slot : shared().slots) {
		unsigned spins = 0;
		while (drained && slot.in_access.load(std::memory_order_seq_cst) != 0) {
			const uint32_t pid = slot.pid.load(std::memory_order_acquire);
			if (++spins % 64 == 0 && (pid == 0 || common::process_exited(pid))) {
				SDK_LOG_WARN("rdma transport: key 0x%x: accessing process %u died inside an access",
					     key, pid);
				break;
			}
			if (std::chrono::steady_clock::now() >= deadline) {
				SDK_LOG_ERR(
				    "rdma transport: key 0x%x: process %u is still inside an access after %lld ms "
				    "(stopped or starved); the entry is retired, never reused",
				    key, pid, (long long)wait.count());
				drained = false;
				break;
			}
			if (spins < 256)
				sched_yield();
			else
				std::this_thread::sleep_for(std::chrono::microseconds(50));
		}
	}
	std::lock_guard lock(mutex_);
	if (!drained) {
		e.state.store(static_cast<uint32_t>(EntryState::retired), std::memory_order_seq_cst);
		return Status::ok;
	}
	e.state.store(static_cast<uint32_t>(EntryState::free), std::memory_order_seq_cst);
	free_[(free_head_ + free_count_) % kTableEntries] = index;
	++free_count_;
	return Status::ok;
}

std::optional<Registration> MemoryTable::lookup(uint32_t key) const noexcept
{
	const uint32_t index = key >> 8;
	if (index >= kTableEntries)
		return std::nullopt;
	const TableEntry &e = rules().entries[index];
	if (e.state.load(std::memory_order_acquire) != static_cast<uint32_t>(EntryState::valid) ||
	    e.key.load(std::memory_order_acquire) != key)
		return std::nullopt;
	Registration r;
	r.key = key;
	r.access = e.access.load(std::memory_order_relaxed);
	r.pd_id = e.pd_id.load(std::memory_order_relaxed);
	r.iova = e.iova.load(std::memory_order_relaxed);
	r.addr = e.addr.load(std::memory_order_relaxed);
	r.length = e.length.load(std::memory_order_relaxed);
	return r;
}

Status MemoryTable::check(uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access, uint32_t pd_id,
			  uint64_t *addr) const noexcept
{
	const uint32_t index = key >> 8;
	if (index >= kTableEntries)
		return Status::remote_access_error;
	return check_entry(rules().entries[index], key, iova, length, required_access, pd_id, addr);
}

// ---- RemoteTable ----

namespace {

std::mutex &remote_tables_mutex()
{
	static std::mutex mutex;
	return mutex;
}

// The peer tables this process has open, by the rules file's inode (unique while mapped).
std::vector<std::weak_ptr<RemoteTable>> &remote_tables()
{
	static std::vector<std::weak_ptr<RemoteTable>> tables;
	return tables;
}

uint64_t inode_of(int fd) noexcept
{
	struct stat st;
	return fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

} // namespace

Status RemoteTable::open(int rules_fd, int shared_fd, uint32_t owner_pid, std::shared_ptr<RemoteTable> *out) noexcept
{
	unsigned seals = 0;
	size_t size = 0;
	if (classify_fd(rules_fd, &seals, &size) != FdKind::memfd || (seals & F_SEAL_FUTURE_WRITE) == 0) {
		SDK_LOG_ERR("rdma transport: refused the peer's memory table: not a memfd sealed against writes");
		return Status::refused;
	}
	const uint64_t inode = inode_of(rules_fd);
	std::lock_guard lock(remote_tables_mutex());
	auto &tables = remote_tables();
	try {
		for (auto it = tables.begin(); it != tables.end();) {
			std::shared_ptr<RemoteTable> table = it->lock();
			if (!table) {
				it = tables.erase(it);
				continue;
			}
			if (table->inode_ == inode && table->owner_pid_ == owner_pid) {
				*out = std::move(table);
				return Status::ok;
			}
			++it;
		}
		std::shared_ptr<RemoteTable> table(new RemoteTable());
		Status status = SharedRegion::map_received(rules_fd, sizeof(TableRules), &table->rules_, false);
		if (status != Status::ok)
			return status;
		status = SharedRegion::map_received(shared_fd, sizeof(TableShared), &table->shared_, true);
		if (status != Status::ok)
			return status;
		const auto &rules = *static_cast<const TableRules *>(table->rules_.data());
		auto &shared = *static_cast<TableShared *>(table->shared_.data());
		if (rules.header.magic.load(std::memory_order_acquire) != kTableMagic ||
		    rules.header.version != kTableVersion || rules.header.num_entries != kTableEntries ||
		    rules.header.accessor_slots != kAccessorSlots || rules.header.lock_stripes != kLockStripes ||
		    rules.header.owner_pid != owner_pid ||
		    shared.header.magic.load(std::memory_order_acquire) != kSharedMagic ||
		    shared.header.owner_pid != owner_pid) {
			SDK_LOG_ERR("rdma transport: refused the memory table of process %u: not its table, or of "
				    "another version",
				    owner_pid);
			return Status::refused;
		}
		table->owner_pid_ = owner_pid;
		table->inode_ = inode;
		// This process's accessor slot: a free one, else one of a process that exited.
		const auto self = static_cast<uint32_t>(getpid());
		for (int pass = 0; table->slot_ == nullptr && pass < 2; ++pass) {
			for (AccessorSlot &slot : shared.slots) {
				uint32_t expected = slot.pid.load(std::memory_order_acquire);
				if (pass == 0 ? expected != 0 : expected == 0 || !common::process_exited(expected))
					continue;
				if (slot.pid.compare_exchange_strong(expected, self, std::memory_order_acq_rel)) {
					slot.in_access.store(0, std::memory_order_seq_cst);
					table->slot_ = &slot;
					break;
				}
			}
		}
		if (table->slot_ == nullptr) {
			SDK_LOG_ERR("rdma transport: process %u already has %u connected processes", owner_pid,
				    kAccessorSlots);
			return Status::no_resources;
		}
		tables.push_back(table);
		*out = std::move(table);
	} catch (const std::bad_alloc &) {
		return Status::no_resources;
	}
	return Status::ok;
}

RemoteTable::~RemoteTable()
{
	if (slot_ != nullptr)
		slot_->pid.store(0, std::memory_order_release);
}

Status RemoteTable::check(uint32_t key, uint64_t iova, uint64_t length, uint32_t required_access, uint32_t pd_id,
			  uint64_t *addr) const noexcept
{
	const uint32_t index = key >> 8;
	if (index >= kTableEntries)
		return Status::remote_access_error;
	const auto &rules = *static_cast<const TableRules *>(rules_.data());
	return check_entry(rules.entries[index], key, iova, length, required_access, pd_id, addr);
}

LockStripe &RemoteTable::stripe(uint64_t addr) const noexcept
{
	auto &shared = *static_cast<TableShared *>(shared_.data());
	return shared.locks[(addr / 8) % kLockStripes];
}

Status RemoteTable::lock(uint64_t addr) noexcept
{
	std::atomic<uint32_t> &word = stripe(addr).holder;
	const auto self = static_cast<uint32_t>(getpid());
	std::chrono::steady_clock::time_point deadline{};
	for (unsigned spins = 1;; ++spins) {
		uint32_t expected = 0;
		if (word.load(std::memory_order_relaxed) == 0 &&
		    word.compare_exchange_weak(expected, self, std::memory_order_acquire, std::memory_order_relaxed))
			return Status::ok;
		if (spins % 1024 != 0) {
			common::cpu_relax();
			continue;
		}
		// A holder that exited never unlocks: take the lock over from it (one taker wins).
		expected = word.load(std::memory_order_relaxed);
		if (expected != 0 && expected != self && common::process_exited(expected) &&
		    word.compare_exchange_strong(expected, self, std::memory_order_acquire, std::memory_order_relaxed))
			return Status::ok;
		if (common::process_exited(owner_pid_))
			return Status::peer_gone;
		const auto now = std::chrono::steady_clock::now();
		if (deadline == std::chrono::steady_clock::time_point{}) {
			deadline = now + kLockWait;
		} else if (now >= deadline) {
			SDK_LOG_ERR("rdma transport: an atomic's lock in process %u's memory is held by process %u for "
				    "more than %lld ms",
				    owner_pid_, expected, (long long)kLockWait.count());
			return Status::system_error;
		}
		sched_yield();
	}
}

void RemoteTable::unlock(uint64_t addr) noexcept
{
	stripe(addr).holder.store(0, std::memory_order_release);
}

} // namespace softdpu::device::rdma::transport
