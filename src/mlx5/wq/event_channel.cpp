// DevX event channels (event_channel.hpp).
#include "mlx5/wq/event_channel.hpp"

#include "mlx5/wq/engine.hpp"

#include <endian.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace softdpu::mlx5::wq {

namespace {

constexpr size_t kRecord = sizeof(uint64_t) + kEqeSize;

} // namespace

EventChannel *EventChannel::create(ibv_context *context, bool omit_data) noexcept
{
	auto *channel = new (std::nothrow) EventChannel();
	if (channel == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	int fds[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
		const int error = errno;
		delete channel;
		errno = error;
		return nullptr;
	}
	(void)shutdown(fds[0], SHUT_WR); // the application's end only reads
	channel->dv.fd = fds[0];
	channel->writer_ = fds[1];
	channel->omit_data_ = omit_data;
	channel->context_ = context;
	return channel;
}

EventChannel *EventChannel::from(mlx5dv_devx_event_channel *channel) noexcept
{
	return reinterpret_cast<EventChannel *>(channel); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

void EventChannel::destroy() noexcept
{
	std::vector<Subscription *> ended;
	{
		std::lock_guard lock(mutex_);
		ended.swap(subscriptions_);
	}
	// The CQ may be gone already (its object destroyed first): clearing then does nothing.
	for (Subscription *subscription : ended) {
		(void)Engine::instance().clear_cq_event(subscription->cq, subscription);
		delete subscription;
	}
	close(writer_);
	close(dv.fd);
	delete this;
}

int EventChannel::subscribe(Cq *cq, uint32_t cqn, uint64_t cookie, int fd) noexcept
{
	auto *subscription = new (std::nothrow) Subscription{this, cq, cqn, cookie, fd};
	if (subscription == nullptr)
		return ENOMEM;
	{
		std::lock_guard lock(mutex_);
		try {
			subscriptions_.push_back(subscription);
		} catch (const std::bad_alloc &) {
			delete subscription;
			return ENOMEM;
		}
	}
	if (!Engine::instance().claim_cq_event(cq, on_event, subscription)) {
		std::lock_guard lock(mutex_);
		subscriptions_.pop_back();
		delete subscription;
		return EBUSY;
	}
	return 0;
}

void EventChannel::completion_eqe(uint32_t cqn, uint8_t *eqe) noexcept
{
	std::memset(eqe, 0, kEqeSize);
	eqe[1] = static_cast<uint8_t>(kEventTypeComp);
	const uint32_t value = htobe32(cqn & 0xffffff);
	std::memcpy(eqe + 32 + 24, &value, sizeof(value)); // data (offset 32), comp.cqn (word 6)
}

// On the engine thread: one record, or the subscriber's fd written.
void EventChannel::on_event(void *arg) noexcept
{
	const auto *subscription = static_cast<const Subscription *>(arg);
	if (subscription->fd >= 0) {
		const uint64_t one = 1;
		(void)!write(subscription->fd, &one, sizeof(one));
		return;
	}
	EventChannel &channel = *subscription->channel;
	uint8_t record[kRecord];
	std::memcpy(record, &subscription->cookie, sizeof(uint64_t));
	size_t length = sizeof(uint64_t);
	if (!channel.omit_data_) {
		completion_eqe(subscription->cqn, record + sizeof(uint64_t));
		length = kRecord;
	}
	if (send(channel.writer_, record, length, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		channel.overflow_.store(true, std::memory_order_release);
}

ssize_t EventChannel::get_event(mlx5dv_devx_async_event_hdr *event, size_t length) noexcept
{
	if (event == nullptr) {
		errno = EINVAL;
		return -1;
	}
	if (overflow_.exchange(false, std::memory_order_acq_rel)) {
		errno = EOVERFLOW;
		return -1;
	}
	// The record's size first (blocking as the fd blocks), so a short buffer leaves it queued.
	const ssize_t size = recv(dv.fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
	if (size < 0)
		return -1;
	if (static_cast<size_t>(size) > length) {
		errno = ENOSPC;
		return -1;
	}
	return recv(dv.fd, event, length, MSG_DONTWAIT);
}

} // namespace softdpu::mlx5::wq
