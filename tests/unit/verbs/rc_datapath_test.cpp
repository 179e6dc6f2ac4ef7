// The RC data path within one process (two queue pairs of this process connected to each other):
// RDMA WRITE, WRITE_WITH_IMM, READ, SEND/RECV with scatter lists on both sides, SEND_WITH_IMM,
// inline data, atomics, signaled and unsignaled requests, sq_sig_all.
#include "verbs_test_support.hpp"

#include <numeric>
#include <vector>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::poll_for;
using verbs_test::poll_n;
using verbs_test::RcPair;

void fill(uint8_t *data, size_t length, uint8_t seed)
{
	for (size_t i = 0; i < length; ++i)
		data[i] = static_cast<uint8_t>(seed + i * 7);
}

class VerbsRc : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_TRUE(pair_.connect(options_)); }
	Options options_;
	RcPair pair_;
};

TEST_F(VerbsRc, RdmaWriteLandsInTheTargetsMemory)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	fill(a.buf(), 1000, 3);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 1000)}, b.addr(100), b.mr->rkey, IBV_SEND_SIGNALED, 42), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].wr_id, 42u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(done[0].status);
	EXPECT_EQ(done[0].opcode, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(done[0].qp_num, a.qp->qp_num);
	EXPECT_EQ(std::memcmp(b.buf() + 100, a.buf(), 1000), 0);
	EXPECT_EQ(b.buf()[99], 0);
	EXPECT_EQ(b.buf()[1100], 0);
	// A one-sided write consumes no receive and completes nothing at the target.
	EXPECT_TRUE(poll_for(b.recv_cq, 10).empty());

	// A gather list of three pieces lands back to back.
	fill(a.buf() + 2000, 300, 9);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(2000, 100), a.sge(2200, 100), a.sge(2100, 100)}, b.addr(4000),
			 b.mr->rkey, IBV_SEND_SIGNALED, 43),
		  0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(b.buf() + 4000, a.buf() + 2000, 100), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 4100, a.buf() + 2200, 100), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 4200, a.buf() + 2100, 100), 0);
}

TEST_F(VerbsRc, WriteWithImmConsumesAReceive)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	fill(a.buf(), 256, 1);
	ASSERT_EQ(b.post_recv({b.sge(6000, 16)}, 77), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE_WITH_IMM, {a.sge(0, 256)}, b.addr(512), b.mr->rkey, IBV_SEND_SIGNALED, 5,
			 0xabcd1234),
		  0);
	const auto sent = poll_n(a.send_cq, 1);
	ASSERT_EQ(sent.size(), 1u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 77u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(received[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_TRUE(received[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(be32toh(received[0].imm_data), 0xabcd1234u);
	EXPECT_EQ(received[0].byte_len, 256u);
	EXPECT_EQ(received[0].qp_num, b.qp->qp_num);
	EXPECT_EQ(std::memcmp(b.buf() + 512, a.buf(), 256), 0);
	// The receive buffer itself is untouched.
	EXPECT_EQ(b.buf()[6000], 0);
}

TEST_F(VerbsRc, RdmaReadFetchesTheTargetsMemory)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	fill(b.buf() + 300, 700, 5);
	ASSERT_EQ(
	    a.post(IBV_WR_RDMA_READ, {a.sge(0, 200), a.sge(1000, 500)}, b.addr(300), b.mr->rkey, IBV_SEND_SIGNALED, 9),
	    0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(done[0].opcode, IBV_WC_RDMA_READ);
	EXPECT_EQ(done[0].byte_len, 700u);
	EXPECT_EQ(std::memcmp(a.buf(), b.buf() + 300, 200), 0);
	EXPECT_EQ(std::memcmp(a.buf() + 1000, b.buf() + 500, 500), 0);
}

TEST_F(VerbsRc, SendScattersIntoTheReceiveList)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	fill(a.buf(), 600, 11);
	// Three receive elements (100 + 50 + 1000 bytes) for a 450-byte message gathered from two.
	ASSERT_EQ(b.post_recv({b.sge(1000, 100), b.sge(3000, 50), b.sge(5000, 1000)}, 100), 0);
	ASSERT_EQ(b.post_recv({b.sge(7000, 64)}, 101), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 250), a.sge(400, 200)}, 0, 0, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND_WITH_IMM, {a.sge(0, 10)}, 0, 0, IBV_SEND_SIGNALED, 2, 0x01020304), 0);

	const auto sent = poll_n(a.send_cq, 2);
	ASSERT_EQ(sent.size(), 2u);
	EXPECT_EQ(sent[0].wr_id, 1u);
	EXPECT_EQ(sent[0].opcode, IBV_WC_SEND);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sent[1].wr_id, 2u);
	EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);

	const auto received = poll_n(b.recv_cq, 2);
	ASSERT_EQ(received.size(), 2u);
	EXPECT_EQ(received[0].wr_id, 100u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(received[0].opcode, IBV_WC_RECV);
	EXPECT_EQ(received[0].byte_len, 450u);
	EXPECT_FALSE(received[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(received[0].qp_num, b.qp->qp_num);
	std::vector<uint8_t> message(a.buf(), a.buf() + 250);
	message.insert(message.end(), a.buf() + 400, a.buf() + 600);
	EXPECT_EQ(std::memcmp(b.buf() + 1000, message.data(), 100), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 3000, message.data() + 100, 50), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 5000, message.data() + 150, 300), 0);
	EXPECT_EQ(b.buf()[5300], 0);

	EXPECT_EQ(received[1].wr_id, 101u);
	EXPECT_EQ(received[1].opcode, IBV_WC_RECV);
	EXPECT_TRUE(received[1].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(be32toh(received[1].imm_data), 0x01020304u);
	EXPECT_EQ(received[1].byte_len, 10u);
	EXPECT_EQ(std::memcmp(b.buf() + 7000, a.buf(), 10), 0);
}

TEST_F(VerbsRc, ZeroLengthSendCompletesAReceive)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	ASSERT_EQ(b.post_recv({b.sge(0, 16)}, 3), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {}, 0, 0, IBV_SEND_SIGNALED, 4), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 3u);
	EXPECT_EQ(received[0].byte_len, 0u);
}

TEST_F(VerbsRc, InlineDataIsCopiedAtPostTime)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	uint8_t stack[48];
	fill(stack, sizeof(stack), 21);
	// Inline data needs no registration: the stack buffer, with a meaningless lkey.
	ibv_sge sge{reinterpret_cast<uint64_t>(stack), sizeof(stack), 0};
	ASSERT_EQ(b.post_recv({b.sge(0, 64)}, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {sge}, 0, 0, IBV_SEND_INLINE | IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {sge}, b.addr(1000), b.mr->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED, 2),
		  0);
	std::vector<uint8_t> expected(stack, stack + sizeof(stack));
	std::memset(stack, 0xee, sizeof(stack)); // reused at once
	const auto sent = poll_n(a.send_cq, 2);
	ASSERT_EQ(sent.size(), 2u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].byte_len, expected.size());
	EXPECT_EQ(std::memcmp(b.buf(), expected.data(), expected.size()), 0);
	EXPECT_EQ(std::memcmp(b.buf() + 1000, expected.data(), expected.size()), 0);
}

TEST_F(VerbsRc, AtomicsReturnTheOriginalValue)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	auto *target = reinterpret_cast<uint64_t *>(b.buf() + 64);
	auto *result = reinterpret_cast<uint64_t *>(a.buf() + 128);
	*target = 100;
	ASSERT_EQ(
	    a.post(IBV_WR_ATOMIC_FETCH_AND_ADD, {a.sge(128, 8)}, b.addr(64), b.mr->rkey, IBV_SEND_SIGNALED, 1, 0, 23),
	    0);
	auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(done[0].opcode, IBV_WC_FETCH_ADD);
	EXPECT_EQ(done[0].byte_len, 8u);
	EXPECT_EQ(*result, 100u);
	EXPECT_EQ(*target, 123u);

	// Compare and swap: a mismatch leaves the target; a match swaps.
	ASSERT_EQ(
	    a.post(IBV_WR_ATOMIC_CMP_AND_SWP, {a.sge(128, 8)}, b.addr(64), b.mr->rkey, IBV_SEND_SIGNALED, 2, 0, 5, 999),
	    0);
	done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(done[0].opcode, IBV_WC_COMP_SWAP);
	EXPECT_EQ(*result, 123u);
	EXPECT_EQ(*target, 123u);
	ASSERT_EQ(a.post(IBV_WR_ATOMIC_CMP_AND_SWP, {a.sge(128, 8)}, b.addr(64), b.mr->rkey, IBV_SEND_SIGNALED, 3, 0,
			 123, 999),
		  0);
	done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(*result, 123u);
	EXPECT_EQ(*target, 999u);

	// Many fetch-and-adds from both sides: every original is distinct and the sum adds up.
	auto *own = reinterpret_cast<uint64_t *>(b.buf() + 256);
	*own = 0;
	constexpr int kRounds = 8;
	for (int i = 0; i < kRounds; ++i)
		ASSERT_EQ(a.post(IBV_WR_ATOMIC_FETCH_AND_ADD, {a.sge(512 + 8 * i, 8)}, b.addr(256), b.mr->rkey,
				 IBV_SEND_SIGNALED, 10 + i, 0, 1),
			  0);
	done = poll_n(a.send_cq, kRounds);
	ASSERT_EQ(done.size(), static_cast<size_t>(kRounds));
	std::vector<uint64_t> originals(kRounds);
	for (int i = 0; i < kRounds; ++i) {
		EXPECT_EQ(done[i].status, IBV_WC_SUCCESS);
		EXPECT_EQ(done[i].wr_id, static_cast<uint64_t>(10 + i)) << "completions come in order";
		originals[i] = reinterpret_cast<uint64_t *>(a.buf() + 512)[i];
	}
	std::vector<uint64_t> expected(kRounds);
	std::iota(expected.begin(), expected.end(), 0);
	EXPECT_EQ(originals, expected);
	EXPECT_EQ(*own, static_cast<uint64_t>(kRounds));
}

TEST_F(VerbsRc, UnsignaledRequestsCompleteSilently)
{
	Endpoint &a = pair_.a;
	Endpoint &b = pair_.b;
	fill(a.buf(), 64, 2);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 16)}, b.addr(0), b.mr->rkey, 0, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(16, 16)}, b.addr(16), b.mr->rkey, 0, 2), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(32, 16)}, b.addr(32), b.mr->rkey, IBV_SEND_SIGNALED, 3), 0);
	const auto done = poll_n(a.send_cq, 1);
	ASSERT_EQ(done.size(), 1u);
	EXPECT_EQ(done[0].wr_id, 3u);
	EXPECT_EQ(std::memcmp(b.buf(), a.buf(), 48), 0) << "the unsignaled ones ran before it";
	EXPECT_TRUE(poll_for(a.send_cq, 20).empty());
}

TEST(VerbsRcSigAll, SqSigAllSignalsEveryRequest)
{
	Options options;
	options.sq_sig_all = 1;
	RcPair pair;
	ASSERT_TRUE(pair.connect(options));
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	for (uint64_t i = 0; i < 3; ++i)
		ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, b.addr(0), b.mr->rkey, 0, i), 0);
	const auto done = poll_n(a.send_cq, 3);
	ASSERT_EQ(done.size(), 3u);
	for (uint64_t i = 0; i < 3; ++i) {
		EXPECT_EQ(done[i].wr_id, i);
		EXPECT_EQ(done[i].status, IBV_WC_SUCCESS);
	}
}

TEST(VerbsRcOneDevice, TwoQueuePairsOfOneDeviceTalk)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect({}, "mlx5_2", "mlx5_2"));
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	fill(a.buf(), 128, 4);
	ASSERT_EQ(b.post_recv({b.sge(0, 128)}, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 128)}), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(b.buf(), a.buf(), 128), 0);
	// And back, by WRITE.
	fill(b.buf() + 1000, 64, 8);
	ASSERT_EQ(b.post(IBV_WR_RDMA_WRITE, {b.sge(1000, 64)}, a.addr(2000), a.mr->rkey), 0);
	ASSERT_EQ(poll_n(b.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(a.buf() + 2000, b.buf() + 1000, 64), 0);
}

TEST(VerbsRcOneDevice, ThePeersIpv4GidWorksAsWell)
{
	// Connecting through the IPv4-mapped RoCE v2 GID (index 3) instead of the link-local one.
	Options options;
	options.gid_index = 3;
	RcPair pair;
	ASSERT_TRUE(pair.connect(options));
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	fill(a.buf(), 32, 1);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 32)}, b.addr(0), b.mr->rkey), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(b.buf(), a.buf(), 32), 0);
}

} // namespace

namespace {

TEST(VerbsRcProgress, WorkRunsWithoutPolling)
{
	// The device executes posted requests in the background: the initiator never polls.
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	fill(a.buf(), 64, 6);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 64)}, b.addr(0), b.mr->rkey, 0), 0);
	const uint64_t deadline = verbs_test::now_ms() + verbs_test::kTimeoutMs;
	while (std::memcmp(b.buf(), a.buf(), 64) != 0 && verbs_test::now_ms() < deadline)
		usleep(1000);
	EXPECT_EQ(std::memcmp(b.buf(), a.buf(), 64), 0);
	// A SEND lands in the receive too, with only the target polling.
	ASSERT_EQ(b.post_recv({b.sge(1000, 64)}, 8), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(0, 64)}, 0, 0, 0), 0);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 8u);
}

} // namespace

namespace {

TEST(VerbsRcIova, RemoteAddressesAreInTheRegistrationsIovaSpace)
{
	RcPair pair;
	ASSERT_TRUE(pair.connect());
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	std::vector<uint8_t> memory(4096, 0);
	constexpr uint64_t kIova = 0x7000000000ull;
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ibv_mr *mr = ibv_reg_mr_iova2(b.pd, memory.data(), memory.size(), kIova, static_cast<unsigned int>(access));
	ASSERT_NE(mr, nullptr) << std::strerror(errno);
	fill(a.buf(), 64, 12);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 64)}, kIova + 100, mr->rkey), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(memory.data() + 100, a.buf(), 64), 0);
	ASSERT_EQ(a.post(IBV_WR_RDMA_READ, {a.sge(1000, 64)}, kIova + 100, mr->rkey), 0);
	ASSERT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(a.buf() + 1000, a.buf(), 64), 0);
	// The virtual address is not the key's address space.
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 8)}, reinterpret_cast<uint64_t>(memory.data()), mr->rkey), 0);
	EXPECT_EQ(poll_n(a.send_cq, 1).at(0).status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

} // namespace

namespace {

TEST(VerbsRcResponderInRtr, AQueuePairInRtrAlreadyReceives)
{
	Endpoint a;
	Endpoint b;
	ASSERT_TRUE(a.create("mlx5_0"));
	ASSERT_TRUE(b.create("mlx5_1"));
	ASSERT_EQ(a.connect(b.address()), 0);
	// B goes as far as RTR only: it receives, it cannot send.
	ASSERT_EQ(b.to_init(), 0);
	ibv_qp_attr rtr = b.rtr_attr(a.address());
	ASSERT_EQ(ibv_modify_qp(b.qp, &rtr, Endpoint::kRtrMask), 0);
	ASSERT_EQ(b.post_recv({b.sge(0, 64)}, 4), 0);
	fill(a.buf(), 64, 13);
	ASSERT_EQ(a.post(IBV_WR_RDMA_WRITE, {a.sge(0, 32)}, b.addr(100), b.mr->rkey, IBV_SEND_SIGNALED, 1), 0);
	ASSERT_EQ(a.post(IBV_WR_SEND, {a.sge(32, 32)}, 0, 0, IBV_SEND_SIGNALED, 2), 0);
	const auto sent = poll_n(a.send_cq, 2);
	ASSERT_EQ(sent.size(), 2u);
	EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);
	EXPECT_EQ(std::memcmp(b.buf() + 100, a.buf(), 32), 0);
	const auto received = poll_n(b.recv_cq, 1);
	ASSERT_EQ(received.size(), 1u);
	EXPECT_EQ(received[0].wr_id, 4u);
	EXPECT_EQ(std::memcmp(b.buf(), a.buf() + 32, 32), 0);
	EXPECT_EQ(b.post(IBV_WR_SEND, {b.sge(0, 8)}), EINVAL);
}

} // namespace
