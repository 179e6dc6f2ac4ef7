// libibverbs' exported functions (rdma-core 44, <infiniband/verbs.h>): argument checks, then the
// classes of verbs.hpp. Return conventions are rdma-core's, function by function: a pointer or
// null with errno set; 0 or a positive errno value; for a few old functions 0 or -1. No C++
// exception crosses this file (each body runs under verbs_barrier).
//
// The inline functions of verbs.h call through the context's ops (post_send, poll_cq, ...) and
// through struct verbs_context (query_port, create_qp_ex, ...): install_ops sets both.
#include "verbs/verbs.hpp"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

// verbs.h turns these names into inline wrappers; the exported functions have the plain names.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
#undef ibv_query_port
#undef ibv_get_device_list

using namespace softdpu::verbs;

namespace {

// Runs body(); an exception (a bug, or std::bad_alloc) becomes `on_failure` with errno set.
template <typename Result, typename Body> Result verbs_barrier(Result on_failure, Body &&body) noexcept
{
	try {
		return body();
	} catch (const std::bad_alloc &) {
		errno = ENOMEM;
	} catch (...) {
		errno = EIO;
	}
	return on_failure;
}

// For functions returning a positive errno value.
template <typename Body> int verbs_barrier_errno(Body &&body) noexcept
{
	try {
		return body();
	} catch (const std::bad_alloc &) {
		return ENOMEM;
	} catch (...) {
		return EIO;
	}
}

int op_poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc)
{
	return poll_cq(cq, num_entries, wc);
}

int op_req_notify_cq(ibv_cq *cq, int solicited_only)
{
	return req_notify_cq(cq, solicited_only);
}

int op_post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	return post_send(qp, wr, bad_wr);
}

int op_post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	return post_recv(qp, wr, bad_wr);
}

int op_post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	return post_srq_recv(srq, wr, bad_wr);
}

int op_query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *attr, size_t attr_size)
{
	if (attr == nullptr)
		return EINVAL;
	return query_port(*Context::from(context), port_num, attr, attr_size);
}

int op_query_device_ex(ibv_context *context, const ibv_query_device_ex_input *input, ibv_device_attr_ex *attr,
		       size_t attr_size)
{
	if (attr == nullptr)
		return EINVAL;
	return query_device_ex(*Context::from(context), input, attr, attr_size);
}

ibv_cq_ex *op_create_cq_ex(ibv_context *context, ibv_cq_init_attr_ex *attr)
{
	if (attr == nullptr || attr->comp_mask > (IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->wc_flags != (attr->wc_flags & (IBV_WC_STANDARD_FLAGS))) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	return create_cq(*Context::from(context), static_cast<int>(attr->cqe), attr->cq_context, attr->channel,
			 static_cast<int>(attr->comp_vector));
}

ibv_qp *op_create_qp_ex(ibv_context *context, ibv_qp_init_attr_ex *attr)
{
	if (attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return verbs_barrier<ibv_qp *>(nullptr, [&] { return create_qp(*Context::from(context), *attr); });
}

void install_ops(Context *context)
{
	ibv_context_ops &ops = context->ibv()->ops;
	ops.poll_cq = op_poll_cq;
	ops.req_notify_cq = op_req_notify_cq;
	ops.post_send = op_post_send;
	ops.post_recv = op_post_recv;
	ops.post_srq_recv = op_post_srq_recv;
	context->vctx.query_port = op_query_port;
	context->vctx.query_device_ex = op_query_device_ex;
	context->vctx.create_cq_ex = op_create_cq_ex;
	context->vctx.create_qp_ex = op_create_qp_ex;
}

bool is_valid_access(int access)
{
	return access >= 0;
}

} // namespace

extern "C" {

// ---- Devices ----

ibv_device **ibv_get_device_list(int *num_devices)
{
	return verbs_barrier<ibv_device **>(nullptr, [&]() -> ibv_device ** {
		const std::vector<Device *> *devices = device_list();
		if (devices == nullptr)
			return nullptr;
		// An array of pointers, NULL-terminated, that ibv_free_device_list frees with free().
		auto **list = static_cast<ibv_device **>(
		    std::calloc(devices->size() + 1, sizeof(ibv_device *))); // NOLINT(bugprone-sizeof-expression)
		if (list == nullptr) {
			errno = ENOMEM;
			return nullptr;
		}
		for (size_t i = 0; i < devices->size(); ++i)
			list[i] = &(*devices)[i]->ibv;
		if (num_devices != nullptr)
			*num_devices = static_cast<int>(devices->size());
		return list;
	});
}

void ibv_free_device_list(ibv_device **list)
{
	std::free(list);
}

const char *ibv_get_device_name(ibv_device *device)
{
	if (device == nullptr)
		return nullptr;
	return device->name;
}

int ibv_get_device_index(ibv_device *device)
{
	const std::vector<Device *> *devices = device_list();
	if (devices == nullptr || device == nullptr)
		return -1;
	for (size_t i = 0; i < devices->size(); ++i)
		if (&(*devices)[i]->ibv == device)
			return static_cast<int>(i);
	return -1;
}

__be64 ibv_get_device_guid(ibv_device *device)
{
	if (device == nullptr || !is_our_device(device))
		return 0;
	return htobe64(Device::from(device)->info->node_guid);
}

ibv_context *ibv_open_device(ibv_device *device)
{
	return verbs_barrier<ibv_context *>(nullptr, [&]() -> ibv_context * {
		if (device == nullptr || !is_our_device(device)) {
			errno = ENODEV;
			return nullptr;
		}
		// A function the topology marks unavailable is listed but cannot be opened (as
		// doca_dev_open answers NOT_CONNECTED for it).
		if (!Device::from(device)->info->function->available) {
			errno = ENODEV;
			return nullptr;
		}
		Context *context = Context::open(Device::from(device));
		if (context == nullptr)
			return nullptr;
		install_ops(context);
		return context->ibv();
	});
}

int ibv_close_device(ibv_context *context)
{
	if (context == nullptr)
		return 0;
	Context::from(context)->close();
	return 0;
}

int ibv_get_async_event(ibv_context *context, ibv_async_event *event)
{
	if (context == nullptr || event == nullptr) {
		errno = EINVAL;
		return -1;
	}
	return Context::from(context)->get_async_event(event);
}

void ibv_ack_async_event(ibv_async_event *event)
{
	// Events hold no references here: destroying an object does not wait for its events' acks.
	(void)event;
}

int ibv_query_device(ibv_context *context, ibv_device_attr *device_attr)
{
	if (context == nullptr || device_attr == nullptr)
		return EINVAL;
	query_device(*Context::from(context), device_attr);
	return 0;
}

int ibv_query_port(ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr)
{
	// The old entry point: its structure ends before `flags` and `port_cap_flags2`.
	if (context == nullptr || port_attr == nullptr)
		return EINVAL;
	return query_port(*Context::from(context), port_num, reinterpret_cast<ibv_port_attr *>(port_attr),
			  offsetof(ibv_port_attr, flags));
}

int _ibv_query_gid_ex(ibv_context *context, uint32_t port_num, uint32_t gid_index, ibv_gid_entry *entry, uint32_t flags,
		      size_t entry_size)
{
	if (context == nullptr || entry == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry))
		return EINVAL;
	return query_gid_entry(*Context::from(context), port_num, gid_index, entry);
}

ssize_t _ibv_query_gid_table(ibv_context *context, ibv_gid_entry *entries, size_t max_entries, uint32_t flags,
			     size_t entry_size)
{
	if (context == nullptr || entries == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry))
		return -EINVAL;
	const Context &device = *Context::from(context);
	const size_t valid = device.info().gids.size();
	if (max_entries < valid)
		return -EINVAL;
	for (size_t i = 0; i < valid; ++i) {
		auto *entry = reinterpret_cast<ibv_gid_entry *>(reinterpret_cast<char *>(entries) + i * entry_size);
		const int error = query_gid_entry(device, 1, static_cast<uint32_t>(i), entry);
		if (error != 0)
			return -error;
	}
	return static_cast<ssize_t>(valid);
}

int ibv_query_gid(ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	if (context == nullptr || gid == nullptr || index < 0) {
		errno = EINVAL;
		return -1;
	}
	ibv_gid_entry entry{};
	const int error = query_gid_entry(*Context::from(context), port_num, static_cast<uint32_t>(index), &entry);
	if (error == ENODATA) {
		// An unused slot of the table reads as the zero GID, as the kernel's sysfs file does.
		std::memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (error != 0) {
		errno = error;
		return -1;
	}
	*gid = entry.gid;
	return 0;
}

int ibv_query_pkey(ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (context == nullptr || pkey == nullptr || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff); // the default partition, full membership
	return 0;
}

int ibv_get_pkey_index(ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (context == nullptr || port_num != 1)
		return -EINVAL;
	if ((be16toh(pkey) & 0x7fff) == 0x7fff)
		return 0;
	return -ENOENT;
}

// ---- Protection domains and memory regions ----

ibv_pd *ibv_alloc_pd(ibv_context *context)
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return alloc_pd(*Context::from(context));
}

int ibv_dealloc_pd(ibv_pd *pd)
{
	if (pd == nullptr)
		return EINVAL;
	return dealloc_pd(pd);
}

ibv_mr *ibv_reg_mr(ibv_pd *pd, void *addr, size_t length, int access)
{
	if (pd == nullptr || !is_valid_access(access)) {
		errno = EINVAL;
		return nullptr;
	}
	return reg_mr(pd, addr, length, reinterpret_cast<uintptr_t>(addr), static_cast<unsigned int>(access));
}

ibv_mr *ibv_reg_mr_iova(ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	if (pd == nullptr || !is_valid_access(access)) {
		errno = EINVAL;
		return nullptr;
	}
	return reg_mr(pd, addr, length, iova, static_cast<unsigned int>(access));
}

ibv_mr *ibv_reg_mr_iova2(ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	if (pd == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return reg_mr(pd, addr, length, iova, access);
}

int ibv_dereg_mr(ibv_mr *mr)
{
	if (mr == nullptr)
		return EINVAL;
	return dereg_mr(mr);
}

// ---- Address handles ----

ibv_ah *ibv_create_ah(ibv_pd *pd, ibv_ah_attr *attr)
{
	if (pd == nullptr || attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return create_ah(pd, *attr);
}

int ibv_destroy_ah(ibv_ah *ah)
{
	if (ah == nullptr)
		return EINVAL;
	return destroy_ah(ah);
}

// ---- Completion channels and queues ----

ibv_comp_channel *ibv_create_comp_channel(ibv_context *context)
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return create_comp_channel(*Context::from(context));
}

int ibv_destroy_comp_channel(ibv_comp_channel *channel)
{
	if (channel == nullptr)
		return EINVAL;
	return destroy_comp_channel(channel);
}

ibv_cq *ibv_create_cq(ibv_context *context, int cqe, void *cq_context, ibv_comp_channel *channel, int comp_vector)
{
	if (context == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	ibv_cq_ex *cq = create_cq(*Context::from(context), cqe, cq_context, channel, comp_vector);
	return cq == nullptr ? nullptr : ibv_cq_ex_to_cq(cq);
}

int ibv_resize_cq(ibv_cq *cq, int cqe)
{
	if (cq == nullptr || cqe < 1)
		return EINVAL;
	// Resizing is optional for a device (IBV_DEVICE_RESIZE_MAX_WR is not reported).
	return EOPNOTSUPP;
}

int ibv_destroy_cq(ibv_cq *cq)
{
	if (cq == nullptr)
		return EINVAL;
	return destroy_cq(cq);
}

int ibv_get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context)
{
	if (channel == nullptr || cq == nullptr || cq_context == nullptr) {
		errno = EINVAL;
		return -1;
	}
	return get_cq_event(channel, cq, cq_context);
}

void ibv_ack_cq_events(ibv_cq *cq, unsigned int nevents)
{
	if (cq != nullptr)
		ack_cq_events(cq, nevents);
}

// ---- Queue pairs and shared receive queues ----

ibv_qp *ibv_create_qp(ibv_pd *pd, ibv_qp_init_attr *attr)
{
	if (pd == nullptr || attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	ibv_qp_init_attr_ex ex{};
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	ibv_qp *qp = verbs_barrier<ibv_qp *>(nullptr, [&] { return create_qp(*Context::from(pd->context), ex); });
	if (qp != nullptr)
		attr->cap = ex.cap; // what the device granted
	return qp;
}

ibv_qp_ex *ibv_qp_to_qp_ex(ibv_qp *qp)
{
	if (qp == nullptr)
		return nullptr;
	QueuePair *owner = QueuePair::from(qp);
	return owner->send_ops ? &owner->ibv : nullptr;
}

int ibv_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask)
{
	if (qp == nullptr || attr == nullptr)
		return EINVAL;
	return verbs_barrier_errno([&] { return modify_qp(qp, attr, attr_mask); });
}

int ibv_query_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr)
{
	(void)attr_mask; // everything is reported, as mlx5 does
	if (qp == nullptr || attr == nullptr)
		return EINVAL;
	query_attributes(*QueuePair::from(qp), attr, init_attr);
	return 0;
}

int ibv_query_qp_data_in_order(ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)op;
	if (qp == nullptr || flags != 0)
		return 0;
	// The device copies each message front to back, in the order the requests were posted.
	return 1;
}

int ibv_destroy_qp(ibv_qp *qp)
{
	if (qp == nullptr)
		return EINVAL;
	return destroy_qp(qp);
}

ibv_srq *ibv_create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	if (pd == nullptr || attr == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	return verbs_barrier<ibv_srq *>(nullptr, [&] { return create_srq(pd, *attr); });
}

int ibv_modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int attr_mask)
{
	if (srq == nullptr || attr == nullptr)
		return EINVAL;
	return modify_srq(srq, *attr, attr_mask);
}

int ibv_query_srq(ibv_srq *srq, ibv_srq_attr *attr)
{
	if (srq == nullptr || attr == nullptr)
		return EINVAL;
	return query_srq(srq, attr);
}

int ibv_destroy_srq(ibv_srq *srq)
{
	if (srq == nullptr)
		return EINVAL;
	return destroy_srq(srq);
}

} // extern "C"
