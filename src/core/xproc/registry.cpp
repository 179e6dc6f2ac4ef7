#include "core/xproc/registry.hpp"

#include <doca_types.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "common/sdk_log.hpp"

namespace softdpu::xproc {

namespace {

constexpr auto kRevokeWait = std::chrono::seconds(1);

// Yama's ptrace_scope 1 allows process_vm_* and /proc/<pid>/fd only to declared tracers.
void allow_same_user_access() noexcept
{
	const int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char c = '0';
	const ssize_t n = read(fd, &c, 1);
	close(fd);
	if (n == 1 && c == '1')
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

std::mutex &claim_mutex()
{
	static std::mutex mutex;
	return mutex;
}

} // namespace

bool slot_owner_dead(const AccessorSlot &slot) noexcept
{
	const uint32_t pid = slot.pid.load(std::memory_order_acquire);
	return pid != 0 && !process_is(pid, slot.start_time.load(std::memory_order_acquire));
}

// ---- Registry ----

Registry *Registry::instance(doca_error_t *error) noexcept
{
	static std::mutex mutex;
	static Registry *current = nullptr;
	std::lock_guard lock(mutex);
	const auto pid = static_cast<uint32_t>(getpid());
	if (current != nullptr && current->owner_pid_ == pid)
		return current;
	// First use, or a forked child still holding its parent's registry: that one stays the
	// parent's (its mapping is released; the child never published in it).
	if (current != nullptr) {
		if (current->layout_ != nullptr)
			munmap(current->layout_, sizeof(RegistryLayout));
		if (current->fd_ >= 0)
			close(current->fd_);
		current->layout_ = nullptr;
		current->fd_ = -1;
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
	fd_ = static_cast<int>(syscall(SYS_memfd_create, "softdpu-export-registry", MFD_CLOEXEC));
	if (fd_ < 0) {
		SDK_LOG_ERR("cannot create the export registry: memfd_create: %s", std::strerror(errno));
		return DOCA_ERROR_DRIVER;
	}
	struct stat st;
	if (ftruncate(fd_, sizeof(RegistryLayout)) != 0 || fstat(fd_, &st) != 0) {
		SDK_LOG_ERR("cannot size the export registry: %s", std::strerror(errno));
		return DOCA_ERROR_DRIVER;
	}
	inode_ = st.st_ino;
	void *mapped = mmap(nullptr, sizeof(RegistryLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
	if (mapped == MAP_FAILED) {
		SDK_LOG_ERR("cannot map the export registry: %s", std::strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	// The file is zero-filled: every atomic starts at 0 (free entries, free slots).
	layout_ = static_cast<RegistryLayout *>(mapped);
	const ProcessIdentity &self = self_identity();
	owner_pid_ = self.pid;
	layout_->header.version = kRegistryVersion;
	layout_->header.num_entries = kRegistryEntries;
	layout_->header.owner_pid = self.pid;
	layout_->header.owner_start_time = self.start_time;
	layout_->header.magic.store(kRegistryMagic, std::memory_order_release);
	try {
		free_.reserve(kRegistryEntries);
		for (uint32_t i = kRegistryEntries; i > 0; --i)
			free_.push_back(i - 1);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	allow_same_user_access();
	return DOCA_SUCCESS;
}

Registry::~Registry()
{
	if (layout_ != nullptr)
		munmap(layout_, sizeof(RegistryLayout));
	if (fd_ >= 0)
		close(fd_);
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
	e.importers_died.store(0, std::memory_order_relaxed);
	std::atomic_ref<uint64_t>(e.value).store(0, std::memory_order_relaxed);
	e.waiters.store(0, std::memory_order_relaxed);
	e.state.store(kEntryActive, std::memory_order_seq_cst);

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

void Registry::revoke(uint32_t index) noexcept
{
	RegistryEntry &e = entry(index);
	e.state.store(kEntryRevoked, std::memory_order_seq_cst);
	// Wake sync-event waiters so they notice.
	e.futex_word.fetch_add(1, std::memory_order_seq_cst);
	if (e.waiters.load(std::memory_order_seq_cst) != 0)
		syscall(SYS_futex, &e.futex_word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);

	const auto deadline = std::chrono::steady_clock::now() + kRevokeWait;
	bool stuck = false;
	for (AccessorSlot &slot : e.slots) {
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
				    "export %llu: importer %u still inside an access after %lld ms; the entry "
				    "is quarantined",
				    (unsigned long long)e.export_id.load(std::memory_order_relaxed), pid,
				    (long long)std::chrono::duration_cast<std::chrono::milliseconds>(kRevokeWait)
					.count());
				stuck = true;
				break;
			}
			if (spins < 256)
				sched_yield();
			else
				std::this_thread::sleep_for(std::chrono::microseconds(50));
		}
	}
	if (stuck) {
		// Never reused: the stuck importer re-checks the state when its access ends.
		e.state.store(kEntryQuarantined, std::memory_order_seq_cst);
		return;
	}
	std::lock_guard lock(mutex_);
	free_.push_back(index);
}

// ---- Import ----

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
	import->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, blob.exporter_pid, 0));
	if (import->pidfd_ < 0 || !process_is(blob.exporter_pid, blob.exporter_start_time)) {
		SDK_LOG_ERR("import rejected: cannot watch exporting process %u: %s", blob.exporter_pid,
			    import->pidfd_ < 0 ? std::strerror(errno) : "it exited");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/%u/fd/%d", blob.exporter_pid, blob.registry_fd);
	const int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		SDK_LOG_ERR("import rejected: cannot open the exporter's registry (%s): %s", path,
			    std::strerror(errno));
		return errno == EACCES || errno == EPERM ? DOCA_ERROR_NOT_PERMITTED : DOCA_ERROR_NOT_PERMITTED;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != blob.registry_inode ||
	    static_cast<size_t>(st.st_size) < sizeof(RegistryLayout)) {
		close(fd);
		SDK_LOG_ERR("import rejected: %s is not the exporter's registry", path);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	void *mapped = mmap(nullptr, sizeof(RegistryLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mapped == MAP_FAILED) {
		SDK_LOG_ERR("import failed: cannot map the exporter's registry: %s", std::strerror(errno));
		return DOCA_ERROR_NO_MEMORY;
	}
	import->mapping_ = mapped;
	import->mapping_len_ = sizeof(RegistryLayout);
	auto *layout = static_cast<RegistryLayout *>(mapped);
	if (layout->header.magic.load(std::memory_order_acquire) != kRegistryMagic ||
	    layout->header.version != kRegistryVersion || layout->header.owner_pid != blob.exporter_pid ||
	    layout->header.owner_start_time != blob.exporter_start_time ||
	    blob.entry_index >= layout->header.num_entries || layout->header.num_entries > kRegistryEntries) {
		SDK_LOG_ERR("import rejected: the exporter's registry does not match the descriptor");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	RegistryEntry &e = layout->entries[blob.entry_index];
	import->entry_ = &e;
	const auto matches = [&]() {
		return e.state.load(std::memory_order_seq_cst) == kEntryActive &&
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
		for (AccessorSlot &slot : e.slots) {
			if (slot.pid.load(std::memory_order_acquire) == self.pid &&
			    slot.start_time.load(std::memory_order_acquire) == self.start_time) {
				mine = &slot;
				break;
			}
		}
		for (int pass = 0; mine == nullptr && pass < 2; ++pass) {
			for (AccessorSlot &slot : e.slots) {
				uint32_t expected = slot.pid.load(std::memory_order_acquire);
				// Pass 0: free slots; pass 1: slots of importers that died.
				if (pass == 0 ? expected != 0 : !slot_owner_dead(slot))
					continue;
				if (pass == 1)
					e.importers_died.store(1, std::memory_order_relaxed);
				if (slot.pid.compare_exchange_strong(expected, self.pid, std::memory_order_acq_rel)) {
					slot.start_time.store(self.start_time, std::memory_order_release);
					slot.in_access.store(0, std::memory_order_seq_cst);
					slot.users.store(0, std::memory_order_relaxed);
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
	if (slot_ != nullptr) {
		std::lock_guard lock(claim_mutex());
		if (slot_->users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
			slot_->start_time.store(0, std::memory_order_relaxed);
			slot_->pid.store(0, std::memory_order_release);
		}
	}
	if (mapping_ != nullptr)
		munmap(mapping_, mapping_len_);
	if (pidfd_ >= 0)
		close(pidfd_);
}

bool Import::exporter_alive() const noexcept
{
	struct pollfd pfd = {pidfd_, POLLIN, 0};
	// A pidfd polls readable once its process has exited.
	return poll(&pfd, 1, 0) == 0;
}

bool Import::export_active() const noexcept
{
	return entry_->state.load(std::memory_order_seq_cst) == kEntryActive &&
	       entry_->generation.load(std::memory_order_seq_cst) == blob_.generation;
}

bool Import::begin_access() noexcept
{
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
	size_t total = 0;
	for (size_t i = 0; i < remote_count; ++i) {
		const uint64_t a = reinterpret_cast<uint64_t>(remote[i].iov_base);
		const uint64_t n = remote[i].iov_len;
		if (a < blob_.base || n > blob_.length || a - blob_.base > blob_.length - n) {
			SDK_LOG_ERR("access to [0x%llx, +%llu) is outside export %llu", (unsigned long long)a,
				    (unsigned long long)n, (unsigned long long)blob_.export_id);
			return DOCA_ERROR_NOT_PERMITTED;
		}
		total += n;
	}
	if (!exporter_alive()) {
		SDK_LOG_ERR("export %llu: exporting process %u has exited", (unsigned long long)blob_.export_id,
			    blob_.exporter_pid);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (!begin_access()) {
		SDK_LOG_ERR("export %llu was revoked", (unsigned long long)blob_.export_id);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	const auto pid = static_cast<pid_t>(blob_.exporter_pid);
	const ssize_t n = write ? process_vm_writev(pid, local, local_count, remote, remote_count, 0)
				: process_vm_readv(pid, local, local_count, remote, remote_count, 0);
	const int saved_errno = errno;
	end_access();
	if (n == static_cast<ssize_t>(total))
		return DOCA_SUCCESS;
	if (n < 0 && saved_errno == ESRCH) {
		SDK_LOG_ERR("export %llu: exporting process %u has exited", (unsigned long long)blob_.export_id,
			    blob_.exporter_pid);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	SDK_LOG_ERR("export %llu: %s of %zu bytes moved %zd: %s", (unsigned long long)blob_.export_id,
		    write ? "process_vm_writev" : "process_vm_readv", total, n,
		    n < 0 ? std::strerror(saved_errno) : "partial copy");
	return DOCA_ERROR_IO_FAILED;
}

} // namespace softdpu::xproc
