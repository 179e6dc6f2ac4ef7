// DevX event channels (mlx5dv_devx_create_event_channel and the functions on a channel): argument
// checks, then mlx5/wq/event_channel.hpp. Completion events (MLX5_EVENT_TYPE_COMP) of DevX CQ
// objects only: the device raises no other event.
#include "mlx5/mlx5.hpp"
#include "mlx5/wq/engine.hpp"
#include "mlx5/wq/event_channel.hpp"

#include <cerrno>

using namespace softdpu::mlx5;

namespace {

// The engine CQ behind `obj`, a CQ of the channel's context. errno value.
int cq_of(const wq::EventChannel &channel, mlx5dv_devx_obj *obj, wq::Cq **cq) noexcept
{
	if (obj == nullptr)
		return EOPNOTSUPP; // unaffiliated events: the device raises none
	ibv_context *owner = devx_context_of(obj);
	*cq = devx_cq_of(obj);
	if (owner == nullptr || *cq == nullptr || owner != channel.context())
		return EINVAL;
	return 0;
}

} // namespace

extern "C" {

mlx5dv_devx_event_channel *mlx5dv_devx_create_event_channel(ibv_context *context,
							    enum mlx5dv_devx_create_event_channel_flags flags)
{
	if (context == nullptr || (flags & ~MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA) != 0) {
		errno = EINVAL;
		return nullptr;
	}
	if (!is_ours(context)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	const Context *state = Context::of(context);
	if (state == nullptr)
		return nullptr;
	if (!state->devx()) {
		errno = EOPNOTSUPP; // a context opened without DevX has no DevX objects to report on
		return nullptr;
	}
	wq::EventChannel *channel =
	    wq::EventChannel::create(context, (flags & MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA) != 0);
	return channel != nullptr ? &channel->dv : nullptr;
}

void mlx5dv_devx_destroy_event_channel(mlx5dv_devx_event_channel *event_channel)
{
	if (event_channel != nullptr)
		wq::EventChannel::from(event_channel)->destroy();
}

int mlx5dv_devx_subscribe_devx_event(mlx5dv_devx_event_channel *event_channel, mlx5dv_devx_obj *obj, uint16_t events_sz,
				     uint16_t events_num[], uint64_t cookie)
{
	// events_sz is the size of events_num in bytes.
	if (event_channel == nullptr || events_num == nullptr || events_sz < sizeof(uint16_t) ||
	    events_sz % sizeof(uint16_t) != 0)
		return EINVAL;
	wq::EventChannel &channel = *wq::EventChannel::from(event_channel);
	for (size_t i = 0; i < events_sz / sizeof(uint16_t); ++i)
		if (events_num[i] != wq::kEventTypeComp)
			return EINVAL;
	wq::Cq *cq = nullptr;
	const int error = cq_of(channel, obj, &cq);
	if (error != 0)
		return error;
	return channel.subscribe(cq, wq::Engine::cq_number(cq), cookie, -1);
}

int mlx5dv_devx_subscribe_devx_event_fd(mlx5dv_devx_event_channel *event_channel, int fd, mlx5dv_devx_obj *obj,
					uint16_t event_num)
{
	if (event_channel == nullptr || fd < 0 || event_num != wq::kEventTypeComp)
		return EINVAL;
	wq::EventChannel &channel = *wq::EventChannel::from(event_channel);
	wq::Cq *cq = nullptr;
	const int error = cq_of(channel, obj, &cq);
	if (error != 0)
		return error;
	return channel.subscribe(cq, wq::Engine::cq_number(cq), 0, fd);
}

ssize_t mlx5dv_devx_get_event(mlx5dv_devx_event_channel *event_channel, mlx5dv_devx_async_event_hdr *event_data,
			      size_t event_resp_len)
{
	if (event_channel == nullptr) {
		errno = EINVAL;
		return -1;
	}
	return wq::EventChannel::from(event_channel)->get_event(event_data, event_resp_len);
}

} // extern "C"
