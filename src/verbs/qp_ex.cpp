// The extended send API (verbs.h: ibv_qp_to_qp_ex, ibv_wr_start ... ibv_wr_complete): each
// builder starts a request, the setters give it its data, and the request is queued when the next
// builder starts or the batch completes. wr_start holds the queue pair's lock until wr_complete or
// wr_abort, as rdma-core's providers do; the batch is queued all or nothing.
#include "verbs/verbs.hpp"

#include <cerrno>
#include <cstring>

namespace softdpu::verbs {

namespace {

QueuePair &owner(ibv_qp_ex *qp) noexcept
{
	return *QueuePair::from(qp);
}

// Queues the staged request, if any.
void flush_staged(QueuePair &qp) noexcept
{
	if (!qp.staged_active)
		return;
	qp.staged_active = false;
	if (qp.batch_error != 0)
		return;
	qp.batch_error = queue_send_locked(qp, qp.staged);
}

void begin(ibv_qp_ex *ibv, ibv_wr_opcode opcode) noexcept
{
	QueuePair &qp = owner(ibv);
	flush_staged(qp);
	qp.staged = {};
	qp.staged.wr_id = ibv->wr_id;
	qp.staged.send_flags = ibv->wr_flags;
	qp.staged.opcode = opcode;
	qp.staged_active = true;
}

void wr_start(ibv_qp_ex *ibv)
{
	QueuePair &qp = owner(ibv);
	qp.mutex.lock();
	qp.batch_error = 0;
	qp.batch_start = qp.sq_head;
	qp.staged_active = false;
	const ibv_qp_state state = qp.qp()->state;
	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD && state != IBV_QPS_ERR)
		qp.batch_error = EINVAL;
}

int wr_complete(ibv_qp_ex *ibv)
{
	QueuePair &qp = owner(ibv);
	flush_staged(qp);
	const int error = qp.batch_error;
	if (error != 0)
		qp.sq_head = qp.batch_start; // nothing of the batch is queued
	else
		after_post_locked(qp, qp.batch_start);
	qp.mutex.unlock();
	return error;
}

void wr_abort(ibv_qp_ex *ibv)
{
	QueuePair &qp = owner(ibv);
	qp.staged_active = false;
	qp.sq_head = qp.batch_start;
	qp.mutex.unlock();
}

void wr_send(ibv_qp_ex *ibv)
{
	begin(ibv, IBV_WR_SEND);
}

void wr_send_imm(ibv_qp_ex *ibv, __be32 imm_data)
{
	begin(ibv, IBV_WR_SEND_WITH_IMM);
	owner(ibv).staged.imm_data = imm_data;
}

void wr_rdma_write(ibv_qp_ex *ibv, uint32_t rkey, uint64_t remote_addr)
{
	begin(ibv, IBV_WR_RDMA_WRITE);
	owner(ibv).staged.wr.rdma = {remote_addr, rkey};
}

void wr_rdma_write_imm(ibv_qp_ex *ibv, uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	begin(ibv, IBV_WR_RDMA_WRITE_WITH_IMM);
	owner(ibv).staged.wr.rdma = {remote_addr, rkey};
	owner(ibv).staged.imm_data = imm_data;
}

void wr_rdma_read(ibv_qp_ex *ibv, uint32_t rkey, uint64_t remote_addr)
{
	begin(ibv, IBV_WR_RDMA_READ);
	owner(ibv).staged.wr.rdma = {remote_addr, rkey};
}

void wr_atomic_cmp_swp(ibv_qp_ex *ibv, uint32_t rkey, uint64_t remote_addr, uint64_t compare, uint64_t swap)
{
	begin(ibv, IBV_WR_ATOMIC_CMP_AND_SWP);
	owner(ibv).staged.wr.atomic = {remote_addr, compare, swap, rkey};
}

void wr_atomic_fetch_add(ibv_qp_ex *ibv, uint32_t rkey, uint64_t remote_addr, uint64_t add)
{
	begin(ibv, IBV_WR_ATOMIC_FETCH_AND_ADD);
	owner(ibv).staged.wr.atomic = {remote_addr, add, 0, rkey};
}

// Operations softdpu's device does not offer: the batch fails at wr_complete.
void unsupported(ibv_qp_ex *ibv) noexcept
{
	QueuePair &qp = owner(ibv);
	flush_staged(qp);
	if (qp.batch_error == 0)
		qp.batch_error = EOPNOTSUPP;
}

void wr_send_inv(ibv_qp_ex *ibv, uint32_t)
{
	unsupported(ibv);
}

void wr_local_inv(ibv_qp_ex *ibv, uint32_t)
{
	unsupported(ibv);
}

void wr_bind_mw(ibv_qp_ex *ibv, ibv_mw *, uint32_t, const ibv_mw_bind_info *)
{
	unsupported(ibv);
}

void wr_send_tso(ibv_qp_ex *ibv, void *, uint16_t, uint16_t)
{
	unsupported(ibv);
}

void wr_set_xrc_srqn(ibv_qp_ex *ibv, uint32_t)
{
	unsupported(ibv);
}

void wr_atomic_write(ibv_qp_ex *ibv, uint32_t, uint64_t, const void *)
{
	unsupported(ibv);
}

void wr_set_ud_addr(ibv_qp_ex *ibv, ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	QueuePair &qp = owner(ibv);
	qp.staged.wr.ud = {ah, remote_qpn, remote_qkey};
}

void wr_set_sge(ibv_qp_ex *ibv, uint32_t lkey, uint64_t addr, uint32_t length)
{
	QueuePair &qp = owner(ibv);
	if (qp.staged_sges.empty()) {
		qp.batch_error = EINVAL;
		return;
	}
	qp.staged_sges[0] = {addr, length, lkey};
	qp.staged.sg_list = qp.staged_sges.data();
	qp.staged.num_sge = 1;
}

void wr_set_sge_list(ibv_qp_ex *ibv, size_t num_sge, const ibv_sge *sg_list)
{
	QueuePair &qp = owner(ibv);
	if (num_sge > qp.cap.max_send_sge || (num_sge > 0 && sg_list == nullptr)) {
		qp.batch_error = EINVAL;
		return;
	}
	std::copy_n(sg_list, num_sge, qp.staged_sges.data());
	qp.staged.sg_list = qp.staged_sges.data();
	qp.staged.num_sge = static_cast<int>(num_sge);
}

void wr_set_inline_data_list(ibv_qp_ex *ibv, size_t num_buf, const ibv_data_buf *buf_list)
{
	QueuePair &qp = owner(ibv);
	size_t total = 0;
	for (size_t i = 0; i < num_buf; ++i)
		total += buf_list[i].length;
	if (total > qp.staged_inline.size() || qp.staged_sges.empty()) {
		qp.batch_error = EINVAL;
		return;
	}
	size_t offset = 0;
	for (size_t i = 0; i < num_buf; ++i) {
		std::memcpy(qp.staged_inline.data() + offset, buf_list[i].addr, buf_list[i].length);
		offset += buf_list[i].length;
	}
	qp.staged_sges[0] = {reinterpret_cast<uint64_t>(qp.staged_inline.data()), static_cast<uint32_t>(total), 0};
	qp.staged.sg_list = qp.staged_sges.data();
	qp.staged.num_sge = 1;
	qp.staged.send_flags |= IBV_SEND_INLINE;
}

void wr_set_inline_data(ibv_qp_ex *ibv, void *addr, size_t length)
{
	const ibv_data_buf buf{addr, length};
	wr_set_inline_data_list(ibv, 1, &buf);
}

} // namespace

void install_send_ops(QueuePair &qp) noexcept
{
	ibv_qp_ex &ex = qp.ibv;
	ex.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	ex.wr_atomic_fetch_add = wr_atomic_fetch_add;
	ex.wr_bind_mw = wr_bind_mw;
	ex.wr_local_inv = wr_local_inv;
	ex.wr_rdma_read = wr_rdma_read;
	ex.wr_rdma_write = wr_rdma_write;
	ex.wr_rdma_write_imm = wr_rdma_write_imm;
	ex.wr_send = wr_send;
	ex.wr_send_imm = wr_send_imm;
	ex.wr_send_inv = wr_send_inv;
	ex.wr_send_tso = wr_send_tso;
	ex.wr_set_ud_addr = wr_set_ud_addr;
	ex.wr_set_xrc_srqn = wr_set_xrc_srqn;
	ex.wr_set_inline_data = wr_set_inline_data;
	ex.wr_set_inline_data_list = wr_set_inline_data_list;
	ex.wr_set_sge = wr_set_sge;
	ex.wr_set_sge_list = wr_set_sge_list;
	ex.wr_start = wr_start;
	ex.wr_complete = wr_complete;
	ex.wr_abort = wr_abort;
	ex.wr_atomic_write = wr_atomic_write;
}

} // namespace softdpu::verbs
