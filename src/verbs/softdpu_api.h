/* Private entry points of softdpu's libibverbs.so.1 (version node SOFTDPU_VERBS_1) for softdpu's
 * other rdma-core libraries: libmlx5.so.1 reaches the verbs objects only through these, as
 * rdma-core's providers reach libibverbs only through IBVERBS_PRIVATE. Not a public API: no
 * stability beyond one softdpu release. */
#ifndef SOFTDPU_VERBS_SOFTDPU_API_H
#define SOFTDPU_VERBS_SOFTDPU_API_H

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `device` is one of softdpu's devices (from this library's ibv_get_device_list), else 0. */
int softdpu_verbs_is_device(const struct ibv_device *device);

/* The provider data of a context or a queue pair: the first call makes it with make(object, arg),
 * later calls return the same pointer (make may then be NULL); release(data) runs when the object
 * is freed (ibv_close_device, ibv_destroy_qp). NULL with errno set: EINVAL for a NULL object,
 * ENOENT when no data exists and make is NULL, or the errno make left when it returned NULL.
 * Safe from several threads: make runs at most once per object. */
void *softdpu_verbs_context_data(struct ibv_context *context, void *(*make)(struct ibv_context *context, void *arg),
				 void *arg, void (*release)(void *data));
void *softdpu_verbs_qp_data(struct ibv_qp *qp, void *(*make)(struct ibv_qp *qp, void *arg), void *arg,
			    void (*release)(void *data));
/* The same for a completion queue (released by ibv_destroy_cq). A queue pair's and a CQ's data are
 * released when their destroy starts (a QP's before it leaves its CQs; a CQ's once no QP uses it),
 * so the provider lets go of the object while it still works. */
void *softdpu_verbs_cq_data(struct ibv_cq *cq, void *(*make)(struct ibv_cq *cq, void *arg), void *arg,
			    void (*release)(void *data));

/* Puts a completion event of `cq` on its completion channel, as an armed CQ does when it gets a
 * completion (at most one waits per CQ; ibv_get_cq_event returns it). For libmlx5, whose CQs are
 * armed through their mlx5 doorbell. 0, or EINVAL (NULL cq), ENOENT (the CQ has no channel). */
int softdpu_verbs_cq_event(struct ibv_cq *cq);

/* Makes the extended send API's batch in progress on `qp` (between ibv_wr_start and
 * ibv_wr_complete, called by the thread that started it) fail: ibv_wr_complete returns `error` and
 * queues nothing of the batch. For builders softdpu's device does not offer (mlx5dv_wr_*). The
 * first error of a batch is kept. 0, or EINVAL (NULL qp, error 0). */
int softdpu_verbs_qp_ex_fail_batch(struct ibv_qp_ex *qp, int error);

/* The PD or CQ of `context` whose handle is `handle` (the pdn and cqn DevX commands name). NULL with
 * errno EINVAL (NULL context) or ENOENT (no such object on this context). */
struct ibv_pd *softdpu_verbs_pd_of(struct ibv_context *context, uint32_t handle);
struct ibv_cq *softdpu_verbs_cq_of(struct ibv_context *context, uint32_t handle);

/* Registers [addr, addr + length), seen at [iova, iova + length), in `pd` with the IBV_ACCESS_*
 * bits `access`, under a key whose low byte is `tag` (an mlx5 mkey: mkey_index << 8 | mkey_7_0):
 * the key works as lkey and rkey of verbs work requests in that PD, and holds the PD (ibv_dealloc_pd
 * gives EBUSY) until softdpu_verbs_unregister_key. 0, EINVAL (NULL pd or key, empty or wrapping
 * range) or ENOMEM (the device's memory table is full). */
int softdpu_verbs_register_key(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access,
			       uint8_t tag, uint32_t *key);
/* Ends a registration of softdpu_verbs_register_key. 0 or EINVAL (not a key registered in pd). */
int softdpu_verbs_unregister_key(struct ibv_pd *pd, uint32_t key);

/* The MAC address of `device`'s function: the one its link-local RoCE GID (index 0) is formed
 * from. 0 or EINVAL. */
int softdpu_verbs_device_mac(const struct ibv_device *device, uint8_t mac[6]);

#ifdef __cplusplus
}
#endif

#endif
