// Sync events across threads (run under TSan with the `concurrent` label): one thread updates,
// another waits with wait_gt / wait_gt_yield; atomic adds from many threads; PE wait-gt tasks
// satisfied by another thread's update, in polling and in event-driven mode (no lost wake-up).
#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "sync_event_support.hpp"

using sync_event_test::Completions;
using sync_event_test::data_of;
using sync_event_test::SyncEventBase;

namespace {

constexpr auto kWakeTimeout = std::chrono::seconds(20);

class SyncEventConcurrentTest : public SyncEventBase {
protected:
	void start_standalone(uint64_t *storage = nullptr)
	{
		declare_cpu_locations();
		if (storage != nullptr) {
			ASSERT_EQ(doca_sync_event_set_addr(event, storage), DOCA_SUCCESS);
		}
		ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	}

	void submit_wait(uint64_t wait_val)
	{
		doca_sync_event_task_wait_gt *task = nullptr;
		ASSERT_EQ(
		    doca_sync_event_task_wait_gt_alloc_init(event, wait_val, UINT64_MAX, data_of(&completions), &task),
		    DOCA_SUCCESS);
		ASSERT_EQ(doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(task)), DOCA_SUCCESS);
	}

	// Event-driven loop: arm, block on the fd, clear, progress; until `count` completions or the
	// timeout. Returns whether they all arrived.
	bool wait_in_event_mode(size_t count)
	{
		doca_notification_handle_t fd;
		EXPECT_EQ(doca_pe_get_notification_handle(pe, &fd), DOCA_SUCCESS);
		const auto deadline = std::chrono::steady_clock::now() + kWakeTimeout;
		while (completions.entries.size() < count) {
			EXPECT_EQ(doca_pe_request_notification(pe), DOCA_SUCCESS);
			const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			    deadline - std::chrono::steady_clock::now());
			if (left.count() <= 0)
				return false;
			struct pollfd entry = {fd, POLLIN, 0};
			if (poll(&entry, 1, static_cast<int>(left.count())) != 1)
				return false; // a lost wake-up
			EXPECT_EQ(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
			drain();
		}
		return true;
	}

	Completions completions;
};

// Ping-pong: the main thread busy-waits (wait_gt), the other yields (wait_gt_yield); each moves
// the value on only after seeing the other's step.
void ping_pong(doca_sync_event *event, uint64_t rounds)
{
	std::thread other([&] {
		for (uint64_t i = 0; i < rounds; ++i) {
			ASSERT_EQ(doca_sync_event_wait_gt_yield(event, 2 * i, UINT64_MAX), DOCA_SUCCESS);
			ASSERT_EQ(doca_sync_event_update_set(event, 2 * i + 2), DOCA_SUCCESS);
		}
	});
	for (uint64_t i = 0; i < rounds; ++i) {
		ASSERT_EQ(doca_sync_event_update_set(event, 2 * i + 1), DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_wait_gt(event, 2 * i + 1, UINT64_MAX), DOCA_SUCCESS);
	}
	other.join();
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 2 * rounds);
}

TEST_F(SyncEventConcurrentTest, WaitGtAndWaitGtYieldPingPong)
{
	start_standalone();
	ping_pong(event, 200);
}

TEST_F(SyncEventConcurrentTest, PingPongOnUserStorage)
{
	alignas(8) uint64_t word = 0;
	start_standalone(&word);
	ping_pong(event, 200);
}

TEST_F(SyncEventConcurrentTest, WaitGtSeesAMaskedUpdateFromAnotherThread)
{
	start_standalone();
	std::thread updater([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		uint64_t fetched = 0;
		EXPECT_EQ(doca_sync_event_update_add(event, 0x01FF, &fetched), DOCA_SUCCESS); // low byte stays 0xFF
		EXPECT_EQ(doca_sync_event_update_add(event, 0x0100, &fetched), DOCA_SUCCESS);
	});
	// Only the second byte counts: it must exceed 1, i.e. both additions happened.
	ASSERT_EQ(doca_sync_event_wait_gt(event, 0x0100, 0xFF00), DOCA_SUCCESS);
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 0x02FFu);
	updater.join();
}

TEST_F(SyncEventConcurrentTest, UpdateAddIsAtomicAcrossThreads)
{
	start_standalone();
	constexpr int kThreads = 4;
	constexpr uint64_t kAddsPerThread = 5000;
	std::vector<std::vector<uint64_t>> fetched(kThreads);
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; ++t) {
		threads.emplace_back([&, t] {
			fetched[t].reserve(kAddsPerThread);
			for (uint64_t i = 0; i < kAddsPerThread; ++i) {
				uint64_t previous = 0;
				ASSERT_EQ(doca_sync_event_update_add(event, 1, &previous), DOCA_SUCCESS);
				fetched[t].push_back(previous);
			}
		});
	}
	for (auto &thread : threads)
		thread.join();
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, kThreads * kAddsPerThread);
	// Every previous value was returned exactly once.
	std::vector<uint64_t> all;
	for (const auto &list : fetched)
		all.insert(all.end(), list.begin(), list.end());
	std::sort(all.begin(), all.end());
	for (uint64_t i = 0; i < all.size(); ++i)
		ASSERT_EQ(all[i], i);
}

TEST_F(SyncEventConcurrentTest, PollingPeWaitTaskSatisfiedByAnotherThread)
{
	start_context();
	submit_wait(0);
	drain();
	std::thread updater([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		EXPECT_EQ(doca_sync_event_update_set(event, 1), DOCA_SUCCESS);
	});
	const auto deadline = std::chrono::steady_clock::now() + kWakeTimeout;
	while (completions.entries.empty() && std::chrono::steady_clock::now() < deadline)
		doca_pe_progress(pe);
	updater.join();
	ASSERT_EQ(completions.successes(), 1u);
}

TEST_F(SyncEventConcurrentTest, EventDrivenPeWakesForAnotherThreadsUpdate)
{
	start_context();
	submit_wait(0);
	drain();
	std::thread updater([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		EXPECT_EQ(doca_sync_event_update_set(event, 1), DOCA_SUCCESS);
	});
	EXPECT_TRUE(wait_in_event_mode(1));
	updater.join();
	EXPECT_EQ(completions.successes(), 1u);
}

// Many rounds with no sleeps, so the update lands before, during and after arming: any lost
// wake-up shows as a poll timeout.
TEST_F(SyncEventConcurrentTest, EventDrivenPeLosesNoWakeUp)
{
	start_context();
	constexpr uint64_t kRounds = 300;
	std::atomic<uint64_t> submitted_round{0}; // round r's wait is submitted once this is r + 1
	std::thread updater([&] {
		for (uint64_t round = 0; round < kRounds; ++round) {
			while (submitted_round.load(std::memory_order_acquire) <= round)
				std::this_thread::yield();
			EXPECT_EQ(doca_sync_event_update_set(event, round + 1), DOCA_SUCCESS);
		}
	});
	for (uint64_t round = 0; round < kRounds; ++round) {
		submit_wait(round); // completes once the updater has set round + 1
		submitted_round.store(round + 1, std::memory_order_release);
		ASSERT_TRUE(wait_in_event_mode(round + 1)) << "lost wake-up in round " << round;
	}
	updater.join();
	EXPECT_EQ(completions.successes(), kRounds);
}

TEST_F(SyncEventConcurrentTest, EventDrivenPeCompletesWaitersAsAnotherThreadCounts)
{
	start_context(16);
	for (uint64_t threshold = 0; threshold < 10; ++threshold)
		submit_wait(threshold);
	drain();
	std::thread counter([&] {
		for (int i = 0; i < 10; ++i) {
			uint64_t fetched = 0;
			EXPECT_EQ(doca_sync_event_update_add(event, 1, &fetched), DOCA_SUCCESS);
			std::this_thread::sleep_for(std::chrono::microseconds(200));
		}
	});
	EXPECT_TRUE(wait_in_event_mode(10));
	counter.join();
	EXPECT_EQ(completions.successes(), 10u);
}

} // namespace
