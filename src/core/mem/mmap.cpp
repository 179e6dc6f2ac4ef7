// doca_mmap.h: the memory map.
#include "core/mem/mmap.hpp"

#include "core/mem/dev_link.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

} // namespace

doca_mmap::~doca_mmap() = default;

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
	if (devices_.size() >= max_num_devices_)
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
	started_ = true;
	ever_started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap::stop() noexcept
{
	if (!is_configurable_kind() || in_use())
		return DOCA_ERROR_NOT_PERMITTED;
	if (!started_)
		return DOCA_ERROR_BAD_STATE;
	started_ = false;
	return DOCA_SUCCESS;
}

void doca_mmap::tear_down() noexcept
{
	for (doca_dev *dev : devices_)
		softdpu::mem::release_device(dev);
	devices_.clear();
	if (ever_started_ && free_cb_ != nullptr)
		free_cb_(range_start_, range_len_, free_cb_opaque_);
	started_ = false;
}

// ---- C API ----

extern "C" {

doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		auto created = std::make_unique<doca_mmap>();
		created->devices_.reserve(softdpu::mem::kDefaultMaxNumDevices);
		*mmap = created.release();
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->in_use())
		return DOCA_ERROR_NOT_PERMITTED;
	mmap->tear_down();
	delete mmap;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_start(struct doca_mmap *mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->start();
}

doca_error_t doca_mmap_stop(struct doca_mmap *mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->stop();
}

doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	if (mmap == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->add_dev(dev);
}

doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	if (mmap == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->rm_dev(dev);
}

doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->set_memrange(addr, len);
}

doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->set_dmabuf_memrange(dmabuf_fd, addr, dmabuf_offset, len);
}

doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	if (mmap == nullptr || addr == nullptr || len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!mmap->memrange_set_)
		return DOCA_ERROR_BAD_STATE;
	*addr = mmap->range_start_;
	*len = mmap->range_len_;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	if (mmap == nullptr || free_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->started_)
		return DOCA_ERROR_BAD_STATE;
	if (!mmap->is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	mmap->free_cb_ = free_cb;
	mmap->free_cb_opaque_ = opaque;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->set_permissions(access_mask);
}

doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->started_)
		return DOCA_ERROR_BAD_STATE;
	mmap->user_data_ = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data)
{
	if (mmap == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = mmap->user_data_;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	if (mmap == nullptr || max_num_devices == 0 || max_num_devices < mmap->devices_.size())
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->ever_started_ || !mmap->is_configurable_kind())
		return DOCA_ERROR_NOT_PERMITTED;
	mmap->max_num_devices_ = max_num_devices;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices)
{
	if (mmap == nullptr || max_num_devices == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_devices = mmap->max_num_devices_;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs)
{
	if (mmap == nullptr || num_bufs == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_bufs = mmap->num_bufs_;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported)
{
	if (mmap == nullptr || exported == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*exported = mmap->exported_ ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export)
{
	if (mmap == nullptr || from_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = mmap->origin_ == doca_mmap::Origin::imported ? 1 : 0;
	return DOCA_SUCCESS;
}

// Shared checks of the two exports; the export itself arrives with the host<->DPU issue.
static doca_error_t check_export(const struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				 size_t *export_desc_len, uint32_t needed_access)
{
	if (mmap == nullptr || dev == nullptr || export_desc == nullptr || export_desc_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!mmap->has_device(dev))
		return DOCA_ERROR_NOT_FOUND;
	if (!mmap->started_ || mmap->origin_ != doca_mmap::Origin::local || (mmap->permissions_ & needed_access) == 0)
		return DOCA_ERROR_NOT_PERMITTED;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len)
{
	return check_export(mmap, dev, export_desc, export_desc_len,
			    DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE);
}

doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len)
{
	return check_export(mmap, dev, export_desc, export_desc_len,
			    DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC);
}

doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	(void)user_data;
	if (export_desc == nullptr || export_desc_len == 0 || dev == nullptr || mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export)
{
	if (devinfo == nullptr || mmap_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*mmap_export = 0; // export is not implemented yet, so the capability is honest at 0
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export)
{
	if (devinfo == nullptr || from_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = 0;
	return DOCA_SUCCESS;
}

} // extern "C"
