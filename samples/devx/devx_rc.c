/*
 * A reliable-connected queue pair through DevX alone (devx_rc.h says what each function does).
 *
 * The order is the one every DevX user follows (DPDK's mlx5_devx_cmds.c, UCX's DevX transports):
 *   1. open the device with MLX5DV_CONTEXT_FLAGS_DEVX;
 *   2. ask the device what it can do (QUERY_HCA_CAP, QUERY_NIC_VPORT_CONTEXT);
 *   3. ALLOC_PD; register the memory the device will touch as umem (data, queues, doorbells);
 *      CREATE_MKEY over the data umem; a UAR page for doorbells; CREATE_CQ; CREATE_QP;
 *   4. move the QP RST -> INIT -> RTR -> RTS with the transition commands;
 *   5. post work by writing WQEs into the send queue, publishing the producer counter in the
 *      doorbell record and writing the WQE's first 8 bytes to the UAR; read CQEs by the owner bit.
 */
#define _GNU_SOURCE
#include "devx_rc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devx_prm.h"

#define DBR_QP_OFFSET 0  /* the QP's doorbell record: [0] receive counter, [1] send counter */
#define DBR_CQ_OFFSET 64 /* the CQ's: [0] consumer counter, [1] arm word */
#define RQ_STRIDE 16     /* one data segment per receive entry: log_rq_stride 0 */
#define PAGE 4096

/* The device reads what the CPU wrote before the doorbell (rdma-core's udma_to_device_barrier). */
static inline void to_device_barrier(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
/* The CPU reads a CQE only after seeing its owner bit (rdma-core's udma_from_device_barrier). */
static inline void from_device_barrier(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* A failed DevX call: EREMOTEIO means the device ran the command and refused it, and the outbox
 * holds the status and syndrome; any other value is an ordinary errno (a malformed mailbox, a
 * context without DevX). */
static void report(const char *what, int err, const void *out)
{
	if (err == EREMOTEIO && out != NULL)
		fprintf(stderr, "devx: %s: the device refused it: status 0x%x, syndrome 0x%08x\n", what,
			prm_get(out, OUT_STATUS), prm_get(out, OUT_SYNDROME));
	else
		fprintf(stderr, "devx: %s: %s\n", what, strerror(err));
}

static int general_cmd(struct devx_rc *rc, const char *what, const void *in, size_t inlen, void *out, size_t outlen)
{
	const int err = mlx5dv_devx_general_cmd(rc->context, in, inlen, out, outlen);
	if (err != 0) {
		report(what, err, out);
		return -1;
	}
	return 0;
}

/* Creates an object; its id (pd, mkey index, cqn, qpn) is the outbox's first payload field. */
static struct mlx5dv_devx_obj *create(struct devx_rc *rc, const char *what, const void *in, size_t inlen, uint32_t *id)
{
	uint8_t out[PRM_HEADER_BYTES] = {0};
	struct mlx5dv_devx_obj *obj = mlx5dv_devx_obj_create(rc->context, in, inlen, out, sizeof(out));
	if (obj == NULL) {
		report(what, errno, out);
		return NULL;
	}
	*id = prm_get(out, OUT_OBJ_ID);
	return obj;
}

static int modify(struct devx_rc *rc, const char *what, const void *in, size_t inlen)
{
	uint8_t out[PRM_HEADER_BYTES] = {0};
	const int err = mlx5dv_devx_obj_modify(rc->qp_obj, in, inlen, out, sizeof(out));
	if (err != 0) {
		report(what, err, out);
		return -1;
	}
	return 0;
}

int devx_open(struct devx_rc *rc, const char *device_name, const struct devx_rc_attr *attr)
{
	memset(rc, 0, sizeof(*rc));
	rc->attr = *attr;
	int count = 0;
	struct ibv_device **list = ibv_get_device_list(&count);
	if (list == NULL) {
		fprintf(stderr, "devx: ibv_get_device_list: %s\n", strerror(errno));
		return -1;
	}
	struct ibv_device *device = NULL;
	for (int i = 0; i < count; i++)
		if (device_name == NULL || strcmp(ibv_get_device_name(list[i]), device_name) == 0) {
			device = list[i];
			break;
		}
	if (device == NULL || !mlx5dv_is_supported(device)) {
		fprintf(stderr, "devx: no mlx5 device %s\n", device_name ? device_name : "at all");
		ibv_free_device_list(list);
		return -1;
	}
	/* DevX needs a context opened with a DevX user context. */
	struct mlx5dv_context_attr context_attr = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	rc->context = mlx5dv_open_device(device, &context_attr);
	ibv_free_device_list(list);
	if (rc->context == NULL) {
		fprintf(stderr, "devx: mlx5dv_open_device with DevX: %s\n", strerror(errno));
		return -1;
	}
	/* Addresses are not DevX objects: the GID table is read through verbs, as DPDK and UCX do. */
	union ibv_gid gid;
	if (ibv_query_gid(rc->context, 1, attr->gid_index, &gid) != 0) {
		fprintf(stderr, "devx: ibv_query_gid(%u): %s\n", attr->gid_index, strerror(errno));
		return -1;
	}
	memcpy(rc->gid, gid.raw, sizeof(rc->gid));
	return 0;
}

int devx_query_caps(struct devx_rc *rc, struct devx_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	uint8_t in[PRM_HEADER_BYTES];
	uint8_t out[QUERY_HCA_CAP_OUT_BYTES] = {0}; /* the whole 4096-byte capability union */

	/* General device capabilities, current values: op_mod = (0 << 1) | 1. */
	memset(in, 0, sizeof(in));
	prm_set(in, IN_OPCODE, PRM_CMD_QUERY_HCA_CAP);
	prm_set(in, IN_OP_MOD, (PRM_CAP_GENERAL << 1) | PRM_CAP_CURRENT);
	if (general_cmd(rc, "QUERY_HCA_CAP (general)", in, sizeof(in), out, sizeof(out)) != 0)
		return -1;
	const uint32_t cap = QUERY_HCA_CAP_OUT_CAPABILITY;
	caps->vhca_id = prm_get(out, PRM_AT(cap, HCA_CAP_VHCA_ID));
	caps->log_max_qp = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_QP));
	caps->log_max_qp_sz = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_QP_SZ));
	caps->log_max_cq = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_CQ));
	caps->log_max_cq_sz = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_CQ_SZ));
	caps->log_max_pd = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_PD));
	caps->log_max_mkey = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_MKEY));
	caps->log_max_msg = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_MSG));
	caps->log_max_ra_req_qp = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_RA_REQ_QP));
	caps->log_max_ra_res_qp = prm_get(out, PRM_AT(cap, HCA_CAP_LOG_MAX_RA_RES_QP));
	caps->port_type = prm_get(out, PRM_AT(cap, HCA_CAP_PORT_TYPE));
	caps->num_ports = prm_get(out, PRM_AT(cap, HCA_CAP_NUM_PORTS));
	caps->cqe_version = prm_get(out, PRM_AT(cap, HCA_CAP_CQE_VERSION));
	caps->roce = prm_get(out, PRM_AT(cap, HCA_CAP_ROCE));
	caps->atomic = prm_get(out, PRM_AT(cap, HCA_CAP_ATOMIC));
	caps->gid_table_size = prm_get(out, PRM_AT(cap, HCA_CAP_GID_TABLE_SIZE));

	/* RoCE capabilities, current values: op_mod = (4 << 1) | 1. */
	memset(in, 0, sizeof(in));
	memset(out, 0, sizeof(out));
	prm_set(in, IN_OPCODE, PRM_CMD_QUERY_HCA_CAP);
	prm_set(in, IN_OP_MOD, (PRM_CAP_ROCE << 1) | PRM_CAP_CURRENT);
	if (general_cmd(rc, "QUERY_HCA_CAP (RoCE)", in, sizeof(in), out, sizeof(out)) != 0)
		return -1;
	caps->roce_l3_type = prm_get(out, PRM_AT(cap, ROCE_CAP_L3_TYPE));
	caps->roce_version = prm_get(out, PRM_AT(cap, ROCE_CAP_ROCE_VERSION));
	caps->roce_udp_port = prm_get(out, PRM_AT(cap, ROCE_CAP_R_ROCE_DEST_UDP_PORT));

	/* The function's own vport: its permanent MAC address. */
	uint8_t vport_out[QUERY_NIC_VPORT_CONTEXT_OUT_BYTES] = {0};
	memset(in, 0, sizeof(in));
	prm_set(in, IN_OPCODE, PRM_CMD_QUERY_NIC_VPORT_CONTEXT);
	if (general_cmd(rc, "QUERY_NIC_VPORT_CONTEXT", in, sizeof(in), vport_out, sizeof(vport_out)) != 0)
		return -1;
	const uint8_t *address =
	    prm_addr(vport_out, PRM_AT(QUERY_NIC_VPORT_CONTEXT_OUT_CONTEXT, NIC_VPORT_CONTEXT_PERMANENT_ADDRESS));
	memcpy(caps->mac, address + 2, 6); /* after 16 reserved bits */
	return 0;
}

static void *alloc_pages(size_t bytes)
{
	void *p = NULL;
	bytes = (bytes + PAGE - 1) / PAGE * PAGE;
	if (posix_memalign(&p, PAGE, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static struct mlx5dv_devx_umem *umem_reg(struct devx_rc *rc, const char *what, void *addr, size_t bytes)
{
	/* The device may write all of it; the data buffer is also read and written by the peer. */
	const uint32_t access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct mlx5dv_devx_umem *umem = mlx5dv_devx_umem_reg(rc->context, addr, bytes, access);
	if (umem == NULL)
		fprintf(stderr, "devx: mlx5dv_devx_umem_reg (%s): %s\n", what, strerror(errno));
	return umem;
}

static int create_mkey(struct devx_rc *rc)
{
	uint8_t in[CREATE_MKEY_IN_BYTES] = {0};
	const uint32_t mkc = CREATE_MKEY_IN_MKC;
	const size_t pages = (rc->attr.buffer_size + PAGE - 1) / PAGE;
	const uint8_t variant = 0x5d; /* the key's low byte, the caller's choice */
	prm_set(in, IN_OPCODE, PRM_CMD_CREATE_MKEY);
	/* Translation comes from the umem, not from a page list in the inbox. */
	prm_set(in, CREATE_MKEY_IN_MKEY_UMEM_VALID, 1);
	prm_set(in, CREATE_MKEY_IN_MKEY_UMEM_ID, rc->data_umem->umem_id);
	prm_set64(in, CREATE_MKEY_IN_MKEY_UMEM_OFFSET, 0);
	prm_set(in, CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE, (uint32_t)((pages + 1) / 2));
	prm_set(in, PRM_AT(mkc, MKC_ACCESS_MODE_1_0), PRM_MKC_ACCESS_MODE_MTT);
	prm_set(in, PRM_AT(mkc, MKC_LR), 1);
	prm_set(in, PRM_AT(mkc, MKC_LW), 1);
	prm_set(in, PRM_AT(mkc, MKC_RR), 1);
	prm_set(in, PRM_AT(mkc, MKC_RW), 1);
	prm_set(in, PRM_AT(mkc, MKC_A), 1);
	prm_set(in, PRM_AT(mkc, MKC_QPN), 0xffffff); /* not bound to a QP */
	prm_set(in, PRM_AT(mkc, MKC_MKEY_7_0), variant);
	prm_set(in, PRM_AT(mkc, MKC_PD), rc->pdn);
	/* The key covers the buffer at its virtual address: WQEs and peers name that address. */
	prm_set64(in, PRM_AT(mkc, MKC_START_ADDR), (uint64_t)(uintptr_t)rc->data);
	prm_set64(in, PRM_AT(mkc, MKC_LEN), rc->attr.buffer_size);
	prm_set(in, PRM_AT(mkc, MKC_TRANSLATIONS_OCTWORD_SIZE), (uint32_t)((pages + 1) / 2));
	prm_set(in, PRM_AT(mkc, MKC_LOG_PAGE_SIZE), 12);
	uint32_t index = 0;
	rc->mkey_obj = create(rc, "CREATE_MKEY", in, sizeof(in), &index);
	if (rc->mkey_obj == NULL)
		return -1;
	/* The key work requests use: the 24-bit index above the variant byte. */
	rc->mkey = (index << 8) | variant;
	return 0;
}

static int create_cq(struct devx_rc *rc)
{
	/* Every CQE starts invalid (opcode 0xf) with owner bit 1: the device's first pass over the
	 * ring writes owner 0, so a CQE is new when its owner bit equals the pass parity. */
	const uint32_t cqes = 1u << rc->attr.log_cq_size;
	for (uint32_t i = 0; i < cqes; i++) {
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(rc->cq + (size_t)i * 64);
		cqe->op_own = (MLX5_CQE_INVALID << 4) | 1;
	}
	uint32_t eqn = 0;
	/* Completion events go to an event queue; the sample polls, any EQ does. */
	if (mlx5dv_devx_query_eqn(rc->context, 0, &eqn) != 0)
		eqn = 0;

	uint8_t in[CREATE_CQ_IN_BYTES] = {0};
	const uint32_t cqc = CREATE_CQ_IN_CQC;
	prm_set(in, IN_OPCODE, PRM_CMD_CREATE_CQ);
	prm_set(in, PRM_AT(cqc, CQC_CQE_SZ), 0); /* 64-byte CQEs */
	prm_set(in, PRM_AT(cqc, CQC_LOG_CQ_SIZE), rc->attr.log_cq_size);
	prm_set(in, PRM_AT(cqc, CQC_UAR_PAGE), rc->uar->page_id);
	prm_set(in, PRM_AT(cqc, CQC_C_EQN), eqn);
	prm_set(in, PRM_AT(cqc, CQC_LOG_PAGE_SIZE), 0); /* 4 KiB pages */
	prm_set(in, PRM_AT(cqc, CQC_DBR_UMEM_VALID), 1);
	prm_set(in, PRM_AT(cqc, CQC_DBR_UMEM_ID), rc->dbr_umem->umem_id);
	prm_set64(in, PRM_AT(cqc, CQC_DBR_ADDR), DBR_CQ_OFFSET);
	prm_set(in, CREATE_CQ_IN_CQ_UMEM_VALID, 1);
	prm_set(in, CREATE_CQ_IN_CQ_UMEM_ID, rc->cq_umem->umem_id);
	prm_set64(in, CREATE_CQ_IN_CQ_UMEM_OFFSET, 0);
	rc->cq_obj = create(rc, "CREATE_CQ", in, sizeof(in), &rc->cqn);
	return rc->cq_obj ? 0 : -1;
}

static int create_qp(struct devx_rc *rc)
{
	uint8_t in[CREATE_QP_IN_BYTES] = {0};
	const uint32_t qpc = CREATE_QP_IN_QPC;
	prm_set(in, IN_OPCODE, PRM_CMD_CREATE_QP);
	prm_set(in, PRM_AT(qpc, QPC_ST), PRM_QP_ST_RC);
	prm_set(in, PRM_AT(qpc, QPC_PM_STATE), PRM_QP_PM_MIGRATED);
	prm_set(in, PRM_AT(qpc, QPC_PD), rc->pdn);
	prm_set(in, PRM_AT(qpc, QPC_UAR_PAGE), rc->uar->page_id);
	prm_set(in, PRM_AT(qpc, QPC_LOG_PAGE_SIZE), 0);
	/* The work queue buffer: the receive queue at offset 0, the send queue after it. */
	prm_set(in, PRM_AT(qpc, QPC_RQ_TYPE), 0);
	prm_set(in, PRM_AT(qpc, QPC_LOG_RQ_SIZE), rc->attr.log_rq_size);
	prm_set(in, PRM_AT(qpc, QPC_LOG_RQ_STRIDE), 0); /* 16 bytes: one data segment */
	prm_set(in, PRM_AT(qpc, QPC_LOG_SQ_SIZE), rc->attr.log_sq_size);
	prm_set(in, PRM_AT(qpc, QPC_CQN_SND), rc->cqn);
	prm_set(in, PRM_AT(qpc, QPC_CQN_RCV), rc->cqn);
	prm_set(in, PRM_AT(qpc, QPC_DBR_UMEM_VALID), 1);
	prm_set(in, PRM_AT(qpc, QPC_DBR_UMEM_ID), rc->dbr_umem->umem_id);
	prm_set64(in, PRM_AT(qpc, QPC_DBR_ADDR), DBR_QP_OFFSET);
	prm_set(in, CREATE_QP_IN_WQ_UMEM_VALID, 1);
	prm_set(in, CREATE_QP_IN_WQ_UMEM_ID, rc->wq_umem->umem_id);
	prm_set64(in, CREATE_QP_IN_WQ_UMEM_OFFSET, 0);
	rc->qp_obj = create(rc, "CREATE_QP", in, sizeof(in), &rc->qpn);
	return rc->qp_obj ? 0 : -1;
}

int devx_create_objects(struct devx_rc *rc)
{
	/* ALLOC_PD */
	uint8_t in[PRM_HEADER_BYTES] = {0};
	prm_set(in, IN_OPCODE, PRM_CMD_ALLOC_PD);
	rc->pd_obj = create(rc, "ALLOC_PD", in, sizeof(in), &rc->pdn);
	if (rc->pd_obj == NULL)
		return -1;

	/* Memory the device touches, page-aligned and registered as umem. */
	const size_t rq_bytes = (size_t)RQ_STRIDE << rc->attr.log_rq_size;
	const size_t sq_bytes = (size_t)MLX5_SEND_WQE_BB << rc->attr.log_sq_size;
	rc->wq_bytes = rq_bytes + sq_bytes;
	rc->cq_bytes = (size_t)64 << rc->attr.log_cq_size;
	rc->data = alloc_pages(rc->attr.buffer_size);
	rc->wq = alloc_pages(rc->wq_bytes);
	rc->cq = alloc_pages(rc->cq_bytes);
	rc->dbr = alloc_pages(PAGE);
	if (!rc->data || !rc->wq || !rc->cq || !rc->dbr) {
		fprintf(stderr, "devx: out of memory\n");
		return -1;
	}
	rc->sq = rc->wq + rq_bytes;
	rc->qp_dbr = (volatile uint32_t *)(rc->dbr + DBR_QP_OFFSET);
	rc->cq_dbr = (volatile uint32_t *)(rc->dbr + DBR_CQ_OFFSET);
	rc->data_umem = umem_reg(rc, "data", rc->data, rc->attr.buffer_size);
	rc->wq_umem = umem_reg(rc, "work queue", rc->wq, rc->wq_bytes);
	rc->cq_umem = umem_reg(rc, "completion queue", rc->cq, rc->cq_bytes);
	rc->dbr_umem = umem_reg(rc, "doorbell records", rc->dbr, PAGE);
	if (!rc->data_umem || !rc->wq_umem || !rc->cq_umem || !rc->dbr_umem)
		return -1;

	if (create_mkey(rc) != 0)
		return -1;

	/* A doorbell page: blue-flame if the device has one, else non-cached (as DPDK tries). */
	rc->uar = mlx5dv_devx_alloc_uar(rc->context, MLX5DV_UAR_ALLOC_TYPE_BF);
	if (rc->uar == NULL)
		rc->uar = mlx5dv_devx_alloc_uar(rc->context, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (rc->uar == NULL) {
		fprintf(stderr, "devx: mlx5dv_devx_alloc_uar: %s\n", strerror(errno));
		return -1;
	}
	if (create_cq(rc) != 0 || create_qp(rc) != 0)
		return -1;
	return 0;
}

/* A RoCE path needs the peer's MAC: for a link-local GID (fe80::/64 + EUI-64) it is in the GID. */
static void mac_from_gid(const uint8_t gid[16], uint8_t mac[6])
{
	memset(mac, 0, 6);
	if (gid[0] != 0xfe || gid[1] != 0x80 || gid[11] != 0xff || gid[12] != 0xfe)
		return; /* not EUI-64: a real RoCE device would resolve it (ARP/ND) */
	mac[0] = gid[8] ^ 0x02;
	mac[1] = gid[9];
	mac[2] = gid[10];
	mac[3] = gid[13];
	mac[4] = gid[14];
	mac[5] = gid[15];
}

int devx_connect(struct devx_rc *rc, const struct devx_conn_info *local, const struct devx_conn_info *remote)
{
	const uint32_t qpc = QP_MODIFY_IN_QPC;
	const uint32_t path = QP_MODIFY_IN_QPC + QPC_PRIMARY_ADDRESS_PATH;
	uint8_t in[QP_MODIFY_IN_BYTES];

	/* RST2INIT: the port and what remote peers may do. */
	memset(in, 0, sizeof(in));
	prm_set(in, IN_OPCODE, PRM_CMD_RST2INIT_QP);
	prm_set(in, QP_MODIFY_IN_QPN, rc->qpn);
	prm_set(in, PRM_AT(qpc, QPC_PM_STATE), PRM_QP_PM_MIGRATED);
	prm_set(in, PRM_AT(qpc, QPC_RRE), 1);
	prm_set(in, PRM_AT(qpc, QPC_RWE), 1);
	prm_set(in, PRM_AT(qpc, QPC_RAE), 1);
	prm_set(in, PRM_AT(path, ADS_VHCA_PORT_NUM), 1);
	prm_set(in, PRM_AT(path, ADS_PKEY_INDEX), 0);
	if (modify(rc, "RST2INIT_QP", in, sizeof(in)) != 0)
		return -1;

	/* INIT2RTR: the peer's QP and address (a RoCE path: GRH with the peer's GID). */
	memset(in, 0, sizeof(in));
	prm_set(in, IN_OPCODE, PRM_CMD_INIT2RTR_QP);
	prm_set(in, QP_MODIFY_IN_QPN, rc->qpn);
	prm_set(in, PRM_AT(qpc, QPC_MTU), IBV_MTU_1024);
	prm_set(in, PRM_AT(qpc, QPC_LOG_MSG_MAX), 30);
	prm_set(in, PRM_AT(qpc, QPC_REMOTE_QPN), remote->qpn);
	prm_set(in, PRM_AT(qpc, QPC_NEXT_RCV_PSN), remote->psn);
	prm_set(in, PRM_AT(qpc, QPC_LOG_RRA_MAX), 4); /* 16 RDMA READs/atomics in flight to us */
	prm_set(in, PRM_AT(qpc, QPC_MIN_RNR_NAK), 12);
	prm_set(in, PRM_AT(path, ADS_GRH), 1);
	prm_set(in, PRM_AT(path, ADS_SRC_ADDR_INDEX), rc->attr.gid_index);
	prm_set(in, PRM_AT(path, ADS_HOP_LIMIT), 64);
	memcpy(prm_addr(in, PRM_AT(path, ADS_RGID_RIP)), remote->gid, 16);
	prm_set(in, PRM_AT(path, ADS_UDP_SPORT), 0xc000);
	prm_set(in, PRM_AT(path, ADS_VHCA_PORT_NUM), 1);
	prm_set(in, PRM_AT(path, ADS_ACK_TIMEOUT), rc->attr.ack_timeout);
	uint8_t rmac[6];
	mac_from_gid(remote->gid, rmac);
	prm_set(in, PRM_AT(path, ADS_RMAC_47_32), (uint32_t)rmac[0] << 8 | rmac[1]);
	prm_set(in, PRM_AT(path, ADS_RMAC_31_0),
		(uint32_t)rmac[2] << 24 | (uint32_t)rmac[3] << 16 | (uint32_t)rmac[4] << 8 | rmac[5]);
	if (modify(rc, "INIT2RTR_QP", in, sizeof(in)) != 0)
		return -1;

	/* RTR2RTS: our send PSN and the retry budget. */
	memset(in, 0, sizeof(in));
	prm_set(in, IN_OPCODE, PRM_CMD_RTR2RTS_QP);
	prm_set(in, QP_MODIFY_IN_QPN, rc->qpn);
	prm_set(in, PRM_AT(qpc, QPC_NEXT_SEND_PSN), local->psn);
	prm_set(in, PRM_AT(qpc, QPC_RETRY_COUNT), rc->attr.retry_count);
	prm_set(in, PRM_AT(qpc, QPC_RNR_RETRY), 7);
	prm_set(in, PRM_AT(qpc, QPC_LOG_SRA_MAX), 4); /* 16 RDMA READs/atomics in flight from us */
	prm_set(in, PRM_AT(path, ADS_ACK_TIMEOUT), rc->attr.ack_timeout);
	if (modify(rc, "RTR2RTS_QP", in, sizeof(in)) != 0)
		return -1;
	return 0;
}

int devx_query_qp_state(struct devx_rc *rc, uint32_t *state)
{
	uint8_t in[QUERY_QP_IN_BYTES] = {0};
	uint8_t out[QUERY_QP_OUT_BYTES] = {0};
	prm_set(in, IN_OPCODE, PRM_CMD_QUERY_QP);
	prm_set(in, IN_OBJ_ID, rc->qpn);
	const int err = mlx5dv_devx_obj_query(rc->qp_obj, in, sizeof(in), out, sizeof(out));
	if (err != 0) {
		report("QUERY_QP", err, out);
		return -1;
	}
	*state = prm_get(out, PRM_AT(QUERY_QP_OUT_QPC, QPC_STATE));
	return 0;
}

static void destroy(struct mlx5dv_devx_obj **obj, const char *what)
{
	/* The device replays the destroy command it built when the object was created. */
	if (*obj != NULL) {
		const int err = mlx5dv_devx_obj_destroy(*obj);
		if (err != 0)
			fprintf(stderr, "devx: destroying the %s: %s\n", what, strerror(err));
		*obj = NULL;
	}
}

static void umem_dereg(struct mlx5dv_devx_umem **umem)
{
	if (*umem != NULL) {
		const int err = mlx5dv_devx_umem_dereg(*umem);
		if (err != 0)
			fprintf(stderr, "devx: mlx5dv_devx_umem_dereg: %s\n", strerror(err));
		*umem = NULL;
	}
}

void devx_close(struct devx_rc *rc)
{
	/* Objects before what they name: QP, CQ, mkey, then the memory, the UAR and the PD. */
	destroy(&rc->qp_obj, "QP");
	destroy(&rc->cq_obj, "CQ");
	destroy(&rc->mkey_obj, "mkey");
	umem_dereg(&rc->data_umem);
	umem_dereg(&rc->wq_umem);
	umem_dereg(&rc->cq_umem);
	umem_dereg(&rc->dbr_umem);
	if (rc->uar != NULL)
		mlx5dv_devx_free_uar(rc->uar);
	rc->uar = NULL;
	destroy(&rc->pd_obj, "PD");
	if (rc->context != NULL)
		ibv_close_device(rc->context);
	rc->context = NULL;
	free(rc->data);
	free(rc->wq);
	free(rc->cq);
	free(rc->dbr);
	rc->data = rc->wq = rc->sq = rc->cq = rc->dbr = NULL;
}

uint16_t devx_build_wqe(struct devx_rc *rc, uint8_t opcode, int signaled, size_t offset, uint32_t length,
			uint64_t raddr, uint32_t rkey)
{
	const uint32_t mask = (1u << rc->attr.log_sq_size) - 1;
	const uint16_t index = (uint16_t)rc->sq_pi;
	uint8_t *wqe = rc->sq + ((size_t)(rc->sq_pi & mask) << MLX5_SEND_WQE_SHIFT);
	memset(wqe, 0, MLX5_SEND_WQE_BB);

	/* Segments follow the control segment, 16 bytes each; ds counts them all. */
	uint8_t *seg = wqe + sizeof(struct mlx5_wqe_ctrl_seg);
	uint32_t ds = 1;
	if (opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_READ) {
		struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)seg;
		r->raddr = htobe64(raddr);
		r->rkey = htobe32(rkey);
		seg += sizeof(*r);
		ds++;
	}
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)seg;
	d->byte_count = htobe32(length);
	d->lkey = htobe32(rc->mkey);
	d->addr = htobe64((uint64_t)(uintptr_t)(rc->data + offset));
	ds++;

	/* The control segment: WQE index and opcode, QP number and size in 16-byte units, and
	 * whether a CQE is wanted (unsignaled WQEs complete silently, as in verbs). */
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
	ctrl->opmod_idx_opcode = htobe32((uint32_t)index << 8 | opcode);
	ctrl->qpn_ds = htobe32(rc->qpn << 8 | ds);
	ctrl->fm_ce_se = signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
	rc->sq_pi++; /* every WQE here fits one 64-byte basic block */
	return index;
}

void devx_ring_sq(struct devx_rc *rc)
{
	const uint32_t mask = (1u << rc->attr.log_sq_size) - 1;
	const uint8_t *last = rc->sq + ((size_t)((rc->sq_pi - 1) & mask) << MLX5_SEND_WQE_SHIFT);
	/* 1. The WQEs are in memory before the counter that publishes them. */
	to_device_barrier();
	rc->qp_dbr[MLX5_SND_DBR] = htobe32(rc->sq_pi & 0xffff);
	/* 2. The counter before the doorbell: the UAR write tells the device to look. */
	to_device_barrier();
	uint64_t first8;
	memcpy(&first8, last, sizeof(first8));
	*(volatile uint64_t *)((uint8_t *)rc->uar->reg_addr) = first8;
}

void devx_post_recv(struct devx_rc *rc, size_t offset, uint32_t length)
{
	const uint32_t mask = (1u << rc->attr.log_rq_size) - 1;
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(rc->wq + (size_t)(rc->rq_pi & mask) * RQ_STRIDE);
	d->byte_count = htobe32(length);
	d->lkey = htobe32(rc->mkey);
	d->addr = htobe64((uint64_t)(uintptr_t)(rc->data + offset));
	rc->rq_pi++;
	/* Receive entries need no UAR write: the doorbell record is enough. */
	to_device_barrier();
	rc->qp_dbr[MLX5_RCV_DBR] = htobe32(rc->rq_pi & 0xffff);
}

int devx_poll_cq(struct devx_rc *rc, struct devx_cqe *out)
{
	const uint32_t mask = (1u << rc->attr.log_cq_size) - 1;
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(rc->cq + ((size_t)(rc->cq_ci & mask) << 6));
	const uint8_t op_own = *(volatile uint8_t *)&cqe->op_own;
	const uint8_t opcode = op_own >> 4;
	/* New when valid and its owner bit matches the parity of our pass over the ring. */
	if (opcode == MLX5_CQE_INVALID || (op_own & MLX5_CQE_OWNER_MASK) != ((rc->cq_ci >> rc->attr.log_cq_size) & 1))
		return 0;
	from_device_barrier();
	out->opcode = opcode;
	out->syndrome = 0;
	if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR)
		out->syndrome = ((struct mlx5_err_cqe *)cqe)->syndrome;
	out->wqe_counter = be16toh(cqe->wqe_counter);
	out->byte_count = be32toh(cqe->byte_cnt);
	out->qpn = be32toh(cqe->sop_drop_qpn) & 0xffffff;
	rc->cq_ci++;
	/* Hand the slot back: the consumer counter in the CQ's doorbell record (word 0). */
	to_device_barrier();
	rc->cq_dbr[0] = htobe32(rc->cq_ci & 0xffffff);
	return 1;
}

void devx_arm_cq(struct devx_rc *rc)
{
	/* The arm word: sequence number, command (any next CQE) and the consumer index it counts
	 * from, first in the CQ's doorbell record (word 1) ... */
	const uint32_t word = (rc->arm_sn & 3) << 28 | MLX5_CQ_DB_REQ_NOT | (rc->cq_ci & 0xffffff);
	rc->cq_dbr[1] = htobe32(word);
	to_device_barrier();
	/* ... then with the cqn through the CQ doorbell of the UAR page, one 64-bit write. */
	const uint64_t doorbell = htobe64((uint64_t)word << 32 | rc->cqn);
	*(volatile uint64_t *)((uint8_t *)rc->uar->base_addr + MLX5_CQ_DOORBELL) = doorbell;
}

int devx_wait_cqe(struct devx_rc *rc, struct devx_cqe *cqe, int timeout_ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (uint64_t spins = 0;; spins++) {
		if (devx_poll_cq(rc, cqe))
			return 0;
		if ((spins & 1023) == 1023) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			const int64_t ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			if (ms > timeout_ms)
				return -1;
		}
	}
}

const char *devx_cqe_opcode_str(uint8_t opcode)
{
	switch (opcode) {
	case MLX5_CQE_REQ:
		return "REQ";
	case MLX5_CQE_RESP_WR_IMM:
		return "RESP_WR_IMM";
	case MLX5_CQE_RESP_SEND:
		return "RESP_SEND";
	case MLX5_CQE_RESP_SEND_IMM:
		return "RESP_SEND_IMM";
	case MLX5_CQE_REQ_ERR:
		return "REQ_ERR";
	case MLX5_CQE_RESP_ERR:
		return "RESP_ERR";
	default:
		return "other";
	}
}
