/*
 * A reliable-connected queue pair driven through DevX alone: the objects are made with PRM
 * commands (mlx5dv_devx_obj_create and friends), the queues live in memory the application
 * registered as umem, and data moves by writing mlx5 work-queue entries into the send queue and
 * reading 64-byte CQEs from the completion queue, with no verbs call on the data path.
 *
 * This is the part of the DevX sample other programs reuse (softdpu's DevX tests and benchmark):
 * devx_sample.c shows it in use.
 */
#ifndef SAMPLES_DEVX_RC_H
#define SAMPLES_DEVX_RC_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a queue pair tells its peer to connect to it (sent over a socket, host byte order). */
struct devx_conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr; /* a buffer the peer may read and write */
	uint32_t rkey;
	uint32_t length;
};

/* Capabilities the sample reads from QUERY_HCA_CAP and QUERY_NIC_VPORT_CONTEXT. */
struct devx_caps {
	uint32_t vhca_id;
	uint32_t log_max_qp, log_max_qp_sz, log_max_cq, log_max_cq_sz, log_max_pd, log_max_mkey;
	uint32_t log_max_msg, log_max_ra_req_qp, log_max_ra_res_qp;
	uint32_t port_type, num_ports, cqe_version, roce, atomic, gid_table_size;
	uint32_t roce_l3_type, roce_version, roce_udp_port;
	uint8_t mac[6];
};

struct devx_rc_attr {
	uint32_t log_sq_size; /* send queue: 2^n WQE basic blocks of 64 bytes */
	uint32_t log_rq_size; /* receive queue: 2^n entries of one 16-byte data segment */
	uint32_t log_cq_size; /* completion queue: 2^n CQEs of 64 bytes */
	size_t buffer_size;   /* the data buffer, registered as umem and covered by one mkey */
	uint8_t gid_index;    /* the local GID used to reach the peer */
	uint8_t ack_timeout;  /* 4.096 us * 2^n before a request is retried */
	uint8_t retry_count;  /* retries before a request fails */
};

struct devx_rc {
	struct ibv_context *context; /* opened with MLX5DV_CONTEXT_FLAGS_DEVX */
	struct devx_rc_attr attr;
	uint8_t gid[16];

	/* DevX objects */
	struct mlx5dv_devx_obj *pd_obj, *mkey_obj, *cq_obj, *qp_obj;
	struct mlx5dv_devx_uar *uar;
	struct mlx5dv_devx_umem *data_umem, *wq_umem, *cq_umem, *dbr_umem;
	uint32_t pdn, mkey, cqn, qpn;

	/* Memory the device reads and writes: page-aligned, registered as umem. */
	uint8_t *data; /* the data buffer (the mkey covers it) */
	uint8_t *wq;   /* receive queue first, then the send queue */
	uint8_t *sq;   /* wq + receive queue bytes */
	uint8_t *cq;   /* the CQE ring */
	uint8_t *dbr;  /* the doorbell records: the QP's at 0, the CQ's at 64 */
	volatile uint32_t *qp_dbr;
	volatile uint32_t *cq_dbr;
	size_t wq_bytes, cq_bytes;

	/* Producer and consumer counters */
	uint32_t sq_pi;  /* WQE basic blocks posted */
	uint32_t rq_pi;  /* receive entries posted */
	uint32_t cq_ci;  /* CQEs consumed */
	uint32_t arm_sn; /* CQ arm sequence number: one more after each completion event */
};

/* A CQE as the sample reports it. */
struct devx_cqe {
	uint8_t opcode;   /* MLX5_CQE_REQ, MLX5_CQE_RESP_SEND, MLX5_CQE_REQ_ERR ... */
	uint8_t syndrome; /* error CQEs: MLX5_CQE_SYNDROME_* */
	uint16_t wqe_counter;
	uint32_t byte_count;
	uint32_t qpn;
};

/* Every function below prints what failed to stderr and returns -1 (0 on success). */

/* Opens the named device with DevX; its GID `gid_index` goes to rc->gid. */
int devx_open(struct devx_rc *rc, const char *device_name, const struct devx_rc_attr *attr);
/* QUERY_HCA_CAP (general and RoCE, current) and QUERY_NIC_VPORT_CONTEXT (the MAC). */
int devx_query_caps(struct devx_rc *rc, struct devx_caps *caps);
/* PD, umems, mkey, UAR, CQ, QP (in RESET), in this order. */
int devx_create_objects(struct devx_rc *rc);
/* RST2INIT, INIT2RTR (to the peer), RTR2RTS. */
int devx_connect(struct devx_rc *rc, const struct devx_conn_info *local, const struct devx_conn_info *remote);
/* The QP's current state (QUERY_QP). */
int devx_query_qp_state(struct devx_rc *rc, uint32_t *state);
/* Destroys what devx_create_objects made and closes the device. */
void devx_close(struct devx_rc *rc);

/* Builds one WQE in the send queue (not yet rung): RDMA WRITE, RDMA READ (raddr/rkey used) or
 * SEND; local data at rc->data + offset, through rc's mkey. Returns the WQE's index. */
uint16_t devx_build_wqe(struct devx_rc *rc, uint8_t opcode, int signaled, size_t offset, uint32_t length,
			uint64_t raddr, uint32_t rkey);
/* Rings the doorbell for every WQE built since the last ring: the doorbell record, then the UAR. */
void devx_ring_sq(struct devx_rc *rc);
/* Posts one receive entry: up to `length` bytes into rc->data + offset. */
void devx_post_recv(struct devx_rc *rc, size_t offset, uint32_t length);
/* Polls the CQ for one CQE: 1 when one was read (and consumed), 0 when none is there. */
int devx_poll_cq(struct devx_rc *rc, struct devx_cqe *cqe);
/* Arms the CQ: the device raises one completion event for the next CQE (an event channel
 * subscribed to the CQ delivers it). Count the event with rc->arm_sn++ before arming again. */
void devx_arm_cq(struct devx_rc *rc);
/* Waits up to timeout_ms for one CQE: 0 with *cqe filled, -1 on timeout. */
int devx_wait_cqe(struct devx_rc *rc, struct devx_cqe *cqe, int timeout_ms);

/* A readable name for a CQE opcode. */
const char *devx_cqe_opcode_str(uint8_t opcode);

#ifdef __cplusplus
}
#endif

#endif
