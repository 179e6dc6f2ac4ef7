// Contexts: opening with or without DevX, the state libmlx5 keeps per context, mlx5dv_query_device.
#include "mlx5/mlx5.hpp"

#include "verbs/softdpu_api.h"

#include <cerrno>
#include <new>

namespace softdpu::mlx5 {

namespace {

void *make_context(ibv_context *context, void *arg)
{
	const bool devx = *static_cast<const bool *>(arg);
	devx::DeviceCaps caps;
	const int error = devx::DeviceCaps::query(context, &caps);
	if (error != 0) {
		errno = error;
		return nullptr;
	}
	auto *made = new (std::nothrow) Context(context, devx, caps);
	if (made == nullptr)
		errno = ENOMEM;
	return made;
}

void release_context(void *data)
{
	delete static_cast<Context *>(data);
}

} // namespace

bool is_ours(const ibv_context *context) noexcept
{
	return context != nullptr && softdpu_verbs_is_device(context->device) != 0;
}

Context *Context::of(ibv_context *context) noexcept
{
	bool devx = false;
	return static_cast<Context *>(softdpu_verbs_context_data(context, make_context, &devx, release_context));
}

ibv_context *Context::open(ibv_device *device, bool devx) noexcept
{
	ibv_context *context = ibv_open_device(device);
	if (context == nullptr)
		return nullptr;
	// A fresh context: this call makes its state, with the DevX choice of the caller.
	if (softdpu_verbs_context_data(context, make_context, &devx, release_context) == nullptr) {
		const int error = errno;
		ibv_close_device(context);
		errno = error;
		return nullptr;
	}
	return context;
}

// A software device: no CQE compression, software parsing, striding RQ, tunnel offloads, dynamic
// blue-flame registers, flow actions, DC, signature, DCI streams, memcpy or crypto offloads. Each
// capability the caller asks for in comp_mask is answered (zero: not offered), except the clock
// and LAG ones rdma-core answers only where they exist.
int query_device(ibv_context *context, mlx5dv_context *attrs) noexcept
{
	if (context == nullptr || attrs == nullptr)
		return EINVAL;
	if (!is_ours(context))
		return EOPNOTSUPP;
	const uint64_t asked = attrs->comp_mask;
	uint64_t answered = 0;
	attrs->version = 0;
	attrs->flags = MLX5DV_CONTEXT_FLAGS_CQE_V1; // the CQE format of the device (cqe_version 1)
	if ((asked & MLX5DV_CONTEXT_MASK_CQE_COMPRESION) != 0) {
		attrs->cqe_comp_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_CQE_COMPRESION;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_SWP) != 0) {
		attrs->sw_parsing_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_SWP;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_STRIDING_RQ) != 0) {
		attrs->striding_rq_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_STRIDING_RQ;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS) != 0) {
		attrs->tunnel_offloads_caps = 0;
		answered |= MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_DCI_STREAMS) != 0) {
		attrs->dci_streams_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_DCI_STREAMS;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_DYN_BFREGS) != 0) {
		attrs->max_dynamic_bfregs = 0;
		answered |= MLX5DV_CONTEXT_MASK_DYN_BFREGS;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS) != 0) {
		attrs->flow_action_flags = 0;
		answered |= MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS) != 0) {
		attrs->dc_odp_caps = 0;
		answered |= MLX5DV_CONTEXT_MASK_DC_ODP_CAPS;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD) != 0) {
		attrs->sig_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH) != 0) {
		attrs->max_wr_memcpy_length = 0;
		answered |= MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH;
	}
	if ((asked & MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD) != 0) {
		attrs->crypto_caps = {};
		answered |= MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD;
	}
	attrs->comp_mask = answered;
	return 0;
}

} // namespace softdpu::mlx5
