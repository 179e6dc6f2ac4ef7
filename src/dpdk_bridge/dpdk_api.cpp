// doca_dpdk.h: argument checks over dpdk_bridge/port.hpp (ports on the packet links) and
// dpdk_bridge/mempool.hpp (docs/dpdk-bridge.md).
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"
#include "dpdk_bridge/mempool.hpp"
#include "dpdk_bridge/port.hpp"

#include <doca_dpdk.h>

#include <memory>

using softdpu::common::api_barrier;

extern "C" {

doca_error_t doca_dpdk_port_probe(struct doca_dev *dev, const char *devargs)
{
	if (dev == nullptr || devargs == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return softdpu::dpdk_bridge::probe_port(*dev, devargs);
}

doca_error_t doca_dpdk_get_first_port_id(const struct doca_dev *dev, uint16_t *port_id)
{
	if (dev == nullptr || port_id == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return softdpu::dpdk_bridge::first_port_of(*dev, *port_id);
}

doca_error_t doca_dpdk_port_as_dev(uint16_t port_id, struct doca_dev **dev)
{
	if (dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return softdpu::dpdk_bridge::dev_of_port(port_id, *dev);
}

doca_error_t doca_dpdk_mempool_create(const struct rte_mempool *mbuf_pool, struct doca_dpdk_mempool **mempool_out)
{
	if (mbuf_pool == nullptr || mempool_out == nullptr) {
		SDK_LOG_ERR(
		    "DPDK bridge: Failed to create DOCA DPDK mempool: invalid input mbuf_pool=%p, mempool_out=%p",
		    static_cast<const void *>(mbuf_pool), static_cast<void *>(mempool_out));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] { return doca_dpdk_mempool::create(*mbuf_pool, mempool_out); });
}

doca_error_t doca_dpdk_mempool_destroy(struct doca_dpdk_mempool *mempool)
{
	if (mempool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	const doca_error_t error = mempool->shut_down();
	if (error == DOCA_SUCCESS)
		delete mempool;
	return error;
}

doca_error_t doca_dpdk_mempool_dev_add(struct doca_dpdk_mempool *mempool, struct doca_dev *dev)
{
	if (mempool == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mempool->add_dev(*dev);
}

doca_error_t doca_dpdk_mempool_set_permissions(struct doca_dpdk_mempool *mempool, uint32_t access_mask)
{
	if (mempool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mempool->set_permissions(access_mask);
}

doca_error_t doca_dpdk_mempool_start(struct doca_dpdk_mempool *mempool)
{
	if (mempool == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mempool->start();
}

doca_error_t doca_dpdk_mempool_mbuf_to_buf(struct doca_dpdk_mempool *mempool, struct doca_buf_inventory *inventory,
					   struct rte_mbuf *mbuf, struct doca_buf **buf)
{
	if (mempool == nullptr || inventory == nullptr || mbuf == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return mempool->mbuf_to_buf(*inventory, *mbuf, buf);
}

} // extern "C"
