// The rest of verbs.h's exported functions: names of enums, link rates, sysfs helpers, fork
// support, address handles from completions, and the verbs softdpu's device does not offer (they
// fail as rdma-core documents a device without the capability failing).
#include "verbs/verbs.hpp"

#include <infiniband/sa.h>

#include <fcntl.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

using namespace softdpu::verbs;

namespace {

template <size_t N> const char *name_of(const std::array<const char *, N> &names, int value, const char *unknown)
{
	return value >= 0 && static_cast<size_t>(value) < N ? names[static_cast<size_t>(value)] : unknown;
}

struct RateRow {
	ibv_rate rate;
	int mult; // multiple of 2.5 Gb/s; -1 for rates that are not one
	int mbps;
};

constexpr std::array<RateRow, 24> kRates = {{
    {IBV_RATE_2_5_GBPS, 1, 2500},    {IBV_RATE_5_GBPS, 2, 5000},        {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},    {IBV_RATE_30_GBPS, 12, 30000},     {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},   {IBV_RATE_80_GBPS, 32, 80000},     {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, -1, 14062},   {IBV_RATE_56_GBPS, -1, 56250},     {IBV_RATE_112_GBPS, -1, 112500},
    {IBV_RATE_168_GBPS, -1, 168750}, {IBV_RATE_25_GBPS, -1, 25781},     {IBV_RATE_100_GBPS, -1, 103125},
    {IBV_RATE_200_GBPS, -1, 206250}, {IBV_RATE_300_GBPS, -1, 309375},   {IBV_RATE_28_GBPS, -1, 28125},
    {IBV_RATE_50_GBPS, -1, 53125},   {IBV_RATE_400_GBPS, -1, 425000},   {IBV_RATE_600_GBPS, -1, 637500},
    {IBV_RATE_800_GBPS, -1, 850000}, {IBV_RATE_1200_GBPS, -1, 1275000}, {IBV_RATE_MAX, 0, 0},
}};

bool fork_initialized = false;

// The sysfs attributes of softdpu's devices (ibv_read_sysfs_file on a device path the device list
// gave): none exists in /sys, so the values come from the device itself.
bool device_attribute(const char *dir, const char *file, std::string *value)
{
	const std::vector<Device *> *devices = device_list();
	if (devices == nullptr)
		return false;
	for (Device *device : *devices) {
		const bool ibdev = std::string_view(dir) == device->ibv.ibdev_path;
		const bool uverbs = std::string_view(dir) == device->ibv.dev_path;
		if (!ibdev && !uverbs)
			continue;
		const auto &info = *device->info;
		const std::string_view name(file);
		char text[64];
		auto guid = [&](uint64_t value) {
			std::snprintf(
			    text, sizeof(text), "%04x:%04x:%04x:%04x", static_cast<unsigned>(value >> 48) & 0xffff,
			    static_cast<unsigned>(value >> 32) & 0xffff, static_cast<unsigned>(value >> 16) & 0xffff,
			    static_cast<unsigned>(value) & 0xffff);
			return std::string(text);
		};
		// A table of (file, value): literals go in through string_view (GCC 12 at -O3 warns, wrongly,
		// about assigning a literal to a string here).
		std::string_view text_value;
		std::string made;
		if (uverbs && name == "ibdev")
			made = info.name;
		else if (uverbs && name == "abi_version")
			text_value = "1";
		else if (ibdev && name == "node_guid")
			made = guid(info.node_guid);
		else if (ibdev && name == "sys_image_guid")
			made = guid(info.sys_image_guid);
		else if (ibdev && name == "fw_ver")
			made = info.fw_ver;
		else if (ibdev && name == "hca_type")
			text_value = "softdpu";
		else if (ibdev && name == "board_id")
			text_value = "SOFTDPU0000000001";
		else if (ibdev && name == "node_type")
			text_value = "1: CA";
		else if (ibdev && name == "node_desc")
			made = info.name + " softdpu";
		else if (ibdev && name == "hw_rev")
			text_value = "0x0";
		else
			return false;
		if (!text_value.empty())
			made.append(text_value.data(), text_value.size());
		*value = std::move(made);
		*value += "\n";
		return true;
	}
	return false;
}

} // namespace

extern "C" {

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static constexpr std::array<const char *, 24> names = {
	    "success",
	    "local length error",
	    "local QP operation error",
	    "local EE context operation error",
	    "local protection error",
	    "Work Request Flushed Error",
	    "memory management operation error",
	    "bad response error",
	    "local access error",
	    "remote invalid request error",
	    "remote access error",
	    "remote operation error",
	    "transport retry counter exceeded",
	    "RNR retry counter exceeded",
	    "local RDD violation error",
	    "remote invalid RD request",
	    "aborted error",
	    "invalid EE context number",
	    "invalid EE context state",
	    "fatal error",
	    "response timeout error",
	    "general error",
	    "TM error",
	    "TM rendezvous tag error",
	};
	return name_of(names, status, "unknown");
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static constexpr std::array<const char *, 7> names = {
	    "InfiniBand channel adapter",
	    "InfiniBand switch",
	    "InfiniBand router",
	    "iWARP NIC",
	    "usNIC",
	    "usNIC UDP",
	    "unspecified",
	};
	return name_of(names, node_type - IBV_NODE_CA, "unknown");
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static constexpr std::array<const char *, 6> names = {
	    "PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER",
	};
	return name_of(names, port_state, "unknown");
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	static constexpr std::array<const char *, 20> names = {
	    "CQ error",
	    "local work queue catastrophic error",
	    "invalid request local work queue error",
	    "local access violation work queue error",
	    "communication established",
	    "send queue drained",
	    "path migrated",
	    "path migration request error",
	    "local catastrophic error",
	    "port active",
	    "port error",
	    "LID change",
	    "P_Key change",
	    "SM change",
	    "SRQ catastrophic error",
	    "SRQ limit reached",
	    "last WQE reached",
	    "client reregistration",
	    "GID table change",
	    "WQ fatal",
	};
	return name_of(names, event, "unknown");
}

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (const RateRow &row : kRates)
		if (row.rate == rate)
			return row.mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (const RateRow &row : kRates)
		if (row.mult == mult && row.mult > 0)
			return row.rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (const RateRow &row : kRates)
		if (row.rate == rate)
			return row.mbps == 0 ? -1 : row.mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (const RateRow &row : kRates)
		if (row.mbps == mbps && row.mbps > 0)
			return row.rate;
	return IBV_RATE_MAX;
}

int ibv_get_sysfs_path(char *path, size_t size)
{
	const char *env = getuid() == geteuid() ? std::getenv("SYSFS_PATH") : nullptr;
	std::string value = env != nullptr ? env : "/sys";
	while (value.size() > 1 && value.back() == '/')
		value.pop_back();
	const int written = std::snprintf(path, size, "%s", value.c_str());
	return written < 0 || static_cast<size_t>(written) >= size ? -1 : 0;
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	if (dir == nullptr || file == nullptr || buf == nullptr || size == 0)
		return -1;
	std::string value;
	if (!device_attribute(dir, file, &value)) {
		const std::string path = std::string(dir) + "/" + file;
		const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		const ssize_t length = ::read(fd, buf, size);
		::close(fd);
		if (length <= 0)
			return -1;
		if (static_cast<size_t>(length) < size)
			buf[length] = '\0';
		else
			buf[size - 1] = '\0';
		if (length > 0 && buf[std::min(static_cast<size_t>(length), size) - 1] == '\n')
			buf[std::min(static_cast<size_t>(length), size) - 1] = '\0';
		return static_cast<int>(length);
	}
	// As rdma-core: the value without its newline, the length read with it.
	const size_t length = std::min(value.size(), size);
	std::memcpy(buf, value.data(), length);
	buf[std::min(length, size - 1)] = '\0';
	if (length > 0 && buf[length - 1 < size - 1 ? length - 1 : size - 1] == '\n')
		buf[length - 1 < size - 1 ? length - 1 : size - 1] = '\0';
	return static_cast<int>(length);
}

int ibv_fork_init(void)
{
	// Registered memory is never pinned (the device copies through the kernel), so a forked child
	// and its parent cannot corrupt each other's registrations: nothing to prepare.
	fork_initialized = true;
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	*dst = {};
	dst->qp_state = static_cast<ibv_qp_state>(src->qp_state);
	dst->cur_qp_state = static_cast<ibv_qp_state>(src->cur_qp_state);
	dst->path_mtu = static_cast<ibv_mtu>(src->path_mtu);
	dst->path_mig_state = static_cast<ibv_mig_state>(src->path_mig_state);
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	*dst = {};
	std::memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

// Path records between the kernel's layout (<rdma/ib_user_sa.h>) and sa.h's.
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	*dst = {};
	std::memcpy(dst->dgid.raw, src->dgid, sizeof(src->dgid));
	std::memcpy(dst->sgid.raw, src->sgid, sizeof(src->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = static_cast<int>(src->raw_traffic);
	dst->flow_label = src->flow_label;
	dst->reversible = static_cast<int>(src->reversible);
	dst->mtu = static_cast<uint8_t>(src->mtu);
	dst->pkey = src->pkey;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->numb_path = src->numb_path;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	*dst = {};
	std::memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	std::memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = static_cast<__u32>(src->raw_traffic);
	dst->flow_label = src->flow_label;
	dst->reversible = static_cast<__u32>(src->reversible);
	dst->mtu = src->mtu;
	dst->pkey = src->pkey;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->numb_path = src->numb_path;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	if (context == nullptr || attr == nullptr || eth_mac == nullptr || vid == nullptr || !attr->is_global)
		return -EINVAL;
	// A destination GID leads to its function's MAC through the topology; a link-local GID carries
	// the MAC in its EUI-64 itself.
	const uint8_t *gid = attr->grh.dgid.raw;
	const uint8_t link_local[2] = {0xfe, 0x80};
	if (std::memcmp(gid, link_local, 2) == 0 && gid[11] == 0xff && gid[12] == 0xfe) {
		eth_mac[0] = gid[8] ^ 0x02;
		eth_mac[1] = gid[9];
		eth_mac[2] = gid[10];
		eth_mac[3] = gid[13];
		eth_mac[4] = gid[14];
		eth_mac[5] = gid[15];
		*vid = 0xffff;
		return 0;
	}
	softdpu::device::rdma::GidBytes bytes{};
	std::memcpy(bytes.data(), gid, bytes.size());
	const softdpu::device::Topology *topology = softdpu::device::Topology::current();
	if (topology == nullptr)
		return -EINVAL;
	for (const auto &function : topology->all_functions()) {
		if (function->ibdev.empty() || !function->mac)
			continue;
		for (const auto &entry : softdpu::device::rdma::describe(*function).gids) {
			if (entry.gid == bytes) {
				std::memcpy(eth_mac, function->mac->data(), ETHERNET_LL_SIZE);
				*vid = 0xffff;
				return 0;
			}
		}
	}
	return -EHOSTUNREACH;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	if (context == nullptr || wc == nullptr || ah_attr == nullptr || port_num != 1)
		return -1;
	*ah_attr = {};
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if ((wc->wc_flags & IBV_WC_GRH) != 0) {
		if (grh == nullptr)
			return -1;
		ah_attr->is_global = 1;
		// The reply goes back to the sender: its source GID is our destination, and our GID
		// that it addressed is our source.
		std::memcpy(ah_attr->grh.dgid.raw, &grh->sgid, sizeof(ah_attr->grh.dgid.raw));
		const Context &device = *Context::from(context);
		const auto &gids = device.info().gids;
		for (size_t i = 0; i < gids.size(); ++i) {
			if (std::memcmp(gids[i].gid.data(), &grh->dgid, 16) == 0) {
				ah_attr->grh.sgid_index = static_cast<uint8_t>(i);
				break;
			}
		}
		ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
		ah_attr->grh.hop_limit = 0xff;
		ah_attr->grh.traffic_class = static_cast<uint8_t>((be32toh(grh->version_tclass_flow) >> 20) & 0xff);
	}
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)
{
	if (pd == nullptr) {
		errno = EINVAL;
		return nullptr;
	}
	ibv_ah_attr attr{};
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0) {
		errno = EINVAL;
		return nullptr;
	}
	return ibv_create_ah(pd, &attr);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP; // no multicast groups on the emulated fabric (max_mcast_grp is 0)
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	(void)mr;
	(void)flags;
	(void)pd;
	(void)addr;
	(void)length;
	(void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP; // no device memory to import from
	return nullptr;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

// Sharing objects through the kernel's command descriptor needs a kernel device.
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return nullptr;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return nullptr;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return nullptr;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return nullptr;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

} // extern "C"
