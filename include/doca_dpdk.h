/*
 * softdpu: DOCA 2.5 DPDK bridge (doca_dpdk.h). Connects DPDK programs to DOCA: a DOCA device as a
 * DPDK port, and DPDK packet buffers (rte_mbuf) as DOCA buffers (doca_buf) that other DOCA
 * libraries (DMA, ...) can read and write. Library: libdoca_dpdk_bridge (pkg-config
 * doca-dpdk-bridge), built when DPDK is found.
 *
 * softdpu: the memory-pool half is implemented (doca_dpdk_mempool_*); the port half
 * (doca_dpdk_port_probe, doca_dpdk_port_as_dev, doca_dpdk_get_first_port_id) answers
 * DOCA_ERROR_NOT_SUPPORTED until softdpu's functions carry packets (docs/dpdk-bridge.md).
 */
#ifndef DOCA_DPDK_H_
#define DOCA_DPDK_H_

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_buf_inventory;
struct doca_buf;

struct rte_mempool;
struct rte_mbuf;

/** A DOCA view of a DPDK mbuf pool: its memory registered on DOCA devices. */
struct doca_dpdk_mempool;

/**
 * Attach the DPDK port of a DOCA device, after rte_eal_init(). The port is neither configured nor
 * started. The application keeps EAL from probing the device itself (e.g. --no-pci). Not thread safe.
 *
 * @param [in] dev      The DOCA device whose port to attach.
 * @param [in] devargs  DPDK devargs, without the device's PCI address.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_DRIVER (DPDK
 * failed to attach the port), DOCA_ERROR_NO_MEMORY (allocation failure).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_port_probe(struct doca_dev *dev, const char *devargs);

/**
 * The first DPDK port of a DOCA device probed with doca_dpdk_port_probe().
 *
 * @param [in] dev       The DOCA device.
 * @param [out] port_id  Its DPDK port id.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_NOT_FOUND (no DPDK
 * port belongs to the device).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_get_first_port_id(const struct doca_dev *dev, uint16_t *port_id);

/**
 * The DOCA device behind a DPDK port.
 *
 * @param [in] port_id  A DPDK port id.
 * @param [out] dev     The DOCA device of that port.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_NOT_FOUND (the port
 * belongs to no DOCA device).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_port_as_dev(uint16_t port_id, struct doca_dev **dev);

/**
 * Create a DOCA DPDK memory pool over a DPDK pool of mbufs, to turn its mbufs into doca_bufs.
 * Control path: create, add one or more devices (doca_dpdk_mempool_dev_add), optionally set the
 * devices' access (doca_dpdk_mempool_set_permissions, default DOCA_ACCESS_FLAG_LOCAL_READ_WRITE),
 * start (doca_dpdk_mempool_start). Data path: doca_dpdk_mempool_mbuf_to_buf; the mbuf may be freed
 * with rte_pktmbuf_free() once the application no longer needs it; the doca_buf is released with
 * doca_buf_dec_refcount().
 *
 * @param [in] mbuf_pool     A pool of mbufs (rte_pktmbuf_pool_create*()).
 * @param [out] mempool_out  The new DOCA DPDK memory pool.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_create(const struct rte_mempool *mbuf_pool, struct doca_dpdk_mempool **mempool_out);

/**
 * Destroy a DOCA DPDK memory pool, before the DPDK pool it was created over is freed. Every doca_buf
 * obtained with doca_dpdk_mempool_mbuf_to_buf() must have been released. The DPDK pool and its
 * mbufs are left as they are.
 *
 * @param [in] mempool  The DOCA DPDK memory pool.
 * @return DOCA_SUCCESS, or DOCA_ERROR_IN_USE (a doca_buf obtained from it is still held).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_destroy(struct doca_dpdk_mempool *mempool);

/**
 * Add a DOCA device to the memory pool, so that its doca_bufs can be used by DOCA libraries working
 * on that device. A device cannot be removed again (only the whole pool destroyed).
 *
 * @param [in] mempool  The DOCA DPDK memory pool.
 * @param [in] dev      A DOCA device.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_NO_MEMORY (out of
 * memory).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_dev_add(struct doca_dpdk_mempool *mempool, struct doca_dev *dev);

/**
 * Set the access the added devices have to the memory of the pool's doca_bufs (enum
 * doca_access_flag; default DOCA_ACCESS_FLAG_LOCAL_READ_WRITE). DOCA_ACCESS_FLAG_DPU_* flags are
 * refused.
 *
 * @param [in] mempool      The DOCA DPDK memory pool.
 * @param [in] access_mask  The access flags.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input or flags).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_set_permissions(struct doca_dpdk_mempool *mempool, uint32_t access_mask);

/**
 * Start the DOCA DPDK memory pool: at least one device must have been added. After start, only
 * doca_dpdk_mempool_mbuf_to_buf() and doca_dpdk_mempool_destroy() are allowed.
 *
 * @param [in] mempool  The DOCA DPDK memory pool.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_NO_MEMORY (out of
 * memory).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_start(struct doca_dpdk_mempool *mempool);

/**
 * Get a doca_buf over an mbuf of the pool: its head at the mbuf's buffer, its data at the mbuf's
 * data (data offset and data length); a multi-segment mbuf gives a list of doca_bufs, one per
 * segment, in the same order. The doca_buf holds a reference on each direct mbuf (the mbuf behind an
 * indirect one); releasing the doca_buf (doca_buf_dec_refcount()) frees each of them with
 * rte_pktmbuf_free_seg(). A duplicate of the doca_buf takes references too. Later changes to the
 * mbuf do not change the doca_buf, nor the other way round. The mbuf must be in the DPDK pool the
 * DOCA DPDK memory pool was created over (no external buffers).
 *
 * @param [in] mempool    The started DOCA DPDK memory pool over the mbuf's pool.
 * @param [in] inventory  A started inventory with enough free elements.
 * @param [in] mbuf       The mbuf.
 * @param [out] buf       The doca_buf over the same memory.
 * @return DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE (invalid input), DOCA_ERROR_NO_MEMORY (not
 * enough free elements in the inventory).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpdk_mempool_mbuf_to_buf(struct doca_dpdk_mempool *mempool, struct doca_buf_inventory *inventory,
					   struct rte_mbuf *mbuf, struct doca_buf **buf);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DPDK_H_ */
