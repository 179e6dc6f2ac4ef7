#include "verbs/verbs.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

namespace softdpu::verbs {

// ---- Protection domains ----

ibv_pd *alloc_pd(Context &context) noexcept
{
	static std::atomic<uint32_t> next_handle{1};
	auto *pd = new (std::nothrow) ProtectionDomain();
	if (pd == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	pd->ibv.context = context.ibv();
	pd->ibv.handle = next_handle.fetch_add(1);
	try {
		std::lock_guard lock(context.handles_mutex);
		context.pds.emplace(pd->ibv.handle, &pd->ibv);
	} catch (const std::bad_alloc &) {
		delete pd;
		errno = ENOMEM;
		return nullptr;
	}
	return &pd->ibv;
}

int dealloc_pd(ibv_pd *ibv) noexcept
{
	ProtectionDomain *pd = ProtectionDomain::from(ibv);
	if (pd->users.load() != 0)
		return EBUSY;
	Context *context = Context::from(ibv->context);
	{
		std::lock_guard lock(context->handles_mutex);
		context->pds.erase(ibv->handle);
	}
	delete pd;
	return 0;
}

// ---- Memory regions ----

namespace {

// Access flags a memory region may carry; anything else is EINVAL, as rdma-core's kernel does.
constexpr unsigned int kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
				      IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING;

} // namespace

ibv_mr *reg_mr(ibv_pd *ibv_pd, void *addr, size_t length, uint64_t iova, unsigned int access) noexcept
{
	// IBV_ACCESS_OPTIONAL_RANGE flags may be ignored by a device (verbs.h): drop them.
	access &= ~static_cast<unsigned int>(IBV_ACCESS_OPTIONAL_RANGE);
	if ((access & ~kKnownAccess) != 0 || length == 0) {
		errno = EINVAL;
		return nullptr;
	}
	// Remote write and remote atomic need local write (IB spec 10.6.3.1; the kernel enforces it).
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 &&
	    (access & IBV_ACCESS_LOCAL_WRITE) == 0) {
		errno = EINVAL;
		return nullptr;
	}
	if (addr == nullptr && (access & IBV_ACCESS_ON_DEMAND) == 0) {
		errno = EINVAL;
		return nullptr;
	}
	const auto start = reinterpret_cast<uintptr_t>(addr);
	if (start + length < start) {
		errno = EINVAL;
		return nullptr;
	}
	ProtectionDomain *pd = ProtectionDomain::from(ibv_pd);
	auto *mr = new (std::nothrow) MemoryRegion();
	if (mr == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	uint32_t key = 0;
	const int error = register_memory(*pd, mr, start, length, iova, access, &key);
	if (error != 0) {
		delete mr;
		errno = error;
		return nullptr;
	}
	mr->ibv.context = ibv_pd->context;
	mr->ibv.pd = ibv_pd;
	mr->ibv.addr = addr;
	mr->ibv.length = length;
	mr->ibv.handle = key;
	mr->ibv.lkey = key;
	mr->ibv.rkey = key;
	mr->iova = iova;
	mr->access = access;
	pd->users.fetch_add(1);
	return &mr->ibv;
}

int dereg_mr(ibv_mr *ibv) noexcept
{
	MemoryRegion *mr = MemoryRegion::from(ibv);
	unregister_memory(ibv->lkey);
	ProtectionDomain::from(ibv->pd)->users.fetch_sub(1);
	delete mr;
	return 0;
}

// ---- Address handles ----

ibv_ah *create_ah(ibv_pd *ibv_pd, const ibv_ah_attr &attr) noexcept
{
	if (attr.port_num != 1) {
		errno = EINVAL;
		return nullptr;
	}
	Context *context = Context::from(ibv_pd->context);
	// RoCE addresses are GIDs: an address handle without a GRH cannot be routed (the kernel says
	// EINVAL too).
	if (context->info().function->link_layer == device::LinkLayer::ethernet &&
	    (!attr.is_global || attr.grh.sgid_index >= context->info().gids.size())) {
		errno = EINVAL;
		return nullptr;
	}
	auto *ah = new (std::nothrow) AddressHandle();
	if (ah == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	static std::atomic<uint32_t> next_handle{1};
	ah->ibv.context = ibv_pd->context;
	ah->ibv.pd = ibv_pd;
	ah->ibv.handle = next_handle.fetch_add(1);
	ah->attr = attr;
	// The device that owns the destination GID: where UD sends through this handle go (none: they
	// are lost on the way, as on a fabric where nobody has that address).
	try {
		ah->fabric = device::rdma::fabric_name_of_gid(std::to_array(attr.grh.dgid.raw)).value_or(std::string());
	} catch (const std::bad_alloc &) {
		delete ah;
		errno = ENOMEM;
		return nullptr;
	}
	ProtectionDomain::from(ibv_pd)->users.fetch_add(1);
	return &ah->ibv;
}

int destroy_ah(ibv_ah *ibv) noexcept
{
	AddressHandle *ah = AddressHandle::from(ibv);
	ProtectionDomain::from(ibv->pd)->users.fetch_sub(1);
	delete ah;
	return 0;
}

// ---- Completion channels ----

ibv_comp_channel *create_comp_channel(Context &context) noexcept
{
	auto *channel = new (std::nothrow) CompletionChannel();
	if (channel == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	channel->ibv.context = context.ibv();
	channel->ibv.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (channel->ibv.fd < 0) {
		const int error = errno;
		delete channel;
		errno = error;
		return nullptr;
	}
	channel->ibv.refcnt = 0;
	return &channel->ibv;
}

int destroy_comp_channel(ibv_comp_channel *ibv) noexcept
{
	CompletionChannel *channel = CompletionChannel::from(ibv);
	{
		std::lock_guard lock(channel->mutex);
		if (ibv->refcnt != 0)
			return EBUSY;
	}
	::close(ibv->fd);
	delete channel;
	return 0;
}

} // namespace softdpu::verbs
