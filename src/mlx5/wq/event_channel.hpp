// DevX event channels over the work-queue engine: completion events (MLX5_EVENT_TYPE_COMP) of
// engine CQs delivered as the kernel's DevX event file delivers them.
//
// The channel's fd is one end of a SOCK_SEQPACKET socket pair: each event is one record, {u64
// cookie, 64-byte EQE} or only the cookie when the channel omits event data, so the fd works with
// poll/epoll and a read returns exactly one record. The engine thread sends the record when an
// armed CQ gets its CQE (one event per arm); a record that finds the socket full is lost and the
// next get_event reports EOVERFLOW, as the kernel's queue does. A subscription with an fd instead
// writes an 8-byte 1 to that fd (an eventfd).
#pragma once

#include <infiniband/mlx5dv.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace softdpu::mlx5::wq {

class Cq;

constexpr uint16_t kEventTypeComp = 0x0; // MLX5_EVENT_TYPE_COMP
constexpr size_t kEqeSize = 64;

class EventChannel {
public:
	mlx5dv_devx_event_channel dv{-1}; // first: the pointer handed out is the object's

	// A channel for events of `context`'s objects. Null with errno set (EMFILE, ENOMEM).
	static EventChannel *create(ibv_context *context, bool omit_data) noexcept;
	static EventChannel *from(mlx5dv_devx_event_channel *channel) noexcept;
	// Ends every subscription (the engine calls none of them once it returns), closes the fds.
	void destroy() noexcept;

	// Completion events of `cq` (an engine CQ of number `cqn`) come to this channel with `cookie`,
	// or, with `fd` >= 0, as an 8-byte write to `fd`. 0 or an errno value: EBUSY when the CQ
	// already reports to a subscription, ENOMEM.
	int subscribe(Cq *cq, uint32_t cqn, uint64_t cookie, int fd) noexcept;

	// The next record: its size, or -1 with errno (EAGAIN on a non-blocking fd with nothing
	// waiting, ENOSPC for a buffer too small for the record, EOVERFLOW once after a lost event).
	ssize_t get_event(mlx5dv_devx_async_event_hdr *event, size_t length) noexcept;

	bool omit_data() const noexcept { return omit_data_; }
	ibv_context *context() const noexcept { return context_; }

	// The EQE of a completion event for `cqn` (PRM: event_type 0x00, cqn in the last data word).
	static void completion_eqe(uint32_t cqn, uint8_t *eqe) noexcept;

private:
	struct Subscription {
		EventChannel *channel = nullptr;
		Cq *cq = nullptr;
		uint32_t cqn = 0;
		uint64_t cookie = 0;
		int fd = -1;
	};
	static void on_event(void *arg) noexcept;

	ibv_context *context_ = nullptr;
	int writer_ = -1; // the engine's end of the socket pair
	bool omit_data_ = false;
	std::atomic<bool> overflow_{false};
	std::mutex mutex_; // subscriptions_
	std::vector<Subscription *> subscriptions_;
};

} // namespace softdpu::mlx5::wq
