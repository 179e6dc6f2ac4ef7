// The mlx5dv functions softdpu's device implements (rdma-core 44, <infiniband/mlx5dv.h>):
// argument checks and forwarding to mlx5.hpp. Return conventions are rdma-core's: a pointer or
// null with errno set; 0 or a positive errno value.
#include "mlx5/mlx5.hpp"

#include "mlx5/devx/cmd_comp.hpp"
#include "verbs/softdpu_api.h"

#include <cerrno>

using namespace softdpu::mlx5;
using softdpu::mlx5::devx::CommandProcessor;
using softdpu::mlx5::devx::Method;
using softdpu::mlx5::devx::Object;

namespace {

// The command processor of one of softdpu's contexts; null with *error set (EINVAL for a null
// context, EOPNOTSUPP for another device's).
CommandProcessor *processor_of(ibv_context *context, int *error) noexcept
{
	if (context == nullptr) {
		*error = EINVAL;
		return nullptr;
	}
	if (!is_ours(context)) {
		*error = EOPNOTSUPP;
		return nullptr;
	}
	Context *state = Context::of(context);
	if (state == nullptr) {
		*error = errno;
		return nullptr;
	}
	return &state->processor();
}

// The same for the DevX objects' own functions (umems, UARs, objects, channels): EOPNOTSUPP on a
// context opened without MLX5DV_CONTEXT_FLAGS_DEVX, which has no uid.
CommandProcessor *devx_processor_of(ibv_context *context, int *error) noexcept
{
	CommandProcessor *processor = processor_of(context, error);
	if (processor != nullptr && !processor->devx()) {
		*error = EOPNOTSUPP;
		return nullptr;
	}
	return processor;
}

template <typename T> T *fail_with(int error) noexcept
{
	errno = error;
	return nullptr;
}

} // namespace

namespace softdpu::mlx5 {

wq::Cq *devx_cq_of(mlx5dv_devx_obj *obj) noexcept
{
	Object *object = Object::from(obj);
	if (object == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return object->owner->engine_cq(*object);
}

ibv_context *devx_context_of(mlx5dv_devx_obj *obj) noexcept
{
	Object *object = Object::from(obj);
	if (object == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return object->owner->context();
}

} // namespace softdpu::mlx5

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
	int error = 0;
	CommandProcessor *processor = processor_of(context, &error);
	if (processor == nullptr)
		return error;
	return processor->general(in, inlen, out, outlen);
}

mlx5dv_devx_obj *mlx5dv_devx_obj_create(ibv_context *context, const void *in, size_t inlen, void *out, size_t outlen)
{
	int error = 0;
	CommandProcessor *processor = processor_of(context, &error);
	if (processor == nullptr)
		return fail_with<mlx5dv_devx_obj>(error);
	Object *object = processor->create(in, inlen, out, outlen);
	return object != nullptr ? object->handle() : nullptr;
}

int mlx5dv_devx_obj_query(mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen)
{
	Object *object = Object::from(obj);
	if (object == nullptr)
		return EINVAL;
	return object->owner->query(*object, in, inlen, out, outlen);
}

int mlx5dv_devx_obj_modify(mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen)
{
	Object *object = Object::from(obj);
	if (object == nullptr)
		return EINVAL;
	return object->owner->modify(*object, in, inlen, out, outlen);
}

int mlx5dv_devx_obj_destroy(mlx5dv_devx_obj *obj)
{
	Object *object = Object::from(obj);
	if (object == nullptr)
		return EINVAL;
	return object->owner->destroy(object);
}

int mlx5dv_devx_obj_query_async(mlx5dv_devx_obj *obj, const void *in, size_t inlen, size_t outlen, uint64_t wr_id,
				mlx5dv_devx_cmd_comp *cmd_comp)
{
	Object *object = Object::from(obj);
	if (object == nullptr || cmd_comp == nullptr)
		return EINVAL;
	auto *comp = reinterpret_cast<devx::CmdComp *>(cmd_comp); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
	return devx::query_async(*object, in, inlen, outlen, wr_id, *comp);
}

mlx5dv_devx_cmd_comp *mlx5dv_devx_create_cmd_comp(ibv_context *context)
{
	int error = 0;
	if (devx_processor_of(context, &error) == nullptr)
		return fail_with<mlx5dv_devx_cmd_comp>(error);
	devx::CmdComp *comp = devx::create_cmd_comp();
	return comp != nullptr ? &comp->dv : nullptr;
}

void mlx5dv_devx_destroy_cmd_comp(mlx5dv_devx_cmd_comp *cmd_comp)
{
	if (cmd_comp != nullptr)
		devx::destroy_cmd_comp(reinterpret_cast<devx::CmdComp *>(cmd_comp)); // NOLINT
}

int mlx5dv_devx_get_async_cmd_comp(mlx5dv_devx_cmd_comp *cmd_comp, mlx5dv_devx_async_cmd_hdr *cmd_resp,
				   size_t cmd_resp_len)
{
	if (cmd_comp == nullptr || cmd_resp == nullptr)
		return EINVAL;
	auto *comp = reinterpret_cast<devx::CmdComp *>(cmd_comp); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
	return devx::get_async_cmd_comp(*comp, cmd_resp, cmd_resp_len);
}

mlx5dv_devx_umem *mlx5dv_devx_umem_reg(ibv_context *ctx, void *addr, size_t size, uint32_t access)
{
	int error = 0;
	CommandProcessor *processor = devx_processor_of(ctx, &error);
	if (processor == nullptr)
		return fail_with<mlx5dv_devx_umem>(error);
	// rdma-core's default: every page size from 4 KiB up.
	devx::Umem *umem = processor->register_umem(addr, size, access, ~uint64_t{0xfff});
	return umem != nullptr ? &umem->dv : nullptr;
}

mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(ibv_context *ctx, mlx5dv_devx_umem_in *umem_in)
{
	int error = 0;
	CommandProcessor *processor = devx_processor_of(ctx, &error);
	if (processor == nullptr)
		return fail_with<mlx5dv_devx_umem>(error);
	if (umem_in == nullptr)
		return fail_with<mlx5dv_devx_umem>(EINVAL);
	if ((umem_in->comp_mask & MLX5DV_UMEM_MASK_DMABUF) != 0)
		return fail_with<mlx5dv_devx_umem>(EOPNOTSUPP); // no dma-buf exporter feeds this device
	if (umem_in->comp_mask != 0)
		return fail_with<mlx5dv_devx_umem>(EINVAL);
	devx::Umem *umem =
	    processor->register_umem(umem_in->addr, umem_in->size, umem_in->access, umem_in->pgsz_bitmap);
	return umem != nullptr ? &umem->dv : nullptr;
}

int mlx5dv_devx_umem_dereg(mlx5dv_devx_umem *dv)
{
	if (dv == nullptr)
		return EINVAL;
	auto *umem = reinterpret_cast<devx::Umem *>(dv); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
	return umem->owner->deregister_umem(umem);
}

mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(ibv_context *context, uint32_t flags)
{
	int error = 0;
	CommandProcessor *processor = devx_processor_of(context, &error);
	if (processor == nullptr)
		return fail_with<mlx5dv_devx_uar>(error);
	devx::Uar *uar = processor->alloc_uar(flags);
	return uar != nullptr ? &uar->dv : nullptr;
}

void mlx5dv_devx_free_uar(mlx5dv_devx_uar *dv)
{
	if (dv == nullptr)
		return;
	auto *uar = reinterpret_cast<devx::Uar *>(dv); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
	uar->owner->free_uar(uar);
}

// The EQ of completion vector n is n (CREATE_CQ's c_eqn names it). Every context may ask, as the
// kernel's QUERY_EQN method needs no uid.
int mlx5dv_devx_query_eqn(ibv_context *context, uint32_t vector, uint32_t *eqn)
{
	int error = 0;
	if (processor_of(context, &error) == nullptr)
		return error;
	if (eqn == nullptr || vector >= static_cast<uint32_t>(context->num_comp_vectors))
		return EINVAL;
	*eqn = vector;
	return 0;
}

int mlx5dv_devx_cq_query(ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen)
{
	int error = 0;
	CommandProcessor *processor = processor_of(cq != nullptr ? cq->context : nullptr, &error);
	if (processor == nullptr)
		return error;
	return processor->on_verbs_cq(Method::query, cq, in, inlen, out, outlen);
}

int mlx5dv_devx_cq_modify(ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen)
{
	int error = 0;
	CommandProcessor *processor = processor_of(cq != nullptr ? cq->context : nullptr, &error);
	if (processor == nullptr)
		return error;
	return processor->on_verbs_cq(Method::modify, cq, in, inlen, out, outlen);
}

int mlx5dv_devx_qp_query(ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen)
{
	int error = 0;
	CommandProcessor *processor = processor_of(qp != nullptr ? qp->context : nullptr, &error);
	if (processor == nullptr)
		return error;
	return processor->on_verbs_qp(Method::query, qp, in, inlen, out, outlen);
}

int mlx5dv_devx_qp_modify(ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen)
{
	int error = 0;
	CommandProcessor *processor = processor_of(qp != nullptr ? qp->context : nullptr, &error);
	if (processor == nullptr)
		return error;
	return processor->on_verbs_qp(Method::modify, qp, in, inlen, out, outlen);
}

} // extern "C"
