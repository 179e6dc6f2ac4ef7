#include "mlx5/devx/device_caps.hpp"

#include <cerrno>

namespace softdpu::mlx5::devx {

uint32_t log2_floor(uint64_t value) noexcept
{
	uint32_t log = 0;
	while (value > 1) {
		value >>= 1;
		++log;
	}
	return log;
}

uint32_t log2_ceil(uint64_t value) noexcept
{
	uint32_t log = 0;
	while (log < 64 && (uint64_t{1} << log) < value)
		++log;
	return log;
}

int DeviceCaps::query(ibv_context *context, DeviceCaps *caps) noexcept
{
	ibv_device_attr_ex attr{};
	const int error = ibv_query_device_ex(context, nullptr, &attr);
	if (error != 0)
		return error;
	ibv_port_attr port{};
	if (ibv_query_port(context, 1, &port) != 0)
		return errno != 0 ? errno : EIO;
	const ibv_device_attr &device = attr.orig_attr;
	*caps = {};
	const int index = ibv_get_device_index(context->device);
	caps->vhca_id = index >= 0 ? static_cast<uint32_t>(index) : 0;
	caps->max_qp = static_cast<uint32_t>(device.max_qp);
	caps->max_qp_wr = static_cast<uint32_t>(device.max_qp_wr);
	caps->max_sge = static_cast<uint32_t>(device.max_sge);
	caps->max_srq = static_cast<uint32_t>(device.max_srq);
	caps->max_srq_wr = static_cast<uint32_t>(device.max_srq_wr);
	caps->max_cq = static_cast<uint32_t>(device.max_cq);
	caps->max_cqe = static_cast<uint32_t>(device.max_cqe);
	caps->max_mr = static_cast<uint32_t>(device.max_mr);
	caps->max_pd = static_cast<uint32_t>(device.max_pd);
	caps->max_qp_rd_atom = static_cast<uint32_t>(device.max_qp_rd_atom);
	caps->max_qp_init_rd_atom = static_cast<uint32_t>(device.max_qp_init_rd_atom);
	caps->max_msg_sz = port.max_msg_sz;
	caps->gid_table_len = static_cast<uint32_t>(port.gid_tbl_len);
	caps->pkey_table_len = port.pkey_tbl_len;
	caps->num_ports = device.phys_port_cnt;
	caps->atomic = device.atomic_cap != IBV_ATOMIC_NONE;
	caps->ethernet = port.link_layer == IBV_LINK_LAYER_ETHERNET;
	return 0;
}

} // namespace softdpu::mlx5::devx
