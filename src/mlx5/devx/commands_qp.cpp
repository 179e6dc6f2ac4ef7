// CREATE_QP / QUERY_QP / DESTROY_QP and the state transitions (RST2INIT, INIT2INIT, INIT2RTR,
// RTR2RTS, RTS2RTS, SQERR2RTS, 2ERR, 2RST; opt_param_mask as the kernel's table). A DevX QP (RC
// only) is a work-queue buffer and a doorbell record in umems, served by the work-queue engine,
// over a backing verbs RC QP whose qp_num is the qpn: every transition is an ibv_modify_qp of the
// backing QP with the qpc's fields, and QUERY_QP reads the backing QP back. The transitions and
// QUERY_QP also run on QPs made through verbs (mlx5dv_devx_qp_query / _modify).
#include "mlx5/devx/command_processor.hpp"

#include "mlx5/devx/prm.hpp"
#include "mlx5/mlx5.hpp"
#include "mlx5/wq/engine.hpp"
#include "verbs/softdpu_api.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace softdpu::mlx5::devx {

namespace {

constexpr uint64_t kSendBasicBlock = 64; // bytes of a send WQE basic block
constexpr uint32_t kMaxInlineData = 256; // what a backing QP offers for inline data segments

uint32_t prm_state(ibv_qp_state state) noexcept
{
	switch (state) {
	case IBV_QPS_RESET:
		return prm::qpc::kStateRst;
	case IBV_QPS_INIT:
		return prm::qpc::kStateInit;
	case IBV_QPS_RTR:
		return prm::qpc::kStateRtr;
	case IBV_QPS_RTS:
		return prm::qpc::kStateRts;
	case IBV_QPS_SQD:
		return prm::qpc::kStateSqd;
	case IBV_QPS_SQE:
		return prm::qpc::kStateSqer;
	default:
		return prm::qpc::kStateErr;
	}
}

// The state a transition starts from (-1: any), and the one it reaches.
struct Transition {
	int from;
	ibv_qp_state to;
};

Transition transition_of(uint32_t opcode) noexcept
{
	switch (opcode) {
	case prm::kRst2InitQp:
		return {IBV_QPS_RESET, IBV_QPS_INIT};
	case prm::kInit2RtrQp:
		return {IBV_QPS_INIT, IBV_QPS_RTR};
	case prm::kRtr2RtsQp:
		return {IBV_QPS_RTR, IBV_QPS_RTS};
	case prm::kRts2RtsQp:
		return {IBV_QPS_RTS, IBV_QPS_RTS};
	case prm::kInit2InitQp:
		return {IBV_QPS_INIT, IBV_QPS_INIT};
	case prm::kSqerr2RtsQp:
		return {IBV_QPS_SQE, IBV_QPS_RTS};
	case prm::k2ErrQp:
		return {-1, IBV_QPS_ERR};
	default: // 2RST
		return {-1, IBV_QPS_RESET};
	}
}

unsigned int access_of(const uint8_t *qpc) noexcept
{
	unsigned int access = 0;
	if (prm::get(qpc, prm::qpc::rre) != 0)
		access |= IBV_ACCESS_REMOTE_READ;
	if (prm::get(qpc, prm::qpc::rwe) != 0)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (prm::get(qpc, prm::qpc::rae) != 0)
		access |= IBV_ACCESS_REMOTE_ATOMIC;
	return access;
}

// The optional parameters (opt_param_mask) an RC transition takes: the kernel's table (Linux's
// mlx5 opt_mask[][][MLX5_QP_ST_RC]); RST2INIT has none (its fields are all required).
uint32_t optional_of(uint32_t opcode) noexcept
{
	using namespace prm::optpar;
	switch (opcode) {
	case prm::kInit2InitQp:
		return kRre | kRae | kRwe | kPkeyIndex | kPriPort;
	case prm::kInit2RtrQp:
		return kAltAddrPath | kRre | kRae | kRwe | kPkeyIndex;
	case prm::kRtr2RtsQp:
	case prm::kRts2RtsQp:
		return kAltAddrPath | kRre | kRae | kRwe | kPmState | kRnrTimeout;
	case prm::kSqerr2RtsQp:
		return kRnrTimeout | kRwe | kRae | kRre;
	default:
		return 0;
	}
}

uint8_t port_of(const uint8_t *path) noexcept
{
	const uint32_t port = prm::get(path, prm::ads::vhca_port_num);
	return static_cast<uint8_t>(port == 0 ? 1 : port);
}

} // namespace

int CommandProcessor::create_qp(Command &command)
{
	using namespace prm::create_qp_in;
	if (command.inlen < kBytes)
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	const uint8_t *qpc = command.in + kQpc / 8;
	if (prm::get(qpc, prm::qpc::st) != prm::qpc::kServiceRc)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeQpServiceType);
	const uint32_t pdn = prm::get(qpc, prm::qpc::pd);
	ibv_pd *pd = find_pd(pdn);
	if (pd == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchPd);
	// A CQ the QP completes into: a DevX CQ of this context, or a CQ made through verbs on it.
	const auto resolve_cq = [&](uint32_t cqn, Cq **devx_cq) -> ibv_cq * {
		const auto found = cqs_.find(cqn);
		if (found != cqs_.end()) {
			*devx_cq = &found->second;
			return found->second.backing;
		}
		*devx_cq = nullptr;
		return softdpu_verbs_cq_of(context_, cqn);
	};
	Qp qp;
	qp.pdn = pdn;
	qp.cqn_snd = prm::get(qpc, prm::qpc::cqn_snd);
	qp.cqn_rcv = prm::get(qpc, prm::qpc::cqn_rcv);
	ibv_cq *send_cq = resolve_cq(qp.cqn_snd, &qp.send_cq);
	ibv_cq *recv_cq = resolve_cq(qp.cqn_rcv, &qp.recv_cq);
	if (send_cq == nullptr || recv_cq == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchCq);
	qp.user_index = prm::get(qpc, prm::qpc::user_index);
	qp.rq_type = prm::get(qpc, prm::qpc::rq_type);
	if (qp.rq_type != prm::qpc::kRqRegular && qp.rq_type != prm::qpc::kRqZeroSize)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeRqType);
	qp.no_sq = prm::get(qpc, prm::qpc::no_sq);
	qp.log_sq_size = prm::get(qpc, prm::qpc::log_sq_size);
	qp.log_rq_size = prm::get(qpc, prm::qpc::log_rq_size);
	qp.log_rq_stride = prm::get(qpc, prm::qpc::log_rq_stride);
	const uint32_t log_max_wr = log2_floor(caps_.max_qp_wr);
	if (qp.log_sq_size > log_max_wr || qp.log_rq_size > log_max_wr)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeQpSize);
	qp.uar_page = prm::get(qpc, prm::qpc::uar_page);
	if (!uar_allocated(qp.uar_page))
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeBadUar);
	const bool has_rq = qp.rq_type == prm::qpc::kRqRegular;
	const uint64_t stride = uint64_t{16} << qp.log_rq_stride;
	const uint64_t rq_bytes = has_rq ? stride << qp.log_rq_size : 0;
	const uint64_t sq_bytes = qp.no_sq != 0 ? 0 : kSendBasicBlock << qp.log_sq_size;
	Umem *wq_umem = find_umem(prm::get(command.in, wq_umem_id));
	qp.dbr_umem = find_umem(prm::get(qpc, prm::qpc::dbr_umem_id));
	if ((wq_umem == nullptr && rq_bytes + sq_bytes != 0) || qp.dbr_umem == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchUmem);
	const uint64_t wq_offset = prm::get64(command.in, wq_umem_offset);
	qp.dbr_offset = prm::get64(qpc, prm::qpc::dbr_addr);
	if ((wq_umem != nullptr && !wq_umem->holds(wq_offset, rq_bytes + sq_bytes)) ||
	    !qp.dbr_umem->holds(qp.dbr_offset, kDoorbellBytes) || qp.dbr_offset % kDoorbellBytes != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeUmemRange);
	qp.wq_umem = wq_umem;

	ibv_qp_init_attr init{};
	init.send_cq = send_cq;
	init.recv_cq = recv_cq;
	init.qp_type = IBV_QPT_RC;
	init.sq_sig_all = 0;
	init.cap.max_send_wr = qp.no_sq != 0 ? 1 : 1u << qp.log_sq_size;
	init.cap.max_recv_wr = has_rq ? 1u << qp.log_rq_size : 0;
	init.cap.max_send_sge = caps_.max_sge;
	init.cap.max_recv_sge = has_rq ? std::min<uint32_t>(caps_.max_sge, static_cast<uint32_t>(stride / 16)) : 0;
	init.cap.max_inline_data = kMaxInlineData;
	ibv_qp *backing = ibv_create_qp(pd, &init);
	if (backing == nullptr)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	qp.backing = backing;
	wq::QpConfig config;
	config.qpn = backing->qp_num;
	config.backing = backing;
	uint8_t *wq = wq_umem != nullptr ? wq_umem->addr + wq_offset : nullptr;
	// mlx5 lays the receive queue out first, then the send queue.
	config.rq = has_rq ? wq : nullptr;
	config.log_rq_size = qp.log_rq_size;
	config.log_rq_stride = qp.log_rq_stride;
	config.sq = qp.no_sq != 0 ? nullptr : wq + rq_bytes;
	config.log_sq_size = qp.no_sq != 0 ? 0 : qp.log_sq_size;
	config.doorbell = reinterpret_cast<volatile uint32_t *>(qp.dbr_umem->addr + qp.dbr_offset);
	// A verbs CQ is completed into through its mlx5 view (the buffer mlx5dv_init_obj gives).
	config.send_cq = qp.send_cq != nullptr ? qp.send_cq->engine : mlx5_cq_of(send_cq);
	config.recv_cq = qp.recv_cq != nullptr ? qp.recv_cq->engine : mlx5_cq_of(recv_cq);
	config.user_index = qp.user_index;
	qp.engine = wq::Engine::instance().add_qp(config);
	if (qp.engine == nullptr) {
		(void)ibv_destroy_qp(backing);
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	}
	try {
		qps_.emplace(backing->qp_num, qp);
	} catch (...) {
		wq::Engine::instance().remove_qp(qp.engine);
		(void)ibv_destroy_qp(backing);
		throw;
	}
	if (qp.send_cq != nullptr)
		++qp.send_cq->users;
	if (qp.recv_cq != nullptr)
		++qp.recv_cq->users;
	if (qp.wq_umem != nullptr)
		++qp.wq_umem->users;
	++qp.dbr_umem->users;
	command.created_id = backing->qp_num;
	std::array<uint8_t, prm::kOutboxHeaderBytes> answer{};
	prm::set(answer.data(), prm::object_id, backing->qp_num);
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::modify_qp(Command &command)
{
	const bool short_form = command.opcode == prm::k2ErrQp || command.opcode == prm::k2RstQp;
	if (command.inlen < (short_form ? prm::modify_qp_in::kShortBytes : prm::modify_qp_in::kBytes))
		return EINVAL;
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	Qp *devx_qp = nullptr;
	ibv_qp *qp = find_qp(prm::get(command.in, prm::object_id), &devx_qp);
	if (qp == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchQp);
	ibv_qp_attr current{};
	ibv_qp_init_attr current_init{};
	if (ibv_query_qp(qp, &current, IBV_QP_STATE, &current_init) != 0)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
	const Transition transition = transition_of(command.opcode);
	if (transition.from >= 0 && current.qp_state != static_cast<ibv_qp_state>(transition.from))
		return fail(command.out, command.outlen, prm::kStatusBadQpState, kSyndromeQpState);

	ibv_qp_attr attr{};
	int mask = IBV_QP_STATE;
	attr.qp_state = transition.to;
	if (!short_form) {
		const uint8_t *qpc = command.in + prm::modify_qp_in::kQpc / 8;
		const uint8_t *path = qpc + prm::qpc::kPrimaryAddressPath / 8;
		// Optional parameters: a bit the transition does not take, an alternate path (the device
		// has none) or a path migration state other than MIGRATED is refused.
		using namespace prm::optpar;
		const uint32_t optional = prm::get(command.in, prm::modify_qp_in::opt_param_mask);
		if ((optional & ~optional_of(command.opcode)) != 0 || (optional & kAltAddrPath) != 0 ||
		    ((optional & kPmState) != 0 && prm::get(qpc, prm::qpc::pm_state) != prm::qpc::kPmMigrated))
			return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeOptParam);
		if ((optional & (kRre | kRae | kRwe)) != 0) {
			// Each bit replaces its own access flag; the others keep their value.
			ibv_qp_attr now{};
			ibv_qp_init_attr now_init{};
			if (ibv_query_qp(qp, &now, IBV_QP_ACCESS_FLAGS, &now_init) != 0)
				return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);
			const unsigned int given = access_of(qpc);
			unsigned int access = now.qp_access_flags;
			const auto take = [&](uint32_t bit, unsigned int flag) {
				if ((optional & bit) != 0)
					access = (access & ~flag) | (given & flag);
			};
			take(kRre, IBV_ACCESS_REMOTE_READ);
			take(kRwe, IBV_ACCESS_REMOTE_WRITE);
			take(kRae, IBV_ACCESS_REMOTE_ATOMIC);
			attr.qp_access_flags = access;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		if ((optional & kPkeyIndex) != 0) {
			attr.pkey_index = static_cast<uint16_t>(prm::get(path, prm::ads::pkey_index));
			mask |= IBV_QP_PKEY_INDEX;
		}
		if ((optional & kPriPort) != 0) {
			attr.port_num = port_of(path);
			mask |= IBV_QP_PORT;
		}
		if ((optional & kRnrTimeout) != 0) {
			attr.min_rnr_timer = static_cast<uint8_t>(prm::get(qpc, prm::qpc::min_rnr_nak));
			mask |= IBV_QP_MIN_RNR_TIMER;
		}
		switch (command.opcode) {
		case prm::kRst2InitQp:
			attr.pkey_index = static_cast<uint16_t>(prm::get(path, prm::ads::pkey_index));
			attr.port_num = port_of(path);
			attr.qp_access_flags = access_of(qpc);
			mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
			break;
		case prm::kInit2RtrQp: {
			const uint32_t mtu = prm::get(qpc, prm::qpc::mtu);
			if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
				return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeQpAttributes);
			attr.path_mtu = static_cast<ibv_mtu>(mtu);
			attr.dest_qp_num = prm::get(qpc, prm::qpc::remote_qpn);
			attr.rq_psn = prm::get(qpc, prm::qpc::next_rcv_psn);
			attr.max_dest_rd_atomic = static_cast<uint8_t>(
			    std::min<uint32_t>(1u << prm::get(qpc, prm::qpc::log_rra_max), caps_.max_qp_rd_atom));
			attr.min_rnr_timer = static_cast<uint8_t>(prm::get(qpc, prm::qpc::min_rnr_nak));
			attr.ah_attr.is_global = 1;
			std::memcpy(attr.ah_attr.grh.dgid.raw, path + prm::ads::kRgidRip / 8, 16);
			attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(prm::get(path, prm::ads::src_addr_index));
			attr.ah_attr.grh.hop_limit = static_cast<uint8_t>(prm::get(path, prm::ads::hop_limit));
			attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(prm::get(path, prm::ads::tclass));
			attr.ah_attr.grh.flow_label = prm::get(path, prm::ads::flow_label);
			attr.ah_attr.sl = static_cast<uint8_t>(prm::get(path, prm::ads::sl));
			attr.ah_attr.port_num = port_of(path);
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
			break;
		}
		case prm::kRtr2RtsQp:
			attr.sq_psn = prm::get(qpc, prm::qpc::next_send_psn);
			attr.timeout = static_cast<uint8_t>(prm::get(path, prm::ads::ack_timeout));
			attr.retry_cnt = static_cast<uint8_t>(prm::get(qpc, prm::qpc::retry_count));
			attr.rnr_retry = static_cast<uint8_t>(prm::get(qpc, prm::qpc::rnr_retry));
			attr.max_rd_atomic = static_cast<uint8_t>(
			    std::min<uint32_t>(1u << prm::get(qpc, prm::qpc::log_sra_max), caps_.max_qp_init_rd_atom));
			mask |= IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
			break;
		default: // RTS2RTS, INIT2INIT, SQERR2RTS: the optional parameters only
			break;
		}
	}
	if (ibv_modify_qp(qp, &attr, mask) != 0)
		return fail(command.out, command.outlen, prm::kStatusBadParam, kSyndromeQpAttributes);
	if (transition.to == IBV_QPS_RESET || transition.to == IBV_QPS_ERR) {
		// The engine starts the queue over (RST) or flushes it (ERR): a DevX QP's, or the mlx5
		// view of a verbs QP (mlx5dv_init_obj) moved through mlx5dv_devx_qp_modify.
		wq::Qp *engine = devx_qp != nullptr ? devx_qp->engine : mlx5_qp_of(qp);
		if (engine != nullptr)
			wq::Engine::instance().reset_qp(engine);
	}
	return answer_id(command.out, command.outlen, 0);
}

int CommandProcessor::query_qp(Command &command)
{
	if (command.op_mod != 0)
		return fail(command.out, command.outlen, prm::kStatusBadOp, kSyndromeUnknownOpMod);
	Qp *devx_qp = nullptr;
	ibv_qp *qp = find_qp(prm::get(command.in, prm::object_id), &devx_qp);
	if (qp == nullptr)
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchQp);
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	constexpr int kAll = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_CAP;
	if (ibv_query_qp(qp, &attr, kAll, &init) != 0)
		return fail(command.out, command.outlen, prm::kStatusNoResources, kSyndromeNoResources);

	std::array<uint8_t, prm::query_qp_out::kBytes> answer{};
	uint8_t *qpc = answer.data() + prm::query_qp_out::kQpc / 8;
	uint8_t *path = qpc + prm::qpc::kPrimaryAddressPath / 8;
	using namespace prm::qpc;
	prm::set(qpc, state, prm_state(attr.qp_state));
	prm::set(qpc, st, kServiceRc);
	prm::set(qpc, pd, qp->pd->handle);
	prm::set(qpc, mtu, attr.path_mtu);
	prm::set(qpc, remote_qpn, attr.dest_qp_num);
	prm::set(qpc, log_sra_max, log2_ceil(attr.max_rd_atomic));
	prm::set(qpc, retry_count, attr.retry_cnt);
	prm::set(qpc, rnr_retry, attr.rnr_retry);
	prm::set(qpc, next_send_psn, attr.sq_psn);
	prm::set(qpc, log_rra_max, log2_ceil(attr.max_dest_rd_atomic));
	prm::set(qpc, rre, (attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) != 0 ? 1 : 0);
	prm::set(qpc, rwe, (attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) != 0 ? 1 : 0);
	prm::set(qpc, rae, (attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC) != 0 ? 1 : 0);
	prm::set(qpc, min_rnr_nak, attr.min_rnr_timer);
	prm::set(qpc, next_rcv_psn, attr.rq_psn);
	prm::set(path, prm::ads::pkey_index, attr.pkey_index);
	prm::set(path, prm::ads::grh, attr.ah_attr.is_global);
	prm::set(path, prm::ads::ack_timeout, attr.timeout);
	prm::set(path, prm::ads::src_addr_index, attr.ah_attr.grh.sgid_index);
	prm::set(path, prm::ads::hop_limit, attr.ah_attr.grh.hop_limit);
	prm::set(path, prm::ads::tclass, attr.ah_attr.grh.traffic_class);
	prm::set(path, prm::ads::flow_label, attr.ah_attr.grh.flow_label);
	std::memcpy(path + prm::ads::kRgidRip / 8, attr.ah_attr.grh.dgid.raw, 16);
	prm::set(path, prm::ads::sl, attr.ah_attr.sl);
	prm::set(path, prm::ads::vhca_port_num, attr.port_num != 0 ? attr.port_num : attr.ah_attr.port_num);
	if (devx_qp != nullptr) {
		prm::set(qpc, log_rq_size, devx_qp->log_rq_size);
		prm::set(qpc, log_rq_stride, devx_qp->log_rq_stride);
		prm::set(qpc, no_sq, devx_qp->no_sq);
		prm::set(qpc, log_sq_size, devx_qp->log_sq_size);
		prm::set(qpc, uar_page, devx_qp->uar_page);
		prm::set(qpc, cqn_snd, devx_qp->cqn_snd);
		prm::set(qpc, cqn_rcv, devx_qp->cqn_rcv);
		prm::set64(qpc, dbr_addr, devx_qp->dbr_offset);
		prm::set(qpc, rq_type, devx_qp->rq_type);
		prm::set(qpc, user_index, devx_qp->user_index);
		prm::set(qpc, dbr_umem_valid, 1);
		prm::set(qpc, dbr_umem_id, devx_qp->dbr_umem->dv.umem_id);
	} else {
		prm::set(qpc, log_rq_size, log2_ceil(init.cap.max_recv_wr));
		prm::set(qpc, log_sq_size, log2_ceil(init.cap.max_send_wr));
		prm::set(qpc, cqn_snd, qp->send_cq->handle);
		prm::set(qpc, cqn_rcv, qp->recv_cq->handle);
		prm::set(qpc, rq_type, qp->srq != nullptr ? kRqSrq : kRqRegular);
	}
	copy_out(answer.data(), answer.size(), command.out, command.outlen);
	return 0;
}

int CommandProcessor::destroy_qp(Command &command)
{
	const auto found = qps_.find(prm::get(command.in, prm::object_id));
	if (found == qps_.end())
		return fail(command.out, command.outlen, prm::kStatusBadRes, kSyndromeNoSuchQp);
	Qp &qp = found->second;
	wq::Engine::instance().remove_qp(qp.engine);
	(void)ibv_destroy_qp(qp.backing);
	if (qp.send_cq != nullptr)
		--qp.send_cq->users;
	if (qp.recv_cq != nullptr)
		--qp.recv_cq->users;
	if (qp.wq_umem != nullptr)
		--qp.wq_umem->users;
	--qp.dbr_umem->users;
	qps_.erase(found);
	return answer_id(command.out, command.outlen, 0);
}

} // namespace softdpu::mlx5::devx
