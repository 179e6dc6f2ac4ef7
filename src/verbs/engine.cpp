// What the software RDMA device does: memory keys, the life of queue pairs and shared receive
// queues, and the execution of work requests against other queue pairs through the transport
// (device/rdma/transport), the only layer that touches another process.
//
// Execution model. ibv_post_send only queues (no system call); the requests of a queue pair run in
// order when the application polls a CQ of that queue pair (ibv_poll_cq, ibv_req_notify_cq), and
// otherwise within a tick (1 ms) of the transport's agent thread, so work posted and never polled
// for still completes. One-sided operations need nothing of the target process; a SEND claims a
// receive the target posted in its shared receive ring and writes the completion into the
// target's CQ ring, then wakes its completion channel if armed.
#include "verbs/verbs.hpp"

#include "device/rdma/receive_ring.hpp"

#include "common/sdk_log.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>

namespace softdpu::verbs {

namespace transport = device::rdma::transport;
using device::rdma::CompletionRecord;
using device::rdma::ReceiveEntry;
using device::rdma::ReceiveRingHeader;
using transport::Status;

namespace {

constexpr uint32_t kUdGrhBytes = 40;
constexpr uint32_t kUdMaxMessage = 4096; // the port's MTU
constexpr uint64_t kNeverNs = ~0ull;
constexpr uint64_t kPeerLostGraceNs = 1000000000ull; // longest wait before a lost peer fails an idle QP

uint64_t now_ns() noexcept
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts); // vDSO: no system call
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// How long a requester retries: the IB local ACK timeout (4.096 us * 2^timeout, 0 meaning
// infinite) times retry_cnt + 1; RNR waits are counted the same way from min_rnr_timer's scale
// (about 1 ms each here). rnr_retry 7 retries forever.
uint64_t retry_budget_ns(const ibv_qp_attr &attr) noexcept
{
	if (attr.timeout == 0)
		return kNeverNs;
	const uint64_t timeout = 4096ull << std::min<unsigned>(attr.timeout, 31);
	return timeout * (attr.retry_cnt + 1ull);
}

uint64_t rnr_budget_ns(const ibv_qp_attr &attr) noexcept
{
	if (attr.rnr_retry == 7)
		return kNeverNs;
	return 1000000ull * (attr.rnr_retry + 1ull);
}

ibv_wc_opcode wc_opcode(ibv_wr_opcode opcode) noexcept
{
	switch (opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

// The IBV_ACCESS_REMOTE_* flag the responder's queue pair must have for an RC request.
unsigned int remote_access_needed(ibv_wr_opcode opcode) noexcept
{
	switch (opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_ACCESS_REMOTE_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_ACCESS_REMOTE_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_ACCESS_REMOTE_ATOMIC;
	default:
		return 0;
	}
}

// The receive ring view of a peer's region: the header declares what the info bytes said and the
// entries fit in the region.
ReceiveRingHeader *attach_ring(transport::SharedRegion *region, uint32_t slots, uint32_t max_sge) noexcept
{
	if (region == nullptr)
		return nullptr;
	return device::rdma::attach_receive_ring(region->data(), region->size(), slots, max_sge,
						 device::rdma::Limits::max_srq_sge);
}

} // namespace

// ---- Memory keys ----

int register_memory(ProtectionDomain &pd, MemoryRegion *mr, uintptr_t addr, size_t length, uint64_t iova,
		    unsigned int access, uint32_t *key) noexcept
{
	(void)mr;
	transport::MemoryTable *table = transport::MemoryTable::instance();
	if (table == nullptr)
		return ENOMEM;
	switch (table->add(addr, length, iova, access, pd.ibv.handle, key)) {
	case Status::ok:
		return 0;
	case Status::invalid_argument:
		return EINVAL;
	default:
		return ENOMEM;
	}
}

void unregister_memory(uint32_t key) noexcept
{
	if (transport::MemoryTable *table = transport::MemoryTable::instance())
		(void)table->remove(key);
}

// ---- Receive queues ----

ReceiveEntry *ReceiveQueue::entry(uint64_t position) noexcept
{
	return device::rdma::receive_entry(header, slots, max_sge, position);
}

int ReceiveQueue::create(uint32_t min_slots, uint32_t sges, uint32_t pd_id, uint32_t qpn, const char *name) noexcept
{
	slots = min_slots == 0 ? 0 : std::bit_ceil(min_slots);
	max_sge = sges;
	try {
		shadow.resize(slots);
	} catch (const std::bad_alloc &) {
		return ENOMEM;
	}
	if (transport::SharedRegion::create(device::rdma::receive_ring_bytes(slots, max_sge), name, &region) !=
	    Status::ok)
		return ENOMEM;
	header = new (region.data()) ReceiveRingHeader();
	header->magic = device::rdma::kReceiveRingMagic;
	header->slots = slots;
	header->max_sge = max_sge;
	header->pd_id = pd_id;
	header->qpn = qpn;
	return 0;
}

int ReceiveQueue::post(ibv_recv_wr *wr, ibv_recv_wr **bad) noexcept
{
	std::lock_guard lock(mutex);
	for (; wr != nullptr; wr = wr->next) {
		if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == nullptr)) {
			*bad = wr;
			return EINVAL;
		}
		Slot &slot = shadow[head & (slots - 1)];
		if (slot.busy) {
			*bad = wr;
			return ENOMEM; // the queue is full
		}
		ReceiveEntry *target = entry(head);
		target->num_sge = static_cast<uint32_t>(wr->num_sge);
		for (int i = 0; i < wr->num_sge; ++i)
			target->sge[i] = {wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey};
		uint64_t length = 0;
		for (int i = 0; i < wr->num_sge; ++i)
			length += wr->sg_list[i].length;
		slot.position = head;
		slot.wr_id = wr->wr_id;
		slot.length = static_cast<uint32_t>(std::min<uint64_t>(length, UINT32_MAX));
		slot.busy = true;
		++head;
		header->head.store(head, std::memory_order_release);
	}
	return 0;
}

bool ReceiveQueue::complete(uint64_t position, uint64_t *wr_id, uint32_t *posted_length) noexcept
{
	if (slots == 0)
		return false;
	// The poster reuses a slot once it is free: both sides under the queue's lock (a leaf lock:
	// post takes no other, so it may be taken here under a CQ's or a queue pair's lock).
	std::lock_guard lock(mutex);
	Slot &slot = shadow[position & (slots - 1)];
	// Peers' records carry the low 32 bits of the position (CompletionRecord::recv_index).
	if (!slot.busy || static_cast<uint32_t>(slot.position) != static_cast<uint32_t>(position))
		return false;
	*wr_id = slot.wr_id;
	if (posted_length != nullptr)
		*posted_length = slot.length;
	slot.busy = false;
	return true;
}

std::vector<uint64_t> ReceiveQueue::claim_all() noexcept
{
	std::vector<uint64_t> claimed;
	if (slots == 0)
		return claimed;
	std::lock_guard lock(mutex);
	uint64_t tail = header->tail.load(std::memory_order_acquire);
	// Peers write the tail: one that is not within a ring of the head is a lie (nothing to claim).
	while (tail < head && head - tail <= slots) {
		if (header->tail.compare_exchange_weak(tail, tail + 1, std::memory_order_acq_rel)) {
			try {
				claimed.push_back(tail);
			} catch (const std::bad_alloc &) {
				break;
			}
			++tail;
		}
	}
	return claimed;
}

// ---- Queue pairs: the data path ----

namespace {

void post_async(QueuePair &qp, ibv_event_type type) noexcept
{
	ibv_async_event event{};
	event.element.qp = qp.qp();
	event.event_type = type;
	Context::from(qp.qp()->context)->post_async_event(event);
}

CompletionQueue &send_cq(QueuePair &qp) noexcept
{
	return *CompletionQueue::from(qp.qp()->send_cq);
}

CompletionQueue &recv_cq(QueuePair &qp) noexcept
{
	return *CompletionQueue::from(qp.qp()->recv_cq);
}

void complete_send(QueuePair &qp, const SendSlot &slot, ibv_wc_status status, uint32_t byte_len) noexcept
{
	const bool signaled = qp.sq_sig_all || (slot.send_flags & IBV_SEND_SIGNALED) != 0;
	if (status == IBV_WC_SUCCESS && !signaled)
		return;
	ibv_wc wc{};
	wc.wr_id = slot.wr_id;
	wc.status = status;
	wc.opcode = wc_opcode(slot.opcode);
	wc.byte_len = byte_len;
	wc.qp_num = qp.qp()->qp_num;
	(void)complete(send_cq(qp), wc, false);
}

// Flushes what is left of both queues (the queue pair is in error).
void flush_locked(QueuePair &qp) noexcept
{
	const size_t depth = qp.sq.size();
	while (qp.sq_done < qp.sq_head) {
		const SendSlot &slot = qp.sq[qp.sq_done % depth];
		// Flushed requests always complete, signaled or not (the IB specification, 10.8.3).
		ibv_wc wc{};
		wc.wr_id = slot.wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = wc_opcode(slot.opcode);
		wc.qp_num = qp.qp()->qp_num;
		(void)complete(send_cq(qp), wc, false);
		++qp.sq_done;
	}
	qp.pending.store(false, std::memory_order_relaxed);
	if (qp.qp()->srq != nullptr)
		return;
	// Receives that completed before the error come first (completions of a queue are in order).
	absorb_peer_records(recv_cq(qp));
	for (uint64_t position : qp.rq.claim_all()) {
		uint64_t wr_id = 0;
		if (!qp.rq.complete(position, &wr_id))
			continue;
		ibv_wc wc{};
		wc.wr_id = wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp.qp()->qp_num;
		(void)complete(recv_cq(qp), wc, false);
	}
	if (qp.qp()->qp_type != IBV_QPT_RC || !qp.peer_lost.load(std::memory_order_acquire))
		return;
	// The lost peer's process died: receives it claimed and never completed (it died in between)
	// come back flushed too, except those whose completion already waits in the CQ's ring.
	CompletionQueue &cq = recv_cq(qp);
	std::vector<uint64_t> orphans;
	{
		std::lock_guard lock(cq.mutex); // the poll side frees receive slots under it
		for (const ReceiveQueue::Slot &slot : qp.rq.shadow) {
			uint64_t wr_id = 0;
			if (slot.busy &&
			    !cq.ring.published_ahead(qp.qp()->qp_num, static_cast<uint32_t>(slot.position)) &&
			    qp.rq.complete(slot.position, &wr_id)) {
				try {
					orphans.push_back(wr_id);
				} catch (const std::bad_alloc &) {
					break;
				}
			}
		}
	}
	for (uint64_t wr_id : orphans) {
		ibv_wc wc{};
		wc.wr_id = wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp.qp()->qp_num;
		(void)complete(cq, wc, false);
	}
}

void set_state_locked(QueuePair &qp, ibv_qp_state state) noexcept
{
	qp.qp()->state = state;
	qp.rq.header->qp_state.store(state, std::memory_order_release);
}

void enter_error_locked(QueuePair &qp) noexcept
{
	qp.retry_deadline_ns = 0;
	set_state_locked(qp, IBV_QPS_ERR);
	flush_locked(qp);
}

// Connects to (fabric, qpn) and checks what the peer declares. Status::ok, or why not.
Status connect_remote(QueuePair &qp, const std::string &fabric, uint32_t qpn, std::unique_ptr<RemoteQp> *out) noexcept
{
	auto remote = std::unique_ptr<RemoteQp>(new (std::nothrow) RemoteQp());
	if (remote == nullptr)
		return Status::no_resources;
	try {
		remote->fabric = fabric;
	} catch (const std::bad_alloc &) {
		return Status::no_resources;
	}
	remote->qpn = qpn;
	const bool rc = qp.qp()->qp_type == IBV_QPT_RC;
	QueuePair *self = &qp;
	transport::DisconnectCallback on_disconnect;
	if (rc) {
		on_disconnect = [self](uint32_t) {
			if (!self->peer_lost.exchange(true))
				self->pending.store(true, std::memory_order_release);
		};
	}
	Status status = transport::Peer::connect(fabric, qpn, std::move(on_disconnect), &remote->peer);
	if (status != Status::ok)
		return status;
	transport::Peer &peer = *remote->peer;
	const auto &info_bytes = peer.info();
	if (info_bytes.size() != sizeof(QpInfo)) {
		SDK_LOG_ERR("verbs: queue pair %u of %s sent %zu info bytes", qpn, fabric.c_str(), info_bytes.size());
		return Status::refused;
	}
	std::memcpy(&remote->info, info_bytes.data(), sizeof(QpInfo));
	const QpInfo &info = remote->info;
	const bool has_srq = (info.flags & QpInfo::kHasSrq) != 0;
	remote->has_channel = (info.flags & QpInfo::kHasChannel) != 0;
	const size_t expected_fds = 2 + (has_srq ? 1 : 0) + (remote->has_channel ? 1 : 0);
	if (info.magic != QpInfo::kMagic || info.qp_type != static_cast<uint32_t>(qp.qp()->qp_type) ||
	    peer.fd_count() != expected_fds) {
		SDK_LOG_ERR("verbs: queue pair %u of %s is not a %s queue pair softdpu can reach", qpn, fabric.c_str(),
			    rc ? "RC" : "UD");
		return Status::refused;
	}
	remote->rq = attach_ring(peer.region(0), info.rq_slots, info.rq_max_sge);
	if (remote->rq == nullptr ||
	    !device::rdma::CompletionRing::attach(peer.region(1) ? peer.region(1)->data() : nullptr,
						  peer.region(1) ? peer.region(1)->size() : 0, &remote->cq) ||
	    remote->cq.slots() != info.cq_slots) {
		SDK_LOG_ERR("verbs: queue pair %u of %s sent rings that do not match what it declares", qpn,
			    fabric.c_str());
		return Status::refused;
	}
	if (has_srq) {
		remote->srq = attach_ring(peer.region(2), info.srq_slots, info.srq_max_sge);
		if (remote->srq == nullptr)
			return Status::refused;
	}
	if (remote->has_channel && peer.fd_kind(expected_fds - 1) != transport::FdKind::eventfd)
		return Status::refused;
	if (rc)
		qp.remote_pid.store(peer.pid(), std::memory_order_release);
	*out = std::move(remote);
	return Status::ok;
}

// Set while the agent thread runs the 1 ms tick: the transport's agent answers connections and
// cannot make one, so a request whose peer is not connected yet waits there for an application
// thread (connect_ahead_locked, a poll) to connect.
thread_local bool in_tick = false;

// The remote queue pair a request goes to, connecting on first use. Null with *status set.
RemoteQp *remote_for(QueuePair &qp, const SendSlot &slot, Status *status) noexcept
{
	if (qp.qp()->qp_type == IBV_QPT_RC) {
		if (qp.remote == nullptr) {
			if (in_tick) {
				*status = Status::not_found;
				return nullptr;
			}
			const auto fabric =
			    device::rdma::fabric_name_of_gid(std::to_array(qp.attr.ah_attr.grh.dgid.raw));
			if (!fabric) {
				*status = Status::not_found;
				return nullptr;
			}
			*status = connect_remote(qp, *fabric, qp.attr.dest_qp_num, &qp.remote);
			if (*status != Status::ok)
				return nullptr;
		}
		return qp.remote.get();
	}
	if (slot.ah == nullptr || slot.ah->fabric.empty()) {
		*status = Status::not_found;
		return nullptr;
	}
	for (auto &peer : qp.ud_peers)
		if (peer->qpn == slot.remote_qpn && peer->fabric == slot.ah->fabric && !peer->peer->gone())
			return peer.get();
	if (in_tick) {
		*status = Status::not_found;
		return nullptr;
	}
	std::unique_ptr<RemoteQp> fresh;
	*status = connect_remote(qp, slot.ah->fabric, slot.remote_qpn, &fresh);
	if (*status != Status::ok)
		return nullptr;
	try {
		std::erase_if(qp.ud_peers, [](const std::unique_ptr<RemoteQp> &peer) { return peer->peer->gone(); });
		qp.ud_peers.push_back(std::move(fresh));
	} catch (const std::bad_alloc &) {
		*status = Status::no_resources;
		return nullptr;
	}
	return qp.ud_peers.back().get();
}

// The local scatter/gather list of a request as iovecs in qp.iov, checked against this process's
// registrations (key, PD, range, and local write where the device writes into it).
ibv_wc_status local_iovecs(QueuePair &qp, const SendSlot &slot, const ibv_sge *sges, bool device_writes, size_t *count,
			   uint64_t *total) noexcept
{
	*total = 0;
	*count = 0;
	if (slot.inline_length != 0 || (slot.send_flags & IBV_SEND_INLINE) != 0) {
		const size_t index = static_cast<size_t>(&slot - qp.sq.data());
		qp.iov[0].iov_base = qp.sq_inline.data() + index * qp.cap.max_inline_data;
		qp.iov[0].iov_len = slot.inline_length;
		*count = slot.inline_length == 0 ? 0 : 1;
		*total = slot.inline_length;
		return IBV_WC_SUCCESS;
	}
	transport::MemoryTable *table = qp.table;
	for (uint32_t i = 0; i < slot.num_sge; ++i) {
		const ibv_sge &sge = sges[i];
		if (sge.length == 0)
			continue;
		const auto registration = table != nullptr ? table->lookup(sge.lkey) : std::nullopt;
		if (!registration || registration->pd_id != qp.pd_id ||
		    (device_writes && (registration->access & IBV_ACCESS_LOCAL_WRITE) == 0) ||
		    sge.addr < registration->iova || sge.addr - registration->iova > registration->length ||
		    sge.length > registration->length - (sge.addr - registration->iova))
			return IBV_WC_LOC_PROT_ERR;
		qp.iov[*count].iov_base =
		    reinterpret_cast<void *>(registration->addr + (sge.addr - registration->iova));
		qp.iov[*count].iov_len = sge.length;
		++*count;
		*total += sge.length;
	}
	if (*total > device::rdma::Limits::max_msg_sz)
		return IBV_WC_LOC_LEN_ERR;
	return IBV_WC_SUCCESS;
}

ibv_wc_status status_of(Status status) noexcept
{
	switch (status) {
	case Status::ok:
		return IBV_WC_SUCCESS;
	case Status::remote_access_error:
		return IBV_WC_REM_ACCESS_ERR;
	case Status::remote_invalid_request:
		return IBV_WC_REM_INV_REQ_ERR;
	case Status::local_fault:
		return IBV_WC_LOC_PROT_ERR;
	case Status::peer_gone:
	case Status::not_found:
	case Status::refused:
		return IBV_WC_RETRY_EXC_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

// Tells the peer's queue pair that it failed as responder to a request of ours (it goes to the
// error state at its next poll or tick, reporting `event` when given).
void fail_responder(RemoteQp &remote, uint32_t value) noexcept
{
	if (remote.rq == nullptr)
		return;
	uint32_t none = 0;
	(void)remote.rq->responder_error.compare_exchange_strong(none, value, std::memory_order_acq_rel);
}

uint32_t responder_event(ibv_event_type event) noexcept
{
	return device::rdma::kResponderEvent | static_cast<uint32_t>(event);
}

// The completion status of a one-sided request the transport ended with `status`; a request the
// target's rules refused fails the target's queue pair too (an access error, or an invalid request
// such as a misaligned atomic).
ibv_wc_status one_sided_status(RemoteQp &remote, Status status) noexcept
{
	if (status == Status::remote_access_error)
		fail_responder(remote, responder_event(IBV_EVENT_QP_ACCESS_ERR));
	else if (status == Status::remote_invalid_request)
		fail_responder(remote, responder_event(IBV_EVENT_QP_REQ_ERR));
	return status_of(status);
}

// Whether the peer's queue pair still takes requests: its process is there and the queue pair is
// in RTR, RTS or SQD (a queue pair being destroyed says RESET first, before its memory goes).
bool target_ready(RemoteQp &remote) noexcept
{
	if (remote.peer->gone())
		return false;
	const uint32_t state = remote.rq->qp_state.load(std::memory_order_acquire);
	return state == IBV_QPS_RTR || state == IBV_QPS_RTS || state == IBV_QPS_SQD;
}

// The result of executing one request.
struct Outcome {
	bool retry = false; // not executed yet: try again later (no receive posted, peer not ready)
	ibv_wc_status status = IBV_WC_SUCCESS;
	uint32_t byte_len = 0;
	bool rnr = false; // retry because the target had no receive posted
};

// Delivers a message into a receive the target posted (SEND, SEND_WITH_IMM, WRITE_WITH_IMM's
// notification, UD SEND): claims the receive, scatters the data there (none for WRITE_WITH_IMM)
// and produces the target's receive completion. iov[0..count) is the data, total its length.
Outcome deliver(QueuePair &qp, RemoteQp &remote, const SendSlot &slot, size_t count, uint64_t total, bool data) noexcept
{
	Outcome outcome;
	const bool ud = qp.qp()->qp_type == IBV_QPT_UD;
	ReceiveRingHeader *ring = remote.srq != nullptr ? remote.srq : remote.rq;
	const uint32_t slots = remote.srq != nullptr ? remote.info.srq_slots : remote.info.rq_slots;
	const uint32_t max_sge = remote.srq != nullptr ? remote.info.srq_max_sge : remote.info.rq_max_sge;
	const uint32_t target_pd = remote.srq != nullptr ? remote.info.srq_pd_id : remote.info.pd_id;
	device::rdma::WireSge sges[device::rdma::Limits::max_srq_sge];
	uint32_t num_sge = 0;
	uint64_t position = 0;
	if (!device::rdma::claim_receive(ring, slots, max_sge, &position, sges, &num_sge)) {
		if (ud)
			return outcome; // unreliable: dropped, and the sender completes successfully
		outcome.retry = true;
		outcome.rnr = true;
		return outcome;
	}
	CompletionRecord record{};
	record.qp_num = remote.qpn;
	record.recv_index = static_cast<uint32_t>(position);
	record.src_qp = qp.qp()->qp_num;
	record.from_peer = 1;
	record.solicited = (slot.send_flags & IBV_SEND_SOLICITED) != 0 ? 1 : 0;
	record.opcode = data ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
	if (slot.opcode == IBV_WR_SEND_WITH_IMM || slot.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		record.imm_data = slot.imm_data;
		record.wc_flags |= IBV_WC_WITH_IMM;
	}
	record.byte_len = static_cast<uint32_t>(total);
	record.status = IBV_WC_SUCCESS;

	if (num_sge > max_sge) {
		record.status = IBV_WC_LOC_QP_OP_ERR;
		outcome.status = IBV_WC_REM_OP_ERR;
	} else if (data) {
		// The target's scatter list, in order, receives the message (after a GRH for UD).
		uint64_t capacity = 0;
		for (uint32_t i = 0; i < num_sge; ++i)
			capacity += sges[i].length;
		const uint64_t needed = total + (ud ? kUdGrhBytes : 0);
		if (needed > capacity) {
			record.status = IBV_WC_LOC_LEN_ERR;
			outcome.status = ud ? IBV_WC_SUCCESS : IBV_WC_REM_INV_REQ_ERR;
		} else {
			uint8_t grh[kUdGrhBytes] = {};
			if (ud) {
				// An IPv6-style global route header: version 6, payload length, next header
				// 0x1b (IB), hop limit, source and destination GIDs.
				grh[0] = 0x60;
				grh[4] = static_cast<uint8_t>(total >> 8);
				grh[5] = static_cast<uint8_t>(total);
				grh[6] = 0x1b;
				grh[7] = 64;
				const Context *context = Context::from(qp.qp()->context);
				const auto &gids = context->info().gids;
				const uint8_t sgid = slot.ah->attr.grh.sgid_index;
				if (sgid < gids.size())
					std::memcpy(grh + 8, gids[sgid].gid.data(), 16);
				std::memcpy(grh + 24, slot.ah->attr.grh.dgid.raw, 16);
				record.wc_flags |= IBV_WC_GRH;
				record.byte_len = static_cast<uint32_t>(needed);
			}
			// Split the source (GRH first) across the target's elements: one remote op per
			// target element, each with the slice of local iovecs that lands in it.
			const size_t base = count;
			size_t iov_used = base;
			size_t source_index = 0;
			uint64_t source_offset = 0;
			uint64_t grh_left = ud ? kUdGrhBytes : 0;
			size_t op_count = 0;
			uint64_t left = needed;
			for (uint32_t i = 0; i < num_sge && left > 0; ++i) {
				uint64_t room = std::min<uint64_t>(sges[i].length, left);
				if (room == 0)
					continue;
				transport::RemoteOp &op = qp.ops[op_count++];
				op.local = &qp.iov[iov_used];
				op.local_count = 0;
				op.key = sges[i].lkey;
				op.remote_addr = sges[i].addr;
				left -= room;
				while (room > 0 && iov_used < qp.iov.size()) {
					iovec &piece = qp.iov[iov_used];
					if (grh_left > 0) {
						const uint64_t take = std::min(room, grh_left);
						piece.iov_base = grh + (kUdGrhBytes - grh_left);
						piece.iov_len = take;
						grh_left -= take;
						room -= take;
					} else {
						const iovec &source = qp.iov[source_index];
						const uint64_t take =
						    std::min<uint64_t>(room, source.iov_len - source_offset);
						piece.iov_base = static_cast<char *>(source.iov_base) + source_offset;
						piece.iov_len = take;
						source_offset += take;
						room -= take;
						if (source_offset == source.iov_len) {
							++source_index;
							source_offset = 0;
						}
					}
					++op.local_count;
					++iov_used;
				}
			}
			const size_t done = remote.peer->write_ordered(qp.ops.data(), op_count, target_pd,
								       transport::kAccessLocalWrite);
			if (done != op_count) {
				Status failure = Status::ok;
				for (size_t i = 0; i < op_count; ++i)
					if (qp.ops[i].status != Status::ok) {
						failure = qp.ops[i].status;
						break;
					}
				if (failure == Status::peer_gone || !target_ready(remote)) {
					// The process or its queue pair went away meanwhile: the request is retried
					// until the budget ends, and the receive it claimed comes back flushed (if
					// anyone is left to see it).
					record.status = IBV_WC_WR_FLUSH_ERR;
					record.byte_len = 0;
					(void)remote.cq.produce(record);
					outcome.retry = true;
					return outcome;
				}
				if (failure == Status::local_fault) {
					outcome.status = IBV_WC_LOC_PROT_ERR;
				} else {
					// The target's own receive buffer is not registered as it says.
					record.status = IBV_WC_LOC_PROT_ERR;
					outcome.status = IBV_WC_REM_OP_ERR;
				}
			}
		}
	}
	if (record.status != IBV_WC_SUCCESS && !ud)
		fail_responder(remote, device::rdma::kResponderFailed);
	if (remote.cq.produce(record) == device::rdma::CompletionRing::Produced::full)
		SDK_LOG_ERR("verbs: the receive CQ of queue pair %u of %s overran", remote.qpn, remote.fabric.c_str());
	else if (remote.has_channel &&
		 remote.cq.take_notification(record.solicited != 0 || record.status != IBV_WC_SUCCESS))
		(void)remote.peer->notify(remote.peer->fd_count() - 1);
	outcome.byte_len = static_cast<uint32_t>(total);
	return outcome;
}

// Executes one request of an RC or UD queue pair in RTS.
Outcome execute(QueuePair &qp, SendSlot &slot, const ibv_sge *sges) noexcept
{
	Outcome outcome;
	const bool device_writes = slot.opcode == IBV_WR_RDMA_READ || slot.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
				   slot.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	size_t count = 0;
	uint64_t total = 0;
	outcome.status = local_iovecs(qp, slot, sges, device_writes, &count, &total);
	if (outcome.status != IBV_WC_SUCCESS)
		return outcome;
	if (qp.qp()->qp_type == IBV_QPT_UD && total > kUdMaxMessage) {
		outcome.status = IBV_WC_LOC_LEN_ERR;
		return outcome;
	}
	// A peer that went away answers nothing: the requester retries until its retry budget runs out
	// (IBV_WC_RETRY_EXC_ERR then), as against a peer that stopped answering on a fabric. Whatever
	// was on its way completes meanwhile, as it would with a device that acknowledged it.
	if (qp.peer_lost.load(std::memory_order_acquire)) {
		outcome.retry = true;
		return outcome;
	}
	Status status = Status::ok;
	RemoteQp *remote = remote_for(qp, slot, &status);
	if (remote == nullptr) {
		if (qp.qp()->qp_type == IBV_QPT_UD) {
			outcome.byte_len = static_cast<uint32_t>(total); // unreliable: lost on the way
			return outcome;
		}
		// Nobody answers at that address (yet): retried until the retry budget runs out.
		outcome.retry = status == Status::not_found;
		outcome.status = outcome.retry ? IBV_WC_SUCCESS : status_of(status);
		return outcome;
	}
	if (remote->peer->gone()) {
		outcome.retry = true;
		return outcome;
	}
	const uint32_t target_state = remote->rq->qp_state.load(std::memory_order_acquire);
	if (target_state != IBV_QPS_RTR && target_state != IBV_QPS_RTS && target_state != IBV_QPS_SQD) {
		// The target drops everything before RTR and after an error: the requester retries.
		if (qp.qp()->qp_type == IBV_QPT_UD)
			return outcome;
		outcome.retry = true;
		return outcome;
	}
	if (qp.qp()->qp_type == IBV_QPT_UD) {
		const uint32_t wanted =
		    (slot.remote_qkey & 0x80000000u) != 0 ? qp.attr.qkey : slot.remote_qkey; // IB 10.2.5
		if (remote->rq->qkey.load(std::memory_order_acquire) != wanted)
			return outcome; // dropped by the target; the sender does not know
		return deliver(qp, *remote, slot, count, total, true);
	}
	// The responder's queue pair must allow the operation (its IBV_QP_ACCESS_FLAGS), besides the
	// memory region (checked by the transport).
	const unsigned int needed = remote_access_needed(slot.opcode);
	if ((remote->rq->qp_access.load(std::memory_order_acquire) & needed) != needed) {
		outcome.status = IBV_WC_REM_ACCESS_ERR;
		return outcome;
	}
	const uint32_t target_pd = remote->info.pd_id;
	switch (slot.opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return deliver(qp, *remote, slot, count, total, true);
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM: {
		if (slot.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			// The data lands first, then the notification consumes a receive: a target with none
			// posted makes the requester retry before anything is written.
			ReceiveRingHeader *ring = remote->srq != nullptr ? remote->srq : remote->rq;
			if (ring->head.load(std::memory_order_acquire) == ring->tail.load(std::memory_order_acquire)) {
				outcome.retry = true;
				outcome.rnr = true;
				return outcome;
			}
		}
		status = remote->peer->write(qp.iov.data(), count, slot.rkey, slot.remote_addr, target_pd);
		if (status == Status::peer_gone || (status != Status::ok && !target_ready(*remote))) {
			outcome.retry = true;
			return outcome;
		}
		if (status != Status::ok) {
			outcome.status = one_sided_status(*remote, status);
			return outcome;
		}
		outcome.byte_len = static_cast<uint32_t>(total);
		if (slot.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			Outcome notified = deliver(qp, *remote, slot, 0, total, false);
			if (notified.retry) { // another sender took the receive in between: retried (RNR)
				notified.rnr = true;
				return notified;
			}
			notified.byte_len = static_cast<uint32_t>(total);
			return notified;
		}
		return outcome;
	}
	case IBV_WR_RDMA_READ:
		status = remote->peer->read(qp.iov.data(), count, slot.rkey, slot.remote_addr, target_pd);
		if (status == Status::peer_gone || (status != Status::ok && !target_ready(*remote))) {
			outcome.retry = true;
			return outcome;
		}
		outcome.status = one_sided_status(*remote, status);
		outcome.byte_len = static_cast<uint32_t>(total);
		return outcome;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD: {
		if (total != 8 || count != 1) {
			outcome.status = IBV_WC_LOC_LEN_ERR;
			return outcome;
		}
		uint64_t original = 0;
		status =
		    slot.opcode == IBV_WR_ATOMIC_CMP_AND_SWP
			? remote->peer->compare_swap(slot.rkey, slot.remote_addr, slot.compare_add, slot.swap,
						     target_pd, &original)
			: remote->peer->fetch_add(slot.rkey, slot.remote_addr, slot.compare_add, target_pd, &original);
		if (status == Status::peer_gone || (status != Status::ok && !target_ready(*remote))) {
			outcome.retry = true;
			return outcome;
		}
		if (status == Status::ok)
			std::memcpy(qp.iov[0].iov_base, &original, sizeof(original));
		outcome.status = one_sided_status(*remote, status);
		outcome.byte_len = 8;
		return outcome;
	}
	default:
		outcome.status = IBV_WC_LOC_QP_OP_ERR;
		return outcome;
	}
}

// A run of plain RDMA WRITEs to the connected queue pair, from sq_done on, in one transport batch
// (as few system calls as the transport can make them). Returns how many requests completed
// successfully; the first one that did not stays at sq_done for execute() to report.
size_t write_run(QueuePair &qp) noexcept
{
	if (qp.qp()->qp_type != IBV_QPT_RC || qp.remote == nullptr || qp.remote->peer->gone() ||
	    qp.peer_lost.load(std::memory_order_acquire))
		return 0;
	const uint32_t target_state = qp.remote->rq->qp_state.load(std::memory_order_acquire);
	if (target_state != IBV_QPS_RTR && target_state != IBV_QPS_RTS && target_state != IBV_QPS_SQD)
		return 0;
	if ((qp.remote->rq->qp_access.load(std::memory_order_acquire) & IBV_ACCESS_REMOTE_WRITE) == 0)
		return 0; // execute() reports it
	const size_t depth = qp.sq.size();
	const size_t max_sge = std::max<uint32_t>(qp.cap.max_send_sge, 1);
	size_t ops = 0;
	size_t iov_used = 0;
	transport::MemoryTable *table = qp.table;
	for (uint64_t index = qp.sq_done; index < qp.sq_head && ops < qp.ops.size(); ++index) {
		const size_t at = index % depth;
		const SendSlot &slot = qp.sq[at];
		if (slot.opcode != IBV_WR_RDMA_WRITE || iov_used + max_sge > qp.iov.size())
			break;
		transport::RemoteOp &op = qp.ops[ops];
		op.local = &qp.iov[iov_used];
		op.local_count = 0;
		op.key = slot.rkey;
		op.remote_addr = slot.remote_addr;
		bool valid = true;
		if (slot.inline_length != 0 || (slot.send_flags & IBV_SEND_INLINE) != 0) {
			if (slot.inline_length != 0) {
				qp.iov[iov_used].iov_base = qp.sq_inline.data() + at * qp.cap.max_inline_data;
				qp.iov[iov_used].iov_len = slot.inline_length;
				++op.local_count;
			}
		} else {
			const ibv_sge *sges = &qp.sq_sges[at * max_sge];
			for (uint32_t i = 0; i < slot.num_sge && valid; ++i) {
				const ibv_sge &sge = sges[i];
				if (sge.length == 0)
					continue;
				const auto registration = table != nullptr ? table->lookup(sge.lkey) : std::nullopt;
				valid = registration && registration->pd_id == qp.pd_id &&
					sge.addr >= registration->iova &&
					sge.addr - registration->iova <= registration->length &&
					sge.length <= registration->length - (sge.addr - registration->iova);
				if (valid) {
					qp.iov[iov_used + op.local_count].iov_base = reinterpret_cast<void *>(
					    registration->addr + (sge.addr - registration->iova));
					qp.iov[iov_used + op.local_count].iov_len = sge.length;
					++op.local_count;
				}
			}
		}
		if (!valid)
			break; // execute() reports it
		iov_used += op.local_count;
		++ops;
	}
	if (ops < 2)
		return 0; // a single request goes through execute()
	qp.remote->peer->write_ordered(qp.ops.data(), ops, qp.remote->info.pd_id);
	size_t completed = 0;
	for (; completed < ops; ++completed) {
		if (qp.ops[completed].status != Status::ok)
			break;
		const SendSlot &slot = qp.sq[(qp.sq_done + completed) % depth];
		uint64_t length = 0;
		for (size_t i = 0; i < qp.ops[completed].local_count; ++i)
			length += qp.ops[completed].local[i].iov_len;
		complete_send(qp, slot, IBV_WC_SUCCESS, static_cast<uint32_t>(length));
	}
	return completed;
}

} // namespace

// Runs the queued requests of one queue pair, in order, until one must wait. Called with qp.mutex
// held.
void progress_locked(QueuePair &qp) noexcept
{
	const ibv_qp_state state = qp.qp()->state;
	// A sender reported that this queue pair failed as responder: it goes to the error state.
	if (const uint32_t failure = qp.rq.header->responder_error.exchange(0, std::memory_order_acq_rel);
	    failure != 0 && (state == IBV_QPS_RTR || state == IBV_QPS_RTS || state == IBV_QPS_SQD)) {
		enter_error_locked(qp); // before the event: whoever reads it finds the queue pair in ERR
		if ((failure & device::rdma::kResponderEvent) != 0)
			post_async(qp, static_cast<ibv_event_type>(failure & 0xff));
		return;
	}
	if (state == IBV_QPS_ERR) {
		flush_locked(qp);
		return;
	}
	if (state != IBV_QPS_RTS)
		return;
	if (qp.peer_lost.load(std::memory_order_acquire) && qp.sq_done == qp.sq_head) {
		// The connected process went away with nothing outstanding. Hardware would notice at the
		// next request; here the queue pair fails (IBV_EVENT_QP_FATAL, receives flushed) after
		// the retry budget, at most kPeerLostGraceNs, so that no receiver waits forever, but not
		// before the completions of an orderly end (a peer that exits after its last message,
		// as ibv_rc_pingpong's client does) can be polled without flushed receives among them.
		const uint64_t now = now_ns();
		if (qp.lost_deadline_ns == 0)
			qp.lost_deadline_ns = now + std::min(retry_budget_ns(qp.attr), kPeerLostGraceNs);
		if (now < qp.lost_deadline_ns)
			return; // still pending: the next poll or tick looks again
		enter_error_locked(qp);
		post_async(qp, IBV_EVENT_QP_FATAL);
		return;
	}
	const size_t depth = qp.sq.size();
	const size_t max_sge = std::max<uint32_t>(qp.cap.max_send_sge, 1);
	while (qp.sq_done < qp.sq_head) {
		const size_t batched = write_run(qp);
		if (batched > 0) {
			qp.sq_done += batched;
			qp.retry_deadline_ns = 0;
			continue;
		}
		const size_t at = qp.sq_done % depth;
		SendSlot &slot = qp.sq[at];
		const Outcome outcome = execute(qp, slot, &qp.sq_sges[at * max_sge]);
		if (outcome.retry) {
			const uint64_t now = now_ns();
			const uint64_t budget = outcome.rnr ? rnr_budget_ns(qp.attr) : retry_budget_ns(qp.attr);
			// A wait of another kind (RNR, or no answer) starts its own budget.
			if (qp.retry_deadline_ns == 0 || qp.retry_rnr != outcome.rnr)
				qp.retry_deadline_ns = budget == kNeverNs ? kNeverNs : now + budget;
			qp.retry_rnr = outcome.rnr;
			if (now < qp.retry_deadline_ns)
				break; // try again at the next poll or tick
			qp.retry_deadline_ns = 0;
			complete_send(qp, slot, outcome.rnr ? IBV_WC_RNR_RETRY_EXC_ERR : IBV_WC_RETRY_EXC_ERR, 0);
			++qp.sq_done;
			enter_error_locked(qp);
			return;
		}
		qp.retry_deadline_ns = 0;
		complete_send(qp, slot, outcome.status, outcome.byte_len);
		++qp.sq_done;
		if (outcome.status != IBV_WC_SUCCESS) {
			enter_error_locked(qp);
			return;
		}
	}
	// A peer lost meanwhile (the agent set pending) keeps the queue pair pending.
	qp.pending.store(qp.sq_done != qp.sq_head || qp.peer_lost.load(std::memory_order_acquire),
			 std::memory_order_release);
}

// Work waits in the send queue, or a sender reported this queue pair failed as responder.
static bool needs_progress(QueuePair &qp) noexcept
{
	return qp.pending.load(std::memory_order_acquire) ||
	       qp.rq.header->responder_error.load(std::memory_order_relaxed) != 0;
}

void progress_context(Context &context) noexcept
{
	// Never waits for the list: an application thread holding it may be connecting, which needs
	// the agent thread that runs the tick.
	std::unique_lock lock(context.qps_mutex, std::try_to_lock);
	if (!lock.owns_lock())
		return;
	for (QueuePair *qp : context.qps) {
		if (!needs_progress(*qp))
			continue;
		std::unique_lock qp_lock(qp->mutex, std::try_to_lock);
		if (qp_lock.owns_lock()) // another thread is posting or progressing it
			progress_locked(*qp);
	}
}

void progress_for(CompletionQueue &cq) noexcept
{
	std::lock_guard lock(cq.qps_mutex);
	for (QueuePair *qp : cq.qps) {
		if (!needs_progress(*qp))
			continue;
		std::unique_lock qp_lock(qp->mutex, std::try_to_lock);
		if (qp_lock.owns_lock()) // another thread is posting or progressing it
			progress_locked(*qp);
	}
}

namespace {

void tick(Context *context) noexcept
{
	in_tick = true;
	struct Reset {
		~Reset() { in_tick = false; }
	} reset;
	progress_context(*context);
}

void attach(CompletionQueue &cq, QueuePair *qp)
{
	std::lock_guard outer(cq.qps_mutex);
	std::lock_guard inner(cq.mutex);
	if (std::find(cq.qps.begin(), cq.qps.end(), qp) == cq.qps.end())
		cq.qps.push_back(qp);
}

void detach(CompletionQueue &cq, QueuePair *qp) noexcept
{
	std::lock_guard outer(cq.qps_mutex);
	std::lock_guard inner(cq.mutex);
	std::erase(cq.qps, qp);
}

} // namespace

// ---- Queue pairs: life ----

ibv_qp *create_qp(Context &context, ibv_qp_init_attr_ex &init) noexcept
{
	using Limits = device::rdma::Limits;
	constexpr uint32_t known_mask =
	    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	if ((init.comp_mask & IBV_QP_INIT_ATTR_PD) == 0 || init.pd == nullptr || (init.comp_mask & ~known_mask) != 0) {
		errno = (init.comp_mask & ~known_mask) != 0 ? EOPNOTSUPP : EINVAL;
		return nullptr;
	}
	if ((init.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) != 0 && init.create_flags != 0) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (init.qp_type != IBV_QPT_RC && init.qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	ibv_qp_cap &cap = init.cap;
	if (init.send_cq == nullptr || init.recv_cq == nullptr || init.send_cq->context != context.ibv() ||
	    init.recv_cq->context != context.ibv() || init.pd->context != context.ibv() ||
	    cap.max_send_wr > Limits::max_qp_wr || cap.max_send_sge > Limits::max_sge ||
	    cap.max_inline_data > Limits::max_inline_data ||
	    (init.srq == nullptr && (cap.max_recv_wr > Limits::max_qp_wr || cap.max_recv_sge > Limits::max_sge))) {
		errno = EINVAL;
		return nullptr;
	}
	auto owner = std::unique_ptr<QueuePair>(new (std::nothrow) QueuePair());
	if (owner == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	QueuePair &qp = *owner;
	if (init.srq != nullptr) {
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}
	cap.max_send_wr = std::max<uint32_t>(cap.max_send_wr, 1);
	qp.cap = cap;
	qp.sq_sig_all = init.sq_sig_all != 0;
	qp.pd_id = init.pd->handle;
	qp.table = transport::MemoryTable::instance();
	qp.send_ops = (init.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
	const size_t max_sge = std::max<uint32_t>(cap.max_send_sge, 1);
	const size_t batch = std::min<size_t>(cap.max_send_wr, 256);
	try {
		qp.sq.resize(cap.max_send_wr);
		qp.sq_sges.resize(cap.max_send_wr * max_sge);
		qp.sq_inline.resize(static_cast<size_t>(cap.max_send_wr) * cap.max_inline_data);
		qp.staged_sges.resize(max_sge);
		qp.staged_inline.resize(cap.max_inline_data);
		// A SEND scatters into at most max_srq_sge target elements, each needing up to all of the
		// local pieces (plus the UD GRH): room for both, and for a batch of writes.
		qp.ops.resize(std::max<size_t>(batch, Limits::max_srq_sge));
		qp.iov.resize(std::max(batch * max_sge, max_sge + Limits::max_srq_sge * (max_sge + 2)));
	} catch (const std::bad_alloc &) {
		errno = ENOMEM;
		return nullptr;
	}
	int error = qp.rq.create(init.srq != nullptr ? 0 : std::max<uint32_t>(cap.max_recv_wr, 1),
				 init.srq != nullptr ? 0 : cap.max_recv_sge, qp.pd_id, 0, "softdpu-rq");
	if (error != 0) {
		errno = error;
		return nullptr;
	}
	if (init.srq == nullptr)
		qp.cap.max_recv_wr = qp.rq.slots;

	CompletionQueue &rcq = *CompletionQueue::from(init.recv_cq);
	QpInfo info{};
	info.magic = QpInfo::kMagic;
	info.qp_type = init.qp_type;
	info.pd_id = qp.pd_id;
	info.rq_slots = qp.rq.slots;
	info.rq_max_sge = qp.rq.max_sge;
	info.cq_slots = rcq.ring.slots();
	int fds[4] = {qp.rq.region.fd(), rcq.region.fd(), -1, -1};
	size_t fd_count = 2;
	if (init.srq != nullptr) {
		SharedReceiveQueue *srq = SharedReceiveQueue::from(init.srq);
		info.flags |= QpInfo::kHasSrq;
		info.srq_slots = srq->queue.slots;
		info.srq_max_sge = srq->queue.max_sge;
		info.srq_pd_id = srq->pd_id;
		fds[fd_count++] = srq->queue.region.fd();
	}
	if (init.recv_cq->channel != nullptr) {
		info.flags |= QpInfo::kHasChannel;
		fds[fd_count++] = init.recv_cq->channel->fd;
	}
	QueuePair *self = &qp;
	auto on_disconnect = [self](uint32_t pid) {
		// A process connected to this queue pair went away: for RC, that is the peer. On the agent
		// thread, without the queue pair's lock: only atomics here (`remote` is not to be touched).
		const uint32_t peer = self->remote_pid.load(std::memory_order_acquire);
		if (self->qp()->qp_type != IBV_QPT_RC || peer == 0 || peer != pid)
			return;
		if (!self->peer_lost.exchange(true))
			self->pending.store(true, std::memory_order_release);
	};
	const Status bound =
	    transport::Binding::bind(context.info().fabric_name, std::span<const int>(fds, fd_count),
				     std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(&info), sizeof(info)),
				     on_disconnect, &qp.binding);
	if (bound != Status::ok) {
		errno = bound == Status::no_resources ? ENOMEM : EIO;
		return nullptr;
	}
	qp.rq.header->qpn = qp.binding->qpn();

	ibv_qp &base = qp.ibv.qp_base;
	base.context = context.ibv();
	base.qp_context = init.qp_context;
	base.pd = init.pd;
	base.send_cq = init.send_cq;
	base.recv_cq = init.recv_cq;
	base.srq = init.srq;
	base.handle = qp.binding->qpn();
	base.qp_num = qp.binding->qpn();
	base.state = IBV_QPS_RESET;
	base.qp_type = init.qp_type;
	pthread_mutex_init(&base.mutex, nullptr);
	pthread_cond_init(&base.cond, nullptr);
	if (qp.send_ops)
		install_send_ops(qp);

	try {
		attach(*CompletionQueue::from(init.send_cq), self);
		attach(rcq, self);
		std::lock_guard lock(context.qps_mutex);
		context.qps.push_back(self);
		if (context.ticker == nullptr) {
			Context *ctx = &context;
			if (transport::Ticker::start([ctx] { tick(ctx); }, &context.ticker) != Status::ok)
				SDK_LOG_WARN("verbs: no background progress: work runs only when CQs are polled");
		}
	} catch (const std::bad_alloc &) {
		detach(*CompletionQueue::from(init.send_cq), self);
		detach(rcq, self);
		errno = ENOMEM;
		return nullptr;
	}
	ProtectionDomain::from(init.pd)->users.fetch_add(1);
	CompletionQueue::from(init.send_cq)->users.fetch_add(1);
	rcq.users.fetch_add(1);
	if (init.srq != nullptr)
		SharedReceiveQueue::from(init.srq)->users.fetch_add(1);
	return owner.release()->qp();
}

int modify_qp(ibv_qp *ibv, ibv_qp_attr *attr, int mask) noexcept
{
	QueuePair &qp = *QueuePair::from(ibv);
	std::lock_guard lock(qp.mutex);
	ibv_qp_state next = IBV_QPS_RESET;
	const int invalid = check_modify(qp, *attr, mask, &next);
	if (invalid != 0)
		return invalid;
	record_attributes(qp, *attr, mask);
	if ((mask & IBV_QP_QKEY) != 0)
		qp.rq.header->qkey.store(attr->qkey, std::memory_order_release);
	if ((mask & IBV_QP_ACCESS_FLAGS) != 0)
		qp.rq.header->qp_access.store(attr->qp_access_flags, std::memory_order_release);
	const ibv_qp_state current = ibv->state;
	if (next == current) {
		return 0;
	}
	switch (next) {
	case IBV_QPS_RESET:
		// Everything is dropped without completions, and the queue pair forgets its peer.
		set_state_locked(qp, IBV_QPS_RESET);
		qp.remote_pid.store(0, std::memory_order_release);
		qp.remote.reset();
		qp.remote_pid.store(0);
		qp.ud_peers.clear();
		qp.peer_lost.store(false);
		qp.lost_deadline_ns = 0;
		qp.retry_deadline_ns = 0;
		qp.sq_done = qp.sq_head = 0;
		qp.pending.store(false);
		if (ibv->srq == nullptr) {
			(void)qp.rq.claim_all();
			for (auto &slot : qp.rq.shadow)
				slot.busy = false;
		}
		return 0;
	case IBV_QPS_RTR:
		if (ibv->qp_type == IBV_QPT_RC) {
			// Connect now when the peer is there; otherwise the first request connects (the
			// peer may reach RTR after us).
			const auto fabric =
			    device::rdma::fabric_name_of_gid(std::to_array(qp.attr.ah_attr.grh.dgid.raw));
			if (fabric)
				(void)connect_remote(qp, *fabric, qp.attr.dest_qp_num, &qp.remote);
		}
		set_state_locked(qp, next);
		return 0;
	case IBV_QPS_ERR:
		enter_error_locked(qp);
		return 0;
	default:
		set_state_locked(qp, next);
		if (next == IBV_QPS_RTS && qp.sq_head != qp.sq_done)
			qp.pending.store(true);
		return 0;
	}
}

int destroy_qp(ibv_qp *ibv) noexcept
{
	QueuePair *qp = QueuePair::from(ibv);
	Context &context = *Context::from(ibv->context);
	qp->provider.reset(); // libmlx5's engine lets go of the queue pair first
	{
		std::lock_guard lock(context.qps_mutex);
		std::erase(context.qps, qp);
	}
	detach(*CompletionQueue::from(ibv->send_cq), qp);
	detach(*CompletionQueue::from(ibv->recv_cq), qp);
	{
		std::lock_guard lock(qp->mutex);
		// Senders see the queue pair leave first (they stop delivering and retry), then the
		// connections end (their QPs go to error), then the rings go.
		set_state_locked(*qp, IBV_QPS_RESET);
		qp->remote_pid.store(0, std::memory_order_release);
		qp->remote.reset();
		qp->ud_peers.clear();
		qp->binding.reset();
	}
	ProtectionDomain::from(ibv->pd)->users.fetch_sub(1);
	CompletionQueue::from(ibv->send_cq)->users.fetch_sub(1);
	CompletionQueue::from(ibv->recv_cq)->users.fetch_sub(1);
	if (ibv->srq != nullptr)
		SharedReceiveQueue::from(ibv->srq)->users.fetch_sub(1);
	pthread_mutex_destroy(&ibv->mutex);
	pthread_cond_destroy(&ibv->cond);
	delete qp;
	return 0;
}

// ---- Posting ----

// Checks one send request against the queue pair and copies it into the next slot. errno value.
int queue_send_locked(QueuePair &qp, const ibv_send_wr &wr) noexcept
{
	const bool ud = qp.qp()->qp_type == IBV_QPT_UD;
	if (qp.sq_head - qp.sq_done >= qp.sq.size())
		return ENOMEM; // the send queue is full
	switch (wr.opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (ud)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > std::max<uint32_t>(qp.cap.max_send_sge, 0) ||
	    (wr.num_sge > 0 && wr.sg_list == nullptr))
		return EINVAL;
	const bool atomic = wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	if (atomic && (wr.num_sge != 1 || wr.sg_list[0].length != 8))
		return EINVAL; // an atomic returns 8 bytes into one element
	const bool inline_data = (wr.send_flags & IBV_SEND_INLINE) != 0;
	uint64_t inline_total = 0;
	if (inline_data) {
		if (wr.opcode == IBV_WR_RDMA_READ || atomic)
			return EINVAL;
		for (int i = 0; i < wr.num_sge; ++i)
			inline_total += wr.sg_list[i].length;
		if (inline_total > qp.cap.max_inline_data)
			return EINVAL;
	}
	if (ud && (wr.wr.ud.ah == nullptr || wr.wr.ud.ah->pd->context != qp.qp()->context))
		return EINVAL;

	const size_t depth = qp.sq.size();
	const size_t at = qp.sq_head % depth;
	SendSlot &slot = qp.sq[at];
	slot.wr_id = wr.wr_id;
	slot.opcode = wr.opcode;
	slot.send_flags = wr.send_flags;
	slot.imm_data = wr.imm_data;
	slot.num_sge = static_cast<uint32_t>(wr.num_sge);
	slot.inline_length = 0;
	slot.ah = nullptr;
	if (ud) {
		slot.ah = AddressHandle::from(wr.wr.ud.ah);
		slot.remote_qpn = wr.wr.ud.remote_qpn;
		slot.remote_qkey = wr.wr.ud.remote_qkey;
	} else if (atomic) {
		slot.remote_addr = wr.wr.atomic.remote_addr;
		slot.rkey = wr.wr.atomic.rkey;
		slot.compare_add = wr.wr.atomic.compare_add;
		slot.swap = wr.wr.atomic.swap;
	} else {
		slot.remote_addr = wr.wr.rdma.remote_addr;
		slot.rkey = wr.wr.rdma.rkey;
	}
	if (inline_data) {
		// The data is copied now: the application may reuse its buffers when post returns.
		uint8_t *buffer = qp.sq_inline.data() + at * qp.cap.max_inline_data;
		for (int i = 0; i < wr.num_sge; ++i) {
			std::memcpy(buffer, reinterpret_cast<const void *>(wr.sg_list[i].addr), wr.sg_list[i].length);
			buffer += wr.sg_list[i].length;
		}
		slot.inline_length = static_cast<uint32_t>(inline_total);
	} else {
		const size_t max_sge = std::max<uint32_t>(qp.cap.max_send_sge, 1);
		std::copy_n(wr.sg_list, wr.num_sge, &qp.sq_sges[at * max_sge]);
	}
	++qp.sq_head;
	return 0;
}

void connect_ahead_locked(QueuePair &qp, uint64_t first) noexcept
{
	if (qp.qp()->state != IBV_QPS_RTS && qp.qp()->state != IBV_QPS_SQD)
		return;
	Status status = Status::ok;
	if (qp.qp()->qp_type == IBV_QPT_RC) {
		if (qp.remote == nullptr && first != qp.sq_head)
			(void)remote_for(qp, qp.sq[first % qp.sq.size()], &status);
		return;
	}
	for (uint64_t at = first; at != qp.sq_head; ++at)
		(void)remote_for(qp, qp.sq[at % qp.sq.size()], &status);
}

void after_post_locked(QueuePair &qp, uint64_t first) noexcept
{
	connect_ahead_locked(qp, first);
	if (qp.sq_head == qp.sq_done)
		return;
	qp.pending.store(true, std::memory_order_release);
	const ibv_qp_state state = qp.qp()->state;
	if (state == IBV_QPS_ERR) {
		flush_locked(qp);
		return;
	}
	// A message (SEND, or RDMA WRITE with immediate) runs now: its receiver may be waiting for it
	// and nothing else of this process may run the queue soon (a program that posts and then
	// sleeps in ibv_get_cq_event, or exits once its own part is done). One-sided requests wait
	// for the next poll, where they go out in batches.
	for (uint64_t at = first; at != qp.sq_head; ++at) {
		const ibv_wr_opcode opcode = qp.sq[at % qp.sq.size()].opcode;
		if (opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM || opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			if (state == IBV_QPS_RTS)
				progress_locked(qp);
			return;
		}
	}
}

int post_send(ibv_qp *ibv, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	QueuePair &qp = *QueuePair::from(ibv);
	std::lock_guard lock(qp.mutex);
	const ibv_qp_state state = ibv->state;
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	int error = 0;
	const uint64_t first = qp.sq_head;
	for (; wr != nullptr; wr = wr->next) {
		error = queue_send_locked(qp, *wr);
		if (error != 0) {
			*bad_wr = wr;
			break;
		}
	}
	// The requests before a refused one are posted (verbs semantics): they run as well.
	after_post_locked(qp, first);
	return error;
}

int post_recv(ibv_qp *ibv, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	QueuePair &qp = *QueuePair::from(ibv);
	// Under the queue pair's lock: a move to ERR cannot slip between the state check and the post
	// (a receive posted then is flushed here).
	std::lock_guard lock(qp.mutex);
	if (ibv->srq != nullptr || ibv->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	const int error = qp.rq.post(wr, bad_wr);
	if (error == 0 && ibv->state == IBV_QPS_ERR)
		flush_locked(qp);
	return error;
}

// ---- Shared receive queues ----

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr &init) noexcept
{
	using Limits = device::rdma::Limits;
	if (init.attr.max_wr == 0 || init.attr.max_wr > Limits::max_srq_wr || init.attr.max_sge > Limits::max_srq_sge ||
	    init.attr.srq_limit > init.attr.max_wr) {
		errno = EINVAL;
		return nullptr;
	}
	auto *srq = new (std::nothrow) SharedReceiveQueue();
	if (srq == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	const int error = srq->queue.create(init.attr.max_wr, init.attr.max_sge, pd->handle, 0, "softdpu-srq");
	if (error != 0) {
		delete srq;
		errno = error;
		return nullptr;
	}
	static std::atomic<uint32_t> next_handle{1};
	srq->pd_id = pd->handle;
	srq->attr = init.attr;
	srq->attr.max_wr = srq->queue.slots;
	srq->attr.srq_limit = 0; // armed only by ibv_modify_srq (the limit given at creation is not used)
	init.attr.max_wr = srq->queue.slots;
	srq->ibv.context = pd->context;
	srq->ibv.srq_context = init.srq_context;
	srq->ibv.pd = pd;
	srq->ibv.handle = next_handle.fetch_add(1);
	pthread_mutex_init(&srq->ibv.mutex, nullptr);
	pthread_cond_init(&srq->ibv.cond, nullptr);
	ProtectionDomain::from(pd)->users.fetch_add(1);
	return &srq->ibv;
}

int modify_srq(ibv_srq *ibv, const ibv_srq_attr &attr, int mask) noexcept
{
	SharedReceiveQueue &srq = *SharedReceiveQueue::from(ibv);
	if ((mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) != 0)
		return EINVAL;
	if ((mask & IBV_SRQ_MAX_WR) != 0)
		return EOPNOTSUPP; // resizing is not offered (IBV_DEVICE_SRQ_RESIZE aside, as rxe)
	if ((mask & IBV_SRQ_LIMIT) != 0) {
		if (attr.srq_limit > srq.attr.max_wr)
			return EINVAL;
		srq.limit.store(attr.srq_limit, std::memory_order_release);
	}
	return 0;
}

int query_srq(ibv_srq *ibv, ibv_srq_attr *attr) noexcept
{
	SharedReceiveQueue &srq = *SharedReceiveQueue::from(ibv);
	*attr = srq.attr;
	attr->srq_limit = srq.limit.load(std::memory_order_acquire);
	return 0;
}

int destroy_srq(ibv_srq *ibv) noexcept
{
	SharedReceiveQueue *srq = SharedReceiveQueue::from(ibv);
	if (srq->users.load() != 0)
		return EBUSY;
	ProtectionDomain::from(ibv->pd)->users.fetch_sub(1);
	pthread_mutex_destroy(&ibv->mutex);
	pthread_cond_destroy(&ibv->cond);
	delete srq;
	return 0;
}

int post_srq_recv(ibv_srq *ibv, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	return SharedReceiveQueue::from(ibv)->queue.post(wr, bad_wr);
}

} // namespace softdpu::verbs
