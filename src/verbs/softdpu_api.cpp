// softdpu_verbs_*: libibverbs' private entry points for softdpu's libmlx5 (softdpu_api.h).
#include "verbs/softdpu_api.h"

#include "verbs/verbs.hpp"

#include <cerrno>
#include <cstring>

using namespace softdpu::verbs;
namespace transport = softdpu::device::rdma::transport;

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

ibv_pd *softdpu_verbs_pd_of(ibv_context *context, uint32_t handle)
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	Context *owner = Context::from(context);
	std::lock_guard lock(owner->handles_mutex);
	const auto found = owner->pds.find(handle);
	if (found == owner->pds.end()) {
		errno = ENOENT;
		return nullptr;
	}
	return found->second;
}

ibv_cq *softdpu_verbs_cq_of(ibv_context *context, uint32_t handle)
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	Context *owner = Context::from(context);
	std::lock_guard lock(owner->handles_mutex);
	const auto found = owner->cqs.find(handle);
	if (found == owner->cqs.end()) {
		errno = ENOENT;
		return nullptr;
	}
	return found->second;
}

int softdpu_verbs_register_key(ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access, uint8_t tag,
			       uint32_t *key)
{
	const auto start = reinterpret_cast<uintptr_t>(addr);
	if (pd == nullptr || key == nullptr || addr == nullptr || length == 0 || start + length < start)
		return EINVAL;
	transport::MemoryTable *table = transport::MemoryTable::instance();
	if (table == nullptr)
		return ENOMEM;
	switch (table->add_tagged(start, length, iova, access, pd->handle, tag, key)) {
	case transport::Status::ok:
		break;
	case transport::Status::invalid_argument:
		return EINVAL;
	default:
		return ENOMEM;
	}
	ProtectionDomain::from(pd)->users.fetch_add(1);
	return 0;
}

int softdpu_verbs_unregister_key(ibv_pd *pd, uint32_t key)
{
	if (pd == nullptr)
		return EINVAL;
	transport::MemoryTable *table = transport::MemoryTable::instance();
	if (table == nullptr)
		return EINVAL;
	const auto registration = table->lookup(key);
	if (!registration || registration->pd_id != pd->handle)
		return EINVAL;
	if (table->remove(key) != transport::Status::ok)
		return EINVAL;
	ProtectionDomain::from(pd)->users.fetch_sub(1);
	return 0;
}

int softdpu_verbs_device_mac(const ibv_device *device, uint8_t mac[6])
{
	if (device == nullptr || mac == nullptr || !is_our_device(device))
		return EINVAL;
	// The MAC the link-local GID (index 0) is formed from (modified EUI-64): the topology's, or the
	// one derived from the function's name when the topology gives none.
	const auto &gids = Device::from(const_cast<ibv_device *>(device))->info->gids;
	if (gids.empty())
		return EINVAL;
	const auto &gid = gids.front().gid;
	const uint8_t bytes[6] = {static_cast<uint8_t>(gid[8] ^ 0x02), gid[9], gid[10], gid[13], gid[14], gid[15]};
	std::memcpy(mac, bytes, sizeof(bytes));
	return 0;
}

} // extern "C"
