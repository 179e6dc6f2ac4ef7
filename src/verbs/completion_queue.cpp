#include "verbs/verbs.hpp"

#include "common/sdk_log.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>

namespace softdpu::verbs {

namespace {

void signal_channel(CompletionQueue &cq) noexcept
{
	const uint64_t one = 1;
	(void)!::write(cq.cq()->channel->fd, &one, sizeof(one));
}

void report_overrun(CompletionQueue &cq) noexcept
{
	if (cq.overrun_reported)
		return;
	cq.overrun_reported = true;
	ibv_async_event event{};
	event.element.cq = cq.cq();
	event.event_type = IBV_EVENT_CQ_ERR;
	Context::from(cq.cq()->context)->post_async_event(event);
}

// Raises IBV_EVENT_SRQ_LIMIT_REACHED once when fewer receives than the armed limit wait in the
// SRQ to be claimed, and disarms it.
void check_srq_limit(SharedReceiveQueue &srq) noexcept
{
	uint32_t limit = srq.limit.load(std::memory_order_acquire);
	if (limit == 0)
		return;
	const ReceiveQueue &queue = srq.queue;
	const uint64_t tail = queue.header->tail.load(std::memory_order_acquire);
	const uint64_t posted = queue.header->head.load(std::memory_order_acquire);
	const uint64_t waiting = posted >= tail && posted - tail <= queue.slots ? posted - tail : 0;
	if (waiting >= limit || !srq.limit.compare_exchange_strong(limit, 0, std::memory_order_acq_rel))
		return;
	ibv_async_event event{};
	event.element.srq = &srq.ibv;
	event.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
	Context::from(srq.ibv.context)->post_async_event(event);
}

// A peer's record as a work completion, when it names a receive this process posted on a queue
// pair of this CQ. Called with cq.mutex held.
bool resolve_peer_record(CompletionQueue &cq, const device::rdma::CompletionRecord &record, ibv_wc *wc) noexcept
{
	for (QueuePair *qp : cq.qps) {
		if (qp->qp()->qp_num != record.qp_num || qp->qp()->recv_cq != cq.cq())
			continue;
		ReceiveQueue &queue =
		    qp->qp()->srq != nullptr ? SharedReceiveQueue::from(qp->qp()->srq)->queue : qp->rq;
		// Each field is read once (the peer may still be writing a lying record), and only values a
		// receive can have get through: no status or opcode outside the receive ones, no RECV
		// length beyond what the receive posted.
		const uint32_t status = record.status;
		const uint32_t opcode = record.opcode;
		const uint32_t byte_len = record.byte_len;
		const uint32_t flags = record.wc_flags;
		if (status > IBV_WC_TM_RNDV_INCOMPLETE ||
		    (opcode != IBV_WC_RECV && opcode != IBV_WC_RECV_RDMA_WITH_IMM))
			return false;
		uint64_t wr_id = 0;
		uint32_t posted = 0;
		if (!queue.complete(record.recv_index, &wr_id, &posted))
			return false;
		if (qp->qp()->srq != nullptr)
			check_srq_limit(*SharedReceiveQueue::from(qp->qp()->srq));
		*wc = {};
		wc->wr_id = wr_id;
		wc->status = static_cast<ibv_wc_status>(status);
		wc->opcode = static_cast<ibv_wc_opcode>(opcode);
		// A RECV's data lies in the posted buffers; WRITE with immediate reports the write's length.
		wc->byte_len = opcode == IBV_WC_RECV ? std::min(byte_len, posted) : byte_len;
		wc->imm_data = record.imm_data;
		wc->qp_num = record.qp_num;
		wc->src_qp = record.src_qp;
		wc->wc_flags = flags & (IBV_WC_GRH | IBV_WC_WITH_IMM);
		return true;
	}
	return false;
}

} // namespace

static void drain_peer_records_locked(CompletionQueue &cq) noexcept;

void absorb_peer_records(CompletionQueue &cq) noexcept
{
	std::lock_guard lock(cq.mutex);
	drain_peer_records_locked(cq);
}

ibv_cq_ex *create_cq(Context &context, int cqe, void *cq_context, ibv_comp_channel *channel, int comp_vector) noexcept
{
	if (cqe < 1 || static_cast<uint32_t>(cqe) > device::rdma::Limits::max_cqe || comp_vector < 0 ||
	    comp_vector >= context.ibv()->num_comp_vectors) {
		errno = EINVAL;
		return nullptr;
	}
	if (channel != nullptr && channel->context != context.ibv()) {
		errno = EINVAL;
		return nullptr;
	}
	auto *cq = new (std::nothrow) CompletionQueue();
	if (cq == nullptr) {
		errno = ENOMEM;
		return nullptr;
	}
	// mlx5 rounds the depth up to a power of two and reports one less (a slot stays free).
	const auto slots = static_cast<uint32_t>(std::bit_ceil(static_cast<size_t>(cqe) + 1));
	using device::rdma::transport::SharedRegion;
	using device::rdma::transport::Status;
	try {
		cq->local.resize(slots);
		if (SharedRegion::create(device::rdma::completion_ring_bytes(slots), "softdpu-cq", &cq->region) !=
		    Status::ok) {
			delete cq;
			errno = ENOMEM;
			return nullptr;
		}
	} catch (const std::bad_alloc &) {
		delete cq;
		errno = ENOMEM;
		return nullptr;
	}
	cq->ring = device::rdma::CompletionRing::format(cq->region.data(), slots);
	static std::atomic<uint32_t> next_handle{1};
	ibv_cq_ex &ibv = cq->ibv;
	ibv.context = context.ibv();
	ibv.channel = channel;
	ibv.cq_context = cq_context;
	ibv.handle = next_handle.fetch_add(1);
	ibv.cqe = static_cast<int>(slots - 1);
	pthread_mutex_init(&ibv.mutex, nullptr);
	pthread_cond_init(&ibv.cond, nullptr);
	if (channel != nullptr) {
		CompletionChannel *owner = CompletionChannel::from(channel);
		std::lock_guard lock(owner->mutex);
		try {
			owner->cqs.push_back(cq);
		} catch (const std::bad_alloc &) {
			pthread_mutex_destroy(&ibv.mutex);
			pthread_cond_destroy(&ibv.cond);
			delete cq;
			errno = ENOMEM;
			return nullptr;
		}
		++channel->refcnt;
	}
	try {
		std::lock_guard lock(context.handles_mutex);
		context.cqs.emplace(ibv.handle, cq->cq());
	} catch (const std::bad_alloc &) {
		(void)destroy_cq(cq->cq());
		errno = ENOMEM;
		return nullptr;
	}
	return &cq->ibv;
}

int destroy_cq(ibv_cq *ibv) noexcept
{
	CompletionQueue *cq = CompletionQueue::from(ibv);
	if (cq->users.load() != 0)
		return EBUSY;
	{
		Context *context = Context::from(ibv->context);
		std::lock_guard lock(context->handles_mutex);
		context->cqs.erase(ibv->handle);
	}
	cq->provider.reset(); // libmlx5's engine lets go of the CQ first
	if (ibv->channel != nullptr) {
		CompletionChannel *channel = CompletionChannel::from(ibv->channel);
		std::lock_guard lock(channel->mutex);
		std::erase(channel->cqs, cq);
		--ibv->channel->refcnt;
	}
	// rdma-core waits until every event the application received has been acknowledged.
	pthread_mutex_lock(&ibv->mutex);
	while (ibv->comp_events_completed != cq->events_reported)
		pthread_cond_wait(&ibv->cond, &ibv->mutex);
	pthread_mutex_unlock(&ibv->mutex);
	pthread_mutex_destroy(&ibv->mutex);
	pthread_cond_destroy(&ibv->cond);
	delete cq;
	return 0;
}

// Moves the records peers published into the private ring, in the order they were published, as
// far as it has room (cq.mutex held). What a peer's record says is checked on the way: a record
// naming no receive posted here is dropped (logged).
static void drain_peer_records_locked(CompletionQueue &cq) noexcept
{
	while (cq.local_count < cq.local.size() - 1) {
		const device::rdma::CompletionRecord *record = cq.ring.peek();
		if (record == nullptr)
			break;
		ibv_wc wc{};
		if (resolve_peer_record(cq, *record, &wc)) {
			cq.local[(cq.local_head + cq.local_count) % cq.local.size()] = wc;
			++cq.local_count;
		} else {
			SDK_LOG_ERR("verbs: CQ %u: dropped a completion from a peer that names no receive posted here "
				    "(qp %u, position %u)",
				    cq.cq()->handle, record->qp_num, record->recv_index);
		}
		cq.ring.pop();
	}
}

int poll_cq(ibv_cq *ibv, int num_entries, ibv_wc *wc) noexcept
{
	CompletionQueue *cq = CompletionQueue::from(ibv);
	// What peers delivered comes first: the device's own work below (a flush, say) happened after.
	{
		std::lock_guard lock(cq->mutex);
		drain_peer_records_locked(*cq);
	}
	progress_for(*cq);
	if (num_entries <= 0)
		return 0;
	std::lock_guard lock(cq->mutex);
	drain_peer_records_locked(*cq);
	int taken = 0;
	while (taken < num_entries && cq->local_count > 0) {
		wc[taken++] = cq->local[cq->local_head];
		cq->local_head = (cq->local_head + 1) % cq->local.size();
		--cq->local_count;
	}
	if (cq->ring.header().overrun.load(std::memory_order_acquire) != 0)
		report_overrun(*cq);
	return taken;
}

int req_notify_cq(ibv_cq *ibv, int solicited_only) noexcept
{
	CompletionQueue *cq = CompletionQueue::from(ibv);
	progress_for(*cq); // the application is likely to sleep next: run what it posted
	cq->ring.header().armed.store(solicited_only != 0 ? 2 : 1, std::memory_order_seq_cst);
	// Completions that arrived before arming do not fire the event (verbs semantics): the
	// application polls after arming to catch them.
	return 0;
}

bool complete(CompletionQueue &cq, const ibv_wc &wc, bool solicited) noexcept
{
	{
		std::lock_guard lock(cq.mutex);
		if (cq.local_count == cq.local.size() - 1) {
			report_overrun(cq);
			return false;
		}
		cq.local[(cq.local_head + cq.local_count) % cq.local.size()] = wc;
		++cq.local_count;
	}
	if (cq.cq()->channel != nullptr && cq.ring.take_notification(solicited || wc.status != IBV_WC_SUCCESS))
		signal_channel(cq);
	return true;
}

int raise_cq_event(CompletionQueue &cq) noexcept
{
	if (cq.cq()->channel == nullptr)
		return ENOENT;
	// One event waits per CQ at most, as when an arm fires.
	if (cq.ring.header().event_pending.exchange(1, std::memory_order_acq_rel) == 0)
		signal_channel(cq);
	return 0;
}

int get_cq_event(ibv_comp_channel *ibv, ibv_cq **cq_out, void **cq_context) noexcept
{
	CompletionChannel *channel = CompletionChannel::from(ibv);
	// The application may sleep here: what it posted runs first, as a device runs it meanwhile.
	progress_context(*Context::from(ibv->context));
	for (;;) {
		uint64_t count = 0;
		// Blocks unless the application made the fd non-blocking (then -1, EAGAIN).
		if (::read(ibv->fd, &count, sizeof(count)) != static_cast<ssize_t>(sizeof(count)))
			return -1;
		CompletionQueue *cq = nullptr;
		{
			std::lock_guard lock(channel->mutex);
			for (CompletionQueue *candidate : channel->cqs) {
				if (candidate->ring.header().event_pending.exchange(0, std::memory_order_acq_rel) !=
				    0) {
					cq = candidate;
					// Counted while the channel still lists it: a destroy_cq taking it off the
					// list afterwards waits for this event's ack.
					pthread_mutex_lock(&cq->cq()->mutex);
					++cq->events_reported;
					pthread_mutex_unlock(&cq->cq()->mutex);
					break;
				}
			}
		}
		if (cq == nullptr)
			continue; // the CQ of this event was destroyed: wait for the next one
		*cq_out = cq->cq();
		*cq_context = cq->cq()->cq_context;
		return 0;
	}
}

void ack_cq_events(ibv_cq *ibv, unsigned int nevents) noexcept
{
	pthread_mutex_lock(&ibv->mutex);
	ibv->comp_events_completed += nevents;
	pthread_cond_broadcast(&ibv->cond);
	pthread_mutex_unlock(&ibv->mutex);
}

} // namespace softdpu::verbs
