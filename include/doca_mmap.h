/*
 * softdpu: DOCA memory map (DOCA 2.5 doca_mmap.h).
 *
 * A doca_mmap describes one memory range, the devices that may access it and with which
 * permissions. Configure it (memrange, devices, permissions, ...), start it, then create
 * doca_bufs over it. A started mmap cannot be changed; an mmap cannot be stopped or destroyed
 * while doca_bufs, buffer pools or buffer arrays still point into it.
 *
 * softdpu notes (where DOCA leaves the behaviour open):
 *  - default permissions are DOCA_ACCESS_FLAG_LOCAL_READ_WRITE; default max devices is 16;
 *  - starting an mmap without a memory range, starting a started mmap, or stopping one that is not
 *    started returns DOCA_ERROR_BAD_STATE;
 *  - exporting (PCI, RDMA) and creating from an export are not available yet: the capability
 *    queries report 0 and the calls return DOCA_ERROR_NOT_SUPPORTED after checking their input.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_mmap;

/* Called on destroy of a started mmap to free its memory range. A function type, used as a pointer. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

/* Creates an empty, unstarted mmap. INVALID_VALUE; NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

/* Destroys the mmap (stopping it first). INVALID_VALUE; NOT_PERMITTED while doca_bufs point into it. */
DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/* Starts the mmap. INVALID_VALUE; NO_MEMORY; NOT_PERMITTED if exported or created from export. */
DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/* Stops the mmap. INVALID_VALUE; NOT_PERMITTED if exported, created from export, or doca_bufs remain. */
DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/* Grants a device access to the memory. INVALID_VALUE; NOT_PERMITTED (started, exported, from export);
 * NO_MEMORY (max devices reached); ALREADY_EXIST; NOT_SUPPORTED. */
DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Removes a device. INVALID_VALUE; NOT_FOUND; NOT_PERMITTED (started, exported, from export). */
DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Sets the memory range, once. INVALID_VALUE (NULL, zero length, overflow); BAD_STATE (started);
 * NOT_PERMITTED (set before, exported, from export). */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/* Sets the memory range from a dmabuf. As doca_mmap_set_memrange; INVALID_VALUE for an fd that is not
 * an open dmabuf. */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len);

/* Gets the memory range. INVALID_VALUE; BAD_STATE (never set). */
DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

/* Sets the callback that frees the memory range when a started mmap is destroyed.
 * INVALID_VALUE; BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/* Sets the access flags (enum doca_access_flag). INVALID_VALUE (unknown flag, PCI_READ_ONLY together with
 * PCI_READ_WRITE); BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

/* Sets the user data. INVALID_VALUE; BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

/* Gets the user data (0 unless set). INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

/* Sets how many devices may be added. INVALID_VALUE (0, or fewer than already added);
 * NOT_PERMITTED after the first start. */
DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/* Gets how many devices may be added. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

/* Gets the number of doca_bufs pointing into the memory. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

/* 1 if the mmap has been exported, else 0. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported);

/* 1 if the mmap was created from an export, else 0. INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export);

/* Exports the started mmap over PCI for a device added to it. INVALID_VALUE; NOT_FOUND; NOT_PERMITTED;
 * NO_MEMORY; NOT_SUPPORTED; DRIVER. */
DOCA_STABLE
doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len);

/* Exports the started mmap for RDMA for a device added to it. INVALID_VALUE; NOT_FOUND; NOT_PERMITTED;
 * NO_MEMORY; NOT_SUPPORTED; DRIVER. */
DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

/* Creates an mmap that represents memory exported by another process. INVALID_VALUE; NO_MEMORY;
 * NOT_SUPPORTED; NOT_PERMITTED; DRIVER. */
DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

/* 1 if the device can export an mmap over PCI, else 0. INVALID_VALUE; DRIVER. */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/* 1 if the device can create an mmap from a PCI export, else 0. INVALID_VALUE; DRIVER. */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
