#include "core/xproc/registry.hpp"

#include <doca_types.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "common/process_access.hpp"
#include "common/sdk_log.hpp"

namespace softdpu::xproc {

namespace {

std::mutex &claim_mutex()
{
	static std::mutex mutex;
	return mutex;
}

} // namespace

bool slot_owner_dead(const AccessorSlot &slot) noexcept
{
	const uint32_t pid = slot.pid.load(std::memory_order_acquire);
	const uint64_t start_time = slot.start_time.load(std::memory_order_acquire);
	// start_time 0: a process is claiming the slot right now.
	return pid != 0 && start_time != 0 && process_liveness(pid, start_time) == Liveness::gone;
}

Importers importers_of(const SharedEntry &entry, uint64_t generation) noexcept
{
	bool any_dead = false;
	for (const AccessorSlot &slot : entry.slots) {
		if (slot.pid.load(std::memory_order_acquire) == 0 ||
		    slot.generation.load(std::memory_order_acquire) != generation)
			continue;
		if (!slot_owner_dead(slot))
			return Importers::alive;
		any_dead = true;
	}
	return any_dead ? Importers::all_dead : Importers::none;
}

// ---- Registry ----

namespace {

// A sealed memfd of `size` zero bytes mapped read-write here. Seals: never shrinks or grows (no
// peer can make a mapping fault), plus `extra` (F_SEAL_FUTURE_WRITE for the access rules).
doca_error_t make_sealed_file(const char *name, size_t size, unsigned extra, int *fd, uint64_t *inode,
			      void **mapped) noexcept
{
	*fd = static_cast<int>(syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (*fd < 0) {
		SDK_LOG_ERR("cannot create the export registry: memfd_create: %s", std::strerror(errno));
		return DOCA_ERROR_DRIVER;
	}
	struct stat st;
	if (ftruncate(*fd, static_cast<off_t>(size)) != 0 ||
	    fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0 || fstat(*fd, &st) != 0) {
		SDK_LOG_ERR("cannot size the export registry: %s", std::strerror(errno));
		return DOCA_ERROR_DRIVER;
	}
	*inode = st.st_ino;
	void *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (map == MAP_FAILED) {
		SDK_LOG_ERR("cannot map the export registry: %s", std::strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	*mapped = map;
	// After the writable mapping exists: F_SEAL_FUTURE_WRITE refuses later writable mappings and
	// write(2) but leaves this one working.
	if (fcntl(*fd, F_ADD_SEALS, extra | F_SEAL_SEAL) != 0) {
		SDK_LOG_ERR("cannot seal the export registry: %s", std::strerror(errno));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

// Closes fd only if it still is the file of that inode (a forked child may have closed the
// inherited descriptor and reused its number).
void close_if_same(int fd, uint64_t inode) noexcept
{
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_ino) == inode)
		close(fd);
}

} // namespace

Registry *Registry::instance(doca_error_t *error) noexcept
{
	static std::mutex mutex;
	static Registry *current = nullptr;
	std::lock_guard lock(mutex);
	const auto pid = static_cast<uint32_t>(getpid());
	if (current != nullptr && current->owner_pid_ == pid)
		return current;
	// First use, or a forked child still holding its parent's registry: that one stays the
	// parent's (its mappings are released; the child never published in it).
	if (current != nullptr) {
		if (current->layout_ != nullptr) {
			close_if_same(current->shared_fd_, current->layout_->header.shared_inode);
			munmap(current->layout_, sizeof(RegistryLayout));
		}
		if (current->shared_ != nullptr)
			munmap(current->shared_, sizeof(SharedLayout));
		close_if_same(current->fd_, current->inode_);
		current = nullptr; // leaked on purpose: the parent's object, never used again here
	}
	auto *created = new (std::nothrow) Registry();
	if (created == nullptr) {
		*error = DOCA_ERROR_NO_MEMORY;
		return nullptr;
	}
	const doca_error_t result = created->init();
	if (result != DOCA_SUCCESS) {
		delete created;
		*error = result;
		return nullptr;
	}
	current = created;
	return current;
}

doca_error_t Registry::init() noexcept
{
	void *rules = nullptr;
	void *state = nullptr;
	uint64_t shared_inode = 0;
	doca_error_t result =
	    make_sealed_file("softdpu-export-registry", sizeof(SharedLayout), 0, &shared_fd_, &shared_inode, &state);
	if (result != DOCA_SUCCESS)
		return result;
	shared_ = static_cast<SharedLayout *>(state);
	// The rules file is written through this mapping only; fill the header before sealing.
	result = make_sealed_file("softdpu-export-rules", sizeof(RegistryLayout), F_SEAL_FUTURE_WRITE, &fd_, &inode_,
				  &rules);
	if (rules != nullptr)
		layout_ = static_cast<RegistryLayout *>(rules);
	if (result != DOCA_SUCCESS)
		return result;
	uint64_t nonce[2];
	if (!random_bytes(nonce, sizeof(nonce))) {
		SDK_LOG_ERR("cannot create the export registry: no random bytes for its nonce");
		return DOCA_ERROR_DRIVER;
	}
	// The files are zero-filled: every atomic starts at 0 (free entries, free slots).
	const ProcessIdentity &self = self_identity();
	owner_pid_ = self.pid;
	shared_->header.owner_pid = self.pid;
	shared_->header.owner_start_time = self.start_time;
	shared_->header.magic.store(kSharedMagic, std::memory_order_release);
	RegistryHeader &header = layout_->header;
	header.version = kRegistryVersion;
	header.num_entries = kRegistryEntries;
	header.owner_pid = self.pid;
	header.owner_start_time = self.start_time;
	header.shared_fd = shared_fd_;
	header.shared_inode = shared_inode;
	header.nonce[0] = nonce[0];
	header.nonce[1] = nonce[1];
	header.mapped_at = reinterpret_cast<uint64_t>(&header);
	header.magic.store(kRegistryMagic, std::memory_order_release);
	try {
		free_.reserve(kRegistryEntries);
		for (uint32_t i = kRegistryEntries; i > 0; --i)
			free_.push_back(i - 1);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	common::allow_same_user_access();
	return DOCA_SUCCESS;
}

Registry::~Registry()
{
	if (layout_ != nullptr)
		munmap(layout_, sizeof(RegistryLayout));
	if (shared_ != nullptr)
		munmap(shared_, sizeof(SharedLayout));
	if (fd_ >= 0)
		close(fd_);
	if (shared_fd_ >= 0)
		close(shared_fd_);
}

doca_error_t Registry::publish(ExportKind kind, uint64_t base, uint64_t length, uint32_t access, ExportBlob *blob,
			       uint32_t *index) noexcept
{
	uint64_t secret[2];
	if (!random_bytes(secret, sizeof(secret))) {
		SDK_LOG_ERR("cannot export: no random bytes for the export secret");
		return DOCA_ERROR_DRIVER;
	}
	uint32_t slot;
	uint64_t export_id;
	{
		std::lock_guard lock(mutex_);
		if (free_.empty()) {
			SDK_LOG_ERR("cannot export: all %u export registry entries are in use", kRegistryEntries);
			return DOCA_ERROR_NO_MEMORY;
		}
		slot = free_.back();
		free_.pop_back();
		export_id = next_export_id_++;
	}
	RegistryEntry &e = entry(slot);
	SharedEntry &s = shared(slot);
	// The generation changes first, so a blob of the entry's previous life never matches again.
	const uint64_t generation = e.generation.load(std::memory_order_relaxed) + 1;
	e.generation.store(generation, std::memory_order_seq_cst);
	e.kind.store(static_cast<uint32_t>(kind), std::memory_order_relaxed);
	e.export_id.store(export_id, std::memory_order_relaxed);
	e.base.store(base, std::memory_order_relaxed);
	e.length.store(length, std::memory_order_relaxed);
	e.access.store(access, std::memory_order_relaxed);
	e.secret[0].store(secret[0], std::memory_order_relaxed);
	e.secret[1].store(secret[1], std::memory_order_relaxed);
	std::atomic_ref<uint64_t>(s.value).store(0, std::memory_order_relaxed);
	s.waiters.store(0, std::memory_order_relaxed);
	e.state.store(entry_active, std::memory_order_seq_cst);

	const ProcessIdentity &self = self_identity();
	blob->kind = kind;
	blob->access = access;
	blob->registry_fd = fd_;
	blob->base = base;
	blob->length = length;
	blob->export_id = export_id;
	blob->generation = generation;
	blob->secret = {secret[0], secret[1]};
	blob->exporter_pid = self.pid;
	blob->uid = self.uid;
	blob->exporter_start_time = self.start_time;
	blob->boot_id = self.boot_id;
	blob->registry_inode = inode_;
	blob->entry_index = slot;
	*index = slot;
	return DOCA_SUCCESS;
}

bool Registry::revoke(uint32_t index, std::chrono::milliseconds wait) noexcept
{
	RegistryEntry &e = entry(index);
	SharedEntry &s = shared(index);
	if (e.state.load(std::memory_order_seq_cst) == entry_active) {
		e.state.store(entry_revoked, std::memory_order_seq_cst);
		// Wake sync-event waiters so they notice.
		s.futex_word.fetch_add(1, std::memory_order_seq_cst);
		if (s.waiters.load(std::memory_order_seq_cst) != 0)
			syscall(SYS_futex, &s.futex_word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
	}
	const auto deadline = std::chrono::steady_clock::now() + wait;
	for (AccessorSlot &slot : s.slots) {
		unsigned spins = 0;
		while (slot.in_access.load(std::memory_order_seq_cst) != 0) {
			const uint32_t pid = slot.pid.load(std::memory_order_acquire);
			if (++spins % 64 == 0 && (pid == 0 || slot_owner_dead(slot))) {
				SDK_LOG_WARN("export %llu: importer %u died inside an access; not waiting for it",
					     (unsigned long long)e.export_id.load(std::memory_order_relaxed), pid);
				break;
			}
			if (std::chrono::steady_clock::now() >= deadline) {
				SDK_LOG_ERR(
				    "export %llu: importing process %u is still inside an access after %lld ms "
				    "(stalled or stopped); the export is revoked but its memory is not released",
				    (unsigned long long)e.export_id.load(std::memory_order_relaxed), pid,
				    (long long)wait.count());
				return false;
			}
			if (spins < 256)
				sched_yield();
			else
				std::this_thread::sleep_for(std::chrono::microseconds(50));
		}
	}
	return true;
}

void Registry::release(uint32_t index) noexcept
{
	std::lock_guard lock(mutex_);
	// Reserved by init() for every entry: cannot throw.
	free_.push_back(index);
}

void Registry::quarantine(uint32_t index) noexcept
{
	entry(index).state.store(entry_quarantined, std::memory_order_seq_cst);
}

// ---- Import ----

namespace {

// Opens /proc/<pid>/fd/<fd> and checks it is the sealed registry file made by the exporter.
int open_registry_file(uint32_t pid, int32_t fd_number, uint64_t inode, size_t size, unsigned seals, int flags,
		       const char *what) noexcept
{
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd_number);
	const int fd = ::open(path, flags | O_CLOEXEC);
	if (fd < 0) {
		SDK_LOG_ERR("import rejected: cannot open the exporter's %s (%s): %s", what, path,
			    std::strerror(errno));
		return -1;
	}
	struct stat st;
	const int have = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_ino) != inode ||
	    static_cast<size_t>(st.st_size) != size || have < 0 || (static_cast<unsigned>(have) & seals) != seals) {
		close(fd);
		SDK_LOG_ERR("import rejected: %s is not the exporter's sealed %s", path, what);
		return -1;
	}
	return fd;
}

} // namespace

doca_error_t Import::open(const ExportBlob &blob, std::unique_ptr<Import> *out) noexcept
{
	const ProcessIdentity &self = self_identity();
	if (blob.uid != self.uid) {
		SDK_LOG_ERR("import rejected: the export belongs to uid %u, this process runs as uid %u", blob.uid,
			    self.uid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (blob.boot_id != self.boot_id) {
		SDK_LOG_ERR("import rejected: the export comes from another host (boot id differs); softdpu "
			    "imports memory of processes on the same host only");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!process_is(blob.exporter_pid, blob.exporter_start_time)) {
		SDK_LOG_ERR("import rejected: exporting process %u is gone (or its pid was reused)", blob.exporter_pid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	std::unique_ptr<Import> import(new (std::nothrow) Import());
	if (!import)
		return DOCA_ERROR_NO_MEMORY;
	import->blob_ = blob;
	import->fork_epoch_ = fork_epoch();
	import->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, blob.exporter_pid, 0));
	if (import->pidfd_ < 0 || !process_is(blob.exporter_pid, blob.exporter_start_time)) {
		SDK_LOG_ERR("import rejected: cannot watch exporting process %u: %s", blob.exporter_pid,
			    import->pidfd_ < 0 ? std::strerror(errno) : "it exited");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	// The handle on the exporter's address space first: the nonce check below proves it is the one
	// that holds the registry (so not a program the exporter exec'd in between).
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/%u/mem", blob.exporter_pid);
	import->mem_fd_ = ::open(path, O_RDWR | O_CLOEXEC);
	if (import->mem_fd_ < 0) {
		SDK_LOG_ERR("import rejected: cannot reach the exporter's memory (%s): %s", path, std::strerror(errno));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	int fd = open_registry_file(blob.exporter_pid, blob.registry_fd, blob.registry_inode, sizeof(RegistryLayout),
				    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE, O_RDONLY, "registry");
	if (fd < 0)
		return DOCA_ERROR_NOT_PERMITTED;
	void *mapped = mmap(nullptr, sizeof(RegistryLayout), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (mapped == MAP_FAILED) {
		SDK_LOG_ERR("import failed: cannot map the exporter's registry: %s", std::strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	import->rules_ = mapped;
	const auto *layout = static_cast<const RegistryLayout *>(mapped);
	const RegistryHeader &header = layout->header;
	if (header.magic.load(std::memory_order_acquire) != kRegistryMagic || header.version != kRegistryVersion ||
	    header.owner_pid != blob.exporter_pid || header.owner_start_time != blob.exporter_start_time ||
	    header.num_entries > kRegistryEntries || blob.entry_index >= header.num_entries) {
		SDK_LOG_ERR("import rejected: the exporter's registry does not match the descriptor");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	import->nonce_[0] = header.nonce[0];
	import->nonce_[1] = header.nonce[1];
	import->nonce_addr_ = header.mapped_at + offsetof(RegistryHeader, nonce);
	if (!import->same_address_space()) {
		SDK_LOG_ERR("import rejected: exporting process %u no longer runs the program that exported (exec)",
			    blob.exporter_pid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	fd = open_registry_file(blob.exporter_pid, header.shared_fd, header.shared_inode, sizeof(SharedLayout),
				F_SEAL_SHRINK | F_SEAL_GROW, O_RDWR, "registry state");
	if (fd < 0)
		return DOCA_ERROR_NOT_PERMITTED;
	mapped = mmap(nullptr, sizeof(SharedLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mapped == MAP_FAILED) {
		SDK_LOG_ERR("import failed: cannot map the exporter's registry state: %s", std::strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	import->state_ = mapped;
	auto *state = static_cast<SharedLayout *>(mapped);
	if (state->header.magic.load(std::memory_order_acquire) != kSharedMagic ||
	    state->header.owner_pid != blob.exporter_pid ||
	    state->header.owner_start_time != blob.exporter_start_time) {
		SDK_LOG_ERR("import rejected: the exporter's registry state does not match the descriptor");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	const RegistryEntry &e = layout->entries[blob.entry_index];
	SharedEntry &s = state->entries[blob.entry_index];
	import->entry_ = &e;
	import->shared_ = &s;
	const auto matches = [&]() {
		return e.state.load(std::memory_order_seq_cst) == entry_active &&
		       e.generation.load(std::memory_order_seq_cst) == blob.generation;
	};
	if (!matches()) {
		SDK_LOG_ERR("import rejected: export %llu was revoked (its mmap or event was stopped or destroyed)",
			    (unsigned long long)blob.export_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (e.secret[0].load(std::memory_order_relaxed) != blob.secret[0] ||
	    e.secret[1].load(std::memory_order_relaxed) != blob.secret[1]) {
		SDK_LOG_ERR("import rejected: the descriptor's secret does not match export %llu (forged descriptor)",
			    (unsigned long long)blob.export_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (e.export_id.load(std::memory_order_relaxed) != blob.export_id ||
	    e.kind.load(std::memory_order_relaxed) != static_cast<uint32_t>(blob.kind) ||
	    e.base.load(std::memory_order_relaxed) != blob.base ||
	    e.length.load(std::memory_order_relaxed) != blob.length ||
	    e.access.load(std::memory_order_relaxed) != blob.access) {
		SDK_LOG_ERR("import rejected: the descriptor's range, kind or access differs from export %llu "
			    "(forged descriptor)",
			    (unsigned long long)blob.export_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	// Claim this process's accessor slot (shared by its imports of the entry).
	{
		std::lock_guard lock(claim_mutex());
		AccessorSlot *mine = nullptr;
		for (AccessorSlot &slot : s.slots) {
			if (slot.pid.load(std::memory_order_acquire) == self.pid &&
			    slot.start_time.load(std::memory_order_acquire) == self.start_time &&
			    slot.generation.load(std::memory_order_acquire) == blob.generation) {
				mine = &slot;
				break;
			}
		}
		for (int pass = 0; mine == nullptr && pass < 2; ++pass) {
			for (AccessorSlot &slot : s.slots) {
				uint32_t expected = slot.pid.load(std::memory_order_acquire);
				// Pass 0: free slots; pass 1: slots of importers that died.
				if (pass == 0 ? expected != 0 : !slot_owner_dead(slot))
					continue;
				if (slot.pid.compare_exchange_strong(expected, self.pid, std::memory_order_acq_rel)) {
					// start_time last: until it is set, nobody takes the slot for dead.
					slot.start_time.store(0, std::memory_order_release);
					slot.generation.store(blob.generation, std::memory_order_release);
					slot.in_access.store(0, std::memory_order_seq_cst);
					slot.users.store(0, std::memory_order_relaxed);
					slot.start_time.store(self.start_time, std::memory_order_release);
					mine = &slot;
					break;
				}
			}
		}
		if (mine == nullptr) {
			SDK_LOG_ERR("import failed: export %llu already has %u importing processes",
				    (unsigned long long)blob.export_id, kAccessorSlots);
			return DOCA_ERROR_NO_MEMORY;
		}
		mine->users.fetch_add(1, std::memory_order_relaxed);
		import->slot_ = mine;
	}
	if (!matches()) {
		SDK_LOG_ERR("import rejected: export %llu was revoked during the import",
			    (unsigned long long)blob.export_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	*out = std::move(import);
	return DOCA_SUCCESS;
}

Import::~Import()
{
	// A forked child's copy leaves the parent's slot alone: only unmaps and closes.
	if (slot_ != nullptr && in_owner()) {
		std::lock_guard lock(claim_mutex());
		if (slot_->users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
			slot_->start_time.store(0, std::memory_order_relaxed);
			slot_->pid.store(0, std::memory_order_release);
		}
	}
	if (rules_ != nullptr)
		munmap(const_cast<void *>(rules_), sizeof(RegistryLayout));
	if (state_ != nullptr)
		munmap(state_, sizeof(SharedLayout));
	if (pidfd_ >= 0)
		close(pidfd_);
	if (mem_fd_ >= 0)
		close(mem_fd_);
}

bool Import::exporter_alive() const noexcept
{
	struct pollfd pfd = {pidfd_, POLLIN, 0};
	// A pidfd polls readable once its process has exited; the address space handle reads nothing
	// once the exporter exited or exec'd.
	return poll(&pfd, 1, 0) == 0 && same_address_space();
}

bool Import::same_address_space() const noexcept
{
	uint64_t seen[2] = {};
	return pread(mem_fd_, seen, sizeof(seen), static_cast<off_t>(nonce_addr_)) == sizeof(seen) &&
	       seen[0] == nonce_[0] && seen[1] == nonce_[1];
}

bool Import::export_active() const noexcept
{
	return entry_->state.load(std::memory_order_seq_cst) == entry_active &&
	       entry_->generation.load(std::memory_order_seq_cst) == blob_.generation;
}

bool Import::in_owner() const noexcept
{
	return fork_epoch_ == fork_epoch();
}

bool Import::begin_access() noexcept
{
	if (!in_owner()) [[unlikely]]
		return false;
	slot_->in_access.fetch_add(1, std::memory_order_seq_cst);
	if (!export_active()) {
		slot_->in_access.fetch_sub(1, std::memory_order_seq_cst);
		return false;
	}
	return true;
}

void Import::end_access() noexcept
{
	slot_->in_access.fetch_sub(1, std::memory_order_seq_cst);
}

namespace {

constexpr size_t kBatch = 128; // pieces per system call (one more for the nonce on reads)
// Bytes per system call: the kernel moves at most MAX_RW_COUNT (2 GiB - 4 KiB) in one.
constexpr size_t kMaxCall = size_t{1} << 30;

void zero(const struct iovec *iov, size_t count) noexcept
{
	for (size_t i = 0; i < count; ++i)
		std::memset(iov[i].iov_base, 0, iov[i].iov_len);
}

// Walks local and remote pieces together, yielding pairs of equal length (the sides may be cut
// differently; their totals are equal).
class PairWalker {
public:
	PairWalker(const struct iovec *local, size_t local_count, const struct iovec *remote, size_t remote_count)
	    : local_(local), local_count_(local_count), remote_(remote), remote_count_(remote_count)
	{
	}
	// The next pair, at most max bytes long; false at the end of either side.
	bool next(size_t max, uint8_t **local, uint64_t *remote, size_t *len) noexcept
	{
		while (li_ < local_count_ && loff_ == local_[li_].iov_len) {
			++li_;
			loff_ = 0;
		}
		while (ri_ < remote_count_ && roff_ == remote_[ri_].iov_len) {
			++ri_;
			roff_ = 0;
		}
		if (li_ == local_count_ || ri_ == remote_count_ || max == 0)
			return false;
		*local = static_cast<uint8_t *>(local_[li_].iov_base) + loff_;
		*remote = reinterpret_cast<uint64_t>(remote_[ri_].iov_base) + roff_;
		*len = std::min({local_[li_].iov_len - loff_, remote_[ri_].iov_len - roff_, max});
		loff_ += *len;
		roff_ += *len;
		return true;
	}
	// The remote address the next pair would start at (0 at the end).
	uint64_t next_remote() noexcept
	{
		while (ri_ < remote_count_ && roff_ == remote_[ri_].iov_len) {
			++ri_;
			roff_ = 0;
		}
		return ri_ < remote_count_ ? reinterpret_cast<uint64_t>(remote_[ri_].iov_base) + roff_ : 0;
	}

private:
	const struct iovec *local_;
	size_t local_count_;
	const struct iovec *remote_;
	size_t remote_count_;
	size_t li_ = 0, loff_ = 0, ri_ = 0, roff_ = 0;
};

} // namespace

// One process_vm_readv whose first piece is the registry's nonce, read from the exporter's own
// mapping: the kernel resolves the address space once per call, so a matching nonce proves the
// data came from the address space of the export, not from a program the exporter exec'd.
// local_v[0] and remote_v[0] are left for the nonce; pieces follow.
doca_error_t Import::read_batch(struct iovec *local_v, struct iovec *remote_v, size_t pieces, size_t total) noexcept
{
	uint64_t seen[2] = {};
	local_v[0] = {seen, sizeof(seen)};
	remote_v[0] = {reinterpret_cast<void *>(nonce_addr_), sizeof(seen)};
	const auto pid = static_cast<pid_t>(blob_.exporter_pid);
	const ssize_t n = process_vm_readv(pid, local_v, pieces + 1, remote_v, pieces + 1, 0);
	const int saved_errno = errno;
	if (n < static_cast<ssize_t>(sizeof(seen)) || seen[0] != nonce_[0] || seen[1] != nonce_[1]) {
		if (n > static_cast<ssize_t>(sizeof(seen)))
			zero(local_v + 1, pieces); // bytes of another program: never handed out
		if (n < 0 && saved_errno != ESRCH && saved_errno != EFAULT)
			SDK_LOG_ERR("export %llu: process_vm_readv: %s", (unsigned long long)blob_.export_id,
				    std::strerror(saved_errno));
		SDK_LOG_ERR("export %llu: exporting process %u has exited or no longer runs the program that "
			    "exported (exec)",
			    (unsigned long long)blob_.export_id, blob_.exporter_pid);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (static_cast<size_t>(n) - sizeof(seen) == total)
		return DOCA_SUCCESS;
	SDK_LOG_ERR("export %llu: process_vm_readv of %zu bytes moved %zd: the exporter no longer maps its memory",
		    (unsigned long long)blob_.export_id, total, n - static_cast<ssize_t>(sizeof(seen)));
	return DOCA_ERROR_IO_FAILED;
}

doca_error_t Import::read_all(const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept
{
	PairWalker walk(local, local_count, remote, remote_count);
	struct iovec local_v[kBatch + 1];
	struct iovec remote_v[kBatch + 1];
	for (;;) {
		size_t pieces = 0, total = 0;
		uint8_t *l = nullptr;
		uint64_t r = 0;
		size_t len = 0;
		while (pieces < kBatch && walk.next(kMaxCall - total, &l, &r, &len)) {
			++pieces;
			local_v[pieces] = {l, len};
			remote_v[pieces] = {reinterpret_cast<void *>(r), len};
			total += len;
		}
		if (pieces == 0)
			return DOCA_SUCCESS;
		const doca_error_t result = read_batch(local_v, remote_v, pieces, total);
		if (result != DOCA_SUCCESS)
			return result;
	}
}

// One pwritev through /proc/<exporter>/mem, opened at import: it keeps referring to the address
// space of the export and writes nothing once the exporter exited or exec'd.
doca_error_t Import::write_run(const struct iovec *run, size_t pieces, uint64_t start, size_t total) noexcept
{
	ssize_t n = pwritev(mem_fd_, run, static_cast<int>(pieces), static_cast<off_t>(start));
	if (n == static_cast<ssize_t>(total))
		return DOCA_SUCCESS;
	int saved_errno = errno;
	if (n > 0) {
		// Cut short: one byte more tells why (address space gone: 0; memory unmapped: an error).
		size_t skip = static_cast<size_t>(n), i = 0;
		while (skip >= run[i].iov_len) {
			skip -= run[i].iov_len;
			++i;
		}
		const ssize_t more = pwrite(mem_fd_, static_cast<const uint8_t *>(run[i].iov_base) + skip, 1,
					    static_cast<off_t>(start + static_cast<uint64_t>(n)));
		saved_errno = errno;
		n = more == 0 ? 0 : -1;
	}
	if (n == 0) {
		SDK_LOG_ERR("export %llu: exporting process %u has exited or no longer runs the program that "
			    "exported (exec)",
			    (unsigned long long)blob_.export_id, blob_.exporter_pid);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	SDK_LOG_ERR("export %llu: write of %zu bytes at 0x%llx failed: %s", (unsigned long long)blob_.export_id, total,
		    (unsigned long long)start,
		    saved_errno == EIO || saved_errno == EFAULT ? "the exporter no longer maps its memory"
								: std::strerror(saved_errno));
	return DOCA_ERROR_IO_FAILED;
}

// One pwritev per run of pieces contiguous on the remote side.
doca_error_t Import::write_all(const struct iovec *local, size_t local_count, const struct iovec *remote,
			       size_t remote_count) noexcept
{
	PairWalker walk(local, local_count, remote, remote_count);
	struct iovec run[kBatch];
	for (;;) {
		const uint64_t start = walk.next_remote();
		size_t pieces = 0, total = 0;
		uint8_t *l = nullptr;
		uint64_t r = 0;
		size_t len = 0;
		while (pieces < kBatch && walk.next_remote() == start + total &&
		       walk.next(kMaxCall - total, &l, &r, &len)) {
			run[pieces++] = {l, len};
			total += len;
		}
		if (pieces == 0)
			return DOCA_SUCCESS;
		const doca_error_t result = write_run(run, pieces, start, total);
		if (result != DOCA_SUCCESS)
			return result;
	}
}

doca_error_t Import::transfer(bool write, const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept
{
	const uint32_t access = entry_->access.load(std::memory_order_relaxed);
	const bool pci = blob_.kind == ExportKind::pci;
	const uint32_t needed = write ? (pci ? DOCA_ACCESS_FLAG_PCI_READ_WRITE : DOCA_ACCESS_FLAG_RDMA_WRITE)
				      : (pci ? DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE
					     : DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE);
	if ((access & needed) == 0) {
		SDK_LOG_ERR("export %llu does not allow %s", (unsigned long long)blob_.export_id,
			    write ? "writes" : "reads");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	for (size_t i = 0; i < remote_count; ++i) {
		const uint64_t a = reinterpret_cast<uint64_t>(remote[i].iov_base);
		const uint64_t n = remote[i].iov_len;
		if (a < blob_.base || n > blob_.length || a - blob_.base > blob_.length - n) {
			SDK_LOG_ERR("access to [0x%llx, +%llu) is outside export %llu", (unsigned long long)a,
				    (unsigned long long)n, (unsigned long long)blob_.export_id);
			return DOCA_ERROR_NOT_PERMITTED;
		}
	}
	if (!begin_access()) {
		if (!in_owner())
			SDK_LOG_ERR("export %llu: this import belongs to the process that made it, not to its forked "
				    "child",
				    (unsigned long long)blob_.export_id);
		else
			SDK_LOG_ERR("export %llu was revoked", (unsigned long long)blob_.export_id);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	doca_error_t result = write ? write_all(local, local_count, remote, remote_count)
				    : read_all(local, local_count, remote, remote_count);
	// The grant was withdrawn while the copy ran: the copy does not count (the exporter's stop
	// waited for it, and reports success only after this access ended).
	if (result == DOCA_SUCCESS && !export_active()) {
		SDK_LOG_ERR("export %llu was revoked during the copy", (unsigned long long)blob_.export_id);
		result = DOCA_ERROR_NOT_CONNECTED;
	}
	end_access();
	return result;
}

} // namespace softdpu::xproc
