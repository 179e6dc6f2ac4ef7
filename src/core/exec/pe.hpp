// struct doca_pe: a single-threaded progress engine. It round-robins over the contexts and
// graphs attached to it; completions run only inside progress(), on the caller's thread.
//
// Event-driven mode uses an eventfd. Engine threads signal it only while the PE is armed; arming
// re-checks for pending work after publishing the armed flag, so no wake-up is lost: engine
// threads publish a completion and then read `armed_`, the PE publishes `armed_` and then reads
// the completions, all with sequentially consistent operations, so one of them sees the other.
#pragma once

#include <doca_pe.h>

#include <atomic>
#include <vector>

#include "core/exec/progressable.hpp"

struct doca_pe {
public:
	static doca_error_t create(doca_pe **pe) noexcept;
	~doca_pe();
	doca_pe(const doca_pe &) = delete;
	doca_pe &operator=(const doca_pe &) = delete;

	uint8_t progress() noexcept;
	doca_error_t connect(doca_ctx *ctx) noexcept;
	void disconnect(softdpu::exec::Progressable *member) noexcept;
	// Graphs attach themselves at creation (before any start), like contexts.
	doca_error_t attach(softdpu::exec::Progressable *member) noexcept;
	bool has_members() const noexcept { return !members_.empty(); }
	size_t inflight() const noexcept;

	int notification_fd() const noexcept { return event_fd_; }
	doca_error_t request_notification() noexcept;
	doca_error_t clear_notification() noexcept;
	// Called from engine threads after publishing a completion.
	void signal_if_armed() noexcept;

private:
	explicit doca_pe(int event_fd) : event_fd_(event_fd) {}
	bool any_pending_work() const noexcept;
	void signal() noexcept;

	std::vector<softdpu::exec::Progressable *> members_;
	size_t next_member_ = 0;
	int event_fd_;
	std::atomic<bool> armed_{false};
};
