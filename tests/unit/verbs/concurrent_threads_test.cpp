// Threads of one process sharing queue pairs and CQs, with the transport's agent running the
// background progress: what the TSan pass checks (suites named *Concurrent*).
#include "verbs_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

namespace {

using namespace verbs_test;

// A sends messages and writes while B's thread posts receives and another of B's polls: every
// message arrives once, in order, with its data.
TEST(VerbsConcurrent, PostersAndPollersOnSeveralThreads)
{
	RcPair pair;
	Options options;
	options.max_send_wr = 64;
	options.max_recv_wr = 64;
	ASSERT_TRUE(pair.connect(options));
	constexpr int kMessages = 2000;
	std::atomic<int> posted_receives{0};
	std::atomic<int> received{0};
	std::atomic<bool> failed{false};

	std::thread receiver_poster([&] {
		for (int i = 0; i < kMessages; ++i) {
			while (i - received.load() >= 32) // keep at most 32 receives outstanding
				std::this_thread::yield();
			if (pair.b.post_recv({{pair.b.addr(64 * (i % 32)), 64, pair.b.mr->lkey}},
					     static_cast<uint64_t>(i)) != 0)
				failed = true;
			posted_receives.fetch_add(1);
		}
	});
	std::thread receiver_poller([&] {
		int expected = 0;
		while (expected < kMessages && !failed) {
			ibv_wc wc{};
			const int n = ibv_poll_cq(pair.b.recv_cq, 1, &wc);
			if (n < 0) {
				failed = true;
				break;
			}
			if (n == 0)
				continue;
			uint32_t value = 0;
			std::memcpy(&value, pair.b.buf() + 64 * (expected % 32), sizeof(value));
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != static_cast<uint64_t>(expected) ||
			    value != static_cast<uint32_t>(expected))
				failed = true;
			++expected;
			received.store(expected);
		}
	});
	std::thread writer([&] {
		// Unsignaled writes into a region receives never touch, racing the sends.
		for (int i = 0; i < kMessages && !failed; ++i) {
			while (pair.a.post(IBV_WR_RDMA_WRITE, {{pair.a.addr(4096), 8, pair.a.mr->lkey}},
					   pair.b.addr(4096 + 8 * (i % 16)), pair.b.mr->rkey, 0) == ENOMEM &&
			       !failed)
				std::this_thread::yield();
		}
	});
	for (int i = 0; i < kMessages && !failed; ++i) {
		while (i >= posted_receives.load() && !failed) // RC would retry anyway; keep it quick
			std::this_thread::yield();
		const auto value = static_cast<uint32_t>(i);
		std::memcpy(pair.a.buf() + 2048, &value, sizeof(value));
		int error = 0;
		// The writer's requests may fill the send queue for a moment (ENOMEM): they complete without
		// anyone polling, so the post goes through soon.
		while ((error = pair.a.post(IBV_WR_SEND, {{pair.a.addr(2048), 4, pair.a.mr->lkey}}, 0, 0,
					    IBV_SEND_SIGNALED | IBV_SEND_INLINE, static_cast<uint64_t>(i))) == ENOMEM) {
			ibv_wc none{};
			(void)ibv_poll_cq(pair.a.send_cq, 0, &none); // progress only
		}
		if (error != 0) {
			ADD_FAILURE() << "post_send: " << std::strerror(error);
			failed = true;
			break;
		}
		const auto done = poll_n(pair.a.send_cq, 1);
		if (done.size() != 1 || done[0].status != IBV_WC_SUCCESS) {
			ADD_FAILURE() << "the send did not complete successfully";
			failed = true;
			break;
		}
	}
	writer.join();
	receiver_poster.join();
	receiver_poller.join();
	EXPECT_FALSE(failed.load());
	EXPECT_EQ(received.load(), kMessages);
}

} // namespace
