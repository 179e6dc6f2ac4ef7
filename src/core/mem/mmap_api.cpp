// doca_mmap.h: argument checks over doca_mmap (mmap.hpp).
#include <doca_mmap.h>

#include "common/api_barrier.hpp"
#include "core/dev/dev.hpp"
#include "core/mem/mmap.hpp"
#include "core/xproc/blob.hpp"

using softdpu::common::api_barrier;
using softdpu::xproc::ExportKind;

extern "C" {

doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		*mmap = doca_mmap::create_local().release();
		return DOCA_SUCCESS;
	});
}

doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	const doca_error_t result = mmap->shut_down();
	if (result == DOCA_SUCCESS)
		delete mmap;
	return result;
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
	return mmap->get_memrange(addr, len);
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	if (mmap == nullptr || free_cb == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->set_free_cb(free_cb, opaque);
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
	return mmap->set_user_data(user_data);
}

doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data)
{
	if (mmap == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = mmap->user_data();
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	if (mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->set_max_num_devices(max_num_devices);
}

doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices)
{
	if (mmap == nullptr || max_num_devices == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_devices = mmap->max_num_devices();
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs)
{
	if (mmap == nullptr || num_bufs == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_bufs = mmap->num_bufs();
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported)
{
	if (mmap == nullptr || exported == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*exported = mmap->exported() ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export)
{
	if (mmap == nullptr || from_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = mmap->origin() == doca_mmap::Origin::imported ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len)
{
	if (mmap == nullptr || dev == nullptr || export_desc == nullptr || export_desc_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->export_desc(dev, ExportKind::pci, export_desc, export_desc_len);
}

doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len)
{
	if (mmap == nullptr || dev == nullptr || export_desc == nullptr || export_desc_len == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mmap->export_desc(dev, ExportKind::rdma, export_desc, export_desc_len);
}

doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	if (export_desc == nullptr || export_desc_len == 0 || dev == nullptr || mmap == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		return doca_mmap::create_from_export(user_data, export_desc, export_desc_len, dev, mmap);
	});
}

doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export)
{
	if (devinfo == nullptr || mmap_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*mmap_export = devinfo->caps().mmap_export_pci ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *from_export)
{
	if (devinfo == nullptr || from_export == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = devinfo->caps().mmap_create_from_export_pci ? 1 : 0;
	return DOCA_SUCCESS;
}

} // extern "C"
