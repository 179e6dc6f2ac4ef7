/*
 * The DevX sample's other process: an ordinary verbs program (ibv_* only), as any RDMA application
 * the DevX side might talk to. It owns a registered buffer the DevX side writes and reads, posts
 * receives, and on request SENDs to and RDMA WRITEs into the DevX side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "devx_rc.h"
#include "devx_sample.h"

#define BUFFER_BYTES ((size_t)256 * 1024)
#define RECV_OFF ((size_t)128 * 1024) /* 4 receives of 4 KiB */
#define SEND_OFF ((size_t)192 * 1024)
#define WRITE_OFF ((size_t)224 * 1024)
#define RECVS 4

int read_all(int fd, void *buf, size_t length)
{
	uint8_t *p = buf;
	while (length > 0) {
		const ssize_t n = read(fd, p, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		length -= (size_t)n;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t length)
{
	const uint8_t *p = buf;
	while (length > 0) {
		const ssize_t n = write(fd, p, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		length -= (size_t)n;
	}
	return 0;
}

struct peer {
	struct ibv_context *context;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buffer;
	unsigned recvs_taken;
};

static int post_recv(struct peer *p, unsigned slot)
{
	struct ibv_sge sge = {(uintptr_t)(p->buffer + RECV_OFF + (size_t)slot * 4096), 4096, p->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;
	return ibv_post_recv(p->qp, &wr, &bad);
}

/* Waits for one completion (10 s at most). */
static int wait_wc(struct peer *p, struct ibv_wc *wc)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		const int n = ibv_poll_cq(p->cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 10) {
			fprintf(stderr, "verbs_peer: no completion within 10 s\n");
			return -1;
		}
	}
}

static int post_and_wait(struct peer *p, enum ibv_wr_opcode opcode, size_t offset, uint32_t length, uint64_t raddr,
			 uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)(p->buffer + offset), length, p->mr->lkey};
	struct ibv_send_wr wr = {
	    .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = opcode, .send_flags = IBV_SEND_SIGNALED};
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	struct ibv_send_wr *bad = NULL;
	if (ibv_post_send(p->qp, &wr, &bad) != 0) {
		fprintf(stderr, "verbs_peer: ibv_post_send: %s\n", strerror(errno));
		return -1;
	}
	struct ibv_wc wc;
	if (wait_wc(p, &wc) != 0)
		return -1;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "verbs_peer: completion %s\n", ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

static int check(const uint8_t *at, size_t length, uint32_t seed, const char *what)
{
	for (size_t i = 0; i < length; i++)
		if (at[i] != pattern_byte(seed, i)) {
			fprintf(stderr, "verbs_peer: %s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, at[i],
				pattern_byte(seed, i));
			return -1;
		}
	return 0;
}

static int setup(struct peer *p, const char *device_name)
{
	int count = 0;
	struct ibv_device **list = ibv_get_device_list(&count);
	struct ibv_device *device = NULL;
	for (int i = 0; list != NULL && i < count; i++)
		if (strcmp(ibv_get_device_name(list[i]), device_name) == 0)
			device = list[i];
	if (device == NULL) {
		fprintf(stderr, "verbs_peer: no device %s\n", device_name);
		ibv_free_device_list(list);
		return -1;
	}
	p->context = ibv_open_device(device);
	ibv_free_device_list(list);
	if (p->context == NULL || posix_memalign((void **)&p->buffer, 4096, BUFFER_BYTES) != 0)
		return -1;
	memset(p->buffer, 0, BUFFER_BYTES);
	p->pd = ibv_alloc_pd(p->context);
	if (p->pd == NULL)
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->buffer, BUFFER_BYTES,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	p->cq = ibv_create_cq(p->context, 256, NULL, NULL, 0);
	if (p->mr == NULL || p->cq == NULL)
		return -1;
	struct ibv_qp_init_attr init = {
	    .send_cq = p->cq,
	    .recv_cq = p->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
	p->qp = ibv_create_qp(p->pd, &init);
	if (p->qp == NULL)
		return -1;
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT,
				   .pkey_index = 0,
				   .port_num = 1,
				   .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	for (unsigned i = 0; i < RECVS; i++)
		if (post_recv(p, i) != 0)
			return -1;
	return 0;
}

static int connect_qp(struct peer *p, const struct devx_conn_info *local, const struct devx_conn_info *remote,
		      unsigned gid_index)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RTR,
				   .path_mtu = IBV_MTU_1024,
				   .dest_qp_num = remote->qpn,
				   .rq_psn = remote->psn,
				   .max_dest_rd_atomic = 16,
				   .min_rnr_timer = 12};
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	memcpy(attr.ah_attr.grh.dgid.raw, remote->gid, 16);
	if (ibv_modify_qp(p->qp, &attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
		fprintf(stderr, "verbs_peer: to RTR: %s\n", strerror(errno));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = local->psn;
	attr.max_rd_atomic = 16;
	if (ibv_modify_qp(p->qp, &attr,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			      IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
		fprintf(stderr, "verbs_peer: to RTS: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int32_t serve(struct peer *p, const struct peer_msg *m, const struct devx_conn_info *devx)
{
	struct ibv_wc wc;
	switch (m->cmd) {
	case PEER_CHECK:
		if (m->offset + (size_t)m->length > BUFFER_BYTES)
			return -1;
		return check(p->buffer + m->offset, m->length, m->seed, "RDMA WRITE from the DevX side");
	case PEER_RECV_CHECK: {
		if (wait_wc(p, &wc) != 0)
			return -1;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != m->length) {
			fprintf(stderr, "verbs_peer: receive: %s, opcode %d, %u bytes (expected %u)\n",
				ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, m->length);
			return -1;
		}
		const unsigned slot = (unsigned)wc.wr_id;
		const int32_t status =
		    check(p->buffer + RECV_OFF + (size_t)slot * 4096, m->length, m->seed, "SEND from the DevX side");
		return post_recv(p, slot) == 0 ? status : -1;
	}
	case PEER_SEND:
		fill_pattern(p->buffer + SEND_OFF, m->length, m->seed);
		return post_and_wait(p, IBV_WR_SEND, SEND_OFF, m->length, 0, 0);
	case PEER_FILL:
		if (m->offset + (size_t)m->length > BUFFER_BYTES)
			return -1;
		fill_pattern(p->buffer + m->offset, m->length, m->seed);
		return 0;
	case PEER_WRITE_TO_DEVX:
		fill_pattern(p->buffer + WRITE_OFF, m->length, m->seed);
		return post_and_wait(p, IBV_WR_RDMA_WRITE, WRITE_OFF, m->length, devx->addr + m->remote_offset,
				     devx->rkey);
	default:
		return -1;
	}
}

int verbs_peer_main(int fd, const char *device, unsigned gid_index)
{
	struct peer p = {0};
	int32_t status = setup(&p, device);
	struct devx_conn_info local = {0}, remote = {0};
	if (status == 0) {
		union ibv_gid gid;
		status = ibv_query_gid(p.context, 1, (int)gid_index, &gid);
		local.qpn = p.qp->qp_num;
		local.psn = 0x4321;
		memcpy(local.gid, gid.raw, 16);
		local.addr = (uint64_t)(uintptr_t)p.buffer;
		local.rkey = p.mr->rkey;
		local.length = BUFFER_BYTES;
	}
	if (status != 0) {
		fprintf(stderr, "verbs_peer: setting up on %s failed: %s\n", device, strerror(errno));
		return 1;
	}
	if (write_all(fd, &local, sizeof(local)) != 0 || read_all(fd, &remote, sizeof(remote)) != 0)
		return 1;
	status = connect_qp(&p, &local, &remote, gid_index);
	if (write_all(fd, &status, sizeof(status)) != 0 || status != 0)
		return 1;

	struct peer_msg m;
	int done = 0;
	while (!done && read_all(fd, &m, sizeof(m)) == 0) {
		done = m.cmd == PEER_DONE;
		status = done ? 0 : serve(&p, &m, &remote);
		if (write_all(fd, &status, sizeof(status)) != 0)
			break;
	}
	ibv_destroy_qp(p.qp);
	ibv_destroy_cq(p.cq);
	ibv_dereg_mr(p.mr);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.context);
	free(p.buffer);
	return done ? 0 : 1;
}
