// pkg-config: doca-common doca-dma
/*
 * PE event: the pe_polling workload, but main sleeps until the PE has work instead of spinning.
 *
 * The PE's notification handle (an fd on Linux) goes into an epoll set. Each round arms the PE
 * (doca_pe_request_notification), waits on epoll, clears the notification, then calls
 * doca_pe_progress until it returns 0. doca_pe_progress must not be called while the PE is armed.
 * The wait has a finite timeout: a notification that never comes fails the sample instead of
 * hanging it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(PE_EVENT::SAMPLE);

#define NUM_TASKS 16
/* Large enough that copies are still running while main is waiting. */
#define BUFFER_SIZE (256 * 1024)

/* Sleeps on the PE's fd and progresses after each wake-up, until num_tasks callbacks have run. */
static doca_error_t wait_for_completions(struct doca_pe *pe, const struct sample_task_counts *counts,
					 uint32_t num_tasks)
{
	doca_notification_handle_t handle;
	struct epoll_event event = {.events = EPOLLIN};
	uint32_t num_wakeups = 0;
	doca_error_t result;
	int epoll_fd;

	result = doca_pe_get_notification_handle(pe, &handle);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to get the PE notification handle: %s", doca_error_get_descr(result));
		return result;
	}
	epoll_fd = epoll_create1(0);
	if (epoll_fd < 0) {
		DOCA_LOG_ERR("Failed to create epoll set: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, handle, &event) != 0) {
		DOCA_LOG_ERR("Failed to add the PE handle to the epoll set: %s", strerror(errno));
		close(epoll_fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	while (result == DOCA_SUCCESS && counts->num_succeeded + counts->num_failed < num_tasks) {
		int num_events;

		result = doca_pe_request_notification(pe);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to arm the PE: %s", doca_error_get_descr(result));
			break;
		}
		do {
			num_events = epoll_wait(epoll_fd, &event, 1, SAMPLE_TIMEOUT_SECONDS * 1000);
		} while (num_events < 0 && errno == EINTR);
		if (num_events < 0) {
			DOCA_LOG_ERR("epoll_wait failed: %s", strerror(errno));
			result = DOCA_ERROR_OPERATING_SYSTEM;
			break;
		}
		if (num_events == 0) {
			DOCA_LOG_ERR("No notification within %d seconds although %u tasks are pending",
				     SAMPLE_TIMEOUT_SECONDS, num_tasks - counts->num_succeeded - counts->num_failed);
			result = DOCA_ERROR_TIME_OUT;
			break;
		}
		num_wakeups++;
		/* The handle argument is not used on Linux. */
		result = doca_pe_clear_notification(pe, 0);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Failed to clear the PE notification: %s", doca_error_get_descr(result));
			break;
		}
		while (doca_pe_progress(pe) != 0)
			;
	}
	close(epoll_fd);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("%u tasks completed after %u wake-ups", num_tasks, num_wakeups);
	return result;
}

static doca_error_t run(struct sample_task_counts *counts, struct doca_dma *dma)
{
	doca_error_t result;

	result = sample_start_and_submit(counts->base, dma, 0, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	result = wait_for_completions(counts->base->pe, counts, NUM_TASKS);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_counts_check_all_succeeded(counts, NUM_TASKS);
	return result;
}

int main(void)
{
	return sample_main_one_dma(NUM_TASKS, BUFFER_SIZE, sample_memcpy_check_cb, sample_memcpy_error_cb, run);
}
