// Shared set-up for the sync event tests: a device, an event with CPU locations declared, and
// (for context mode) a PE with the event connected and every task type configured.
#pragma once

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sync_event_test {

// Opens the first listed device; nullptr if none.
inline doca_dev *open_any_device()
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS)
		return nullptr;
	doca_dev *dev = nullptr;
	if (count > 0)
		doca_dev_open(list[0], &dev);
	doca_devinfo_destroy_list(list);
	return dev;
}

// What the task callbacks saw, in order.
struct Completions {
	struct Entry {
		doca_task *task;
		doca_error_t status;
		bool success;
	};
	std::vector<Entry> entries;
	bool free_in_callback = true;

	size_t successes() const
	{
		size_t n = 0;
		for (const Entry &entry : entries)
			n += entry.success ? 1 : 0;
		return n;
	}
	size_t errors() const { return entries.size() - successes(); }

	static void record(doca_task *task, union doca_data task_user_data, bool success)
	{
		auto *self = static_cast<Completions *>(task_user_data.ptr);
		self->entries.push_back({task, doca_task_get_status(task), success});
		if (self->free_in_callback)
			doca_task_free(task);
	}
};

inline union doca_data data_of(Completions *completions)
{
	union doca_data data;
	data.ptr = completions;
	return data;
}

// One callback pair per task type, all recording into the task's Completions (its user data).
template <class Task, doca_task *(*AsTask)(Task *)>
void on_task_success(Task *task, union doca_data task_user_data, union doca_data)
{
	Completions::record(AsTask(task), task_user_data, true);
}
template <class Task, doca_task *(*AsTask)(Task *)>
void on_task_error(Task *task, union doca_data task_user_data, union doca_data)
{
	Completions::record(AsTask(task), task_user_data, false);
}

#define SYNC_EVENT_CALLBACKS(type)                                                                                     \
	sync_event_test::on_task_success<doca_sync_event_task_##type, doca_sync_event_task_##type##_as_doca_task>,     \
	    sync_event_test::on_task_error<doca_sync_event_task_##type, doca_sync_event_task_##type##_as_doca_task>

// Device and a fresh event with a CPU publisher and subscriber declared.
class SyncEventBase : public ::testing::Test {
protected:
	void SetUp() override
	{
		dev = open_any_device();
		ASSERT_NE(dev, nullptr);
		ASSERT_EQ(doca_sync_event_create(&event), DOCA_SUCCESS);
	}

	void TearDown() override
	{
		if (event != nullptr) {
			if (ctx_started())
				stop_ctx();
			EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
		}
		if (pe != nullptr) {
			EXPECT_EQ(doca_pe_destroy(pe), DOCA_SUCCESS);
		}
		if (dev != nullptr) {
			EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
		}
	}

	void declare_cpu_locations()
	{
		ASSERT_EQ(doca_sync_event_add_publisher_location_cpu(event, dev), DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_add_subscriber_location_cpu(event, dev), DOCA_SUCCESS);
	}

	// Context mode: connects to a new PE and configures every task type with num_tasks each.
	void make_context(uint32_t num_tasks = 16)
	{
		declare_cpu_locations();
		ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
		ctx = doca_sync_event_as_ctx(event);
		ASSERT_NE(ctx, nullptr);
		ASSERT_EQ(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_task_get_set_conf(event, SYNC_EVENT_CALLBACKS(get), num_tasks), DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_task_notify_set_set_conf(event, SYNC_EVENT_CALLBACKS(notify_set), num_tasks),
			  DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_task_notify_add_set_conf(event, SYNC_EVENT_CALLBACKS(notify_add), num_tasks),
			  DOCA_SUCCESS);
		ASSERT_EQ(doca_sync_event_task_wait_gt_set_conf(event, SYNC_EVENT_CALLBACKS(wait_gt), num_tasks),
			  DOCA_SUCCESS);
	}

	void start_context(uint32_t num_tasks = 16)
	{
		make_context(num_tasks);
		ASSERT_EQ(doca_ctx_start(ctx), DOCA_SUCCESS);
	}

	bool ctx_started() const
	{
		if (ctx == nullptr)
			return false;
		doca_ctx_states state;
		return doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && state != DOCA_CTX_STATE_IDLE;
	}

	// Stops the context, draining flushed tasks through the PE.
	void stop_ctx()
	{
		const doca_error_t result = doca_ctx_stop(ctx);
		ASSERT_TRUE(result == DOCA_SUCCESS || result == DOCA_ERROR_IN_PROGRESS) << doca_error_get_name(result);
		for (int i = 0; i < 1000 && ctx_started(); ++i)
			doca_pe_progress(pe);
		ASSERT_FALSE(ctx_started());
	}

	// Progresses until the PE reports nothing to do.
	void drain()
	{
		while (doca_pe_progress(pe) != 0) {
		}
	}

	doca_dev *dev = nullptr;
	doca_sync_event *event = nullptr;
	doca_pe *pe = nullptr;
	doca_ctx *ctx = nullptr;
};

} // namespace sync_event_test
