// struct doca_mmap: the memory map behind doca_mmap.h (the C forwarders are in mmap_api.cpp).
#include "core/mem/mmap.hpp"

#include "common/memory_access.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "core/mem/dev_link.hpp"
#include "core/xproc/blob.hpp"
#include "core/xproc/registry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

namespace {

// True when fd is an open dma-buf: the kernel names its file "dmabuf:<name>" (anon inode "dmabuf" on
// older kernels).
bool is_dmabuf_fd(int fd) noexcept
{
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return false;
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char target[256];
	const ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return std::strncmp(target, "/dmabuf:", 8) == 0 || std::strncmp(target, "dmabuf:", 7) == 0 ||
	       std::strcmp(target, "anon_inode:dmabuf") == 0;
}

bool range_overflows(const void *addr, size_t len) noexcept
{
	return reinterpret_cast<uintptr_t>(addr) > UINTPTR_MAX - len;
}

using softdpu::xproc::ExportKind;
static_assert(sizeof(softdpu::mem::MmapExport::blob) == softdpu::xproc::kBlobSize);

// The memory of an mmap created from another process's export (process_vm_readv/writev through
// the exporter's registry entry; see core/xproc/registry.hpp).
class ImportedMemory final : public softdpu::mem::RemoteMemory {
public:
	explicit ImportedMemory(std::unique_ptr<softdpu::xproc::Import> import) noexcept : import_(std::move(import)) {}
	doca_error_t read(uint64_t remote_addr, void *dst, size_t len) noexcept override
	{
		struct iovec local = {dst, len};
		struct iovec remote = {reinterpret_cast<void *>(remote_addr), len};
		return import_->transfer(false, &local, 1, &remote, 1);
	}
	doca_error_t write(uint64_t remote_addr, const void *src, size_t len) noexcept override
	{
		struct iovec local = {const_cast<void *>(src), len};
		struct iovec remote = {reinterpret_cast<void *>(remote_addr), len};
		return import_->transfer(true, &local, 1, &remote, 1);
	}
	doca_error_t transfer(bool write, const struct iovec *local, size_t local_count, const struct iovec *remote,
			      size_t remote_count) noexcept override
	{
		return import_->transfer(write, local, local_count, remote, remote_count);
	}
	bool dma_capable() const noexcept override { return import_->blob().kind == ExportKind::pci; }
	uint32_t access() const noexcept override { return import_->blob().access; }

private:
	std::unique_ptr<softdpu::xproc::Import> import_;
};

} // namespace

doca_mmap::~doca_mmap() = default;

std::unique_ptr<doca_mmap> doca_mmap::create_local()
{
	std::unique_ptr<doca_mmap> created(new doca_mmap());
	created->devices_.reserve(softdpu::mem::kDefaultMaxNumDevices);
	return created;
}

doca_error_t doca_mmap::shut_down() noexcept
{
	if (in_use())
		return DOCA_ERROR_NOT_PERMITTED;
	const doca_error_t result = revoke_exports();
	if (result != DOCA_SUCCESS)
		return result;
	tear_down();
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::get_memrange(void **addr, size_t *len) const noexcept
{
	if (!memrange_set_)
		return DOCA_ERROR_BAD_STATE;
	*addr = range_start_;
	*len = range_len_;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::set_free_cb(doca_mmap_memrange_free_cb_t *free_cb, void *opaque) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	if (!is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	free_cb_ = free_cb;
	free_cb_opaque_ = opaque;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::set_user_data(union doca_data user_data) noexcept
{
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	user_data_ = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::set_max_num_devices(uint32_t max_num_devices) noexcept
{
	if (max_num_devices == 0 || max_num_devices < devices_.size())
		return DOCA_ERROR_INVALID_VALUE;
	if (ever_started_ || !is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	max_num_devices_ = max_num_devices;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::set_memrange(void *addr, size_t len) noexcept
{
	if (addr == nullptr || len == 0 || range_overflows(addr, len))
		return DOCA_ERROR_INVALID_VALUE;
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	if (memrange_set_ || !is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	range_start_ = static_cast<uint8_t *>(addr);
	range_len_ = len;
	memrange_set_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::set_dmabuf_memrange(int fd, void *addr, size_t offset, size_t len) noexcept
{
	if (addr == nullptr || len == 0 || range_overflows(addr, len) || offset > SIZE_MAX - len)
		return DOCA_ERROR_INVALID_VALUE;
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	if (memrange_set_ || !is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	// softdpu has no device memory: a dmabuf is usable only when addr is its CPU mapping.
	if (!is_dmabuf_fd(fd))
		return DOCA_ERROR_INVALID_VALUE;
	const doca_error_t result = set_memrange(addr, len);
	if (result == DOCA_SUCCESS) {
		dmabuf_fd_ = fd;
		dmabuf_offset_ = offset;
	}
	return result;
}

doca_error_t doca_mmap::set_permissions(uint32_t access_mask) noexcept
{
	const uint32_t both_pci = DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE;
	if ((access_mask & ~softdpu::mem::kAllAccessFlags) != 0 || (access_mask & both_pci) == both_pci)
		return DOCA_ERROR_INVALID_VALUE;
	if (started_)
		return DOCA_ERROR_BAD_STATE;
	if (!is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	permissions_ = access_mask;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::add_dev(doca_dev *dev) noexcept
{
	if (started_ || !is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	if (has_device(dev))
		return DOCA_ERROR_ALREADY_EXIST;
	// Besides the mmap's own maximum, the topology caps how many devices an mmap holding a given
	// device may have (capability mmap_max_devices): the smallest cap among them applies.
	size_t limit = std::min<size_t>(max_num_devices_, dev->caps().mmap_max_devices);
	for (const doca_dev *held : devices_)
		limit = std::min<size_t>(limit, held->caps().mmap_max_devices);
	if (devices_.size() >= limit)
		return DOCA_ERROR_NO_MEMORY;
	try {
		devices_.push_back(dev);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	softdpu::mem::hold_device(dev);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::rm_dev(doca_dev *dev) noexcept
{
	if (started_ || !is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	const auto it = std::find(devices_.begin(), devices_.end(), dev);
	if (it == devices_.end())
		return DOCA_ERROR_NOT_FOUND;
	devices_.erase(it);
	softdpu::mem::release_device(dev);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::start() noexcept
{
	if (!is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	if (started_ || !memrange_set_)
		return DOCA_ERROR_BAD_STATE;
	// What memory registration checks on hardware: every page mapped, with the access asked for.
	const uint32_t writes = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE |
				DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	using softdpu::common::RangeAccess;
	const auto start = reinterpret_cast<uintptr_t>(range_start_);
	uintptr_t bad = 0;
	RangeAccess access = softdpu::common::check_range_access(start, range_len_, (permissions_ & writes) != 0, &bad);
	if (access == RangeAccess::unknown) {
		SDK_LOG_WARN("doca_mmap_start: the access rights of [%p, +%zu) are not checked: %s", range_start_,
			     range_len_, softdpu::common::to_string(access));
	}
	// Then every page faulted in, as registration pins them: catches what the maps do not show
	// (a file mapping past the end of its file).
	if (access == RangeAccess::ok || access == RangeAccess::unknown)
		access = softdpu::common::probe_range(start, range_len_, &bad);
	if (access != RangeAccess::ok && access != RangeAccess::unknown) {
		SDK_LOG_ERR("doca_mmap_start: the memory range [%p, +%zu) cannot be registered: address 0x%llx is %s",
			    range_start_, range_len_, (unsigned long long)bad, softdpu::common::to_string(access));
		return DOCA_ERROR_INVALID_VALUE;
	}
	started_ = true;
	ever_started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::stop() noexcept
{
	if (origin_ != Origin::local || in_use())
		return DOCA_ERROR_NOT_PERMITTED;
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	const doca_error_t result = revoke_exports();
	if (result != DOCA_SUCCESS)
		return result;
	release_bridge_state();
	started_ = false;
	return DOCA_SUCCESS;
}

void doca_mmap::release_bridge_state() noexcept
{
	if (bridge_release_ != nullptr)
		bridge_release_(bridge_state_);
	bridge_state_ = nullptr;
	bridge_release_ = nullptr;
}

doca_error_t doca_mmap::revoke_exports() noexcept
{
	if (exports_.empty())
		return DOCA_SUCCESS;
	// A forked child inherits the records of its parent's exports but not the entries (its registry
	// is its own): it drops them and leaves the parent's exports alone.
	if (exports_.front()->fork_epoch != softdpu::xproc::fork_epoch()) {
		exports_.clear();
		exported_ = false;
		revoking_ = false;
		return DOCA_SUCCESS;
	}
	doca_error_t error = DOCA_SUCCESS;
	softdpu::xproc::Registry *registry = softdpu::xproc::Registry::instance(&error);
	if (registry != nullptr) {
		// One wait for all: an importer stalled in one export does not multiply it.
		const auto deadline = std::chrono::steady_clock::now() + softdpu::xproc::kRevokeWait;
		bool drained = true;
		for (auto &record : exports_) {
			const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			    deadline - std::chrono::steady_clock::now());
			drained =
			    registry->revoke(record->entry, std::max(left, std::chrono::milliseconds(0))) && drained;
		}
		if (!drained) {
			// The exports are revoked (no access can start) but one is still in progress:
			// the memory must stay registered until it ends. The caller tries again.
			revoking_ = true;
			SDK_LOG_ERR("mmap: memory deregistration failed: an importing process is still inside an "
				    "access to this mmap's memory; the mmap stays started, try again");
			return DOCA_ERROR_NOT_PERMITTED;
		}
		for (auto &record : exports_)
			registry->release(record->entry);
	}
	exports_.clear();
	exported_ = false;
	revoking_ = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::export_to(const doca_dev *dev, uint16_t kind, const void **desc, size_t *len) noexcept
{
	for (const auto &record : exports_) {
		if (record->dev == dev && record->kind == kind) {
			*desc = record->blob.data();
			*len = record->blob.size();
			return DOCA_SUCCESS;
		}
	}
	std::unique_ptr<softdpu::mem::MmapExport> record(new (std::nothrow) softdpu::mem::MmapExport());
	if (!record)
		return DOCA_ERROR_NO_MEMORY;
	try {
		exports_.reserve(exports_.size() + 1);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	doca_error_t result = DOCA_SUCCESS;
	softdpu::xproc::Registry *registry = softdpu::xproc::Registry::instance(&result);
	if (registry == nullptr)
		return result;
	softdpu::xproc::ExportBlob blob;
	softdpu::xproc::set_exporting_device(blob, dev->function());
	result = registry->publish(static_cast<ExportKind>(kind), reinterpret_cast<uint64_t>(range_start_), range_len_,
				   permissions_, &blob, &record->entry);
	if (result != DOCA_SUCCESS)
		return result;
	softdpu::xproc::encode(blob, record->blob);
	record->dev = dev;
	record->kind = kind;
	record->fork_epoch = softdpu::xproc::fork_epoch();
	*desc = record->blob.data();
	*len = record->blob.size();
	exports_.push_back(std::move(record));
	exported_ = true;
	return DOCA_SUCCESS;
}

void doca_mmap::tear_down() noexcept
{
	release_bridge_state();
	for (doca_dev *dev : devices_)
		softdpu::mem::release_device(dev);
	devices_.clear();
	if (ever_started_ && free_cb_ != nullptr)
		free_cb_(range_start_, range_len_, free_cb_opaque_);
	started_ = false;
}

// Shared checks of the two exports (DOCA's order: arguments, device, mmap state, capability).
doca_error_t doca_mmap::export_desc(const doca_dev *dev, ExportKind kind, const void **desc, size_t *len) noexcept
{
	const char *what = kind == ExportKind::pci ? "export_pci" : "export_rdma";
	if (!has_device(dev)) {
		SDK_LOG_ERR("doca_mmap_%s: device %s was not added to the mmap", what, dev->function().name.c_str());
		return DOCA_ERROR_NOT_FOUND;
	}
	const uint32_t needed =
	    kind == ExportKind::pci
		? DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE
		: DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	if (origin_ != Origin::local) {
		SDK_LOG_ERR("doca_mmap_%s: an mmap created from an export cannot be exported", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!started_) {
		SDK_LOG_ERR("doca_mmap_%s: the mmap is not started", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (revoking_) {
		SDK_LOG_ERR("doca_mmap_%s: the mmap's exports are being revoked (a stop is not finished)", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if ((permissions_ & needed) == 0) {
		SDK_LOG_ERR("doca_mmap_%s: the mmap has no %s access permission", what,
			    kind == ExportKind::pci ? "PCI" : "RDMA");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	const auto &caps = dev->caps();
	if (kind == ExportKind::pci ? !caps.mmap_export_pci : !caps.mmap_export_rdma) {
		SDK_LOG_ERR("doca_mmap_%s: device %s has no export capability", what, dev->function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return export_to(dev, static_cast<uint16_t>(kind), desc, len);
}

namespace {

// Host <-> DPU matching (Core guide, "Local Device and Representor Matching"): memory a host
// function exports over PCI is imported on the DPU through the DPU PF that manages that
// function's representor. RDMA exports may be imported through any device.
doca_error_t check_import_device(const softdpu::xproc::ExportBlob &blob, const doca_dev *dev) noexcept
{
	const auto &topology = dev->devinfo().table().topology();
	const softdpu::device::Function *exporter = topology.find_function(blob.dev_name.data());
	const auto side = blob.dev_side == 0 ? softdpu::device::Side::host : softdpu::device::Side::dpu;
	if (exporter == nullptr || exporter->side != side || static_cast<uint8_t>(exporter->type) != blob.dev_type) {
		SDK_LOG_ERR("doca_mmap_create_from_export: the exporting device %s is not part of this topology "
			    "(both processes must use the same SOFTDPU_TOPOLOGY)",
			    blob.dev_name.data());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (blob.kind != ExportKind::pci)
		return DOCA_SUCCESS;
	if (exporter->side != softdpu::device::Side::host) {
		SDK_LOG_ERR("doca_mmap_create_from_export: PCI export of DPU device %s: only the host can reach DPU "
			    "memory over PCI, and DOCA 2.5 host devices cannot import PCI exports",
			    exporter->name.c_str());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!topology.reaches_over_pci(dev->function(), *exporter)) {
		const softdpu::device::Function *manager = topology.dpu_manager_of(*exporter);
		SDK_LOG_ERR("doca_mmap_create_from_export: memory exported from host %s must be imported through "
			    "DPU device %s (or one of its SFs), not %s",
			    exporter->name.c_str(), manager != nullptr ? manager->name.c_str() : "(none)",
			    dev->function().name.c_str());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

} // namespace

doca_error_t doca_mmap::create_from_export(const union doca_data *user_data, const void *export_desc,
					   size_t export_desc_len, doca_dev *dev, doca_mmap **mmap)
{
	softdpu::xproc::ExportBlob blob;
	const char *why = nullptr;
	if (softdpu::xproc::decode(export_desc, export_desc_len, &blob, &why) != DOCA_SUCCESS) {
		SDK_LOG_ERR("doca_mmap_create_from_export: %s", why);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (blob.kind == ExportKind::sync_event) {
		SDK_LOG_ERR("doca_mmap_create_from_export: the descriptor is a sync event export, not an mmap export");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (blob.kind == ExportKind::pci && !dev->caps().mmap_create_from_export_pci) {
		SDK_LOG_ERR("doca_mmap_create_from_export: device %s cannot import PCI exports",
			    dev->function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	doca_error_t result = check_import_device(blob, dev);
	if (result != DOCA_SUCCESS)
		return result;
	std::unique_ptr<softdpu::xproc::Import> import;
	result = softdpu::xproc::Import::open(blob, &import);
	if (result != DOCA_SUCCESS)
		return result;
	std::unique_ptr<doca_mmap> created(new doca_mmap());
	created->remote_ = std::make_unique<ImportedMemory>(std::move(import));
	created->devices_.push_back(dev);
	created->origin_ = Origin::imported;
	created->range_start_ = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(blob.base));
	created->range_len_ = blob.length;
	created->memrange_set_ = true;
	created->permissions_ = blob.access;
	created->max_num_devices_ = 1;
	created->started_ = true;
	if (user_data != nullptr)
		created->user_data_ = *user_data;
	softdpu::mem::hold_device(dev);
	*mmap = created.release();
	return DOCA_SUCCESS;
}

doca_error_t priv_doca_mmap_set_buf_hooks(struct doca_mmap *mmap, const softdpu::mem::BufHooks *hooks) noexcept
{
	if (mmap->ever_started_ || !mmap->is_configurable_kind())
		return DOCA_ERROR_BAD_STATE;
	mmap->buf_hooks_ = hooks;
	return DOCA_SUCCESS;
}
