// doca_rdma_bridge.h: argument checks over rdma_bridge/bridge.hpp.
#include "common/api_barrier.hpp"
#include "core/dev/dev.hpp"
#include "rdma_bridge/bridge.hpp"

#include <doca_rdma_bridge.h>

using softdpu::common::api_barrier;

extern "C" {

doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd)
{
	if (dev == nullptr || pd == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		// The PD is made on first use: state of the device, not of what the caller sees of it.
		return softdpu::rdma_bridge::get_dev_pd(const_cast<doca_dev &>(*dev), pd);
	});
}

doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev)
{
	if (pd == nullptr || pd->context == nullptr || dev == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] { return softdpu::rdma_bridge::open_dev_from_pd(*pd, dev); });
}

doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey)
{
	if (buf == nullptr || dev == nullptr || mkey == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] { return softdpu::rdma_bridge::get_buf_mkey(*buf, *dev, mkey); });
}

} // extern "C"
