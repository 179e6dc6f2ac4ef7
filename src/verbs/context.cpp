#include "verbs/verbs.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace softdpu::verbs {

Context *Context::open(Device *device) noexcept
{
	auto *context = new (std::nothrow) Context();
	if (context == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	context->device = device;
	ibv_context *ibv = context->ibv();
	ibv->device = &device->ibv;
	// No kernel command channel: cmd_fd is a descriptor nothing reads (applications only pass it
	// around, e.g. to ibv_import_device, which softdpu refuses).
	ibv->cmd_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
	ibv->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ibv->cmd_fd < 0 || ibv->async_fd < 0) {
		const int error = errno;
		if (ibv->cmd_fd >= 0)
			::close(ibv->cmd_fd);
		if (ibv->async_fd >= 0)
			::close(ibv->async_fd);
		delete context;
		errno = error;
		return nullptr;
	}
	ibv->num_comp_vectors = 1;
	pthread_mutex_init(&ibv->mutex, nullptr);
	ibv->abi_compat = __VERBS_ABI_IS_EXTENDED;
	context->vctx.sz = sizeof(verbs_context);
	return context;
}

void Context::close() noexcept
{
	// What a provider library keeps with the context goes first, while the context is whole.
	provider.reset();
	// The background progress stops next (a tick may post async events into what goes below).
	ticker.reset();
	ibv_context *ibv = this->ibv();
	::close(ibv->cmd_fd);
	::close(ibv->async_fd);
	pthread_mutex_destroy(&ibv->mutex);
	delete this;
}

void Context::post_async_event(const ibv_async_event &event) noexcept
{
	try {
		std::lock_guard lock(async_mutex_);
		async_events_.push_back(event);
	} catch (const std::bad_alloc &) {
		return; // an event that cannot be queued is lost, as on a full kernel event queue
	}
	const uint64_t one = 1;
	(void)!::write(ibv()->async_fd, &one, sizeof(one));
}

int Context::get_async_event(ibv_async_event *event) noexcept
{
	uint64_t count = 0;
	// Blocks while no event waits, unless the application made async_fd non-blocking (then -1 and
	// EAGAIN, as rdma-core's read of the kernel's async fd gives).
	if (::read(ibv()->async_fd, &count, sizeof(count)) != static_cast<ssize_t>(sizeof(count)))
		return -1;
	std::lock_guard lock(async_mutex_);
	if (async_events_.empty()) {
		errno = EIO;
		return -1;
	}
	*event = async_events_.front();
	async_events_.pop_front();
	return 0;
}

// ---- Queries ----

namespace {

__be64 to_be64(uint64_t value)
{
	return htobe64(value);
}

} // namespace

void query_device(const Context &context, ibv_device_attr *attr) noexcept
{
	using Limits = device::rdma::Limits;
	const device::rdma::DeviceInfo &info = context.info();
	*attr = {};
	std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", info.fw_ver.c_str());
	attr->node_guid = to_be64(info.node_guid);
	attr->sys_image_guid = to_be64(info.sys_image_guid);
	attr->max_mr_size = Limits::max_mr_size;
	attr->page_size_cap = ~0xfffull;
	attr->vendor_id = info.vendor_id;
	attr->vendor_part_id = info.vendor_part_id;
	attr->hw_ver = info.hw_ver;
	attr->max_qp = Limits::max_qp;
	attr->max_qp_wr = Limits::max_qp_wr;
	attr->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_CHANGE_PHY_PORT |
				 IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
				 IBV_DEVICE_N_NOTIFY_CQ;
	attr->max_sge = Limits::max_sge;
	attr->max_sge_rd = Limits::max_sge_rd;
	attr->max_cq = Limits::max_cq;
	attr->max_cqe = Limits::max_cqe;
	attr->max_mr = Limits::max_mr;
	attr->max_pd = Limits::max_pd;
	attr->max_qp_rd_atom = Limits::max_qp_rd_atom;
	attr->max_res_rd_atom = Limits::max_qp_rd_atom * Limits::max_qp;
	attr->max_qp_init_rd_atom = Limits::max_qp_rd_atom;
	attr->atomic_cap = IBV_ATOMIC_HCA;
	attr->max_ah = Limits::max_ah;
	attr->max_srq = Limits::max_srq;
	attr->max_srq_wr = Limits::max_srq_wr;
	attr->max_srq_sge = Limits::max_srq_sge;
	attr->max_pkeys = Limits::pkey_table_len;
	attr->local_ca_ack_delay = 16;
	attr->phys_port_cnt = 1;
}

int query_device_ex(const Context &context, const ibv_query_device_ex_input *input, ibv_device_attr_ex *attr,
		    size_t attr_size) noexcept
{
	if (input != nullptr && input->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	ibv_device_attr_ex full{};
	query_device(context, &full.orig_attr);
	full.device_cap_flags_ex = full.orig_attr.device_cap_flags;
	full.phys_port_cnt_ex = 1;
	full.max_dm_size = 0;
	// The caller's structure may be older (smaller) than ours, never larger than what it says.
	std::memcpy(attr, &full, std::min(attr_size, sizeof(full)));
	if (attr_size > sizeof(full))
		std::memset(reinterpret_cast<char *>(attr) + sizeof(full), 0, attr_size - sizeof(full));
	return 0;
}

int query_port(const Context &context, uint8_t port_num, ibv_port_attr *attr, size_t attr_size) noexcept
{
	using Limits = device::rdma::Limits;
	if (port_num != 1)
		return EINVAL;
	ibv_port_attr full{};
	full.state = IBV_PORT_ACTIVE;
	full.max_mtu = IBV_MTU_4096;
	full.active_mtu = IBV_MTU_4096; // RoCE over jumbo frames, as BlueField uplinks are set up
	full.gid_tbl_len = static_cast<int>(Limits::gid_table_len);
	full.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	full.max_msg_sz = Limits::max_msg_sz;
	full.pkey_tbl_len = Limits::pkey_table_len;
	full.lid = 0; // Ethernet: no LIDs
	full.max_vl_num = 4;
	full.active_width = 2;  // 4X
	full.active_speed = 64; // HDR (50 Gb/s per lane): 200 Gb/s, a BlueField-2 port
	full.phys_state = 5;    // LinkUp
	full.link_layer = context.info().function->link_layer == device::LinkLayer::infiniband
			      ? IBV_LINK_LAYER_INFINIBAND
			      : IBV_LINK_LAYER_ETHERNET;
	std::memcpy(attr, &full, std::min(attr_size, sizeof(full)));
	return 0;
}

int query_gid_entry(const Context &context, uint32_t port_num, uint32_t index, ibv_gid_entry *entry) noexcept
{
	if (port_num != 1)
		return EINVAL;
	const auto &gids = context.info().gids;
	if (index >= device::rdma::Limits::gid_table_len)
		return EINVAL;
	if (index >= gids.size())
		return ENODATA; // an empty slot of the table, as the kernel answers
	*entry = {};
	std::memcpy(entry->gid.raw, gids[index].gid.data(), sizeof(entry->gid.raw));
	entry->gid_index = index;
	entry->port_num = port_num;
	entry->gid_type =
	    gids[index].type == device::rdma::GidType::roce_v2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	entry->ndev_ifindex = 0;
	return 0;
}

} // namespace softdpu::verbs
