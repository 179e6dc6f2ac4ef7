// pkg-config: libibverbs libmlx5
/*
 * DevX: an RDMA queue pair driven the way DPDK, UCX and DOCA drive an mlx5 device, with raw
 * firmware commands and raw work-queue entries, talking to an ordinary verbs program.
 *
 * This process (the DevX side) uses no verbs object at all: it asks the device for its
 * capabilities (QUERY_HCA_CAP, QUERY_NIC_VPORT_CONTEXT), makes a protection domain, a memory key
 * over registered user memory (umem), a completion queue and an RC queue pair with PRM commands
 * through mlx5dv_devx_obj_create, connects the queue pair with the RST2INIT, INIT2RTR and
 * RTR2RTS commands, and moves data by writing WQEs into its send queue, ringing the doorbell and
 * reading CQEs (devx_rc.c). Its peer is a second process (started by this one) that uses plain
 * ibv_* calls only (verbs_peer.c). The two exchange queue pair numbers, GIDs and keys over a
 * socket pair, as programs do over TCP, then:
 *
 *   1. the DevX side RDMA WRITEs 4 KiB into the peer's memory (one signaled WQE);
 *   2. it RDMA WRITEs 16 x 64 bytes with one doorbell, only the last WQE signaled;
 *   3. it SENDs a message into a receive the peer posted;
 *   4. the peer SENDs a message into a receive entry the DevX side wrote into its receive queue;
 *   5. the DevX side RDMA READs 4 KiB of the peer's memory;
 *   6. the peer RDMA WRITEs into the DevX side's memory with the key CREATE_MKEY made;
 *   7. the peer SENDs again, and the DevX side sleeps until a completion event arrives on a DevX
 *      event channel (the CQ armed through its doorbell record and UAR);
 * and each side checks every byte it got.
 *
 * With --peer-death the peer is killed (SIGKILL) after the first WRITE: the DevX queue pair's next
 * WQE must end in an error CQE (transport retries exceeded) within its retry budget, the one
 * after it and the posted receive entries in flush errors, and the queue pair must be in the
 * error state; nothing hangs. With --bad-rkey the DevX side WRITEs with a key the peer never
 * gave: a remote access error CQE, then the same flushes (the peer lives on).
 *
 * Usage: devx_sample [--devx [SIDE:]DEVICE:GID_INDEX] [--verbs [SIDE:]DEVICE:GID_INDEX]
 *                    [--peer-death | --bad-rkey]
 *   default: both on mlx5_0, GID index 0. SIDE (host or dpu) picks softdpu's side for that process.
 * On softdpu, run it with softdpu's libraries first on the loader path (docs/mlx5.md):
 *   LD_LIBRARY_PATH=<prefix>/lib/softdpu-rdma ./devx_sample
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devx_prm.h"
#include "devx_rc.h"
#include "devx_sample.h"

#define DATA_BYTES ((size_t)256 * 1024)
#define DEVX_RECV_OFF ((size_t)128 * 1024) /* where the DevX side's receive entries point */
#define CQE_TIMEOUT_MS 10000
#define DEVX_RECVS 4 /* receive entries posted before connecting */

static int failures;

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "devx_sample: FAILED: " __VA_ARGS__);                                          \
			fputc('\n', stderr);                                                                           \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

/* An endpoint "[SIDE:]DEVICE:GID_INDEX". */
struct endpoint {
	char side[16];
	char device[64];
	unsigned gid_index;
};

static int parse_endpoint(const char *text, struct endpoint *e)
{
	char a[64] = "", b[64] = "", c[64] = "";
	memset(e, 0, sizeof(*e));
	const int n = sscanf(text, "%63[^:]:%63[^:]:%63s", a, b, c);
	if (n == 3) {
		if (strlen(a) >= sizeof(e->side))
			return -1; /* not "host" or "dpu" */
		memcpy(e->side, a, strlen(a) + 1);
		snprintf(e->device, sizeof(e->device), "%s", b);
		e->gid_index = (unsigned)atoi(c);
	} else if (n == 2) {
		snprintf(e->device, sizeof(e->device), "%s", a);
		e->gid_index = (unsigned)atoi(b);
	} else {
		return -1;
	}
	return 0;
}

/* Asks the peer to do one step and waits for its answer (0: done and checked). */
static int ask(int sock, uint32_t cmd, uint32_t offset, uint32_t length, uint32_t seed, uint32_t remote_offset)
{
	const struct peer_msg msg = {cmd, offset, length, seed, remote_offset};
	int32_t status = -1;
	if (write_all(sock, &msg, sizeof(msg)) != 0 || read_all(sock, &status, sizeof(status)) != 0) {
		fprintf(stderr, "devx_sample: the verbs peer went away\n");
		return -1;
	}
	return status;
}

static int check_bytes(const uint8_t *p, size_t length, uint32_t seed, const char *what)
{
	for (size_t i = 0; i < length; i++)
		if (p[i] != pattern_byte(seed, i)) {
			fprintf(stderr, "devx_sample: FAILED: %s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, p[i],
				pattern_byte(seed, i));
			failures++;
			return -1;
		}
	return 0;
}

/* Posts one WQE, rings, and waits for its CQE; checks it is a good requester completion. */
static int one_wqe(struct devx_rc *rc, uint8_t opcode, size_t offset, uint32_t length, uint64_t raddr, uint32_t rkey,
		   const char *what)
{
	const uint16_t index = devx_build_wqe(rc, opcode, 1, offset, length, raddr, rkey);
	devx_ring_sq(rc);
	struct devx_cqe cqe;
	if (devx_wait_cqe(rc, &cqe, CQE_TIMEOUT_MS) != 0) {
		CHECK(0, "%s: no CQE within %d ms", what, CQE_TIMEOUT_MS);
		return -1;
	}
	CHECK(cqe.opcode == MLX5_CQE_REQ, "%s: CQE opcode %s (%u), syndrome 0x%x", what,
	      devx_cqe_opcode_str(cqe.opcode), cqe.opcode, cqe.syndrome);
	CHECK(cqe.wqe_counter == index, "%s: CQE wqe_counter %u, expected %u", what, cqe.wqe_counter, index);
	CHECK(cqe.qpn == rc->qpn, "%s: CQE qpn 0x%x, expected 0x%x", what, cqe.qpn, rc->qpn);
	return cqe.opcode == MLX5_CQE_REQ ? 0 : -1;
}

static void print_caps(const struct devx_caps *c)
{
	printf("QUERY_HCA_CAP: vhca_id %u, log_max_qp %u (QP size 2^%u), log_max_cq %u (CQ size 2^%u), log_max_pd %u, "
	       "log_max_mkey %u, log_max_msg %u, RDMA READs %u/%u (log), port_type %u, ports %u, cqe_version %u, "
	       "roce %u, atomic %u, GIDs %u\n",
	       c->vhca_id, c->log_max_qp, c->log_max_qp_sz, c->log_max_cq, c->log_max_cq_sz, c->log_max_pd,
	       c->log_max_mkey, c->log_max_msg, c->log_max_ra_req_qp, c->log_max_ra_res_qp, c->port_type, c->num_ports,
	       c->cqe_version, c->roce, c->atomic, c->gid_table_size);
	printf("RoCE caps: l3_type 0x%x, versions 0x%x, UDP port %u; NIC vport MAC %02x:%02x:%02x:%02x:%02x:%02x\n",
	       c->roce_l3_type, c->roce_version, c->roce_udp_port, c->mac[0], c->mac[1], c->mac[2], c->mac[3],
	       c->mac[4], c->mac[5]);
}

static void receive_by_event(struct devx_rc *rc, int sock);

/* The data path over a connected queue pair (steps 1-7 above). */
static void exchange_data(struct devx_rc *rc, int sock, const struct devx_conn_info *peer)
{
	/* 1. RDMA WRITE 4 KiB. */
	fill_pattern(rc->data, 4096, 1);
	if (one_wqe(rc, MLX5_OPCODE_RDMA_WRITE, 0, 4096, peer->addr, peer->rkey, "RDMA WRITE") == 0)
		CHECK(ask(sock, PEER_CHECK, 0, 4096, 1, 0) == 0, "the peer's memory after the RDMA WRITE");
	printf("RDMA WRITE of 4096 bytes: done, checked by the peer\n");

	/* 2. 16 WRITEs of 64 bytes, one doorbell, one CQE for the last (the others are unsignaled:
	 *    their completion is implied by the last one's, as on hardware). */
	fill_pattern(rc->data + 8192, (size_t)16 * 64, 2);
	uint16_t last = 0;
	for (int i = 0; i < 16; i++)
		last = devx_build_wqe(rc, MLX5_OPCODE_RDMA_WRITE, i == 15, 8192 + (size_t)i * 64, 64,
				      peer->addr + 8192 + (uint64_t)i * 64, peer->rkey);
	devx_ring_sq(rc);
	struct devx_cqe cqe;
	if (devx_wait_cqe(rc, &cqe, CQE_TIMEOUT_MS) != 0)
		CHECK(0, "batched WRITEs: no CQE");
	else {
		CHECK(cqe.opcode == MLX5_CQE_REQ && cqe.wqe_counter == last,
		      "batched WRITEs: CQE %s wqe_counter %u, expected REQ %u", devx_cqe_opcode_str(cqe.opcode),
		      cqe.wqe_counter, last);
		CHECK(ask(sock, PEER_CHECK, 8192, 16 * 64, 2, 0) == 0, "the peer's memory after the batched WRITEs");
	}
	CHECK(!devx_poll_cq(rc, &cqe), "an unsignaled WQE produced a CQE");
	printf("16 RDMA WRITEs of 64 bytes, one signaled: one CQE (wqe_counter %u), checked by the peer\n", last);

	/* 3. SEND into the peer's posted receive. */
	fill_pattern(rc->data + 16384, 1000, 3);
	if (one_wqe(rc, MLX5_OPCODE_SEND, 16384, 1000, 0, 0, "SEND") == 0)
		CHECK(ask(sock, PEER_RECV_CHECK, 0, 1000, 3, 0) == 0, "the peer's receive of the SEND");
	printf("SEND of 1000 bytes: received and checked by the peer\n");

	/* 4. The peer SENDs into our receive queue: a RESP_SEND CQE with the byte count. */
	memset(rc->data + DEVX_RECV_OFF, 0, 4096);
	CHECK(ask(sock, PEER_SEND, 0, 777, 4, 0) == 0, "the peer's SEND");
	if (devx_wait_cqe(rc, &cqe, CQE_TIMEOUT_MS) != 0)
		CHECK(0, "receive: no CQE");
	else {
		CHECK(cqe.opcode == MLX5_CQE_RESP_SEND && cqe.byte_count == 777,
		      "receive: CQE %s (%u) with %u bytes, expected RESP_SEND with 777 (syndrome 0x%x)",
		      devx_cqe_opcode_str(cqe.opcode), cqe.opcode, cqe.byte_count, cqe.syndrome);
		CHECK(cqe.wqe_counter == 0, "receive: wqe_counter %u, expected the first receive entry (0)",
		      cqe.wqe_counter);
		check_bytes(rc->data + DEVX_RECV_OFF, 777, 4, "the SEND the DevX side received");
	}
	printf("the peer's SEND of 777 bytes: RESP_SEND CQE, data checked\n");

	/* 5. RDMA READ 4 KiB the peer filled. */
	CHECK(ask(sock, PEER_FILL, 32768, 4096, 5, 0) == 0, "the peer's fill");
	memset(rc->data + 32768, 0, 4096);
	if (one_wqe(rc, MLX5_OPCODE_RDMA_READ, 32768, 4096, peer->addr + 32768, peer->rkey, "RDMA READ") == 0)
		check_bytes(rc->data + 32768, 4096, 5, "the RDMA READ's data");
	printf("RDMA READ of 4096 bytes: data checked\n");

	/* 6. The peer RDMA WRITEs into our memory with our DevX mkey as its rkey. */
	memset(rc->data + 49152, 0, 2048);
	CHECK(ask(sock, PEER_WRITE_TO_DEVX, 0, 2048, 6, 49152) == 0, "the peer's RDMA WRITE with the DevX mkey");
	check_bytes(rc->data + 49152, 2048, 6, "what the peer wrote with the DevX mkey");
	printf("the peer's RDMA WRITE with the DevX mkey 0x%x as rkey: data checked\n", rc->mkey);

	receive_by_event(rc, sock);
}

/* 7. The peer SENDs again, and the DevX side sleeps until the CQ's completion event instead of
 *    spinning: an event channel subscribed to the CQ, the CQ armed, poll() on the channel's fd. */
static void receive_by_event(struct devx_rc *rc, int sock)
{
	struct mlx5dv_devx_event_channel *channel = mlx5dv_devx_create_event_channel(rc->context, 0);
	if (channel == NULL) {
		CHECK(0, "mlx5dv_devx_create_event_channel: %s", strerror(errno));
		return;
	}
	uint16_t events[] = {0}; /* completion events (the EQE type of a CQ's completions) */
	const uint64_t cookie = 0x5d0c0ffee;
	int err = mlx5dv_devx_subscribe_devx_event(channel, rc->cq_obj, sizeof(events), events, cookie);
	CHECK(err == 0, "mlx5dv_devx_subscribe_devx_event: %s", strerror(err));
	if (err == 0) {
		devx_arm_cq(rc);
		memset(rc->data + DEVX_RECV_OFF + 4096, 0, 4096);
		CHECK(ask(sock, PEER_SEND, 0, 555, 9, 0) == 0, "the peer's second SEND");
		struct pollfd pfd = {.fd = channel->fd, .events = POLLIN};
		const int ready = poll(&pfd, 1, CQE_TIMEOUT_MS);
		CHECK(ready == 1, "no completion event within %d ms", CQE_TIMEOUT_MS);
		/* A record: the subscription's cookie, then the 64-byte EQE. */
		uint64_t event[1 + 64 / sizeof(uint64_t)];
		struct mlx5dv_devx_async_event_hdr *hdr = (struct mlx5dv_devx_async_event_hdr *)event;
		if (ready == 1) {
			const ssize_t n = mlx5dv_devx_get_event(channel, hdr, sizeof(event));
			CHECK(n >= (ssize_t)sizeof(*hdr) && hdr->cookie == cookie,
			      "mlx5dv_devx_get_event: %zd bytes, cookie 0x%llx", n, (unsigned long long)hdr->cookie);
			rc->arm_sn++; /* the arm is spent */
		}
		struct devx_cqe cqe;
		if (devx_wait_cqe(rc, &cqe, CQE_TIMEOUT_MS) != 0) {
			CHECK(0, "an event, but no CQE");
		} else {
			CHECK(
			    cqe.opcode == MLX5_CQE_RESP_SEND && cqe.byte_count == 555 && cqe.wqe_counter == 1,
			    "receive after the event: CQE %s with %u bytes, wqe_counter %u; expected RESP_SEND, 555, 1",
			    devx_cqe_opcode_str(cqe.opcode), cqe.byte_count, cqe.wqe_counter);
			check_bytes(rc->data + DEVX_RECV_OFF + 4096, 555, 9, "the SEND received after the event");
		}
	}
	mlx5dv_devx_destroy_event_channel(channel);
	printf("the peer's second SEND: completion event on the DevX event channel, then the CQE, data checked\n");
}

/* A flush CQE: what a queue pair in error completes its outstanding work with. */
static int is_flush(const struct devx_cqe *cqe)
{
	return (cqe->opcode == MLX5_CQE_REQ_ERR || cqe->opcode == MLX5_CQE_RESP_ERR) &&
	       cqe->syndrome == MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
}

/* The queue pair is in error: a WQE posted now and the receive entries still posted are flushed
 * (`receives` of them were already seen), one CQE each with syndrome WR_FLUSH_ERR, and QUERY_QP
 * says ERR. */
static void expect_flushes(struct devx_rc *rc, const struct devx_conn_info *peer, int receives)
{
	struct devx_cqe cqe;
	devx_build_wqe(rc, MLX5_OPCODE_RDMA_WRITE, 1, 0, 64, peer->addr, peer->rkey);
	devx_ring_sq(rc);
	int sends = 0;
	while ((sends < 1 || receives < DEVX_RECVS) && devx_wait_cqe(rc, &cqe, 5000) == 0) {
		CHECK(is_flush(&cqe),
		      "after the error: CQE %s (%u) syndrome 0x%x, expected a flush (WR_FLUSH_ERR, 0x5)",
		      devx_cqe_opcode_str(cqe.opcode), cqe.opcode, cqe.syndrome);
		if (cqe.opcode == MLX5_CQE_REQ_ERR)
			sends++;
		else
			receives++;
	}
	CHECK(sends == 1 && receives == DEVX_RECVS, "flushes: %d WQE(s) and %d receive(s), expected 1 and %d", sends,
	      receives, DEVX_RECVS);
	uint32_t state = 0;
	if (devx_query_qp_state(rc, &state) == 0)
		CHECK(state == PRM_QP_STATE_ERR, "QUERY_QP: state %u, expected ERR (6)", state);
	printf("the next WQE and the %d posted receives: flushed; the queue pair is in the error state\n", DEVX_RECVS);
}

/* The peer is killed: the next WQE ends in an error CQE (retries exceeded); the queue pair is then
 * in error and flushes what it holds: the receive entries still posted (RESP_ERR) and every WQE
 * posted later (REQ_ERR), one CQE each with syndrome WR_FLUSH_ERR, as the device does. */
static void peer_death(struct devx_rc *rc, pid_t peer_pid, const struct devx_conn_info *peer)
{
	kill(peer_pid, SIGKILL);
	waitpid(peer_pid, NULL, 0);
	printf("the verbs peer is killed\n");

	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	fill_pattern(rc->data, 64, 7);
	devx_build_wqe(rc, MLX5_OPCODE_RDMA_WRITE, 1, 0, 64, peer->addr, peer->rkey);
	devx_ring_sq(rc);
	struct devx_cqe cqe;
	int receives = 0; /* flushed receive entries */
	for (;;) {
		if (devx_wait_cqe(rc, &cqe, 30000) != 0) {
			CHECK(0, "no CQE within 30 s for a WRITE to a dead peer");
			return;
		}
		if (cqe.opcode != MLX5_CQE_RESP_ERR || !is_flush(&cqe))
			break;
		receives++; /* the receive flushes may come first */
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	const long ms = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000;
	CHECK(cqe.opcode == MLX5_CQE_REQ_ERR && cqe.syndrome == MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR,
	      "WRITE to a dead peer: CQE %s (%u) syndrome 0x%x, expected REQ_ERR with TRANSPORT_RETRY_EXC_ERR (0x15)",
	      devx_cqe_opcode_str(cqe.opcode), cqe.opcode, cqe.syndrome);
	printf("WRITE to the dead peer: error CQE (syndrome 0x%x) after %ld ms\n", cqe.syndrome, ms);

	expect_flushes(rc, peer, receives);
}

/* A WRITE with a key the peer never gave: the peer's device refuses it, the WQE ends in an error
 * CQE (remote access error) and the queue pair goes to the error state, flushing the rest. The
 * peer lives on. */
static void bad_rkey(struct devx_rc *rc, const struct devx_conn_info *peer)
{
	fill_pattern(rc->data, 64, 8);
	devx_build_wqe(rc, MLX5_OPCODE_RDMA_WRITE, 1, 0, 64, peer->addr, peer->rkey ^ 0x5a5a00);
	devx_ring_sq(rc);
	struct devx_cqe cqe;
	int receives = 0;
	for (;;) {
		if (devx_wait_cqe(rc, &cqe, CQE_TIMEOUT_MS) != 0) {
			CHECK(0, "no CQE for a WRITE with a bad rkey");
			return;
		}
		if (cqe.opcode != MLX5_CQE_RESP_ERR || !is_flush(&cqe))
			break;
		receives++;
	}
	CHECK(cqe.opcode == MLX5_CQE_REQ_ERR && cqe.syndrome == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
	      "WRITE with a bad rkey: CQE %s (%u) syndrome 0x%x, expected REQ_ERR with REMOTE_ACCESS_ERR (0x13)",
	      devx_cqe_opcode_str(cqe.opcode), cqe.opcode, cqe.syndrome);
	printf("WRITE with a bad rkey: error CQE (syndrome 0x%x)\n", cqe.syndrome);
	expect_flushes(rc, peer, receives);
}

static pid_t start_peer(const struct endpoint *e, int fd)
{
	const pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* The peer is this program again, in its verbs role (the side is read when verbs starts). */
	if (e->side[0] != '\0')
		setenv("SOFTDPU_SIDE", e->side, 1);
	char fd_text[16], gid_text[16];
	snprintf(fd_text, sizeof(fd_text), "%d", fd);
	snprintf(gid_text, sizeof(gid_text), "%u", e->gid_index);
	execl("/proc/self/exe", "devx_sample", "--verbs-peer", fd_text, e->device, gid_text, (char *)NULL);
	perror("devx_sample: exec");
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--verbs-peer") == 0)
		return verbs_peer_main(atoi(argv[2]), argv[3], (unsigned)atoi(argv[4]));

	struct endpoint devx_end, verbs_end;
	parse_endpoint("mlx5_0:0", &devx_end);
	parse_endpoint("mlx5_0:0", &verbs_end);
	int kill_peer = 0, wrong_key = 0;
	for (int i = 1; i < argc; i++) {
		const int has_value = i + 1 < argc;
		struct endpoint *target = NULL;
		if (strcmp(argv[i], "--devx") == 0)
			target = &devx_end;
		else if (strcmp(argv[i], "--verbs") == 0)
			target = &verbs_end;
		if (strcmp(argv[i], "--peer-death") == 0) {
			kill_peer = 1;
		} else if (strcmp(argv[i], "--bad-rkey") == 0) {
			wrong_key = 1;
		} else if (target == NULL || !has_value || parse_endpoint(argv[++i], target) != 0) {
			fprintf(stderr,
				"usage: %s [--devx [SIDE:]DEVICE:GID_INDEX] [--verbs [SIDE:]DEVICE:GID_INDEX] "
				"[--peer-death | --bad-rkey]\n",
				argv[0]);
			return 2;
		}
	}

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		perror("devx_sample: socketpair");
		return 1;
	}
	/* The peer's end must survive its exec. */
	int peer_fd = dup(sv[1]);
	close(sv[1]);
	const pid_t peer_pid = start_peer(&verbs_end, peer_fd);
	close(peer_fd);
	if (peer_pid < 0) {
		perror("devx_sample: fork");
		return 1;
	}
	if (devx_end.side[0] != '\0')
		setenv("SOFTDPU_SIDE", devx_end.side, 1);

	/* Step by step, as every DevX program does it. */
	const struct devx_rc_attr attr = {
	    .log_sq_size = 6,
	    .log_rq_size = 4,
	    .log_cq_size = 7,
	    .buffer_size = DATA_BYTES,
	    .gid_index = (uint8_t)devx_end.gid_index,
	    .ack_timeout = 14, /* 67 ms */
	    .retry_count = 3,
	};
	struct devx_rc rc;
	struct devx_caps caps;
	int ok = devx_open(&rc, devx_end.device, &attr) == 0 && devx_query_caps(&rc, &caps) == 0;
	if (ok) {
		print_caps(&caps);
		ok = devx_create_objects(&rc) == 0;
	}
	if (ok)
		printf("DevX objects: pd 0x%x, mkey 0x%x over umem %u, UAR page %u, cq 0x%x, qp 0x%x\n", rc.pdn,
		       rc.mkey, rc.data_umem->umem_id, rc.uar->page_id, rc.cqn, rc.qpn);

	/* Receive entries first, so the peer's SEND finds one. */
	if (ok)
		for (int i = 0; i < DEVX_RECVS; i++)
			devx_post_recv(&rc, DEVX_RECV_OFF + (size_t)i * 4096, 4096);

	/* Exchange addresses, then connect. */
	struct devx_conn_info local = {0}, peer = {0};
	if (ok) {
		local.qpn = rc.qpn;
		local.psn = 0x1234;
		memcpy(local.gid, rc.gid, 16);
		local.addr = (uint64_t)(uintptr_t)rc.data;
		local.rkey = rc.mkey;
		local.length = DATA_BYTES;
		ok = read_all(sv[0], &peer, sizeof(peer)) == 0 && write_all(sv[0], &local, sizeof(local)) == 0;
		if (!ok)
			fprintf(stderr, "devx_sample: the verbs peer did not start\n");
	}
	if (ok)
		ok = devx_connect(&rc, &local, &peer) == 0;
	int32_t peer_status = -1;
	if (ok)
		ok = read_all(sv[0], &peer_status, sizeof(peer_status)) == 0 && peer_status == 0;
	uint32_t state = 0;
	if (ok && devx_query_qp_state(&rc, &state) == 0) {
		CHECK(state == PRM_QP_STATE_RTS, "QUERY_QP after RTR2RTS: state %u, expected RTS (3)", state);
		printf("connected: DevX qp 0x%x <-> verbs qp 0x%x, QUERY_QP says RTS\n", rc.qpn, peer.qpn);
	}

	if (ok && (kill_peer || wrong_key)) {
		/* One good WRITE first: the failure that follows is the one provoked. */
		fill_pattern(rc.data, 4096, 1);
		if (one_wqe(&rc, MLX5_OPCODE_RDMA_WRITE, 0, 4096, peer.addr, peer.rkey, "RDMA WRITE") == 0)
			CHECK(ask(sv[0], PEER_CHECK, 0, 4096, 1, 0) == 0, "the peer's memory after the RDMA WRITE");
		if (kill_peer) {
			peer_death(&rc, peer_pid, &peer);
		} else {
			bad_rkey(&rc, &peer);
			CHECK(ask(sv[0], PEER_DONE, 0, 0, 0, 0) == 0, "the peer's clean-up");
		}
	} else if (ok) {
		exchange_data(&rc, sv[0], &peer);
		CHECK(ask(sv[0], PEER_DONE, 0, 0, 0, 0) == 0, "the peer's clean-up");
	}
	if (!ok)
		failures++;

	close(sv[0]);
	devx_close(&rc);
	/* Reap the peer (peer_death() has already); after a failure it may still wait for us. */
	if (!ok)
		kill(peer_pid, SIGKILL);
	if (!ok || !kill_peer) {
		int status = 0;
		waitpid(peer_pid, &status, 0);
		CHECK(!ok || (WIFEXITED(status) && WEXITSTATUS(status) == 0), "the verbs peer exited with status 0x%x",
		      status);
	}
	if (failures != 0) {
		fprintf(stderr, "devx_sample: %d check(s) failed\n", failures);
		return 1;
	}
	printf("devx_sample: all checks passed\n");
	return 0;
}
