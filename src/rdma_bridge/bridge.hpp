// The RDMA bridge (doca_rdma_bridge.h): the verbs objects behind DOCA devices and mmaps.
//
//   - A DOCA device opens its verbs device (the function's ibdev, through libibverbs) and allocates
//     a protection domain on first use; both are released when the DOCA device closes. A device
//     made from the application's PD uses that PD and releases nothing of it.
//   - A started mmap registers its memory range on a device's PD the first time a key is asked for
//     on that device (with the access its permissions give); the registrations go when the mmap
//     stops or is destroyed.
//
// libibverbs must be softdpu's (docs/rdma.md): the system's finds no softdpu device, and the
// bridge says so (DOCA_ERROR_BAD_STATE).
#pragma once

#include <doca_error.h>
#include <infiniband/verbs.h>

#include <cstdint>

struct doca_dev;
struct doca_buf;

namespace softdpu::rdma_bridge {

doca_error_t get_dev_pd(doca_dev &dev, ibv_pd **pd) noexcept;
doca_error_t open_dev_from_pd(ibv_pd &pd, doca_dev **dev) noexcept;
doca_error_t get_buf_mkey(const doca_buf &buf, doca_dev &dev, uint32_t *mkey) noexcept;

// The verbs access flags a key of an mmap with these DOCA permissions carries.
unsigned int verbs_access(uint32_t doca_permissions) noexcept;

} // namespace softdpu::rdma_bridge
