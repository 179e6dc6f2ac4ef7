#include "verbs/verbs.hpp"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

namespace softdpu::verbs {

namespace {

// Which attributes a transition requires and which it also accepts, for RC and UD queue pairs:
// the table of the IB specification (section 10.3) that the kernel checks (ib_modify_qp_is_ok).
struct Transition {
	bool valid = false;
	int required_rc = 0;
	int optional_rc = 0;
	int required_ud = 0;
	int optional_ud = 0;
};

constexpr int kStates = IBV_QPS_ERR + 1;

constexpr auto make_table()
{
	std::array<std::array<Transition, kStates>, kStates> table{};
	for (int from = 0; from < kStates; ++from) {
		if (from == IBV_QPS_UNKNOWN)
			continue;
		table[from][IBV_QPS_RESET] = {true, 0, 0, 0, 0};
		table[from][IBV_QPS_ERR] = {true, 0, 0, 0, 0};
	}
	table[IBV_QPS_RESET][IBV_QPS_INIT] = {true, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0,
					      IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0};
	table[IBV_QPS_INIT][IBV_QPS_INIT] = {true, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0,
					     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY};
	table[IBV_QPS_INIT][IBV_QPS_RTR] = {true,
					    IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
					    IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX, 0,
					    IBV_QP_PKEY_INDEX | IBV_QP_QKEY};
	table[IBV_QPS_RTR][IBV_QPS_RTS] = {
	    true, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
	    IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
	    IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY};
	table[IBV_QPS_RTS][IBV_QPS_RTS] = {true, 0,
					   IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
					       IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER,
					   0, IBV_QP_CUR_STATE | IBV_QP_QKEY};
	table[IBV_QPS_SQE][IBV_QPS_RTS] = {true, 0, 0, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY};
	return table;
}

constexpr auto kTransitions = make_table();

constexpr unsigned int kRemoteAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

} // namespace

int check_modify(const QueuePair &qp, const ibv_qp_attr &attr, int mask, ibv_qp_state *next_state) noexcept
{
	const ibv_qp_state current = qp.ibv.qp_base.state;
	if ((mask & IBV_QP_CUR_STATE) != 0 && attr.cur_qp_state != current)
		return EINVAL;
	const ibv_qp_state next = (mask & IBV_QP_STATE) != 0 ? attr.qp_state : current;
	if (next < IBV_QPS_RESET || next > IBV_QPS_ERR || next == IBV_QPS_UNKNOWN)
		return EINVAL;
	const Transition &transition = kTransitions[current][next];
	if (!transition.valid)
		return EINVAL;
	const bool ud = qp.ibv.qp_base.qp_type == IBV_QPT_UD;
	const int required = ud ? transition.required_ud : transition.required_rc;
	const int optional = ud ? transition.optional_ud : transition.optional_rc;
	const int given = mask & ~IBV_QP_STATE;
	if ((given & required) != required || (given & ~(required | optional)) != 0)
		return EINVAL;

	// Values.
	if ((mask & IBV_QP_PORT) != 0 && attr.port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) != 0 && attr.pkey_index >= device::rdma::Limits::pkey_table_len)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) != 0 && (attr.qp_access_flags & ~kRemoteAccess & ~IBV_ACCESS_LOCAL_WRITE) != 0)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) != 0 && (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0 && attr.max_dest_rd_atomic > device::rdma::Limits::max_qp_rd_atom)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0 && attr.max_rd_atomic > device::rdma::Limits::max_qp_rd_atom)
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) != 0 && attr.dest_qp_num > 0xffffff)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) != 0 && attr.retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) != 0 && attr.rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) != 0 && attr.min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) != 0 && attr.timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_AV) != 0) {
		const Context *context = Context::from(qp.ibv.qp_base.context);
		const ibv_ah_attr &ah = attr.ah_attr;
		if (ah.port_num != 1)
			return EINVAL;
		// RoCE routes by GID: an address without a GRH, or naming a source GID the port does not
		// have, is refused (EINVAL from the kernel too).
		if (context->info().function->link_layer == device::LinkLayer::ethernet &&
		    (!ah.is_global || ah.grh.sgid_index >= context->info().gids.size()))
			return EINVAL;
	}
	*next_state = next;
	return 0;
}

void record_attributes(QueuePair &qp, const ibv_qp_attr &attr, int mask) noexcept
{
	ibv_qp_attr &saved = qp.attr;
	if (mask & IBV_QP_ACCESS_FLAGS)
		saved.qp_access_flags = attr.qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		saved.pkey_index = attr.pkey_index;
	if (mask & IBV_QP_PORT)
		saved.port_num = attr.port_num;
	if (mask & IBV_QP_QKEY)
		saved.qkey = attr.qkey;
	if (mask & IBV_QP_AV)
		saved.ah_attr = attr.ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		saved.path_mtu = attr.path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		saved.timeout = attr.timeout;
	if (mask & IBV_QP_RETRY_CNT)
		saved.retry_cnt = attr.retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		saved.rnr_retry = attr.rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		saved.rq_psn = attr.rq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		saved.max_rd_atomic = attr.max_rd_atomic;
	if (mask & IBV_QP_ALT_PATH) {
		saved.alt_ah_attr = attr.alt_ah_attr;
		saved.alt_pkey_index = attr.alt_pkey_index;
		saved.alt_port_num = attr.alt_port_num;
		saved.alt_timeout = attr.alt_timeout;
	}
	if (mask & IBV_QP_MIN_RNR_TIMER)
		saved.min_rnr_timer = attr.min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		saved.sq_psn = attr.sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		saved.max_dest_rd_atomic = attr.max_dest_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		saved.path_mig_state = attr.path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		saved.dest_qp_num = attr.dest_qp_num;
}

void query_attributes(QueuePair &qp, ibv_qp_attr *attr, ibv_qp_init_attr *init_attr) noexcept
{
	// Under the queue pair's lock: another thread may be moving it (libmlx5's engine puts a queue
	// pair in ERR from its own thread).
	std::lock_guard lock(qp.mutex);
	*attr = qp.attr;
	attr->qp_state = qp.ibv.qp_base.state;
	attr->cur_qp_state = qp.ibv.qp_base.state;
	attr->cap = qp.cap;
	attr->sq_draining = 0;
	if (init_attr != nullptr) {
		*init_attr = {};
		init_attr->qp_context = qp.ibv.qp_base.qp_context;
		init_attr->send_cq = qp.ibv.qp_base.send_cq;
		init_attr->recv_cq = qp.ibv.qp_base.recv_cq;
		init_attr->srq = qp.ibv.qp_base.srq;
		init_attr->cap = qp.cap;
		init_attr->qp_type = qp.ibv.qp_base.qp_type;
		init_attr->sq_sig_all = qp.sq_sig_all ? 1 : 0;
	}
}

} // namespace softdpu::verbs
