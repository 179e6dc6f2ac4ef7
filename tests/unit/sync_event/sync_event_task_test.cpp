// Sync event tasks on one thread: configuration and allocation errors, getters and setters, what
// each task does, wait-gt pending until (value & mask) > threshold, validation by try_submit,
// flushing at stop, and when an event-driven PE sleeps or wakes.
#include <gtest/gtest.h>

#include <poll.h>

#include <cstdint>
#include <vector>

#include "device/engine/copy_engine.hpp"
#include "sync_event/sync_event.hpp"
#include "sync_event_support.hpp"

using sync_event_test::Completions;
using sync_event_test::data_of;
using sync_event_test::SyncEventBase;

namespace {

class SyncEventTaskTest : public SyncEventBase {
protected:
	doca_sync_event_task_wait_gt *submit_wait(uint64_t wait_val, uint64_t mask)
	{
		doca_sync_event_task_wait_gt *task = nullptr;
		EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, wait_val, mask, data_of(&completions), &task),
			  DOCA_SUCCESS);
		EXPECT_EQ(doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(task)), DOCA_SUCCESS);
		return task;
	}

	size_t inflight() const
	{
		size_t count = 0;
		EXPECT_EQ(doca_ctx_get_num_inflight_tasks(ctx, &count), DOCA_SUCCESS);
		return count;
	}

	// Whether the PE's notification fd is readable now.
	bool fd_readable() const
	{
		doca_notification_handle_t fd;
		EXPECT_EQ(doca_pe_get_notification_handle(pe, &fd), DOCA_SUCCESS);
		struct pollfd entry = {fd, POLLIN, 0};
		return poll(&entry, 1, 0) == 1;
	}

	Completions completions;
};

TEST_F(SyncEventTaskTest, SetConfRejectsNullAndZeroTasks)
{
	EXPECT_EQ(doca_sync_event_task_get_set_conf(nullptr, SYNC_EVENT_CALLBACKS(get), 1), DOCA_ERROR_INVALID_VALUE);
	using GetTask = doca_sync_event_task_get;
	const auto get_success = sync_event_test::on_task_success<GetTask, doca_sync_event_task_get_as_doca_task>;
	const auto get_error = sync_event_test::on_task_error<GetTask, doca_sync_event_task_get_as_doca_task>;
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, nullptr, get_error, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, get_success, nullptr, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), 0), DOCA_ERROR_INVALID_VALUE);

	EXPECT_EQ(doca_sync_event_task_notify_set_set_conf(nullptr, SYNC_EVENT_CALLBACKS(notify_set), 1),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_set_set_conf(event, nullptr, nullptr, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_set_set_conf(event, SYNC_EVENT_CALLBACKS(notify_set), 0),
		  DOCA_ERROR_INVALID_VALUE);

	EXPECT_EQ(doca_sync_event_task_notify_add_set_conf(nullptr, SYNC_EVENT_CALLBACKS(notify_add), 1),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_add_set_conf(event, nullptr, nullptr, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_add_set_conf(event, SYNC_EVENT_CALLBACKS(notify_add), 0),
		  DOCA_ERROR_INVALID_VALUE);

	EXPECT_EQ(doca_sync_event_task_wait_gt_set_conf(nullptr, SYNC_EVENT_CALLBACKS(wait_gt), 1),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_wait_gt_set_conf(event, nullptr, nullptr, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_wait_gt_set_conf(event, SYNC_EVENT_CALLBACKS(wait_gt), 0),
		  DOCA_ERROR_INVALID_VALUE);
}

TEST_F(SyncEventTaskTest, SetConfOnARunningContextIsNotPermitted)
{
	start_context();
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), 4), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_notify_set_set_conf(event, SYNC_EVENT_CALLBACKS(notify_set), 4),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_notify_add_set_conf(event, SYNC_EVENT_CALLBACKS(notify_add), 4),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_wait_gt_set_conf(event, SYNC_EVENT_CALLBACKS(wait_gt), 4),
		  DOCA_ERROR_NOT_PERMITTED);
	// Idle again, the configuration may change.
	stop_ctx();
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), 4), DOCA_SUCCESS);
}

// The copy engine belongs to DMA: a sync event context never holds it (nor starts its threads).
TEST_F(SyncEventTaskTest, ContextDoesNotUseTheCopyEngine)
{
	const size_t users = softdpu::device::CopyEngine::instance().users();
	start_context();
	EXPECT_EQ(softdpu::device::CopyEngine::instance().users(), users);
	stop_ctx();
}

TEST_F(SyncEventTaskTest, SetConfOnAStandaloneStartedEventIsNotPermitted)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), 4), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_notify_set_set_conf(event, SYNC_EVENT_CALLBACKS(notify_set), 4),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_notify_add_set_conf(event, SYNC_EVENT_CALLBACKS(notify_add), 4),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_task_wait_gt_set_conf(event, SYNC_EVENT_CALLBACKS(wait_gt), 4),
		  DOCA_ERROR_NOT_PERMITTED);
}

TEST_F(SyncEventTaskTest, AllocRejectsNull)
{
	start_context();
	uint64_t value = 0;
	doca_sync_event_task_get *get = nullptr;
	doca_sync_event_task_notify_set *set = nullptr;
	doca_sync_event_task_notify_add *add = nullptr;
	doca_sync_event_task_wait_gt *wait = nullptr;
	const union doca_data none = {};
	EXPECT_EQ(doca_sync_event_task_get_alloc_init(nullptr, &value, none, &get), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_get_alloc_init(event, &value, none, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_set_alloc_init(nullptr, 1, none, &set), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 1, none, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_add_alloc_init(nullptr, 1, &value, none, &add), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, &value, none, nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(nullptr, 1, 0xFF, none, &wait), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(get, nullptr);
	EXPECT_EQ(set, nullptr);
	EXPECT_EQ(add, nullptr);
	EXPECT_EQ(wait, nullptr);
}

TEST_F(SyncEventTaskTest, AllocNeedsARunningContext)
{
	make_context();
	uint64_t value = 0;
	doca_sync_event_task_get *get = nullptr;
	doca_sync_event_task_notify_set *set = nullptr;
	doca_sync_event_task_notify_add *add = nullptr;
	doca_sync_event_task_wait_gt *wait = nullptr;
	const union doca_data none = {};
	EXPECT_EQ(doca_sync_event_task_get_alloc_init(event, &value, none, &get), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 1, none, &set), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, &value, none, &add), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, &wait), DOCA_ERROR_BAD_STATE);
}

TEST_F(SyncEventTaskTest, AllocReportsNoMemoryWhenThePoolIsExhausted)
{
	start_context(2);
	uint64_t value = 0;
	const union doca_data none = {};
	std::vector<doca_task *> held;

	doca_sync_event_task_get *get = nullptr;
	for (int i = 0; i < 2; ++i) {
		ASSERT_EQ(doca_sync_event_task_get_alloc_init(event, &value, none, &get), DOCA_SUCCESS);
		held.push_back(doca_sync_event_task_get_as_doca_task(get));
	}
	EXPECT_EQ(doca_sync_event_task_get_alloc_init(event, &value, none, &get), DOCA_ERROR_NO_MEMORY);

	doca_sync_event_task_notify_set *set = nullptr;
	for (int i = 0; i < 2; ++i) {
		ASSERT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 1, none, &set), DOCA_SUCCESS);
		held.push_back(doca_sync_event_task_notify_set_as_doca_task(set));
	}
	EXPECT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 1, none, &set), DOCA_ERROR_NO_MEMORY);

	doca_sync_event_task_notify_add *add = nullptr;
	for (int i = 0; i < 2; ++i) {
		ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, &value, none, &add), DOCA_SUCCESS);
		held.push_back(doca_sync_event_task_notify_add_as_doca_task(add));
	}
	EXPECT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, &value, none, &add), DOCA_ERROR_NO_MEMORY);

	doca_sync_event_task_wait_gt *wait = nullptr;
	for (int i = 0; i < 2; ++i) {
		ASSERT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, &wait), DOCA_SUCCESS);
		held.push_back(doca_sync_event_task_wait_gt_as_doca_task(wait));
	}
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, &wait), DOCA_ERROR_NO_MEMORY);

	// A freed task can be allocated again.
	doca_task_free(held.back());
	held.pop_back();
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, &wait), DOCA_SUCCESS);
	held.push_back(doca_sync_event_task_wait_gt_as_doca_task(wait));
	for (doca_task *task : held)
		doca_task_free(task);
}

TEST_F(SyncEventTaskTest, AllocOfAnUnconfiguredTypeIsNoMemory)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
	ctx = doca_sync_event_as_ctx(event);
	ASSERT_EQ(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_ctx_start(ctx), DOCA_SUCCESS);
	const union doca_data none = {};
	doca_sync_event_task_notify_set *set = nullptr;
	doca_sync_event_task_notify_add *add = nullptr;
	doca_sync_event_task_wait_gt *wait = nullptr;
	EXPECT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 1, none, &set), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, nullptr, none, &add), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 1, 0xFF, none, &wait), DOCA_ERROR_NO_MEMORY);
}

TEST_F(SyncEventTaskTest, GettersAndSetters)
{
	start_context();
	uint64_t a = 0;
	uint64_t b = 0;
	union doca_data user = {};
	user.u64 = 1234;

	doca_sync_event_task_get *get = nullptr;
	ASSERT_EQ(doca_sync_event_task_get_alloc_init(event, &a, user, &get), DOCA_SUCCESS);
	doca_task *get_task = doca_sync_event_task_get_as_doca_task(get);
	ASSERT_NE(get_task, nullptr);
	EXPECT_EQ(doca_task_get_ctx(get_task), ctx);
	EXPECT_EQ(doca_task_get_user_data(get_task).u64, 1234u);
	EXPECT_EQ(doca_sync_event_task_get_get_ret_val_ptr(get), &a);
	doca_sync_event_task_get_set_ret_val_ptr(get, &b);
	EXPECT_EQ(doca_sync_event_task_get_get_ret_val_ptr(get), &b);

	doca_sync_event_task_notify_set *set = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 5, user, &set), DOCA_SUCCESS);
	EXPECT_EQ(doca_task_get_ctx(doca_sync_event_task_notify_set_as_doca_task(set)), ctx);
	EXPECT_EQ(doca_sync_event_task_notify_set_get_set_val(set), 5u);
	doca_sync_event_task_notify_set_set_set_val(set, 6);
	EXPECT_EQ(doca_sync_event_task_notify_set_get_set_val(set), 6u);

	doca_sync_event_task_notify_add *add = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 7, &a, user, &add), DOCA_SUCCESS);
	EXPECT_EQ(doca_task_get_ctx(doca_sync_event_task_notify_add_as_doca_task(add)), ctx);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_inc_val(add), 7u);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_fetched_val_ptr(add), &a);
	doca_sync_event_task_notify_add_set_inc_val(add, 8);
	doca_sync_event_task_notify_add_set_fetched_val_ptr(add, &b);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_inc_val(add), 8u);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_fetched_val_ptr(add), &b);

	doca_sync_event_task_wait_gt *wait = nullptr;
	ASSERT_EQ(doca_sync_event_task_wait_gt_alloc_init(event, 9, 0xFF00, user, &wait), DOCA_SUCCESS);
	EXPECT_EQ(doca_task_get_ctx(doca_sync_event_task_wait_gt_as_doca_task(wait)), ctx);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_wait_val(wait), 9u);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_mask(wait), 0xFF00u);
	doca_sync_event_task_wait_gt_set_wait_val(wait, 10);
	doca_sync_event_task_wait_gt_set_mask(wait, 0xFF);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_wait_val(wait), 10u);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_mask(wait), 0xFFu);

	doca_task_free(get_task);
	doca_task_free(doca_sync_event_task_notify_set_as_doca_task(set));
	doca_task_free(doca_sync_event_task_notify_add_as_doca_task(add));
	doca_task_free(doca_sync_event_task_wait_gt_as_doca_task(wait));
}

TEST_F(SyncEventTaskTest, AccessorsTolerateNull)
{
	EXPECT_EQ(doca_sync_event_task_get_as_doca_task(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_notify_set_as_doca_task(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_notify_add_as_doca_task(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_wait_gt_as_doca_task(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_get_get_ret_val_ptr(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_notify_set_get_set_val(nullptr), 0u);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_inc_val(nullptr), 0u);
	EXPECT_EQ(doca_sync_event_task_notify_add_get_fetched_val_ptr(nullptr), nullptr);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_wait_val(nullptr), 0u);
	EXPECT_EQ(doca_sync_event_task_wait_gt_get_mask(nullptr), 0u);
	doca_sync_event_task_get_set_ret_val_ptr(nullptr, nullptr);
	doca_sync_event_task_notify_set_set_set_val(nullptr, 1);
	doca_sync_event_task_notify_add_set_inc_val(nullptr, 1);
	doca_sync_event_task_notify_add_set_fetched_val_ptr(nullptr, nullptr);
	doca_sync_event_task_wait_gt_set_wait_val(nullptr, 1);
	doca_sync_event_task_wait_gt_set_mask(nullptr, 1);
}

TEST_F(SyncEventTaskTest, GetTaskReadsTheValue)
{
	start_context();
	ASSERT_EQ(doca_sync_event_update_set(event, 77), DOCA_SUCCESS);
	uint64_t result = 0;
	doca_sync_event_task_get *get = nullptr;
	ASSERT_EQ(doca_sync_event_task_get_alloc_init(event, &result, data_of(&completions), &get), DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_get_as_doca_task(get)), DOCA_SUCCESS);
	EXPECT_EQ(inflight(), 1u);
	drain();
	ASSERT_EQ(completions.successes(), 1u);
	EXPECT_EQ(completions.entries[0].status, DOCA_SUCCESS);
	EXPECT_EQ(result, 77u);
	EXPECT_EQ(inflight(), 0u);
}

TEST_F(SyncEventTaskTest, NotifySetAndNotifyAddUpdateTheValue)
{
	start_context();
	doca_sync_event_task_notify_set *set = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_set_alloc_init(event, 30, data_of(&completions), &set), DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_notify_set_as_doca_task(set)), DOCA_SUCCESS);
	drain();
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 30u);

	uint64_t fetched = 0;
	doca_sync_event_task_notify_add *add = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 12, &fetched, data_of(&completions), &add),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(fetched, 30u); // the value before the addition
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 42u);

	// softdpu: a notify-add task without a fetched-value pointer just adds.
	ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, nullptr, data_of(&completions), &add),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_task_try_submit(doca_sync_event_task_notify_add_as_doca_task(add)), DOCA_SUCCESS);
	drain();
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 43u);
	EXPECT_EQ(completions.successes(), 3u);
	EXPECT_EQ(completions.errors(), 0u);
}

TEST_F(SyncEventTaskTest, NotifyTasksWorkOnUserStorage)
{
	uint64_t word = 5;
	ASSERT_EQ(doca_sync_event_set_addr(event, &word), DOCA_SUCCESS);
	start_context();
	uint64_t fetched = 0;
	doca_sync_event_task_notify_add *add = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 3, &fetched, data_of(&completions), &add),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(fetched, 5u);
	EXPECT_EQ(word, 8u);
}

TEST_F(SyncEventTaskTest, WaitGtStaysPendingUntilTheValueIsGreater)
{
	start_context();
	submit_wait(5, 0xFF);
	for (int i = 0; i < 10; ++i)
		doca_pe_progress(pe);
	EXPECT_TRUE(completions.entries.empty());
	EXPECT_EQ(inflight(), 1u);

	ASSERT_EQ(doca_sync_event_update_set(event, 5), DOCA_SUCCESS); // equal is not greater
	drain();
	EXPECT_TRUE(completions.entries.empty());

	ASSERT_EQ(doca_sync_event_update_set(event, 6), DOCA_SUCCESS);
	drain();
	ASSERT_EQ(completions.successes(), 1u);
	EXPECT_EQ(inflight(), 0u);
}

TEST_F(SyncEventTaskTest, WaitGtComparesTheMaskedValue)
{
	start_context();
	ASSERT_EQ(doca_sync_event_update_set(event, 0x0100), DOCA_SUCCESS);
	submit_wait(0, 0xFF);      // low byte is 0: not greater than 0
	submit_wait(0, 0xFF00);    // second byte is 1: greater than 0
	submit_wait(0x0F, 0xFF00); // 0x100 > 0x0F
	drain();
	EXPECT_EQ(completions.successes(), 2u);
	EXPECT_EQ(inflight(), 1u);
	ASSERT_EQ(doca_sync_event_update_set(event, 0x0101), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 3u);
}

TEST_F(SyncEventTaskTest, WaitGtIsSatisfiedByANotifyTaskOfTheSameContext)
{
	start_context();
	submit_wait(0, UINT64_MAX);
	drain();
	EXPECT_EQ(inflight(), 1u);
	doca_sync_event_task_notify_add *add = nullptr;
	ASSERT_EQ(doca_sync_event_task_notify_add_alloc_init(event, 1, nullptr, data_of(&completions), &add),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 2u);
	EXPECT_EQ(inflight(), 0u);
}

TEST_F(SyncEventTaskTest, TrySubmitRejectsWaitsOutsideDocaLimits)
{
	start_context();
	struct Case {
		uint64_t wait_val;
		uint64_t mask;
		bool valid;
	};
	const Case cases[] = {
	    {0, 0xFF, true},
	    {254, 0xFF, true},
	    {255, 0xFF, false},
	    {1, 0, true},
	    {1, 0xFFFF, true},
	    {1, 0xFF00, true},
	    {1, 0xFFFFFFFF00000000ull, true},
	    {1, UINT64_MAX, true},
	    {1, 0x0F, false},
	    {1, 0xFFFFFF, false},
	    {1, 0xFF00FF, false},
	    {1, 0x1FE, false},
	};
	for (const Case &c : cases) {
		doca_sync_event_task_wait_gt *wait = nullptr;
		ASSERT_EQ(
		    doca_sync_event_task_wait_gt_alloc_init(event, c.wait_val, c.mask, data_of(&completions), &wait),
		    DOCA_SUCCESS);
		doca_task *task = doca_sync_event_task_wait_gt_as_doca_task(wait);
		EXPECT_EQ(doca_task_try_submit(task), c.valid ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE)
		    << "wait_val " << c.wait_val << " mask 0x" << std::hex << c.mask;
		if (!c.valid)
			doca_task_free(task); // a rejected task still belongs to the caller
	}
	ASSERT_EQ(doca_sync_event_update_set(event, UINT64_MAX), DOCA_SUCCESS);
	drain();
	// Every valid one completes except the zero mask, which never exceeds its threshold.
	EXPECT_EQ(completions.successes(), 6u);
	EXPECT_EQ(inflight(), 1u);
}

TEST_F(SyncEventTaskTest, PlainSubmitRunsWaitsOutsideDocaLimits)
{
	start_context();
	submit_wait(1000, UINT64_MAX);
	drain();
	EXPECT_EQ(inflight(), 1u);
	ASSERT_EQ(doca_sync_event_update_set(event, 1001), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 1u);
}

TEST_F(SyncEventTaskTest, GetTaskWithoutAPointerFails)
{
	start_context();
	doca_sync_event_task_get *get = nullptr;
	ASSERT_EQ(doca_sync_event_task_get_alloc_init(event, nullptr, data_of(&completions), &get), DOCA_SUCCESS);
	doca_task *task = doca_sync_event_task_get_as_doca_task(get);
	EXPECT_EQ(doca_task_try_submit(task), DOCA_ERROR_INVALID_VALUE);
	// Submitted without validation it fails like hardware: error callback, context stops.
	ASSERT_EQ(doca_task_submit(task), DOCA_SUCCESS);
	drain();
	ASSERT_EQ(completions.errors(), 1u);
	EXPECT_EQ(completions.entries[0].status, DOCA_ERROR_INVALID_VALUE);
	EXPECT_FALSE(ctx_started());
}

TEST_F(SyncEventTaskTest, StopFlushesPendingWaits)
{
	start_context();
	submit_wait(0, UINT64_MAX);
	submit_wait(1, UINT64_MAX);
	drain();
	EXPECT_EQ(doca_ctx_stop(ctx), DOCA_ERROR_IN_PROGRESS);
	drain();
	EXPECT_EQ(completions.errors(), 2u);
	for (const auto &entry : completions.entries) {
		EXPECT_EQ(entry.status, DOCA_ERROR_SHUTDOWN); // docs/execution-model.md: flushed tasks
	}
	EXPECT_FALSE(ctx_started());
	// The event can start again, with the value kept.
	ASSERT_EQ(doca_sync_event_task_wait_gt_set_conf(event, SYNC_EVENT_CALLBACKS(wait_gt), 4), DOCA_SUCCESS);
	ASSERT_EQ(doca_ctx_start(ctx), DOCA_SUCCESS);
}

TEST_F(SyncEventTaskTest, EventDrivenPeSleepsOnAnUnsatisfiedWaitAndWakesOnUpdate)
{
	start_context();
	submit_wait(0, UINT64_MAX);
	drain();
	ASSERT_EQ(doca_pe_request_notification(pe), DOCA_SUCCESS);
	// Nothing can change the value through softdpu: the PE has no reason to wake.
	EXPECT_FALSE(fd_readable());
	ASSERT_EQ(doca_sync_event_update_set(event, 1), DOCA_SUCCESS);
	EXPECT_TRUE(fd_readable());
	ASSERT_EQ(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 1u);
}

TEST_F(SyncEventTaskTest, EventDrivenPeWakesAtOnceForAnUpdateBeforeArming)
{
	start_context();
	submit_wait(0, UINT64_MAX);
	drain();
	uint64_t fetched = 0;
	ASSERT_EQ(doca_sync_event_update_add(event, 1, &fetched), DOCA_SUCCESS);
	ASSERT_EQ(doca_pe_request_notification(pe), DOCA_SUCCESS);
	EXPECT_TRUE(fd_readable());
	ASSERT_EQ(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 1u);
}

TEST_F(SyncEventTaskTest, PlainStoresToUserStorageAreSeenAtTheNextProgressOnly)
{
	uint64_t word = 0;
	ASSERT_EQ(doca_sync_event_set_addr(event, &word), DOCA_SUCCESS);
	start_context();
	submit_wait(0, UINT64_MAX);
	drain();
	ASSERT_EQ(doca_pe_request_notification(pe), DOCA_SUCCESS);
	word = 1; // not through the API: no wake-up (documented limit)
	EXPECT_FALSE(fd_readable());
	ASSERT_EQ(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
	drain();
	EXPECT_EQ(completions.successes(), 1u);
}

TEST(SyncEventWaitLimits, MaskMustBeWholeFfBytes)
{
	EXPECT_TRUE(doca_sync_event::is_supported_wait_gt(0, 0));
	EXPECT_TRUE(doca_sync_event::is_supported_wait_gt(254, 0xFF000000ull));
	EXPECT_TRUE(doca_sync_event::is_supported_wait_gt(3, 0xFFFFFFFF00000000ull));
	EXPECT_FALSE(doca_sync_event::is_supported_wait_gt(255, 0xFF));
	EXPECT_FALSE(doca_sync_event::is_supported_wait_gt(3, 0xFFFFFF00ull));
	EXPECT_FALSE(doca_sync_event::is_supported_wait_gt(3, 0x7F));
}

} // namespace
