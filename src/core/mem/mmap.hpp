// struct doca_mmap: the memory map behind doca_mmap.h.
//
// Public to other modules (DMA, export): the inline accessors in the first block (is_started,
// permissions, memrange_start/memrange_len, contains, has_device, origin, remote). They cost a load
// or two and are meant for the data path. The other public members belong to src/core/mem (the
// C forwarders in mmap_api.cpp, buffers, pools, arrays); the state is private.
#pragma once

#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_types.h>

#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace softdpu::mem {

// Reaches memory that lives in another process. A local mmap has none (its memory range is in this
// address space); an mmap imported from another process's export gets one from the export module.
class RemoteMemory {
public:
	virtual ~RemoteMemory() = default;
	// Copies len bytes from the remote address to local memory.
	virtual doca_error_t read(uint64_t remote_addr, void *dst, size_t len) noexcept = 0;
	// Copies len bytes from local memory to the remote address.
	virtual doca_error_t write(uint64_t remote_addr, const void *src, size_t len) noexcept = 0;
	// Scatter/gather in one go: local[i] and remote[i] are (address, length) pairs walked in order
	// on both sides (the totals are equal); write moves local -> remote.
	virtual doca_error_t transfer(bool write, const struct iovec *local, size_t local_count,
				      const struct iovec *remote, size_t remote_count) noexcept = 0;
	// True when DMA engines may use this memory (a PCI export; RDMA exports are for RDMA).
	virtual bool dma_capable() const noexcept = 0;
	// The exported access rights (DOCA_ACCESS_FLAG_*).
	virtual uint32_t access() const noexcept = 0;
};

// One export of a local mmap: the registry entry and the descriptor handed to the application
// (owned by the mmap until it stops).
struct MmapExport {
	const doca_dev *dev = nullptr;
	uint16_t kind = 0;
	uint32_t entry = 0;
	uint64_t fork_epoch = 0; // of the exporting process (a forked child inherits the record, not the entry)
	std::array<uint8_t, 192> blob{};
};

// Defaults where DOCA does not document them.
inline constexpr uint32_t kDefaultMmapPermissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
inline constexpr uint32_t kDefaultMaxNumDevices = 16;
inline constexpr uint32_t kAllAccessFlags = (DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING << 1) - 1;

// Calls made for every doca_buf over an mmap as it is handed out (taken) and as it returns to its
// owner (released), with the buffer's head. The DPDK bridge's mmaps have them: a doca_buf over an
// mbuf holds a reference on that mbuf (doca_dpdk.h). Neither may fail.
struct BufHooks {
	void (*taken)(void *ctx, void *head) noexcept;
	void (*released)(void *ctx, void *head) noexcept;
	void *ctx;
};

} // namespace softdpu::mem

namespace softdpu::xproc {
enum class ExportKind : uint16_t;
} // namespace softdpu::xproc

namespace softdpu::mem::testing {
struct MmapAccess;
} // namespace softdpu::mem::testing

// Sets an mmap's buffer hooks (softdpu::mem::BufHooks; nullptr for none) before it starts: the entry
// point by which libdoca_dpdk_bridge reaches libdoca_common (cmake/exports.map). BAD_STATE once the
// mmap is started or was ever started.
extern "C" doca_error_t priv_doca_mmap_set_buf_hooks(struct doca_mmap *mmap,
						     const softdpu::mem::BufHooks *hooks) noexcept;

// Owns: its configuration, the device users of the devices added to it, the accessor of an
// imported mmap's memory (remote_) and the exports of a local one (exports_). Counts, but does not
// own, the doca_bufs, pools and arrays that point into its memory.
struct doca_mmap {
public:
	// Where the memory lives: in this process, or in another one that exported it.
	enum class Origin : uint8_t { local, imported };

	// ---- Data path accessors (public to other modules) ----
	bool is_started() const noexcept { return started_; }
	uint32_t permissions() const noexcept { return permissions_; }
	void *memrange_start() const noexcept { return range_start_; }
	size_t memrange_len() const noexcept { return range_len_; }
	// True when [addr, addr + len) lies inside the memory range (overflow-safe).
	bool contains(const void *addr, size_t len) const noexcept
	{
		const auto start = reinterpret_cast<uintptr_t>(range_start_);
		const auto a = reinterpret_cast<uintptr_t>(addr);
		return a >= start && len <= range_len_ && a - start <= range_len_ - len;
	}
	bool has_device(const doca_dev *dev) const noexcept
	{
		return std::find(devices_.begin(), devices_.end(), dev) != devices_.end();
	}
	Origin origin() const noexcept { return origin_; }
	// Buffer hooks (see BufHooks); nullptr for almost every mmap.
	const softdpu::mem::BufHooks *buf_hooks() const noexcept { return buf_hooks_; }
	// Accessor for an imported mmap's memory; nullptr for a local mmap.
	softdpu::mem::RemoteMemory *remote() const noexcept { return remote_.get(); }

	// ---- Internal to src/core/mem ----
	~doca_mmap();
	doca_mmap(const doca_mmap &) = delete;
	doca_mmap &operator=(const doca_mmap &) = delete;

	// A new local mmap (doca_mmap_create). Throws std::bad_alloc.
	static std::unique_ptr<doca_mmap> create_local();
	// An mmap over memory another process exported (doca_mmap_create_from_export): decodes the
	// descriptor, checks that dev may import it (host <-> DPU matching) and opens the exporter's
	// memory. Throws std::bad_alloc.
	static doca_error_t create_from_export(const union doca_data *user_data, const void *export_desc,
					       size_t export_desc_len, doca_dev *dev, doca_mmap **mmap);

	// True while something points into the memory: doca_bufs, or pools and arrays built over it.
	bool in_use() const noexcept { return num_bufs() != 0 || num_dependents_ != 0; }
	// Configuration can change only before start and only for a local mmap that was never exported.
	bool is_configurable_kind() const noexcept { return origin_ == Origin::local && !exported_; }
	bool memrange_set() const noexcept { return memrange_set_; }
	bool exported() const noexcept { return exported_; }
	uint32_t num_bufs() const noexcept { return num_bufs_.load(std::memory_order_relaxed); }
	uint32_t max_num_devices() const noexcept { return max_num_devices_; }
	union doca_data user_data() const noexcept { return user_data_; }

	doca_error_t set_memrange(void *addr, size_t len) noexcept;
	doca_error_t set_dmabuf_memrange(int fd, void *addr, size_t offset, size_t len) noexcept;
	doca_error_t get_memrange(void **addr, size_t *len) const noexcept;
	doca_error_t set_permissions(uint32_t access_mask) noexcept;
	doca_error_t set_free_cb(doca_mmap_memrange_free_cb_t *free_cb, void *opaque) noexcept;
	doca_error_t set_user_data(union doca_data user_data) noexcept;
	doca_error_t set_max_num_devices(uint32_t max_num_devices) noexcept;
	doca_error_t add_dev(doca_dev *dev) noexcept;
	doca_error_t rm_dev(doca_dev *dev) noexcept;
	doca_error_t start() noexcept;
	doca_error_t stop() noexcept;
	// Readies the mmap for deletion (doca_mmap_destroy): refused while in use or while an importer is
	// inside an access; otherwise revokes the exports, drops the device users and calls the free
	// callback. On DOCA_SUCCESS the caller deletes the mmap.
	doca_error_t shut_down() noexcept;
	// doca_mmap_export_pci / doca_mmap_export_rdma after the argument checks (dev is not NULL).
	doca_error_t export_desc(const doca_dev *dev, softdpu::xproc::ExportKind kind, const void **desc,
				 size_t *len) noexcept;

	// State the RDMA bridge keeps for this mmap while it is started (its memory registrations on
	// the mmap's devices, doca_rdma_bridge.h): released by `release` when the mmap stops or goes.
	// Set and read under the bridge's own lock.
	void *bridge_state() const noexcept { return bridge_state_; }
	void set_bridge_state(void *state, void (*release)(void *state)) noexcept
	{
		bridge_state_ = state;
		bridge_release_ = release;
	}

	// Counting what points into the memory (doca_bufs, pools, arrays). Data path: no checks. The
	// buffer count is atomic: threads with inventories of their own take buffers over one mmap.
	void buf_taken() noexcept { num_bufs_.fetch_add(1, std::memory_order_relaxed); }
	void bufs_released(uint32_t count) noexcept { num_bufs_.fetch_sub(count, std::memory_order_relaxed); }
	void add_dependent() noexcept { ++num_dependents_; }
	void remove_dependent() noexcept { --num_dependents_; }

private:
	friend doca_error_t priv_doca_mmap_set_buf_hooks(struct doca_mmap *, const softdpu::mem::BufHooks *) noexcept;
	void release_bridge_state() noexcept;
	const softdpu::mem::BufHooks *buf_hooks_ = nullptr;
	void *bridge_state_ = nullptr;
	void (*bridge_release_)(void *state) = nullptr;
	friend struct softdpu::mem::testing::MmapAccess;

	doca_mmap() = default;

	// Drops the device users and, for a started mmap, calls the free callback. Call only when not in
	// use and after revoke_exports() succeeded.
	void tear_down() noexcept;
	// Revokes every export, waits (bounded) until no importer access is in progress, and frees the
	// descriptors. NOT_PERMITTED when an importer is still inside an access ("memory deregistration
	// failed"): the exports stay revoked, the memory stays registered, and a later call finishes.
	doca_error_t revoke_exports() noexcept;
	doca_error_t export_to(const doca_dev *dev, uint16_t kind, const void **desc, size_t *len) noexcept;

	bool started_ = false;
	bool ever_started_ = false;
	bool memrange_set_ = false;
	bool exported_ = false;
	bool revoking_ = false; // a stop/destroy found an import access in progress; exports revoked
	Origin origin_ = Origin::local;
	uint32_t permissions_ = softdpu::mem::kDefaultMmapPermissions;
	uint8_t *range_start_ = nullptr;
	size_t range_len_ = 0;
	int dmabuf_fd_ = -1;
	size_t dmabuf_offset_ = 0;
	doca_mmap_memrange_free_cb_t *free_cb_ = nullptr;
	void *free_cb_opaque_ = nullptr;
	union doca_data user_data_ = {};
	uint32_t max_num_devices_ = softdpu::mem::kDefaultMaxNumDevices;
	std::vector<doca_dev *> devices_;
	// doca_bufs pointing into the memory (inventory and pool buffers that are out, array elements).
	std::atomic<uint32_t> num_bufs_{0};
	// Pools and arrays created over this mmap and not yet destroyed.
	uint32_t num_dependents_ = 0;
	std::unique_ptr<softdpu::mem::RemoteMemory> remote_;
	// Exports of a local started mmap (doca_mmap_export_*), revoked at stop/destroy.
	std::vector<std::unique_ptr<softdpu::mem::MmapExport>> exports_;
};
