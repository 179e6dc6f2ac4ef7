// A peer killed with SIGKILL in the middle of a transfer: the survivor's RC queue pair must fail
// within a bounded time, with completions (IBV_WC_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR) and/or
// IBV_EVENT_QP_FATAL, and the survivor exits cleanly. Plain rdma-core verbs, nothing of softdpu.
//
//   peer_death MODE SURVIVOR_SIDE:DEVICE VICTIM_SIDE:DEVICE
//
// MODE send: the survivor streams RDMA WRITEs and SENDs into the victim, kills it, and must see its
//            outstanding and later requests fail (RETRY_EXC_ERR, then FLUSH_ERR).
// MODE recv: the victim streams SENDs into the survivor, which only receives; killed, the
//            survivor must get IBV_EVENT_QP_FATAL and its posted receives flushed.
// MODE nopeer: no victim; the survivor connects to a queue pair number nobody has, at the
//            victim device's GID, and its SEND must end with RETRY_EXC_ERR (no hang).
// SIDE is host or dpu (SOFTDPU_SIDE, set before each process opens a device). The queue pairs
// exchange their addresses over a socketpair. Prints "qpn SIDE DEVICE 0xQPN" for each queue pair,
// so that the caller can check no socket of it is left. Exit status 0 on success.
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kBufferSize = 1 << 20, kMessage = 65536, kDepth = 16, kGidIndex = 0, kBeforeKill = 200 };
static const uint64_t kRecvId = 1ull << 62; // marks the wr_id of a receive

struct address {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct end {
	struct ibv_context *context;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char *buffer;
};

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "peer_death[%d]: ", (int)getpid());                                            \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fprintf(stderr, " (errno %d)\n", errno);                                                       \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void open_end(struct end *e, const char *spec, struct address *self)
{
	char side[16] = {0}, device[64] = {0};
	CHECK(sscanf(spec, "%15[^:]:%63s", side, device) == 2, "bad SIDE:DEVICE \"%s\"", spec);
	setenv("SOFTDPU_SIDE", side, 1);
	int count = 0;
	struct ibv_device **list = ibv_get_device_list(&count);
	CHECK(list != NULL, "ibv_get_device_list");
	for (int i = 0; i < count && e->context == NULL; ++i)
		if (strcmp(ibv_get_device_name(list[i]), device) == 0)
			e->context = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(e->context != NULL, "cannot open %s on the %s side", device, side);
	e->buffer = calloc(1, kBufferSize);
	e->pd = ibv_alloc_pd(e->context);
	CHECK(e->buffer != NULL && e->pd != NULL, "ibv_alloc_pd");
	e->mr = ibv_reg_mr(e->pd, e->buffer, kBufferSize,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	e->cq = ibv_create_cq(e->context, 4 * kDepth, NULL, NULL, 0);
	CHECK(e->mr != NULL && e->cq != NULL, "ibv_reg_mr/ibv_create_cq");
	struct ibv_qp_init_attr init = {
	    .send_cq = e->cq,
	    .recv_cq = e->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = kDepth, .max_recv_wr = kDepth, .max_send_sge = 1, .max_recv_sge = 1}};
	e->qp = ibv_create_qp(e->pd, &init);
	CHECK(e->qp != NULL, "ibv_create_qp");
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT,
				   .port_num = 1,
				   .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
	CHECK(ibv_modify_qp(e->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0,
	      "to INIT");
	CHECK(ibv_query_gid(e->context, 1, kGidIndex, &self->gid) == 0, "ibv_query_gid");
	self->qpn = e->qp->qp_num;
	self->rkey = e->mr->rkey;
	self->addr = (uintptr_t)e->buffer;
	printf("qpn %s %s 0x%06x\n", side, device, self->qpn);
	fflush(stdout);
}

static void connect_end(struct end *e, const struct address *peer)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RTR,
				   .path_mtu = IBV_MTU_4096,
				   .dest_qp_num = peer->qpn,
				   .max_dest_rd_atomic = 1,
				   .min_rnr_timer = 12,
				   .ah_attr = {.is_global = 1,
					       .port_num = 1,
					       .grh = {.dgid = peer->gid, .sgid_index = kGidIndex, .hop_limit = 1}}};
	CHECK(ibv_modify_qp(e->qp, &attr,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
	      "to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14; // 67 ms, 8 tries: about half a second
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	CHECK(ibv_modify_qp(e->qp, &attr,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC) == 0,
	      "to RTS");
}

static void close_end(struct end *e)
{
	CHECK(ibv_destroy_qp(e->qp) == 0 && ibv_destroy_cq(e->cq) == 0 && ibv_dereg_mr(e->mr) == 0 &&
		  ibv_dealloc_pd(e->pd) == 0 && ibv_close_device(e->context) == 0,
	      "tearing down");
	free(e->buffer);
}

static void post_recv(struct end *e, uint64_t id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)e->buffer, .length = kMessage, .lkey = e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id | kRecvId, .sg_list = &sge, .num_sge = 1}, *bad;
	CHECK(ibv_post_recv(e->qp, &wr, &bad) == 0, "ibv_post_recv");
}

// Posts a 64-byte SEND or a kMessage-byte RDMA WRITE into the peer's buffer (in error, posting
// still works: the request completes flushed).
static void post_send(struct end *e, const struct address *peer, uint64_t id, int write)
{
	struct ibv_sge sge = {.addr = (uintptr_t)e->buffer, .length = write ? kMessage : 64, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	wr.wr.rdma.remote_addr = peer->addr;
	wr.wr.rdma.rkey = peer->rkey;
	CHECK(ibv_post_send(e->qp, &wr, &bad) == 0, "ibv_post_send");
}

// The victim: receives (recv mode: sends) until it is killed.
static void victim(const char *mode, const char *spec, int sock)
{
	struct end e = {0};
	struct address self = {0}, peer;
	open_end(&e, spec, &self);
	for (uint64_t i = 0; i < kDepth; ++i)
		post_recv(&e, i);
	CHECK(write(sock, &self, sizeof(self)) == sizeof(self) && read(sock, &peer, sizeof(peer)) == sizeof(peer),
	      "exchanging addresses");
	connect_end(&e, &peer);
	char ready = 'r';
	CHECK(write(sock, &ready, 1) == 1 && read(sock, &ready, 1) == 1, "handshake");
	int outstanding = 0;
	for (uint64_t id = 0;; ++id) {
		if (strcmp(mode, "recv") == 0 && outstanding < kDepth) {
			post_send(&e, &peer, id, 0);
			++outstanding;
		}
		struct ibv_wc wc[8];
		const int n = ibv_poll_cq(e.cq, 8, wc);
		CHECK(n >= 0, "ibv_poll_cq");
		for (int i = 0; i < n; ++i) {
			CHECK(wc[i].status == IBV_WC_SUCCESS, "victim: completion %s", ibv_wc_status_str(wc[i].status));
			if (wc[i].wr_id & kRecvId)
				post_recv(&e, wc[i].wr_id & ~kRecvId);
			else
				--outstanding;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: peer_death send|recv|nopeer SURVIVOR_SIDE:DEVICE VICTIM_SIDE:DEVICE\n");
		return 2;
	}
	const char *mode = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60); // the whole run is bounded: a hang is a failure (SIGALRM)
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	struct end e = {0};
	struct address self = {0}, peer = {0};
	pid_t child = -1;
	if (strcmp(mode, "nopeer") == 0) {
		// The victim device's GID, read in a child (a process has one side), and no queue pair.
		child = fork();
		CHECK(child >= 0, "fork");
		if (child == 0) {
			struct end v = {0};
			struct address a = {0};
			open_end(&v, argv[3], &a);
			close_end(&v);
			_exit(write(sv[1], &a, sizeof(a)) == sizeof(a) ? 0 : 1);
		}
		int status = 0;
		CHECK(read(sv[0], &peer, sizeof(peer)) == sizeof(peer) && waitpid(child, &status, 0) == child &&
			  status == 0,
		      "the victim device's address");
		peer.qpn = peer.qpn ^ 0x5a5a5a; // nobody's, with overwhelming likelihood
		open_end(&e, argv[2], &self);
		connect_end(&e, &peer);
		const double start = now();
		post_send(&e, &peer, 1, 0);
		struct ibv_wc wc;
		int n;
		while ((n = ibv_poll_cq(e.cq, 1, &wc)) == 0)
			usleep(100);
		CHECK(n == 1 && wc.status == IBV_WC_RETRY_EXC_ERR, "nopeer: expected RETRY_EXC_ERR, got %s",
		      n == 1 ? ibv_wc_status_str(wc.status) : "a poll error");
		printf("nopeer: %s after %.3f s\n", ibv_wc_status_str(wc.status), now() - start);
		close_end(&e);
		return 0;
	}
	CHECK(strcmp(mode, "send") == 0 || strcmp(mode, "recv") == 0, "unknown mode %s", mode);
	child = fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives a survivor that failed
		close(sv[0]);
		victim(mode, argv[3], sv[1]);
		_exit(1);
	}
	close(sv[1]);
	open_end(&e, argv[2], &self);
	for (uint64_t i = 0; i < kDepth; ++i)
		post_recv(&e, i);
	CHECK(read(sv[0], &peer, sizeof(peer)) == sizeof(peer) && write(sv[0], &self, sizeof(self)) == sizeof(self),
	      "exchanging addresses");
	connect_end(&e, &peer);
	char ready;
	CHECK(read(sv[0], &ready, 1) == 1 && write(sv[0], &ready, 1) == 1, "handshake");
	const int async_flags = fcntl(e.context->async_fd, F_GETFL);
	CHECK(fcntl(e.context->async_fd, F_SETFL, async_flags | O_NONBLOCK) == 0, "async fd");

	const int sending = strcmp(mode, "send") == 0;
	unsigned done = 0, outstanding = 0, flushed = 0, flushed_recvs = 0, retry_exceeded = 0, fatal_events = 0;
	double killed_at = 0;
	uint64_t next_id = 0;
	// Until the victim is dead, the queue pair in error, every request and posted receive back.
	for (;;) {
		if (killed_at == 0 && done >= kBeforeKill) {
			CHECK(kill(child, SIGKILL) == 0 && waitpid(child, NULL, 0) == child, "killing the victim");
			killed_at = now();
			printf("%s: victim %d killed after %u completions\n", mode, (int)child, done);
		}
		// The sender goes on posting for a while after the kill, as an application would.
		if (sending && outstanding < kDepth && (killed_at == 0 || now() - killed_at < 0.05)) {
			post_send(&e, &peer, next_id, (int)(next_id & 1));
			++next_id;
			++outstanding;
		}
		struct ibv_wc wc[8];
		const int n = ibv_poll_cq(e.cq, 8, wc);
		CHECK(n >= 0, "ibv_poll_cq");
		for (int i = 0; i < n; ++i) {
			const int is_recv = (wc[i].wr_id & kRecvId) != 0; // the opcode is undefined in errors
			if (wc[i].status == IBV_WC_SUCCESS) {
				CHECK(flushed == 0 && retry_exceeded == 0, "a success after an error completion");
				++done;
			} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				++flushed;
				flushed_recvs += is_recv;
			} else if (wc[i].status == IBV_WC_RETRY_EXC_ERR && !is_recv) {
				CHECK(flushed == 0, "RETRY_EXC_ERR after a flushed request");
				++retry_exceeded;
			} else {
				CHECK(0, "unexpected completion: %s for a %s", ibv_wc_status_str(wc[i].status),
				      is_recv ? "receive" : "send");
			}
			if (!is_recv)
				--outstanding;
			else if (wc[i].status == IBV_WC_SUCCESS)
				post_recv(&e, wc[i].wr_id & ~kRecvId);
		}
		struct ibv_async_event event;
		if (ibv_get_async_event(e.context, &event) == 0) {
			if (event.event_type == IBV_EVENT_QP_FATAL && event.element.qp == e.qp)
				++fatal_events;
			ibv_ack_async_event(&event);
		}
		if (killed_at != 0) {
			struct ibv_qp_attr attr;
			struct ibv_qp_init_attr init;
			CHECK(ibv_query_qp(e.qp, &attr, IBV_QP_STATE, &init) == 0, "ibv_query_qp");
			if (attr.qp_state == IBV_QPS_ERR && outstanding == 0 && flushed_recvs == kDepth &&
			    (sending || fatal_events > 0))
				break;
			CHECK(now() - killed_at < 10,
			      "no failure 10 s after the peer's death: QP state %d, %u outstanding, %u flushed (%u "
			      "receives), %u RETRY_EXC_ERR, %u IBV_EVENT_QP_FATAL",
			      attr.qp_state, outstanding, flushed, flushed_recvs, retry_exceeded, fatal_events);
			usleep(100);
		}
	}
	printf("%s: QP in error %.3f s after the kill: %u RETRY_EXC_ERR, %u WR_FLUSH_ERR, %u IBV_EVENT_QP_FATAL\n",
	       mode, now() - killed_at, retry_exceeded, flushed, fatal_events);
	CHECK(!sending || retry_exceeded > 0, "send: no RETRY_EXC_ERR");
	close_end(&e);
	return 0;
}
