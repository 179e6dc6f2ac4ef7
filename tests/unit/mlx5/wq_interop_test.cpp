// An mlx5 queue pair (WQEs and CQEs through mlx5dv_init_obj) in this process and a plain verbs
// queue pair in another: the test starts this same binary again as the verbs side
// (WqPeerProcess.VerbsSide, which does nothing unless started so), and the two exchange RDMA WRITE
// and SENDs both ways.
#include "wq_fixture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

extern char **environ;

using namespace mlx5_test;

namespace {

constexpr const char *kPeerEnv = "SOFTDPU_TEST_WQ_PEER_FDS";
constexpr size_t kWrite = 512;
constexpr size_t kSend = 100;
constexpr size_t kBack = 64;

struct PeerInfo {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
};

uint8_t pattern(size_t i, uint8_t seed)
{
	return static_cast<uint8_t>(i * 7 + seed);
}

bool read_all(int fd, void *data, size_t size)
{
	auto *bytes = static_cast<uint8_t *>(data);
	while (size > 0) {
		const ssize_t n = read(fd, bytes, size);
		if (n <= 0)
			return false;
		bytes += n;
		size -= static_cast<size_t>(n);
	}
	return true;
}

bool write_all(int fd, const void *data, size_t size)
{
	return write(fd, data, size) == static_cast<ssize_t>(size);
}

bool poll_verbs(ibv_cq *cq, ibv_wc *wc)
{
	for (int i = 0; i < 5000; ++i) {
		const int n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n == 1;
		usleep(1000);
	}
	return false;
}

// The verbs side, in the second process: a plain RC QP, a buffer the mlx5 side writes into, a
// receive for its SEND; then a SEND back. Reports 1 (all as expected) or 0 on its pipe.
TEST(WqPeerProcess, VerbsSide)
{
	const char *fds = std::getenv(kPeerEnv);
	if (fds == nullptr)
		GTEST_SKIP() << "the peer process of WqInteropTest (started by it)";
	int in = -1;
	int out = -1;
	ASSERT_EQ(std::sscanf(fds, "%d,%d", &in, &out), 2);
	int count = 0;
	ibv_device **list = ibv_get_device_list(&count);
	ASSERT_NE(list, nullptr);
	ibv_context *context = ibv_open_device(list[0]);
	ASSERT_NE(context, nullptr);
	ibv_pd *pd = ibv_alloc_pd(context);
	ibv_cq *cq = ibv_create_cq(context, 16, nullptr, nullptr, 0);
	ibv_qp_init_attr attr{};
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = attr.recv_cq = cq;
	attr.cap = {16, 16, 1, 1, 0};
	ibv_qp *qp = ibv_create_qp(pd, &attr);
	ASSERT_NE(qp, nullptr);
	std::vector<uint8_t> memory(4096, 0);
	ibv_mr *mr = ibv_reg_mr(pd, memory.data(), memory.size(),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr);
	const PeerInfo mine{qp->qp_num, mr->rkey, reinterpret_cast<uintptr_t>(memory.data())};
	ASSERT_TRUE(write_all(out, &mine, sizeof(mine)));
	uint32_t remote_qpn = 0;
	ASSERT_TRUE(read_all(in, &remote_qpn, sizeof(remote_qpn)));
	connect_rc(context, qp, remote_qpn);
	ibv_sge recv_sge{reinterpret_cast<uintptr_t>(memory.data() + 1024), 256, mr->lkey};
	ibv_recv_wr recv{};
	recv.sg_list = &recv_sge;
	recv.num_sge = 1;
	ibv_recv_wr *bad_recv = nullptr;
	ASSERT_EQ(ibv_post_recv(qp, &recv, &bad_recv), 0);
	const uint8_t ready = 1;
	ASSERT_TRUE(write_all(out, &ready, 1));

	// The mlx5 side's WRITE lands before its SEND (in order on the queue pair).
	ibv_wc wc{};
	bool ok =
	    poll_verbs(cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == kSend;
	for (size_t i = 0; ok && i < kWrite; ++i)
		ok = memory[i] == pattern(i, 3);
	for (size_t i = 0; ok && i < kSend; ++i)
		ok = memory[1024 + i] == pattern(i, 5);
	// A SEND back into the mlx5 receive queue.
	for (size_t i = 0; i < kBack; ++i)
		memory[2048 + i] = pattern(i, 9);
	ibv_sge sge{reinterpret_cast<uintptr_t>(memory.data() + 2048), kBack, mr->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *bad = nullptr;
	ok = ok && ibv_post_send(qp, &wr, &bad) == 0 && poll_verbs(cq, &wc) && wc.status == IBV_WC_SUCCESS;
	const uint8_t result = ok ? 1 : 0;
	ASSERT_TRUE(write_all(out, &result, 1));
	uint8_t done = 0;
	(void)read_all(in, &done, 1); // the other side is finished with this queue pair
	EXPECT_TRUE(ok);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(context);
	ibv_free_device_list(list);
}

class WqInteropTest : public Mlx5Test {
protected:
	// The exchange with a verbs side in another process; with `kill_peer` the peer is killed once
	// connected, and the mlx5 side's requests fail as on a fabric whose peer stopped answering.
	void exchange(bool kill_peer);
};

TEST_F(WqInteropTest, AnMlx5QueuePairTalksToAVerbsQueuePairInAnotherProcess)
{
	exchange(false);
}

TEST_F(WqInteropTest, APeerThatDiesGivesARetryErrorThenFlushes)
{
	exchange(true);
}

void WqInteropTest::exchange(bool kill_peer)
{
	int to_peer[2];
	int from_peer[2];
	ASSERT_EQ(pipe(to_peer), 0);
	ASSERT_EQ(pipe(from_peer), 0);
	const std::string env =
	    std::string(kPeerEnv) + "=" + std::to_string(to_peer[0]) + "," + std::to_string(from_peer[1]);
	std::vector<char *> envp;
	for (char **e = environ; *e != nullptr; ++e)
		envp.push_back(*e);
	envp.push_back(const_cast<char *>(env.c_str()));
	envp.push_back(nullptr);
	std::string filter = "--gtest_filter=WqPeerProcess.VerbsSide";
	char self[] = "/proc/self/exe";
	char *argv[] = {self, filter.data(), nullptr};
	pid_t child = -1;
	ASSERT_EQ(posix_spawn(&child, self, nullptr, nullptr, argv, envp.data()), 0);
	close(to_peer[0]);
	close(from_peer[1]);
	const int out = to_peer[1];
	const int in = from_peer[0];

	ibv_pd *pd = ibv_alloc_pd(context_);
	ibv_cq *cq = ibv_create_cq(context_, 16, nullptr, nullptr, 0);
	ibv_qp_init_attr attr{};
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = attr.recv_cq = cq;
	attr.cap = {16, 16, 1, 1, 0};
	DvQp qp;
	qp.qp = ibv_create_qp(pd, &attr);
	ASSERT_NE(qp.qp, nullptr);
	DvCq dv_cq;
	dv_cq.cq = cq;
	mlx5dv_obj obj{};
	obj.qp.in = qp.qp;
	obj.qp.out = &qp.dv;
	obj.cq.in = cq;
	obj.cq.out = &dv_cq.dv;
	ASSERT_EQ(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ), 0);
	std::vector<uint8_t> memory(4096, 0);
	const int access = IBV_ACCESS_LOCAL_WRITE;
	ibv_mr *mr = ibv_reg_mr(pd, memory.data(), memory.size(), access);
	ASSERT_NE(mr, nullptr);
	for (size_t i = 0; i < kWrite; ++i)
		memory[i] = pattern(i, 3);
	for (size_t i = 0; i < kSend; ++i)
		memory[1024 + i] = pattern(i, 5);
	// Rung while the QP is still in RESET: the engine posts it once the QP can take it.
	qp.post_recv({{reinterpret_cast<uintptr_t>(memory.data() + 2048), 256, mr->lkey}});

	PeerInfo peer{};
	ASSERT_TRUE(read_all(in, &peer, sizeof(peer)));
	ASSERT_TRUE(write_all(out, &qp.qp->qp_num, sizeof(uint32_t)));
	connect_rc(context_, qp.qp, peer.qpn);
	uint8_t ready = 0;
	ASSERT_TRUE(read_all(in, &ready, 1));
	mlx5_cqe64 cqe{};
	if (kill_peer) {
		ASSERT_EQ(kill(child, SIGKILL), 0);
		int status = 0;
		ASSERT_EQ(waitpid(child, &status, 0), child);
		const uint16_t lost = qp.pi;
		qp.write(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE,
			 {raddr_seg(peer.addr, peer.rkey), data_seg(memory.data(), kWrite, mr->lkey)});
		const uint16_t later = qp.pi;
		qp.write(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, {data_seg(memory.data() + 1024, kSend, mr->lkey)});
		qp.ring();
		// The WRITE exhausts its retries; the SEND after it and the posted receive are flushed.
		bool retry_error = false;
		bool send_flushed = false;
		bool receive_flushed = false;
		while (!(retry_error && send_flushed && receive_flushed)) {
			ASSERT_TRUE(dv_cq.poll(&cqe, std::chrono::milliseconds(10000)));
			const uint16_t index = be16toh(cqe.wqe_counter);
			if (cqe_opcode(cqe) == MLX5_CQE_REQ_ERR && index == lost) {
				EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
				EXPECT_FALSE(send_flushed);
				retry_error = true;
			} else if (cqe_opcode(cqe) == MLX5_CQE_REQ_ERR && index == later) {
				EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
				send_flushed = true;
			} else {
				ASSERT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_ERR);
				EXPECT_EQ(cqe_syndrome(cqe), MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
				receive_flushed = true;
			}
		}
		close(in);
		close(out);
		EXPECT_EQ(ibv_destroy_qp(qp.qp), 0);
		EXPECT_EQ(ibv_dereg_mr(mr), 0);
		EXPECT_EQ(ibv_destroy_cq(cq), 0);
		EXPECT_EQ(ibv_dealloc_pd(pd), 0);
		return;
	}

	const uint16_t write = qp.pi;
	qp.write(MLX5_OPCODE_RDMA_WRITE, 0,
		 {raddr_seg(peer.addr, peer.rkey), data_seg(memory.data(), kWrite, mr->lkey)});
	const uint16_t send = qp.pi;
	qp.write(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, {data_seg(memory.data() + 1024, kSend, mr->lkey)});
	qp.ring();
	ASSERT_TRUE(dv_cq.poll(&cqe, std::chrono::milliseconds(5000)));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_REQ) << "syndrome " << int(cqe_syndrome(cqe));
	EXPECT_EQ(be16toh(cqe.wqe_counter), send);
	(void)write;
	ASSERT_TRUE(dv_cq.poll(&cqe, std::chrono::milliseconds(5000)));
	EXPECT_EQ(cqe_opcode(cqe), MLX5_CQE_RESP_SEND);
	EXPECT_EQ(be32toh(cqe.byte_cnt), kBack);
	for (size_t i = 0; i < kBack; ++i)
		ASSERT_EQ(memory[2048 + i], pattern(i, 9)) << i;
	uint8_t result = 0;
	ASSERT_TRUE(read_all(in, &result, 1));
	EXPECT_EQ(result, 1) << "the verbs side saw the WRITE and the SEND";
	const uint8_t done = 1;
	EXPECT_TRUE(write_all(out, &done, 1));
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "peer status " << status;
	close(in);
	close(out);
	EXPECT_EQ(ibv_destroy_qp(qp.qp), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

} // namespace
