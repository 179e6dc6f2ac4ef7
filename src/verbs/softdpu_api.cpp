// softdpu_verbs_*: libibverbs' private entry points for softdpu's libmlx5 (softdpu_api.h).
#include "verbs/softdpu_api.h"

#include "verbs/verbs.hpp"

#include <cerrno>

using namespace softdpu::verbs;

namespace {

template <typename Object, typename Make>
void *provider_data(ProviderData &slot, Object *object, Make make, void *arg, void (*release)(void *)) noexcept
{
	std::lock_guard lock(slot.mutex);
	if (slot.data != nullptr)
		return slot.data;
	if (make == nullptr) {
		errno = ENOENT;
		return nullptr;
	}
	void *data = make(object, arg);
	if (data == nullptr)
		return nullptr;
	slot.data = data;
	slot.release = release;
	return data;
}

} // namespace

extern "C" {

int softdpu_verbs_is_device(const ibv_device *device)
{
	return device != nullptr && is_our_device(device) ? 1 : 0;
}

void *softdpu_verbs_context_data(ibv_context *context, void *(*make)(ibv_context *, void *), void *arg,
				 void (*release)(void *))
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return provider_data(Context::from(context)->provider, context, make, arg, release);
}

void *softdpu_verbs_qp_data(ibv_qp *qp, void *(*make)(ibv_qp *, void *), void *arg, void (*release)(void *))
{
	if (qp == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return provider_data(QueuePair::from(qp)->provider, qp, make, arg, release);
}

void *softdpu_verbs_cq_data(ibv_cq *cq, void *(*make)(ibv_cq *, void *), void *arg, void (*release)(void *))
{
	if (cq == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return provider_data(CompletionQueue::from(cq)->provider, cq, make, arg, release);
}

int softdpu_verbs_cq_event(ibv_cq *cq)
{
	if (cq == nullptr)
		return EINVAL;
	return raise_cq_event(*CompletionQueue::from(cq));
}

int softdpu_verbs_qp_ex_fail_batch(ibv_qp_ex *qp, int error)
{
	if (qp == nullptr || error == 0)
		return EINVAL;
	// The caller holds the queue pair's lock (taken by wr_start): the batch is its own.
	QueuePair &owner = *QueuePair::from(qp);
	if (owner.batch_error == 0)
		owner.batch_error = error;
	return 0;
}

} // extern "C"
