/*
 * softdpu: DOCA 2.5 RDMA bridge (doca_rdma_bridge.h). Hands the verbs (rdma-core) objects behind
 * DOCA devices and buffers to applications that use both: the protection domain of a device, a
 * DOCA device over a protection domain the application made, and the memory key of a buffer.
 * softdpu's devices are verbs devices of softdpu's own libibverbs (docs/rdma.md): the program runs
 * with that library on its loader path.
 */
#ifndef DOCA_RDMA_BRIDGE_H_
#define DOCA_RDMA_BRIDGE_H_

#include <infiniband/verbs.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_buf;

/**
 * Get the protection domain associated with a DOCA device.
 *
 * @param [in] dev  DOCA device to get the pd from.
 * @param [out] pd  The protection domain associated with the device.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_BAD_STATE (the
 * device's pd is not valid: no verbs device behind it).
 */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd);

/**
 * Open a DOCA device using an ibv_pd. The device can be added to mmaps, whose buffers then yield
 * memory keys of that protection domain (doca_rdma_bridge_get_buf_mkey).
 *
 * @param [in] pd    A protection domain that is not associated with any DOCA device.
 * @param [out] dev  A newly created DOCA device with the same protection domain as pd.
 * @return DOCA_SUCCESS, or an error code.
 */
DOCA_STABLE
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev);

/**
 * Get the memory key of a DOCA buffer on a DOCA device: the key of the memory registration the
 * buffer's mmap holds on that device, usable as lkey and rkey. Access of the key is defined by the
 * mmap where buf was created.
 *
 * @param [in] buf    The DOCA buffer. MUST NOT BE NULL.
 * @param [in] dev    The DOCA device. MUST NOT BE NULL.
 * @param [out] mkey  The returned memory key. MUST NOT BE NULL.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (no key for that device),
 * DOCA_ERROR_NOT_SUPPORTED (the mmap's access flags cannot be given by a key).
 */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_BRIDGE_H_ */
