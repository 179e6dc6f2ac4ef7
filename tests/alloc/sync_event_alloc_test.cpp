// After start, the task hot path (allocate, submit, progress, complete, free) and the synchronous
// calls never touch the heap: task pools are sized when the context starts.
#include <gtest/gtest.h>

#include "support/alloc_counter.h"
#include "unit/sync_event/sync_event_support.hpp"

using sync_event_test::Completions;
using sync_event_test::data_of;
using sync_event_test::SyncEventBase;

namespace {

class SyncEventAllocTest : public SyncEventBase {};

TEST_F(SyncEventAllocTest, TaskHotPathDoesNotAllocate)
{
	start_context(8);
	Completions completions;
	completions.entries.reserve(10000);
	uint64_t got = 0;
	uint64_t fetched = 0;

	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 1000; ++round) {
		doca_sync_event_task_wait_gt *wait = nullptr;
		doca_sync_event_task_notify_add *add = nullptr;
		doca_sync_event_task_notify_set *set = nullptr;
		doca_sync_event_task_get *get = nullptr;
		if (doca_sync_event_task_wait_gt_alloc_init(event, 2 * round, UINT64_MAX, data_of(&completions),
							    &wait) != DOCA_SUCCESS ||
		    doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(wait)) != DOCA_SUCCESS)
			break;
		doca_pe_progress(pe); // the wait stays pending
		if (doca_sync_event_task_notify_add_alloc_init(event, 1, &fetched, data_of(&completions), &add) !=
			DOCA_SUCCESS ||
		    doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)) != DOCA_SUCCESS)
			break;
		if (doca_sync_event_task_notify_set_alloc_init(event, 2 * round + 2, data_of(&completions), &set) !=
			DOCA_SUCCESS ||
		    doca_task_submit(doca_sync_event_task_notify_set_as_doca_task(set)) != DOCA_SUCCESS)
			break;
		if (doca_sync_event_task_get_alloc_init(event, &got, data_of(&completions), &get) != DOCA_SUCCESS ||
		    doca_task_submit(doca_sync_event_task_get_as_doca_task(get)) != DOCA_SUCCESS)
			break;
		drain();
		// The synchronous calls and the event-driven notification path too.
		doca_sync_event_update_set(event, 2 * round + 2);
		doca_sync_event_update_add(event, 0, &fetched);
		doca_sync_event_wait_gt(event, 2 * round + 1, UINT64_MAX);
		doca_pe_request_notification(pe);
		doca_pe_clear_notification(pe, 0);
	}
	const size_t allocations = scope.count();

	EXPECT_EQ(allocations, 0u);
	EXPECT_EQ(completions.successes(), 4000u);
	EXPECT_EQ(completions.errors(), 0u);
	EXPECT_EQ(got, 2000u);
}

} // namespace
