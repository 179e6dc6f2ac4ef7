// softdpu's libmlx5.so.1: the mlx5 direct-verbs API (rdma-core 44's <infiniband/mlx5dv.h>) over
// softdpu's software RDMA device. The verbs objects are softdpu's libibverbs'; this library keeps
// its own state beside them through libibverbs' private entry points (verbs/softdpu_api.h) and
// never reaches into libibverbs' classes. mlx5dv_api.cpp forwards the implemented functions here;
// unsupported_api.cpp gives every other one its documented failure.
#pragma once

#include "mlx5/devx/command_processor.hpp"

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <mutex>

namespace softdpu::mlx5 {

namespace wq {
class Cq;
}

// What libmlx5 keeps with an open context: whether it was opened for DevX, and its command
// processor (the device's capabilities, queried once, and the context's DevX objects).
class Context {
public:
	Context(ibv_context *context, bool devx, const devx::DeviceCaps &caps) noexcept
	    : processor_(context, caps, devx)
	{
	}

	// The state of `context`, made on first use (a context from ibv_open_device has no DevX).
	// Null with errno set.
	static Context *of(ibv_context *context) noexcept;
	// Opens `device` as mlx5dv_open_device does, with DevX when `devx`. Null with errno set.
	static ibv_context *open(ibv_device *device, bool devx) noexcept;

	bool devx() const noexcept { return processor_.devx(); }
	devx::CommandProcessor &processor() noexcept { return processor_; }

private:
	devx::CommandProcessor processor_;
};

// The mlx5dv_qp_ex of a queue pair: lives as long as the queue pair. Its mlx5-specific builders
// (DC addressing, memory-key configuration, raw WQEs, memcpy) make the batch fail with EOPNOTSUPP.
struct QpEx {
	mlx5dv_qp_ex dv{}; // first: the pointer handed out is the object's
	ibv_qp_ex *qp = nullptr;

	static QpEx *from(mlx5dv_qp_ex *dv) noexcept;
	// Null with errno set.
	static QpEx *of(ibv_qp_ex *qp) noexcept;
};

struct DvQp;

// What libmlx5 keeps with a verbs queue pair (its one provider-data slot, softdpu_api.h): the
// mlx5dv_qp_ex and the mlx5 queues mlx5dv_init_obj exposed, each made on first use.
struct QpData {
	std::mutex mutex;
	QpEx *ex = nullptr;
	DvQp *dv = nullptr;

	QpData() = default;
	QpData(const QpData &) = delete;
	QpData &operator=(const QpData &) = delete;
	~QpData();
	// Null with errno set.
	static QpData *of(ibv_qp *qp) noexcept;
};

// The engine CQ of a verbs CQ: its mlx5 view (the CQE buffer mlx5dv_init_obj hands out), made on
// first use, as every CQ of a ConnectX has one. From then on its completions are CQEs. Null with
// errno set. (dv_obj.cpp; a DevX QP naming a verbs CQ completes into it.)
wq::Cq *mlx5_cq_of(ibv_cq *cq) noexcept;

// The engine QP of a verbs QP that mlx5dv_init_obj gave its mlx5 view; null when it has none.
// (dv_obj.cpp; a transition through mlx5dv_devx_qp_modify tells the engine of a reset.)
wq::Qp *mlx5_qp_of(ibv_qp *qp) noexcept;

// mlx5dv_init_obj (dv_obj.cpp). `compat` is the MLX5_1.0 version: only the QP, CQ, SRQ and RWQ
// members exist in its struct mlx5dv_obj.
int init_obj(mlx5dv_obj *obj, uint64_t obj_type, bool compat) noexcept;

// The engine CQ behind a DevX CQ object (CREATE_CQ through mlx5dv_devx_obj_create), and the context
// a DevX object was created on: for event channels. Null with errno EINVAL for a null object or,
// for devx_cq_of, an object that is not a CQ. (Implemented by the DevX object layer.)
wq::Cq *devx_cq_of(mlx5dv_devx_obj *obj) noexcept;
ibv_context *devx_context_of(mlx5dv_devx_obj *obj) noexcept;

// True when `context` is open on one of softdpu's devices.
bool is_ours(const ibv_context *context) noexcept;

// mlx5dv_* implementations: same conventions as the functions they implement.
int query_device(ibv_context *context, mlx5dv_context *attrs) noexcept;
ibv_qp *create_qp(ibv_context *context, ibv_qp_init_attr_ex *qp_attr, const mlx5dv_qp_init_attr *mlx5_attr) noexcept;
ibv_cq_ex *create_cq(ibv_context *context, ibv_cq_init_attr_ex *cq_attr, const mlx5dv_cq_init_attr *mlx5_attr) noexcept;

} // namespace softdpu::mlx5
