// Queue pairs and completion queues created through mlx5dv, and the mlx5dv_qp_ex of a queue pair.
#include "mlx5/mlx5.hpp"

#include "verbs/softdpu_api.h"

#include <cerrno>
#include <new>

namespace softdpu::mlx5 {

namespace {

constexpr uint64_t kKnownQpMask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DC |
				  MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
constexpr uint64_t kKnownCqMask =
    MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;

// Whether the mlx5-specific part of a QP's attributes asks for nothing the device lacks. 0, or the
// errno value: EINVAL for unknown bits, EOPNOTSUPP for what the device does not offer (DC, DCI
// streams, mlx5 send operations, the create flags but one). DISABLE_SCATTER_TO_CQE is accepted:
// it turns off an optimisation the software device never makes.
int check_qp_attr(const mlx5dv_qp_init_attr &attr) noexcept
{
	if ((attr.comp_mask & ~kKnownQpMask) != 0)
		return EINVAL;
	if ((attr.comp_mask & (MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)) != 0)
		return EOPNOTSUPP;
	if ((attr.comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) != 0 &&
	    (attr.create_flags & ~static_cast<uint32_t>(MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE)) != 0)
		return EOPNOTSUPP;
	if ((attr.comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) != 0 && attr.send_ops_flags != 0)
		return EOPNOTSUPP;
	return 0;
}

// ---- mlx5dv_qp_ex: every builder and setter fails the batch ----

void fail(mlx5dv_qp_ex *mqp) noexcept
{
	softdpu_verbs_qp_ex_fail_batch(QpEx::from(mqp)->qp, EOPNOTSUPP);
}

void wr_set_dc_addr(mlx5dv_qp_ex *mqp, ibv_ah *, uint32_t, uint64_t)
{
	fail(mqp);
}

void wr_mr_interleaved(mlx5dv_qp_ex *mqp, mlx5dv_mkey *, uint32_t, uint32_t, uint16_t, mlx5dv_mr_interleaved *)
{
	fail(mqp);
}

void wr_mr_list(mlx5dv_qp_ex *mqp, mlx5dv_mkey *, uint32_t, uint16_t, ibv_sge *)
{
	fail(mqp);
}

void wr_mkey_configure(mlx5dv_qp_ex *mqp, mlx5dv_mkey *, uint8_t, mlx5dv_mkey_conf_attr *)
{
	fail(mqp);
}

void wr_set_mkey_access_flags(mlx5dv_qp_ex *mqp, uint32_t)
{
	fail(mqp);
}

void wr_set_mkey_layout_list(mlx5dv_qp_ex *mqp, uint16_t, const ibv_sge *)
{
	fail(mqp);
}

void wr_set_mkey_layout_interleaved(mlx5dv_qp_ex *mqp, uint32_t, uint16_t, const mlx5dv_mr_interleaved *)
{
	fail(mqp);
}

void wr_set_mkey_sig_block(mlx5dv_qp_ex *mqp, const mlx5dv_sig_block_attr *)
{
	fail(mqp);
}

void wr_raw_wqe(mlx5dv_qp_ex *mqp, const void *)
{
	fail(mqp);
}

void wr_set_dc_addr_stream(mlx5dv_qp_ex *mqp, ibv_ah *, uint32_t, uint64_t, uint16_t)
{
	fail(mqp);
}

void wr_memcpy(mlx5dv_qp_ex *mqp, uint32_t, uint64_t, uint32_t, uint64_t, size_t)
{
	fail(mqp);
}

void wr_set_mkey_crypto(mlx5dv_qp_ex *mqp, const mlx5dv_crypto_attr *)
{
	fail(mqp);
}

void *make_qp_ex(ibv_qp *, void *arg)
{
	auto *made = new (std::nothrow) QpEx();
	if (made == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	made->qp = static_cast<ibv_qp_ex *>(arg);
	mlx5dv_qp_ex &dv = made->dv;
	dv.comp_mask = 0;
	dv.wr_set_dc_addr = wr_set_dc_addr;
	dv.wr_mr_interleaved = wr_mr_interleaved;
	dv.wr_mr_list = wr_mr_list;
	dv.wr_mkey_configure = wr_mkey_configure;
	dv.wr_set_mkey_access_flags = wr_set_mkey_access_flags;
	dv.wr_set_mkey_layout_list = wr_set_mkey_layout_list;
	dv.wr_set_mkey_layout_interleaved = wr_set_mkey_layout_interleaved;
	dv.wr_set_mkey_sig_block = wr_set_mkey_sig_block;
	dv.wr_raw_wqe = wr_raw_wqe;
	dv.wr_set_dc_addr_stream = wr_set_dc_addr_stream;
	dv.wr_memcpy = wr_memcpy;
	dv.wr_set_mkey_crypto = wr_set_mkey_crypto;
	return made;
}

void *make_qp_data(ibv_qp *, void *)
{
	auto *made = new (std::nothrow) QpData();
	if (made == nullptr)
		errno = ENOMEM;
	return made;
}

void release_qp_data(void *data)
{
	delete static_cast<QpData *>(data);
}

} // namespace

QpData *QpData::of(ibv_qp *qp) noexcept
{
	if (qp == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return static_cast<QpData *>(softdpu_verbs_qp_data(qp, make_qp_data, nullptr, release_qp_data));
}

QpEx *QpEx::from(mlx5dv_qp_ex *dv) noexcept
{
	return reinterpret_cast<QpEx *>(
	    dv); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dv is the first member
}

QpEx *QpEx::of(ibv_qp_ex *qp) noexcept
{
	if (qp == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	QpData *data = QpData::of(&qp->qp_base);
	if (data == nullptr)
		return nullptr;
	std::lock_guard lock(data->mutex);
	if (data->ex == nullptr)
		data->ex = static_cast<QpEx *>(make_qp_ex(&qp->qp_base, qp));
	return data->ex;
}

ibv_qp *create_qp(ibv_context *context, ibv_qp_init_attr_ex *qp_attr, const mlx5dv_qp_init_attr *mlx5_attr) noexcept
{
	if (context == nullptr || qp_attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	if (!is_ours(context)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (mlx5_attr != nullptr) {
		const int error = check_qp_attr(*mlx5_attr);
		if (error != 0) {
			errno = error;
			return nullptr;
		}
	}
	return ibv_create_qp_ex(context, qp_attr);
}

ibv_cq_ex *create_cq(ibv_context *context, ibv_cq_init_attr_ex *cq_attr, const mlx5dv_cq_init_attr *mlx5_attr) noexcept
{
	if (context == nullptr || cq_attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	if (!is_ours(context)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (mlx5_attr != nullptr && mlx5_attr->comp_mask != 0) {
		// CQE compression, CQE flags and a CQE size: mlx5 CQE formats the verbs CQ does not have.
		errno = (mlx5_attr->comp_mask & ~kKnownCqMask) != 0 ? EINVAL : EOPNOTSUPP;
		return nullptr;
	}
	return ibv_create_cq_ex(context, cq_attr);
}

} // namespace softdpu::mlx5
