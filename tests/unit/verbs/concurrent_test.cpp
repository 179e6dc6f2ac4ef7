// One thread posting receives while another polls their completions and a third sends, as
// multi-threaded applications do (suites named *Concurrent* also run under TSan).
#include "verbs_test_support.hpp"

#include <atomic>
#include <thread>

namespace {

using verbs_test::Endpoint;
using verbs_test::Options;
using verbs_test::RcPair;

TEST(VerbsConcurrent, PostingPollingAndSendingFromThreeThreads)
{
	Options options;
	options.max_recv_wr = 8;
	options.max_send_wr = 8;
	options.rnr_retry = 7; // the sender waits for receives
	RcPair pair;
	ASSERT_TRUE(pair.connect(options));
	Endpoint &a = pair.a;
	Endpoint &b = pair.b;
	constexpr uint32_t kMessages = 2000;
	constexpr uint32_t kSlots = 8; // receive buffers of 4 bytes, reused round robin

	std::atomic<uint32_t> completed{0};
	std::atomic<bool> failed{false};
	std::thread poster([&] {
		for (uint32_t i = 0; i < kMessages && !failed;) {
			// Never more receives outstanding than buffers.
			if (i - completed.load() >= kSlots) {
				std::this_thread::yield();
				continue;
			}
			const int error = b.post_recv({b.sge((i % kSlots) * 4, 4)}, i);
			if (error == ENOMEM) {
				std::this_thread::yield();
				continue;
			}
			if (error != 0) {
				failed = true;
				break;
			}
			++i;
		}
	});
	std::thread sender([&] {
		uint32_t posted = 0;
		uint32_t done = 0;
		while (done < kMessages && !failed) {
			if (posted < kMessages && posted - done < 4) {
				std::memcpy(a.buf() + (posted % 4) * 4, &posted, 4);
				if (a.post(IBV_WR_SEND, {a.sge((posted % 4) * 4, 4)}, 0, 0, IBV_SEND_SIGNALED,
					   posted) == 0)
					++posted;
			}
			ibv_wc wc[8];
			const int n = ibv_poll_cq(a.send_cq, 8, wc);
			for (int k = 0; k < n; ++k)
				if (wc[k].status != IBV_WC_SUCCESS)
					failed = true;
			done += static_cast<uint32_t>(std::max(n, 0));
		}
	});
	// This thread polls B's receives: each carries the index of its receive.
	const uint64_t deadline = verbs_test::now_ms() + 60000;
	while (completed < kMessages && !failed && verbs_test::now_ms() < deadline) {
		ibv_wc wc[8];
		const int n = ibv_poll_cq(b.recv_cq, 8, wc);
		for (int k = 0; k < n; ++k) {
			uint32_t value = ~0u;
			std::memcpy(&value, b.buf() + (wc[k].wr_id % kSlots) * 4, 4);
			if (wc[k].status != IBV_WC_SUCCESS || wc[k].wr_id != completed || value != completed) {
				ADD_FAILURE() << "completion " << completed.load() << ": wr_id " << wc[k].wr_id
					      << ", message " << value << ", " << ibv_wc_status_str(wc[k].status);
				failed = true;
				break;
			}
			++completed;
		}
	}
	failed = failed || completed != kMessages;
	poster.join();
	sender.join();
	EXPECT_EQ(completed.load(), kMessages);
	EXPECT_FALSE(failed.load());
}

} // namespace

namespace {

TEST(VerbsConcurrent, PairsTornDownWhileTheAgentSeesTheDisconnects)
{
	// Destroying one queue pair of a connected pair makes the transport's agent thread report the
	// disconnect to the other while this thread destroys that one too.
	for (int round = 0; round < 30; ++round) {
		RcPair pair;
		ASSERT_TRUE(pair.connect());
		ASSERT_EQ(pair.a.post(IBV_WR_RDMA_WRITE, {pair.a.sge(0, 8)}, pair.b.addr(), pair.b.mr->rkey), 0);
		ASSERT_EQ(verbs_test::poll_n(pair.a.send_cq, 1).at(0).status, IBV_WC_SUCCESS);
		if (round % 2 == 1) {
			// And a reset to RESET, which forgets the peer the same way.
			ibv_qp_attr attr{};
			attr.qp_state = IBV_QPS_RESET;
			ASSERT_EQ(ibv_modify_qp(pair.a.qp, &attr, IBV_QP_STATE), 0);
			ASSERT_EQ(ibv_modify_qp(pair.b.qp, &attr, IBV_QP_STATE), 0);
		}
	}
}

} // namespace
