// mlx5dv_init_obj on softdpu's device: the mlx5 view of verbs objects. A CQ or an RC QP gets mlx5
// queues (a CQE buffer, WQE buffers, doorbell records, a UAR page and a blue-flame register) that
// the work-queue engine (wq/engine.hpp) serves on top of the verbs object itself, so an
// application writes WQEs and polls CQEs as on a ConnectX (docs/mlx5.md).
#include "mlx5/mlx5.hpp"
#include "mlx5/wq/engine.hpp"

#include "verbs/softdpu_api.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace softdpu::mlx5 {

namespace {

constexpr size_t kPage = 4096;
constexpr uint32_t kBfOffset = 0x800; // rdma-core's MLX5_BF_OFFSET within a UAR page
constexpr uint32_t kBfSize = 256;
constexpr uint32_t kMaxLogQueue = 15;

using devx::log2_ceil;

void *zalloc(size_t bytes) noexcept
{
	const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
	void *memory = std::aligned_alloc(kPage, rounded);
	if (memory != nullptr)
		std::memset(memory, 0, rounded);
	return memory;
}

// The mlx5 view of a verbs CQ.
struct DvCq {
	void *buffer = nullptr;
	uint32_t *doorbell = nullptr; // 2 words, big-endian
	void *uar = nullptr;
	uint32_t log_size = 0;
	uint32_t cqn = 0;
	wq::Cq *engine = nullptr;

	~DvCq()
	{
		wq::Engine::instance().remove_cq(engine);
		std::free(buffer);
		std::free(doorbell);
		std::free(uar);
	}
};

// An mlx5 arm of the CQ fired: the event goes to the verbs CQ's completion channel
// (ibv_get_cq_event), as rdma-core's mlx5 raises it.
void raise_verbs_event(void *cq)
{
	(void)softdpu_verbs_cq_event(static_cast<ibv_cq *>(cq));
}

void *make_dv_cq(ibv_cq *cq, void *)
{
	auto *made = new (std::nothrow) DvCq();
	if (made == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	made->log_size = log2_ceil(static_cast<uint64_t>(std::max(cq->cqe, 1)) + 1);
	made->cqn = cq->handle & 0xffffff;
	const size_t entries = size_t{1} << made->log_size;
	made->buffer = zalloc(entries * sizeof(mlx5_cqe64));
	made->doorbell = static_cast<uint32_t *>(zalloc(64));
	made->uar = zalloc(kPage);
	if (made->buffer == nullptr || made->doorbell == nullptr || made->uar == nullptr) {
		delete made;
		errno = ENOMEM;
		return nullptr;
	}
	// Every CQE invalid, owned by software for the first pass (op_own 0xf1), as rdma-core leaves it.
	auto *cqes = static_cast<mlx5_cqe64 *>(made->buffer);
	for (size_t i = 0; i < entries; ++i)
		cqes[i].op_own = MLX5_CQE_INVALID << 4 | MLX5_CQE_OWNER_MASK;
	// The UAR's CQ doorbell starts with a value no arm writes (cqn bits past 24): the first arm is
	// seen even when it writes zeros.
	auto *uar_doorbell = reinterpret_cast<uint64_t *>(static_cast<uint8_t *>(made->uar) + MLX5_CQ_DOORBELL);
	*uar_doorbell = ~uint64_t{0};
	wq::CqConfig config;
	config.buffer = made->buffer;
	config.log_size = made->log_size;
	config.doorbell = made->doorbell;
	config.cqn = made->cqn;
	config.backing = cq;
	config.uar_doorbell = uar_doorbell;
	if (cq->channel != nullptr) {
		config.on_event = raise_verbs_event;
		config.event_arg = cq;
	}
	made->engine = wq::Engine::instance().add_cq(config);
	if (made->engine == nullptr) {
		const int error = errno;
		delete made;
		errno = error;
		return nullptr;
	}
	return made;
}

void release_dv_cq(void *data)
{
	delete static_cast<DvCq *>(data);
}

DvCq *dv_cq_of(ibv_cq *cq) noexcept
{
	return static_cast<DvCq *>(softdpu_verbs_cq_data(cq, make_dv_cq, nullptr, release_dv_cq));
}

int init_cq(ibv_cq *cq, mlx5dv_cq *out) noexcept
{
	if (cq == nullptr || out == nullptr)
		return EINVAL;
	if (!is_ours(cq->context))
		return EOPNOTSUPP;
	DvCq *dv = dv_cq_of(cq);
	if (dv == nullptr)
		return errno;
	out->buf = dv->buffer;
	out->dbrec = reinterpret_cast<__be32 *>(dv->doorbell);
	out->cqe_cnt = 1u << dv->log_size;
	out->cqe_size = sizeof(mlx5_cqe64);
	out->cq_uar = dv->uar;
	out->cqn = dv->cqn;
	out->comp_mask = 0;
	return 0;
}

} // namespace

// The mlx5 view of a verbs RC QP.
struct DvQp {
	void *sq = nullptr;
	void *rq = nullptr;
	uint32_t *doorbell = nullptr;
	void *bf = nullptr; // the blue-flame register's page
	uint32_t log_sq = 0;
	uint32_t log_rq = 0;
	uint32_t log_stride = 0;
	bool has_rq = false;
	wq::Qp *engine = nullptr;

	~DvQp()
	{
		wq::Engine::instance().remove_qp(engine);
		std::free(sq);
		std::free(rq);
		std::free(doorbell);
		std::free(bf);
	}
};

QpData::~QpData()
{
	delete ex;
	delete dv;
}

namespace {

// Makes the mlx5 queues of `qp` (an RC QP whose CQs are ours). errno value.
int make_dv_qp(ibv_qp *qp, DvQp **out) noexcept
{
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	const int queried = ibv_query_qp(qp, &attr, IBV_QP_CAP, &init);
	if (queried != 0)
		return queried;
	DvCq *send_cq = dv_cq_of(qp->send_cq);
	if (send_cq == nullptr)
		return errno;
	DvCq *recv_cq = dv_cq_of(qp->recv_cq);
	if (recv_cq == nullptr)
		return errno;
	auto *dv = new (std::nothrow) DvQp();
	if (dv == nullptr)
		return ENOMEM;
	// Send queue: room for max_send_wr WQEs of the largest size the QP's caps allow.
	const uint32_t data =
	    std::max<uint32_t>(init.cap.max_send_sge * 16, (4 + init.cap.max_inline_data + 15) / 16 * 16);
	const uint32_t wqe_bytes = 32 + std::max<uint32_t>(data, 32); // ctrl + raddr, then data or atomic + data
	const uint32_t wqe_bbs = (wqe_bytes + 63) / 64;
	dv->log_sq = std::min(kMaxLogQueue, log2_ceil(uint64_t{std::max<uint32_t>(init.cap.max_send_wr, 1)} * wqe_bbs));
	dv->has_rq = qp->srq == nullptr;
	dv->log_rq = dv->has_rq ? std::min(kMaxLogQueue, log2_ceil(std::max<uint32_t>(init.cap.max_recv_wr, 1))) : 0;
	dv->log_stride = log2_ceil(std::max<uint32_t>(init.cap.max_recv_sge, 1));
	dv->sq = zalloc((size_t{1} << dv->log_sq) * MLX5_SEND_WQE_BB);
	dv->rq = dv->has_rq ? zalloc((size_t{1} << dv->log_rq) * (16u << dv->log_stride)) : nullptr;
	dv->doorbell = static_cast<uint32_t *>(zalloc(64));
	dv->bf = zalloc(kPage);
	if (dv->sq == nullptr || (dv->has_rq && dv->rq == nullptr) || dv->doorbell == nullptr || dv->bf == nullptr) {
		delete dv;
		return ENOMEM;
	}
	wq::QpConfig config;
	config.qpn = qp->qp_num;
	config.backing = qp;
	config.sq = dv->sq;
	config.log_sq_size = dv->log_sq;
	config.rq = dv->rq;
	config.log_rq_size = dv->log_rq;
	config.log_rq_stride = dv->log_stride;
	config.doorbell = dv->doorbell;
	config.send_cq = send_cq->engine;
	config.recv_cq = recv_cq->engine;
	dv->engine = wq::Engine::instance().add_qp(config);
	if (dv->engine == nullptr) {
		const int error = errno;
		delete dv;
		return error;
	}
	*out = dv;
	return 0;
}

int init_qp(ibv_qp *qp, mlx5dv_qp *out) noexcept
{
	if (qp == nullptr || out == nullptr)
		return EINVAL;
	if (!is_ours(qp->context))
		return EOPNOTSUPP;
	if (qp->qp_type != IBV_QPT_RC)
		return EOPNOTSUPP; // UD, UC, raw packet: their WQE formats are not executed
	QpData *data = QpData::of(qp);
	if (data == nullptr)
		return errno;
	std::lock_guard lock(data->mutex);
	if (data->dv == nullptr) {
		const int error = make_dv_qp(qp, &data->dv);
		if (error != 0)
			return error;
	}
	const DvQp &dv = *data->dv;
	out->dbrec = reinterpret_cast<__be32 *>(dv.doorbell);
	out->sq.buf = dv.sq;
	out->sq.wqe_cnt = 1u << dv.log_sq;
	out->sq.stride = MLX5_SEND_WQE_BB;
	out->rq.buf = dv.rq;
	out->rq.wqe_cnt = dv.has_rq ? 1u << dv.log_rq : 0;
	out->rq.stride = dv.has_rq ? 16u << dv.log_stride : 0;
	out->bf.reg = static_cast<uint8_t *>(dv.bf) + kBfOffset;
	out->bf.size = kBfSize;
	// Neither a UAR mmap offset (no device file) nor raw packet QP handles: not answered.
	out->comp_mask = 0;
	return 0;
}

int init_pd(ibv_pd *pd, mlx5dv_pd *out) noexcept
{
	if (pd == nullptr || out == nullptr)
		return EINVAL;
	if (!is_ours(pd->context))
		return EOPNOTSUPP;
	out->pdn = pd->handle;
	out->comp_mask = 0;
	return 0;
}

} // namespace

wq::Cq *mlx5_cq_of(ibv_cq *cq) noexcept
{
	DvCq *dv = dv_cq_of(cq);
	return dv != nullptr ? dv->engine : nullptr;
}

wq::Qp *mlx5_qp_of(ibv_qp *qp) noexcept
{
	QpData *data = QpData::of(qp);
	if (data == nullptr)
		return nullptr;
	std::lock_guard lock(data->mutex);
	return data->dv != nullptr ? data->dv->engine : nullptr;
}

int init_obj(mlx5dv_obj *obj, uint64_t obj_type, bool compat) noexcept
{
	if (obj == nullptr)
		return EINVAL;
	if (compat)
		obj_type &= MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ | MLX5DV_OBJ_RWQ;
	// In rdma-core's order; the first failure is returned.
	int error = 0;
	if ((obj_type & MLX5DV_OBJ_QP) != 0)
		error = init_qp(obj->qp.in, obj->qp.out);
	if (error == 0 && (obj_type & MLX5DV_OBJ_CQ) != 0)
		error = init_cq(obj->cq.in, obj->cq.out);
	// Shared receive queues, work queues, device memory and address handles have no mlx5 layout on
	// this device.
	if (error == 0 && (obj_type & (MLX5DV_OBJ_SRQ | MLX5DV_OBJ_RWQ | MLX5DV_OBJ_DM | MLX5DV_OBJ_AH)) != 0)
		error = EOPNOTSUPP;
	if (error == 0 && (obj_type & MLX5DV_OBJ_PD) != 0)
		error = init_pd(obj->pd.in, obj->pd.out);
	return error;
}

} // namespace softdpu::mlx5
