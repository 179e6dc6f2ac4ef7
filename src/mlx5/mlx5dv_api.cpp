// The mlx5dv functions softdpu's device implements (rdma-core 44, <infiniband/mlx5dv.h>):
// argument checks and forwarding to mlx5.hpp. Return conventions are rdma-core's: a pointer or
// null with errno set; 0 or a positive errno value.
#include "mlx5/mlx5.hpp"

#include "verbs/softdpu_api.h"

#include <cerrno>

using namespace softdpu::mlx5;

extern "C" {

bool mlx5dv_is_supported(ibv_device *device)
{
	return softdpu_verbs_is_device(device) != 0;
}

ibv_context *mlx5dv_open_device(ibv_device *device, mlx5dv_context_attr *attr)
{
	if (device == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	if (softdpu_verbs_is_device(device) == 0) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (attr != nullptr && (attr->comp_mask != 0 || (attr->flags & ~uint32_t{MLX5DV_CONTEXT_FLAGS_DEVX}) != 0)) {
		errno = EINVAL;
		return nullptr;
	}
	const bool devx = attr != nullptr && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX) != 0;
	return Context::open(device, devx);
}

int mlx5dv_query_device(ibv_context *ctx_in, mlx5dv_context *attrs_out)
{
	return query_device(ctx_in, attrs_out);
}

// mlx5dv_init_obj: the default version (MLX5_1.2) and the one binaries of rdma-core 13 to 15 bound
// (MLX5_1.0, whose struct mlx5dv_obj ends after the RWQ member); exports.map lists the name in both
// nodes.
int softdpu_mlx5dv_init_obj_1_2(mlx5dv_obj *obj, uint64_t obj_type)
{
	return init_obj(obj, obj_type, false);
}
__asm__(".symver softdpu_mlx5dv_init_obj_1_2, mlx5dv_init_obj@@MLX5_1.2");

int softdpu_mlx5dv_init_obj_1_0(mlx5dv_obj *obj, uint64_t obj_type)
{
	return init_obj(obj, obj_type, true);
}
__asm__(".symver softdpu_mlx5dv_init_obj_1_0, mlx5dv_init_obj@MLX5_1.0");

ibv_qp *mlx5dv_create_qp(ibv_context *context, ibv_qp_init_attr_ex *qp_attr, mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	return create_qp(context, qp_attr, mlx5_qp_attr);
}

ibv_cq_ex *mlx5dv_create_cq(ibv_context *context, ibv_cq_init_attr_ex *cq_attr, mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	return create_cq(context, cq_attr, mlx5_cq_attr);
}

mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(ibv_qp_ex *qp)
{
	QpEx *ex = QpEx::of(qp);
	return ex != nullptr ? &ex->dv : nullptr;
}

int mlx5dv_devx_general_cmd(ibv_context *context, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (context == nullptr || in == nullptr || out == nullptr)
		return EINVAL;
	if (!is_ours(context))
		return EOPNOTSUPP;
	const Context *state = Context::of(context);
	if (state == nullptr)
		return errno;
	return state->processor().execute(in, inlen, out, outlen, state->devx());
}

} // extern "C"
