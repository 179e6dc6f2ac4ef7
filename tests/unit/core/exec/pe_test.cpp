// Progress engine and context life cycle: polling and event-driven modes, async stop, task
// errors that stop the context, resubmission from callbacks, several contexts and PEs.
#include <gtest/gtest.h>

#include <sys/epoll.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "support/dma_fixture.h"

using softdpu_test::DmaSetup;
using softdpu_test::progress_until;

namespace {

struct Tracker {
	int successes = 0;
	int errors = 0;
	bool free_in_callback = true;
	int stop_after = -1;           // the success callback stops the context after this many successes
	bool free_before_stop = false; // as NVIDIA's DMA samples: free the task, then stop
	doca_error_t stop_result = DOCA_SUCCESS;
	std::vector<doca_error_t> error_codes;
	std::vector<std::pair<doca_ctx_states, doca_ctx_states>> transitions;
	std::vector<doca_dma_task_memcpy *> completed;
};

Tracker *tracker_of(union doca_data data)
{
	return static_cast<Tracker *>(data.ptr);
}

void on_success(doca_dma_task_memcpy *task, union doca_data task_data, union doca_data ctx_data)
{
	// Contexts with user data set (the fixture's) pass it to every task callback.
	if (ctx_data.ptr != nullptr) {
		EXPECT_EQ(tracker_of(ctx_data), tracker_of(task_data));
	}
	Tracker *t = tracker_of(task_data);
	t->successes++;
	t->completed.push_back(task);
	doca_ctx *ctx = doca_task_get_ctx(doca_dma_task_memcpy_as_task(task));
	if (t->free_before_stop && t->free_in_callback)
		doca_task_free(doca_dma_task_memcpy_as_task(task));
	if (t->stop_after == t->successes)
		t->stop_result = doca_ctx_stop(ctx);
	if (!t->free_before_stop && t->free_in_callback)
		doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void on_error(doca_dma_task_memcpy *task, union doca_data task_data, union doca_data)
{
	Tracker *t = tracker_of(task_data);
	t->errors++;
	t->error_codes.push_back(doca_task_get_status(doca_dma_task_memcpy_as_task(task)));
	if (t->free_in_callback)
		doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void on_state(const union doca_data user_data, doca_ctx *, doca_ctx_states prev, doca_ctx_states next)
{
	static_cast<Tracker *>(user_data.ptr)->transitions.emplace_back(prev, next);
}

doca_ctx_states state_of(doca_ctx *ctx)
{
	doca_ctx_states state;
	EXPECT_EQ(doca_ctx_get_state(ctx, &state), DOCA_SUCCESS);
	return state;
}

class PeTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		setup.make_dma(on_success, on_error, 256);
		union doca_data data;
		data.ptr = &tracker;
		ASSERT_EQ(doca_ctx_set_user_data(setup.ctx(), data), DOCA_SUCCESS);
		ASSERT_EQ(doca_ctx_set_state_changed_cb(setup.ctx(), on_state), DOCA_SUCCESS);
	}

	// Submits `count` copies of `size` bytes from the arena's first half to its second half.
	std::vector<doca_dma_task_memcpy *> submit_copies(int count, size_t size, doca_dma *dma = nullptr)
	{
		std::vector<doca_dma_task_memcpy *> tasks;
		const size_t half = setup.arena.size() / 2;
		for (int i = 0; i < count; ++i) {
			doca_buf *src = setup.buf(i * size, size, size);
			doca_buf *dst = setup.buf(half + i * size, size, 0);
			bufs.push_back(src);
			bufs.push_back(dst);
			doca_dma_task_memcpy *task = nullptr;
			union doca_data data;
			data.ptr = &tracker;
			EXPECT_EQ(
			    doca_dma_task_memcpy_alloc_init(dma != nullptr ? dma : setup.dma, src, dst, data, &task),
			    DOCA_SUCCESS);
			EXPECT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
			tasks.push_back(task);
		}
		return tasks;
	}

	void TearDown() override
	{
		for (doca_buf *b : bufs)
			doca_buf_dec_refcount(b, nullptr);
	}

	Tracker tracker; // outlives setup: state callbacks run while setup tears down
	DmaSetup setup{16 << 20, 4096};
	std::vector<doca_buf *> bufs;
};

TEST_F(PeTest, StartAndStopReportEveryTransition)
{
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_IDLE);
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS) << "DMA starts synchronously";
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_RUNNING);
	ASSERT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS) << "nothing in flight: synchronous stop";
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_IDLE);
	using T = std::pair<doca_ctx_states, doca_ctx_states>;
	// Nothing to flush: no STOPPING on the way (NVIDIA's samples log STOPPING as an error).
	EXPECT_EQ(tracker.transitions, (std::vector<T>{{DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING},
						       {DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE}}));
	// Reconfigure and start again.
	EXPECT_EQ(doca_dma_task_memcpy_set_conf(setup.dma, on_success, on_error, 16), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	submit_copies(16, 1024);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 16; }));
}

TEST_F(PeTest, PollingReportsProgressOnlyWhenSomethingHappened)
{
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	EXPECT_EQ(doca_pe_progress(setup.pe), 0);
	submit_copies(16, 1024);
	size_t inflight = 0;
	EXPECT_EQ(doca_ctx_get_num_inflight_tasks(setup.ctx(), &inflight), DOCA_SUCCESS);
	EXPECT_EQ(inflight, 16u);
	EXPECT_EQ(doca_pe_get_num_inflight_tasks(setup.pe, &inflight), DOCA_SUCCESS);
	EXPECT_EQ(inflight, 16u);
	EXPECT_EQ(doca_pe_progress(setup.pe), 1);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 16; }));
	EXPECT_EQ(doca_pe_progress(setup.pe), 0);
	EXPECT_EQ(doca_pe_get_num_inflight_tasks(setup.pe, &inflight), DOCA_SUCCESS);
	EXPECT_EQ(inflight, 0u);
	const size_t half = setup.arena.size() / 2;
	EXPECT_EQ(std::memcmp(setup.arena.data(), setup.arena.data() + half, 16 * 1024), 0);
}

TEST_F(PeTest, StopFromTheLastCallbackAfterFreeingGoesStraightToIdle)
{
	// NVIDIA's DMA samples: the last completion callback frees its task, then stops the context.
	// Nothing is left to flush, so the stop is synchronous and no STOPPING is reported (the
	// samples' state callback logs STOPPING as an error); a second stop later is a no-op.
	tracker.stop_after = 4;
	tracker.free_before_stop = true;
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	submit_copies(4, 1024);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 4; }));
	EXPECT_EQ(tracker.stop_result, DOCA_SUCCESS);
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_IDLE);
	using T = std::pair<doca_ctx_states, doca_ctx_states>;
	EXPECT_EQ(tracker.transitions, (std::vector<T>{{DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING},
						       {DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE}}));
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS);
	EXPECT_EQ(tracker.transitions.size(), 2u);
}

TEST_F(PeTest, AsyncStopFromACallbackFlushesTheRest)
{
	// The DOCA pe_async_stop scenario: stop from the completion callback after half the tasks.
	tracker.stop_after = 8;
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	submit_copies(16, 1024);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return state_of(setup.ctx()) == DOCA_CTX_STATE_IDLE; }));
	EXPECT_EQ(tracker.stop_result, DOCA_ERROR_IN_PROGRESS);
	EXPECT_EQ(tracker.successes, 8);
	EXPECT_EQ(tracker.errors, 8) << "in-flight tasks come back through the error callback";
	for (doca_error_t code : tracker.error_codes)
		EXPECT_EQ(code, DOCA_ERROR_SHUTDOWN);
	using T = std::pair<doca_ctx_states, doca_ctx_states>;
	EXPECT_EQ(tracker.transitions, (std::vector<T>{{DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING},
						       {DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING},
						       {DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE}}));
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS) << "the context can start again";
}

TEST_F(PeTest, AsyncStopFlushesTasksStillOnTheEngine)
{
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	submit_copies(8, 1 << 20);
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_ERROR_IN_PROGRESS);
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_STOPPING);
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_ERROR_IN_PROGRESS) << "stop while stopping";
	doca_dma_task_memcpy *late = nullptr;
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, nullptr, nullptr, {}, &late), DOCA_ERROR_BAD_STATE);
	size_t inflight = 0;
	EXPECT_EQ(doca_ctx_get_num_inflight_tasks(setup.ctx(), &inflight), DOCA_SUCCESS);
	EXPECT_EQ(inflight, 8u);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return state_of(setup.ctx()) == DOCA_CTX_STATE_IDLE; }));
	EXPECT_EQ(tracker.successes, 0);
	EXPECT_EQ(tracker.errors, 8) << "every task completes exactly once, as flushed";
	for (doca_error_t code : tracker.error_codes)
		EXPECT_EQ(code, DOCA_ERROR_SHUTDOWN);
	EXPECT_EQ(tracker.transitions.back(), std::make_pair(DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE));
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
}

TEST_F(PeTest, StopWaitsUntilTheApplicationFreesItsTasks)
{
	tracker.free_in_callback = false;
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	submit_copies(4, 1024);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 4; }));
	EXPECT_EQ(doca_ctx_stop(setup.ctx()), DOCA_ERROR_IN_PROGRESS);
	EXPECT_EQ(doca_pe_progress(setup.pe), 0);
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_STOPPING);
	for (auto *task : tracker.completed)
		doca_task_free(doca_dma_task_memcpy_as_task(task));
	EXPECT_EQ(doca_pe_progress(setup.pe), 1);
	EXPECT_EQ(state_of(setup.ctx()), DOCA_CTX_STATE_IDLE);
}

TEST_F(PeTest, FailedTaskStopsTheContextAndTheRestAreFlushed)
{
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	std::vector<doca_dma_task_memcpy *> tasks;
	const size_t half = setup.arena.size() / 2;
	for (int i = 0; i < 255; ++i) {
		doca_buf *src = setup.buf(i * 1024, 1024, 1024);
		doca_buf *dst = setup.buf(half + i * 1024, 1024, 0);
		bufs.push_back(src);
		bufs.push_back(dst);
		if (i == 2)
			doca_buf_reset_data_len(src); // an invalid task, submitted without validation
		doca_dma_task_memcpy *task = nullptr;
		union doca_data data;
		data.ptr = &tracker;
		ASSERT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &task), DOCA_SUCCESS);
		tasks.push_back(task);
	}
	for (auto *task : tasks)
		ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return state_of(setup.ctx()) == DOCA_CTX_STATE_IDLE; }));
	EXPECT_EQ(tracker.successes + tracker.errors, 255);
	ASSERT_GE(tracker.errors, 1);
	EXPECT_EQ(tracker.error_codes.at(0), DOCA_ERROR_INVALID_VALUE) << "the failing task reports why it failed";
	using T = std::pair<doca_ctx_states, doca_ctx_states>;
	EXPECT_EQ(tracker.transitions, (std::vector<T>{{DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING},
						       {DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING},
						       {DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE}}));
	// Recovery: start again and copy.
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	const int before = tracker.successes;
	submit_copies(4, 1024);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == before + 4; }));
}

struct Resubmitter {
	DmaSetup *setup;
	std::vector<std::pair<doca_buf *, doca_buf *>> pairs;
	size_t next_pair = 0;
	int completions = 0;
};

void resubmit_on_success(doca_dma_task_memcpy *task, union doca_data task_data, union doca_data)
{
	auto *r = static_cast<Resubmitter *>(task_data.ptr);
	r->completions++;
	if (r->next_pair == r->pairs.size()) {
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		return;
	}
	auto [src, dst] = r->pairs[r->next_pair++];
	doca_dma_task_memcpy_set_src(task, src);
	doca_dma_task_memcpy_set_dst(task, dst);
	EXPECT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
}

TEST(PeResubmit, TasksResubmittedFromTheirCallbackRunAgain)
{
	DmaSetup setup{1 << 20};
	doca_dma *dma = setup.make_dma(resubmit_on_success, on_error, 4);
	ASSERT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	Resubmitter r{&setup, {}, 0, 0};
	for (int i = 0; i < 16; ++i) {
		std::memset(setup.arena.data() + i * 1024, i + 1, 1024);
		r.pairs.emplace_back(setup.buf(i * 1024, 1024, 1024), setup.buf(512 * 1024 + i * 1024, 1024, 0));
	}
	union doca_data data;
	data.ptr = &r;
	for (int i = 0; i < 4; ++i) {
		doca_dma_task_memcpy *task = nullptr;
		auto [src, dst] = r.pairs[r.next_pair++];
		ASSERT_EQ(doca_dma_task_memcpy_alloc_init(dma, src, dst, data, &task), DOCA_SUCCESS);
		ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	}
	ASSERT_TRUE(progress_until(setup.pe, [&] { return r.completions == 16; }));
	EXPECT_EQ(std::memcmp(setup.arena.data(), setup.arena.data() + 512 * 1024, 16 * 1024), 0);
	for (auto [src, dst] : r.pairs) {
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
	}
}

TEST_F(PeTest, EventDrivenModeWakesTheWaiterThroughTheFd)
{
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	doca_notification_handle_t fd = doca_event_invalid_handle;
	ASSERT_EQ(doca_pe_get_notification_handle(setup.pe, &fd), DOCA_SUCCESS);
	ASSERT_GE(fd, 0);
	int epoll = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(epoll, 0);
	epoll_event ev{};
	ev.events = EPOLLIN;
	ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev), 0);

	// Armed with nothing to do: the fd stays quiet.
	ASSERT_EQ(doca_pe_request_notification(setup.pe), DOCA_SUCCESS);
	epoll_event out{};
	EXPECT_EQ(epoll_wait(epoll, &out, 1, 20), 0);
	ASSERT_EQ(doca_pe_clear_notification(setup.pe, 0), DOCA_SUCCESS);

	submit_copies(8, 512 << 10); // engine copies: completions arrive from another thread
	int wakeups = 0;
	while (tracker.successes < 8) {
		ASSERT_EQ(doca_pe_request_notification(setup.pe), DOCA_SUCCESS);
		ASSERT_EQ(epoll_wait(epoll, &out, 1, 10'000), 1) << "armed PE with pending work must wake the waiter";
		wakeups++;
		ASSERT_EQ(doca_pe_clear_notification(setup.pe, 0), DOCA_SUCCESS);
		while (doca_pe_progress(setup.pe) != 0) {
		}
	}
	EXPECT_GE(wakeups, 1);
	// Arming with completions already pending signals at once (no lost wake-up).
	submit_copies(1, 1024);
	ASSERT_EQ(doca_pe_request_notification(setup.pe), DOCA_SUCCESS);
	EXPECT_EQ(epoll_wait(epoll, &out, 1, 10'000), 1);
	ASSERT_EQ(doca_pe_clear_notification(setup.pe, 0), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 9; }));
	close(epoll);
}

TEST_F(PeTest, SeveralContextsOnOnePeAndSeveralPesInOneThread)
{
	doca_pe *second_pe = nullptr;
	ASSERT_EQ(doca_pe_create(&second_pe), DOCA_SUCCESS);
	std::vector<doca_dma *> dmas = {setup.dma};
	for (int i = 0; i < 3; ++i)
		dmas.push_back(setup.make_dma(on_success, on_error, 64));
	doca_dma *on_second = setup.make_dma(on_success, on_error, 64, second_pe);
	for (doca_dma *dma : dmas)
		ASSERT_EQ(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	ASSERT_EQ(doca_ctx_start(doca_dma_as_ctx(on_second)), DOCA_SUCCESS);
	for (doca_dma *dma : dmas)
		submit_copies(16, 2048, dma);
	submit_copies(16, 2048, on_second);
	ASSERT_TRUE(progress_until(setup.pe, [&] {
		doca_pe_progress(second_pe);
		return tracker.successes == 16 * 5;
	}));
	EXPECT_EQ(tracker.errors, 0);
	EXPECT_EQ(doca_pe_destroy(second_pe), DOCA_ERROR_IN_USE) << "a context is still connected";
	ASSERT_EQ(doca_ctx_stop(doca_dma_as_ctx(on_second)), DOCA_SUCCESS);
	ASSERT_EQ(doca_dma_destroy(on_second), DOCA_SUCCESS);
	setup.extra_dmas.pop_back();
	EXPECT_EQ(doca_pe_destroy(second_pe), DOCA_SUCCESS);
}

TEST_F(PeTest, ConnectAndArgumentErrors)
{
	doca_pe *other = nullptr;
	ASSERT_EQ(doca_pe_create(&other), DOCA_SUCCESS);
	EXPECT_EQ(doca_pe_connect_ctx(other, setup.ctx()), DOCA_ERROR_NOT_PERMITTED) << "already connected";
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	EXPECT_EQ(doca_pe_connect_ctx(other, setup.ctx()), DOCA_ERROR_BAD_STATE) << "not idle";
	EXPECT_EQ(doca_pe_connect_ctx(nullptr, setup.ctx()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_connect_ctx(other, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_create(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_progress(nullptr), 0);
	doca_notification_handle_t fd;
	EXPECT_EQ(doca_pe_get_notification_handle(nullptr, &fd), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_get_notification_handle(other, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_request_notification(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_clear_notification(nullptr, 0), DOCA_ERROR_INVALID_VALUE);
	size_t n;
	EXPECT_EQ(doca_pe_get_num_inflight_tasks(nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_get_num_inflight_tasks(other, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_task_submit(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_task_try_submit(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_task_get_status(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_task_get_ctx(nullptr), nullptr);
	// ctx getters/setters
	EXPECT_EQ(doca_ctx_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_num_inflight_tasks(nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_num_inflight_tasks(setup.ctx(), nullptr), DOCA_ERROR_INVALID_VALUE);
	doca_ctx_states state;
	EXPECT_EQ(doca_ctx_get_state(nullptr, &state), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_state(setup.ctx(), nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_set_state_changed_cb(nullptr, on_state), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_set_state_changed_cb(setup.ctx(), nullptr), DOCA_ERROR_INVALID_VALUE);
	union doca_data data;
	EXPECT_EQ(doca_ctx_set_user_data(nullptr, data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_user_data(nullptr, &data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_user_data(setup.ctx(), nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_get_user_data(setup.ctx(), &data), DOCA_SUCCESS);
	EXPECT_EQ(data.ptr, &tracker);
	// No GPU or DPA in softdpu; configuration only while idle.
	auto *fake_gpu = reinterpret_cast<doca_gpu *>(&data);
	auto *fake_dpa = reinterpret_cast<doca_dpa *>(&data);
	EXPECT_EQ(doca_ctx_set_datapath_on_gpu(setup.ctx(), fake_gpu), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_ctx_set_datapath_on_dpa(setup.ctx(), fake_dpa), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_ctx_set_datapath_on_gpu(nullptr, fake_gpu), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_ctx_set_datapath_on_dpa(setup.ctx(), nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_ctx_stop(setup.ctx()), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_set_datapath_on_gpu(setup.ctx(), fake_gpu), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_ctx_set_datapath_on_dpa(setup.ctx(), fake_dpa), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_pe_destroy(other), DOCA_SUCCESS);
}

TEST_F(PeTest, TaskAccessorsAndDoubleSubmit)
{
	tracker.free_in_callback = false;
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	auto tasks = submit_copies(1, 1024);
	doca_task *task = doca_dma_task_memcpy_as_task(tasks[0]);
	EXPECT_EQ(doca_task_get_ctx(task), setup.ctx());
	EXPECT_EQ(doca_task_submit(task), DOCA_ERROR_IN_USE) << "already submitted";
	ASSERT_TRUE(progress_until(setup.pe, [&] { return tracker.successes == 1; }));
	EXPECT_EQ(doca_task_get_status(task), DOCA_SUCCESS);
	union doca_data data;
	data.u64 = 42;
	doca_task_set_user_data(task, data);
	EXPECT_EQ(doca_task_get_user_data(task).u64, 42u);
	doca_task_free(task);
	doca_task_free(task); // a second free is refused, not a corruption
	doca_dma_task_memcpy *again = nullptr;
	EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, nullptr, nullptr, {}, &again), DOCA_SUCCESS);
	doca_task_free(doca_dma_task_memcpy_as_task(again));
}

} // namespace

namespace {

// Each thread drives its own PE with its own DMA context; all share the engine threads.
TEST(ExecConcurrent, IndependentPesOnSeveralThreadsShareTheEngine)
{
	constexpr int kThreads = 3;
	constexpr int kTasks = 40;
	std::vector<std::thread> threads;
	std::vector<int> failures(kThreads, 0);
	for (int t = 0; t < kThreads; ++t) {
		threads.emplace_back([t, &failures] {
			Tracker tracker;
			DmaSetup setup{8 << 20, 256};
			setup.make_dma(on_success, on_error, 16);
			if (doca_ctx_start(setup.ctx()) != DOCA_SUCCESS) {
				failures[t]++;
				return;
			}
			const size_t size = 96 << 10; // engine-sized copies
			for (int i = 0; i < kTasks; ++i) {
				uint8_t *src_addr = setup.arena.data() + (i % 16) * size;
				std::memset(src_addr, t * 50 + i, size);
				doca_buf *src = setup.buf((i % 16) * size, size, size);
				doca_buf *dst = setup.buf(4 * 1024 * 1024 + (i % 16) * size, size, 0);
				union doca_data data;
				data.ptr = &tracker;
				doca_dma_task_memcpy *task = nullptr;
				if (doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &task) != DOCA_SUCCESS ||
				    doca_task_submit(doca_dma_task_memcpy_as_task(task)) != DOCA_SUCCESS) {
					failures[t]++;
					return;
				}
				if (!progress_until(setup.pe, [&] { return tracker.successes == i + 1; }) ||
				    std::memcmp(src_addr, setup.arena.data() + 4 * 1024 * 1024 + (i % 16) * size,
						size) != 0)
					failures[t]++;
				doca_buf_dec_refcount(src, nullptr);
				doca_buf_dec_refcount(dst, nullptr);
			}
		});
	}
	for (auto &thread : threads)
		thread.join();
	for (int t = 0; t < kThreads; ++t)
		EXPECT_EQ(failures[t], 0) << "thread " << t;
}

} // namespace
