#include "core/exec/pe.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>

#include "common/sdk_log.hpp"
#include "core/exec/ctx.hpp"

doca_error_t doca_pe::create(doca_pe **pe) noexcept
{
	const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0) {
		SDK_LOG_ERR("failed to create progress engine: eventfd: errno %d", errno);
		return DOCA_ERROR_NO_MEMORY;
	}
	auto *created = new (std::nothrow) doca_pe(fd);
	if (created == nullptr) {
		close(fd);
		return DOCA_ERROR_NO_MEMORY;
	}
	*pe = created;
	return DOCA_SUCCESS;
}

doca_pe::~doca_pe()
{
	close(event_fd_);
}

doca_error_t doca_pe::connect(doca_ctx *ctx) noexcept
{
	if (!ctx->is_idle()) {
		SDK_LOG_ERR("failed to connect context: context is not idle");
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->pe() != nullptr) {
		SDK_LOG_ERR("failed to connect context: it is already connected to a progress engine");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	const doca_error_t result = attach(ctx);
	if (result == DOCA_SUCCESS)
		ctx->attach_to_pe(this);
	return result;
}

doca_error_t doca_pe::attach(softdpu::exec::Progressable *member) noexcept
{
	try {
		members_.push_back(member);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

void doca_pe::disconnect(softdpu::exec::Progressable *member) noexcept
{
	members_.erase(std::remove(members_.begin(), members_.end(), member), members_.end());
	next_member_ = 0;
}

uint8_t doca_pe::progress() noexcept
{
	const size_t count = members_.size();
	if (count == 0)
		return 0;
	bool progressed = false;
	// Start from a different member each call so no context starves the others.
	size_t index = next_member_ < count ? next_member_ : 0;
	next_member_ = index + 1 < count ? index + 1 : 0;
	for (size_t visited = 0; visited < count; ++visited) {
		progressed |= members_[index]->progress();
		// A callback may destroy nothing (contexts cannot be destroyed while running callbacks
		// of their own), but may change membership through graphs. Then the round ends here: the
		// indices no longer mean what they meant, and ending is safe because the next call starts
		// from next_member_ (reset to 0 by a disconnect), so every member still gets its turn.
		if (members_.size() != count)
			break;
		index = index + 1 < count ? index + 1 : 0;
	}
	return progressed ? 1 : 0;
}

size_t doca_pe::inflight() const noexcept
{
	size_t total = 0;
	for (const auto *member : members_)
		total += member->inflight();
	return total;
}

bool doca_pe::any_pending_work() const noexcept
{
	return std::any_of(members_.begin(), members_.end(),
			   [](const softdpu::exec::Progressable *member) { return member->has_pending_work(); });
}

void doca_pe::signal() noexcept
{
	const uint64_t one = 1;
	// EAGAIN means the counter is saturated: the fd is readable anyway.
	ssize_t written;
	do {
		written = write(event_fd_, &one, sizeof(one));
	} while (written < 0 && errno == EINTR);
}

doca_error_t doca_pe::request_notification() noexcept
{
	armed_.store(true, std::memory_order_seq_cst);
	if (any_pending_work() && armed_.exchange(false, std::memory_order_seq_cst))
		signal();
	return DOCA_SUCCESS;
}

void doca_pe::signal_if_armed() noexcept
{
	if (armed_.load(std::memory_order_seq_cst) && armed_.exchange(false, std::memory_order_seq_cst))
		signal();
}

doca_error_t doca_pe::clear_notification() noexcept
{
	armed_.store(false, std::memory_order_relaxed);
	uint64_t value;
	for (;;) {
		const ssize_t got = read(event_fd_, &value, sizeof(value));
		if (got == sizeof(value) || (got < 0 && errno == EAGAIN))
			return DOCA_SUCCESS;
		if (got < 0 && errno == EINTR)
			continue;
		SDK_LOG_ERR("failed to clear notification: read: errno %d", errno);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
}
