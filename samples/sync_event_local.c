// pkg-config: doca-common
/*
 * sync_event_local: a DOCA sync event shared by two threads of one process.
 *
 * Part 1, stand-alone event: the threads play ping-pong on the value; the main thread waits with
 * doca_sync_event_wait_gt (busy wait), the worker with doca_sync_event_wait_gt_yield.
 * Part 2, the event as a context on an event-driven progress engine: the main thread submits
 * wait-greater-than tasks and sleeps on the PE's notification fd while the worker counts the value
 * up with doca_sync_event_update_add; every update wakes the PE. A get task then reads the value.
 *
 * The sample checks its results and exits with a non-zero status on any mismatch.
 */
#define _POSIX_C_SOURCE 200809L

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

DOCA_LOG_REGISTER(SYNC_EVENT_LOCAL::SAMPLE);

#define PING_PONG_ROUNDS 100
#define NUM_WAITERS 8
#define WAKE_TIMEOUT_MS 10000

#define CHECK(call)                                                                                                    \
	do {                                                                                                           \
		doca_error_t result_ = (call);                                                                         \
		if (result_ != DOCA_SUCCESS) {                                                                         \
			DOCA_LOG_ERR("%s failed: %s", #call, doca_error_get_name(result_));                            \
			exit(EXIT_FAILURE);                                                                            \
		}                                                                                                      \
	} while (0)

#define EXPECT(condition)                                                                                              \
	do {                                                                                                           \
		if (!(condition)) {                                                                                    \
			DOCA_LOG_ERR("check failed: %s", #condition);                                                  \
			exit(EXIT_FAILURE);                                                                            \
		}                                                                                                      \
	} while (0)

struct task_counts {
	int waits_done;
	int gets_done;
	int errors;
};

static struct doca_dev *open_first_device(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;
	struct doca_dev *dev = NULL;

	CHECK(doca_devinfo_create_list(&list, &count));
	EXPECT(count > 0);
	CHECK(doca_dev_open(list[0], &dev));
	CHECK(doca_devinfo_destroy_list(list));
	return dev;
}

/* ---- Part 1: stand-alone ping-pong ---- */

static int ping_pong_worker(void *arg)
{
	struct doca_sync_event *event = arg;

	for (uint64_t i = 0; i < PING_PONG_ROUNDS; i++) {
		/* Wait for the main thread's odd step, answer with the next even one. */
		CHECK(doca_sync_event_wait_gt_yield(event, 2 * i, UINT64_MAX));
		CHECK(doca_sync_event_update_set(event, 2 * i + 2));
	}
	return 0;
}

static void run_ping_pong(struct doca_dev *dev)
{
	struct doca_sync_event *event = NULL;
	thrd_t worker;
	uint64_t value = 0;

	CHECK(doca_sync_event_create(&event));
	CHECK(doca_sync_event_add_publisher_location_cpu(event, dev));
	CHECK(doca_sync_event_add_subscriber_location_cpu(event, dev));
	CHECK(doca_sync_event_start(event));

	EXPECT(thrd_create(&worker, ping_pong_worker, event) == thrd_success);
	for (uint64_t i = 0; i < PING_PONG_ROUNDS; i++) {
		CHECK(doca_sync_event_update_set(event, 2 * i + 1));
		CHECK(doca_sync_event_wait_gt(event, 2 * i + 1, UINT64_MAX));
	}
	EXPECT(thrd_join(worker, NULL) == thrd_success);

	CHECK(doca_sync_event_get(event, &value));
	EXPECT(value == 2 * PING_PONG_ROUNDS);
	DOCA_LOG_INFO("ping-pong: %d rounds, value %llu", PING_PONG_ROUNDS, (unsigned long long)value);

	CHECK(doca_sync_event_stop(event));
	CHECK(doca_sync_event_destroy(event));
}

/* ---- Part 2: the event as a context on an event-driven PE ---- */

static void wait_done(struct doca_sync_event_task_wait_gt *task, union doca_data task_user_data,
		      union doca_data ctx_user_data)
{
	struct task_counts *counts = task_user_data.ptr;

	(void)ctx_user_data;
	counts->waits_done++;
	doca_task_free(doca_sync_event_task_wait_gt_as_doca_task(task));
}

static void wait_failed(struct doca_sync_event_task_wait_gt *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct task_counts *counts = task_user_data.ptr;

	(void)ctx_user_data;
	counts->errors++;
	doca_task_free(doca_sync_event_task_wait_gt_as_doca_task(task));
}

static void get_done(struct doca_sync_event_task_get *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct task_counts *counts = task_user_data.ptr;

	(void)ctx_user_data;
	counts->gets_done++;
	doca_task_free(doca_sync_event_task_get_as_doca_task(task));
}

static void get_failed(struct doca_sync_event_task_get *task, union doca_data task_user_data,
		       union doca_data ctx_user_data)
{
	struct task_counts *counts = task_user_data.ptr;

	(void)ctx_user_data;
	counts->errors++;
	doca_task_free(doca_sync_event_task_get_as_doca_task(task));
}

static int counting_worker(void *arg)
{
	struct doca_sync_event *event = arg;
	const struct timespec pause = {0, 1000000}; /* 1 ms between updates */
	uint64_t previous = 0;

	for (int i = 0; i < NUM_WAITERS; i++) {
		thrd_sleep(&pause, NULL);
		CHECK(doca_sync_event_update_add(event, 1, &previous));
		EXPECT(previous == (uint64_t)i);
	}
	return 0;
}

/* Sleeps on the PE's fd and progresses until `*done` reaches `target`. */
static void progress_in_event_mode(struct doca_pe *pe, const int *done, int target)
{
	doca_notification_handle_t fd;

	CHECK(doca_pe_get_notification_handle(pe, &fd));
	while (*done < target) {
		struct pollfd entry = {.fd = fd, .events = POLLIN};

		CHECK(doca_pe_request_notification(pe));
		EXPECT(poll(&entry, 1, WAKE_TIMEOUT_MS) == 1);
		CHECK(doca_pe_clear_notification(pe, 0));
		while (doca_pe_progress(pe) != 0) {
		}
	}
}

static void run_event_driven_waits(struct doca_dev *dev)
{
	struct doca_sync_event *event = NULL;
	struct doca_pe *pe = NULL;
	struct doca_ctx *ctx;
	struct task_counts counts = {0, 0, 0};
	union doca_data user_data = {.ptr = &counts};
	thrd_t worker;
	uint64_t value = 0;

	CHECK(doca_sync_event_create(&event));
	CHECK(doca_sync_event_add_publisher_location_cpu(event, dev));
	CHECK(doca_sync_event_add_subscriber_location_cpu(event, dev));
	CHECK(doca_pe_create(&pe));
	ctx = doca_sync_event_as_ctx(event);
	EXPECT(ctx != NULL);
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CHECK(doca_sync_event_task_wait_gt_set_conf(event, wait_done, wait_failed, NUM_WAITERS));
	CHECK(doca_sync_event_task_get_set_conf(event, get_done, get_failed, 1));
	CHECK(doca_ctx_start(ctx));

	/* Waiter i completes once the low byte of the value exceeds i. */
	for (uint64_t i = 0; i < NUM_WAITERS; i++) {
		struct doca_sync_event_task_wait_gt *wait = NULL;

		CHECK(doca_sync_event_task_wait_gt_alloc_init(event, i, 0xFF, user_data, &wait));
		CHECK(doca_task_try_submit(doca_sync_event_task_wait_gt_as_doca_task(wait)));
	}

	EXPECT(thrd_create(&worker, counting_worker, event) == thrd_success);
	progress_in_event_mode(pe, &counts.waits_done, NUM_WAITERS);
	EXPECT(thrd_join(worker, NULL) == thrd_success);
	EXPECT(counts.waits_done == NUM_WAITERS && counts.errors == 0);

	struct doca_sync_event_task_get *get = NULL;
	CHECK(doca_sync_event_task_get_alloc_init(event, &value, user_data, &get));
	CHECK(doca_task_submit(doca_sync_event_task_get_as_doca_task(get)));
	progress_in_event_mode(pe, &counts.gets_done, 1);
	EXPECT(value == NUM_WAITERS);
	DOCA_LOG_INFO("event-driven PE: %d wait-gt tasks completed, value %llu", counts.waits_done,
		      (unsigned long long)value);

	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_sync_event_destroy(event));
	CHECK(doca_pe_destroy(pe));
}

/* Application messages on stdout, softdpu's own (SDK) warnings and errors on stderr. */
static void setup_logging(void)
{
	struct doca_log_backend *sdk_log = NULL;

	CHECK(doca_log_backend_create_standard());
	CHECK(doca_log_backend_create_with_file_sdk(stderr, &sdk_log));
	CHECK(doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING));
}

int main(void)
{
	struct doca_dev *dev;

	setup_logging();
	dev = open_first_device();

	run_ping_pong(dev);
	run_event_driven_waits(dev);
	CHECK(doca_dev_close(dev));
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
