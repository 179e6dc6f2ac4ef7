// pkg-config: doca-common libibverbs
/*
 * The DOCA RDMA bridge between the host and the DPU: the host registers memory through DOCA (an
 * mmap on its device) and hands the buffer's key to the DPU; the DPU writes into that memory with
 * an RDMA WRITE of verbs, on the protection domain of its own DOCA device. Neither side registers
 * anything through verbs for the host memory: the bridge gives the key.
 *
 * One program plays both sides: it starts itself again as the DPU (SOFTDPU_SIDE=dpu), and the two
 * exchange their queue pair addresses over a socket pair, as applications do over TCP. Run it with
 * softdpu's libibverbs on the loader path (docs/rdma.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_rdma_bridge.h>

#define MESSAGE "written by the DPU into memory the host registered through DOCA"
#define HOST_BUFFER_SIZE 4096

/* What each side tells the other. */
struct address {
	union ibv_gid gid;
	uint32_t qpn;
	uint64_t addr; /* host only: where to write */
	uint32_t rkey; /* host only: the key of the DOCA buffer */
};

struct side {
	struct doca_dev *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "rdma_bridge_write: %s: %s\n", what, why);
	return -1;
}

static int send_all(int fd, const void *data, size_t size)
{
	return write(fd, data, size) == (ssize_t)size ? 0 : fail("exchange", strerror(errno));
}

static int receive_all(int fd, void *data, size_t size)
{
	return read(fd, data, size) == (ssize_t)size ? 0 : fail("exchange", "peer closed the socket");
}

/* Opens the first DOCA device of this side and its verbs objects through the bridge. */
static int open_side(struct side *side)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;
	doca_error_t result = doca_devinfo_create_list(&list, &count);
	if (result != DOCA_SUCCESS || count == 0)
		return fail("device list", doca_error_get_descr(result));
	result = doca_dev_open(list[0], &side->dev);
	doca_devinfo_destroy_list(list);
	if (result != DOCA_SUCCESS)
		return fail("open device", doca_error_get_descr(result));
	result = doca_rdma_bridge_get_dev_pd(side->dev, &side->pd);
	if (result != DOCA_SUCCESS)
		return fail("doca_rdma_bridge_get_dev_pd", doca_error_get_descr(result));
	side->cq = ibv_create_cq(side->pd->context, 4, NULL, NULL, 0);
	if (side->cq == NULL)
		return fail("ibv_create_cq", strerror(errno));
	struct ibv_qp_init_attr init = {
	    .send_cq = side->cq,
	    .recv_cq = side->cq,
	    .cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC,
	};
	side->qp = ibv_create_qp(side->pd, &init);
	if (side->qp == NULL)
		return fail("ibv_create_qp", strerror(errno));
	return 0;
}

/* RESET -> INIT -> RTR -> RTS, connected to the peer's queue pair. */
static int connect_qp(struct side *side, const struct address *peer)
{
	struct ibv_qp_attr attr = {
	    .qp_state = IBV_QPS_INIT,
	    .port_num = 1,
	    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_modify_qp(side->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("INIT", strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = peer->qpn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = peer->gid;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	if (ibv_modify_qp(side->qp, &attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("RTR", strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(side->qp, &attr,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			      IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("RTS", strerror(errno));
	return 0;
}

static void close_side(struct side *side)
{
	if (side->qp != NULL)
		ibv_destroy_qp(side->qp);
	if (side->cq != NULL)
		ibv_destroy_cq(side->cq);
	if (side->dev != NULL)
		doca_dev_close(side->dev);
}

/* The DPU: writes MESSAGE into the host's DOCA buffer. */
static int run_dpu(int sock)
{
	struct side side = {0};
	struct address self = {0}, host;
	char message[] = MESSAGE;
	struct ibv_mr *mr = NULL;
	int result = -1;

	if (open_side(&side) != 0 || ibv_query_gid(side.pd->context, 1, 0, &self.gid) != 0)
		goto out;
	self.qpn = side.qp->qp_num;
	if (receive_all(sock, &host, sizeof(host)) != 0 || send_all(sock, &self, sizeof(self)) != 0 ||
	    connect_qp(&side, &host) != 0)
		goto out;
	/* The source of the write: DPU memory, registered with verbs on the bridge's PD. */
	mr = ibv_reg_mr(side.pd, message, sizeof(message), 0);
	if (mr == NULL) {
		fail("ibv_reg_mr", strerror(errno));
		goto out;
	}
	struct ibv_sge sge = {.addr = (uintptr_t)message, .length = sizeof(message), .lkey = mr->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_RDMA_WRITE,
	    .send_flags = IBV_SEND_SIGNALED,
	    .wr.rdma = {.remote_addr = host.addr, .rkey = host.rkey},
	};
	struct ibv_send_wr *bad = NULL;
	if (ibv_post_send(side.qp, &wr, &bad) != 0) {
		fail("ibv_post_send", strerror(errno));
		goto out;
	}
	struct ibv_wc wc;
	int polled;
	while ((polled = ibv_poll_cq(side.cq, 1, &wc)) == 0)
		;
	if (polled < 0 || wc.status != IBV_WC_SUCCESS) {
		fail("RDMA WRITE", polled < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		goto out;
	}
	char done = 1;
	result = send_all(sock, &done, 1);
out:
	if (mr != NULL)
		ibv_dereg_mr(mr);
	close_side(&side);
	return result;
}

/* The host: registers a buffer through DOCA, waits for the DPU's write, checks it. */
static int run_host(int sock)
{
	struct side side = {0};
	struct address self = {0}, dpu;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inventory = NULL;
	struct doca_buf *buf = NULL;
	int result = -1;
	char *memory = calloc(1, HOST_BUFFER_SIZE);

	if (memory == NULL || open_side(&side) != 0)
		goto out;
	if (doca_mmap_create(&mmap) != DOCA_SUCCESS || doca_mmap_set_memrange(mmap, memory, HOST_BUFFER_SIZE) ||
	    doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE) ||
	    doca_mmap_add_dev(mmap, side.dev) || doca_mmap_start(mmap) || doca_buf_inventory_create(1, &inventory) ||
	    doca_buf_inventory_start(inventory) ||
	    doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory, HOST_BUFFER_SIZE, &buf)) {
		fail("DOCA memory", "cannot set up the mmap and its buffer");
		goto out;
	}
	doca_error_t key = doca_rdma_bridge_get_buf_mkey(buf, side.dev, &self.rkey);
	if (key != DOCA_SUCCESS) {
		fail("doca_rdma_bridge_get_buf_mkey", doca_error_get_descr(key));
		goto out;
	}
	if (ibv_query_gid(side.pd->context, 1, 0, &self.gid) != 0)
		goto out;
	self.qpn = side.qp->qp_num;
	self.addr = (uintptr_t)memory;
	if (send_all(sock, &self, sizeof(self)) != 0 || receive_all(sock, &dpu, sizeof(dpu)) != 0 ||
	    connect_qp(&side, &dpu) != 0)
		goto out;
	char done = 0;
	if (receive_all(sock, &done, 1) != 0)
		goto out;
	if (strcmp(memory, MESSAGE) != 0) {
		fail("check", "the host buffer does not hold the DPU's message");
		goto out;
	}
	printf("host buffer: \"%s\"\n", memory);
	result = 0;
out:
	if (buf != NULL)
		doca_buf_dec_refcount(buf, NULL);
	if (inventory != NULL)
		doca_buf_inventory_destroy(inventory);
	if (mmap != NULL)
		doca_mmap_destroy(mmap);
	close_side(&side);
	free(memory);
	return result;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dpu") == 0)
		return run_dpu(atoi(argv[2])) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
		return fail("socketpair", strerror(errno)), EXIT_FAILURE;
	pid_t dpu = fork();
	if (dpu < 0)
		return fail("fork", strerror(errno)), EXIT_FAILURE;
	if (dpu == 0) {
		/* The DPU side: this program again, seeing the DPU's devices. */
		char fd[16];
		int child = dup(pair[1]); /* without close-on-exec */
		snprintf(fd, sizeof(fd), "%d", child);
		setenv("SOFTDPU_SIDE", "dpu", 1);
		execl("/proc/self/exe", argv[0], "--dpu", fd, (char *)NULL);
		_exit(127);
	}
	close(pair[1]);
	setenv("SOFTDPU_SIDE", "host", 1);
	int result = run_host(pair[0]);
	close(pair[0]);
	int status = 0;
	waitpid(dpu, &status, 0);
	if (result != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return EXIT_FAILURE;
	printf("rdma_bridge_write: the DPU's RDMA WRITE reached the host's DOCA memory\n");
	return EXIT_SUCCESS;
}
