// The objects behind libibverbs' C structures. Each class starts with the structure rdma-core 44's
// <infiniband/verbs.h> defines for it (ibv_pd, ibv_mr, ...), so that the pointer an application
// holds is the object's own address (from() converts back); everything after that first member is
// softdpu's. verbs_api.cpp forwards every exported function to these classes.
//
// References (what a destroy refuses with EBUSY, as the kernel does): PDs are held by MRs, QPs,
// SRQs and AHs; CQs by QPs; completion channels by CQs; SRQs by QPs. ibv_close_device, as
// rdma-core's, does not check what the application left open.
#pragma once

#include "device/rdma/completion_ring.hpp"
#include "device/rdma/device_info.hpp"
#include "device/rdma/queues.hpp"
#include "device/rdma/transport/transport.hpp"

#include <infiniband/verbs.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace softdpu::verbs {

// The object whose first member is `*member` (the C structure handed to the application).
template <typename Object, typename Member> Object *owner_of(Member *member) noexcept
{
	return reinterpret_cast<Object *>(member); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

// Data a provider library (softdpu's libmlx5) keeps with a context or a queue pair, through the
// softdpu_verbs_* entry points (softdpu_api.cpp); released when the object is freed.
struct ProviderData {
	std::mutex mutex;
	void *data = nullptr;
	void (*release)(void *data) = nullptr;

	ProviderData() = default;
	ProviderData(const ProviderData &) = delete;
	ProviderData &operator=(const ProviderData &) = delete;
	~ProviderData() { reset(); }
	// Releases the data now (the object is being destroyed: the provider must let go of it before
	// the object's queues go). Later calls find none.
	void reset() noexcept
	{
		void *taken = nullptr;
		void (*release_taken)(void *) = nullptr;
		{
			std::lock_guard lock(mutex);
			taken = data;
			release_taken = release;
			data = nullptr;
			release = nullptr;
		}
		if (release_taken != nullptr)
			release_taken(taken);
	}
};

// ---- Devices ----

// One per RDMA device of the topology; lives as long as the process (as rdma-core's device
// objects live while a context uses them).
struct Device {
	ibv_device ibv{};
	const device::rdma::DeviceInfo *info = nullptr;

	static Device *from(ibv_device *device) noexcept { return owner_of<Device>(device); }
};

// The devices of this process's side, built on first use. Null (errno set) when the topology
// cannot be loaded.
const std::vector<Device *> *device_list() noexcept;
// True when `device` is one of ours (ibv_open_device on a foreign pointer fails cleanly).
bool is_our_device(const ibv_device *device) noexcept;

struct CompletionQueue;
class QueuePair;

// ---- Contexts ----

// An open device. vctx.context is the struct ibv_context applications hold; async_fd is an eventfd
// (semaphore mode) that counts the async events waiting in `async_events`.
class Context {
public:
	verbs_context vctx{};
	Device *device = nullptr;

	static Context *from(ibv_context *context) noexcept
	{
		auto *bytes = reinterpret_cast<char *>(context); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
		return owner_of<Context>(bytes - offsetof(verbs_context, context));
	}
	ibv_context *ibv() noexcept { return &vctx.context; }
	const device::rdma::DeviceInfo &info() const noexcept { return *device->info; }

	// Opens `device`: NULL with errno set (ENOMEM, EMFILE, ...) when it cannot.
	static Context *open(Device *device) noexcept;
	// Frees the context and its descriptors.
	void close() noexcept;

	// Queues an async event for ibv_get_async_event.
	void post_async_event(const ibv_async_event &event) noexcept;
	// Takes the oldest event, blocking while none waits unless async_fd is non-blocking. 0, or -1
	// with errno set.
	int get_async_event(ibv_async_event *event) noexcept;

	// The queue pairs of this context, for the background progress (engine.cpp): work posted and
	// never polled for still executes, within a tick (1 ms) of the transport's agent.
	std::mutex qps_mutex;
	std::vector<QueuePair *> qps;
	std::unique_ptr<device::rdma::transport::Ticker> ticker;
	// The context's PDs and CQs by handle, for softdpu's libmlx5 (a DevX command names them by
	// pdn and cqn: softdpu_verbs_pd_of, softdpu_verbs_cq_of).
	std::mutex handles_mutex;
	std::unordered_map<uint32_t, ibv_pd *> pds;
	std::unordered_map<uint32_t, ibv_cq *> cqs;
	ProviderData provider;

private:
	std::mutex async_mutex_;
	std::deque<ibv_async_event> async_events_;
};

// ---- Protection domains, memory regions, address handles ----

struct ProtectionDomain {
	ibv_pd ibv{};
	std::atomic<uint32_t> users{0}; // MRs, QPs, SRQs, AHs made in it

	static ProtectionDomain *from(ibv_pd *pd) noexcept { return owner_of<ProtectionDomain>(pd); }
};

struct MemoryRegion {
	ibv_mr ibv{};
	uint64_t iova = 0;
	unsigned int access = 0;

	static MemoryRegion *from(ibv_mr *mr) noexcept { return owner_of<MemoryRegion>(mr); }
};

struct AddressHandle {
	ibv_ah ibv{};
	ibv_ah_attr attr{};
	std::string fabric; // the device that owns attr.grh.dgid; empty when none does

	static AddressHandle *from(ibv_ah *ah) noexcept { return owner_of<AddressHandle>(ah); }
};

// ---- Completion channels and queues ----

// The channel's fd is an eventfd (semaphore mode) that counts the events waiting: whoever disarms
// one of the channel's CQs (this process, or a peer whose receive completed there) sets that CQ's
// event_pending flag and adds one; ibv_get_cq_event takes one and finds a CQ whose flag it can
// clear, so the fd is readable (epoll, poll) exactly while an event waits.
struct CompletionChannel {
	ibv_comp_channel ibv{};
	std::mutex mutex;
	std::vector<CompletionQueue *> cqs; // the CQs that report here

	static CompletionChannel *from(ibv_comp_channel *channel) noexcept
	{
		return owner_of<CompletionChannel>(channel);
	}
};

// A CQ has two rings: its own completions (send side) in private memory, and the completions peers
// produce (receives) in a shared region (device/rdma/queues.hpp). Polling takes the private ones
// first; a peer's record is resolved against the receives this process posted, never trusted.
struct CompletionQueue {
	ibv_cq_ex ibv{};                // its leading fields are those of struct ibv_cq (ibv_cq_ex_to_cq)
	std::atomic<uint32_t> users{0}; // QPs that complete into it
	std::mutex mutex;               // the private ring, the poll side of the shared one, `qps`
	std::vector<ibv_wc> local;      // capacity: the reported cqe + 1
	size_t local_head = 0;
	size_t local_count = 0;
	device::rdma::transport::SharedRegion region; // the shared ring
	device::rdma::CompletionRing ring;
	// Attached queue pairs (progress, and resolving peers' records): changed under both qps_mutex
	// and mutex. Lock order: qps_mutex, then a QP's mutex, then mutex.
	std::mutex qps_mutex;
	std::vector<QueuePair *> qps;
	uint32_t events_reported = 0; // under ibv.mutex: events handed out (destroy waits for acks)
	bool overrun_reported = false;
	ProviderData provider;

	ibv_cq *cq() noexcept { return ibv_cq_ex_to_cq(&ibv); }
	static CompletionQueue *from(ibv_cq *cq) noexcept { return owner_of<CompletionQueue>(cq); }
	static CompletionQueue *from(ibv_cq_ex *cq) noexcept { return owner_of<CompletionQueue>(cq); }
};

// ---- Receive queues ----

// A receive ring in shared memory (device/rdma/queues.hpp) and, privately, what each slot holds:
// the position it was posted at, its wr_id and whether its completion has been seen (a slot is
// reused only then). Used by a QP's own receive queue and by an SRQ.
struct ReceiveQueue {
	device::rdma::transport::SharedRegion region;
	device::rdma::ReceiveRingHeader *header = nullptr;
	uint32_t slots = 0; // a power of two
	uint32_t max_sge = 0;
	uint64_t head = 0; // next position to post (private copy of header->head)
	struct Slot {
		uint64_t position = 0;
		uint64_t wr_id = 0;
		uint32_t length = 0; // of the scatter list posted (a completion never says more)
		bool busy = false;   // posted and not yet completed
	};
	std::vector<Slot> shadow;
	std::mutex mutex; // posting and completing (the shadow slots)

	device::rdma::ReceiveEntry *entry(uint64_t position) noexcept;
	// Makes the ring (slots rounded up to a power of two, at least 1). errno value.
	int create(uint32_t min_slots, uint32_t max_sge, uint32_t pd_id, uint32_t qpn, const char *name) noexcept;
	// Posts a chain of receive requests. errno value (*bad set).
	int post(ibv_recv_wr *wr, ibv_recv_wr **bad) noexcept;
	// Validates a peer's record for `position`: the slot is busy with that position. Returns the
	// wr_id and frees the slot.
	bool complete(uint64_t position, uint64_t *wr_id, uint32_t *posted_length = nullptr) noexcept;
	// Claims every entry no peer has claimed (the owner flushing in error): their positions.
	std::vector<uint64_t> claim_all() noexcept;
};

struct SharedReceiveQueue {
	ibv_srq ibv{};
	std::atomic<uint32_t> users{0}; // QPs that receive from it
	ibv_srq_attr attr{};            // max_wr, max_sge; the limit is `limit`
	// The limit set with ibv_modify_srq (0: not armed). When fewer receives than that wait to be
	// claimed, IBV_EVENT_SRQ_LIMIT_REACHED is raised once and the limit goes back to 0 (verbs
	// semantics); the owner checks as it takes completions.
	std::atomic<uint32_t> limit{0};
	ReceiveQueue queue;
	uint32_t pd_id = 0;

	static SharedReceiveQueue *from(ibv_srq *srq) noexcept { return owner_of<SharedReceiveQueue>(srq); }
};

// ---- Queue pairs ----

// What a queue pair tells the processes that connect to it (Binding info bytes), besides its
// descriptors: [0] its receive ring (header only when it uses an SRQ), [1] its receive CQ's ring,
// [2] the SRQ's ring (when kHasSrq), [3] the receive CQ's channel eventfd (when kHasChannel).
struct QpInfo {
	uint64_t magic;
	uint32_t qp_type;
	uint32_t flags; // kHasSrq, kHasChannel
	uint32_t pd_id;
	uint32_t rq_slots, rq_max_sge;
	uint32_t cq_slots;
	uint32_t srq_slots, srq_max_sge;
	uint32_t srq_pd_id;
	uint32_t reserved;
	static constexpr uint64_t kMagic = 0x4f464e4950514453ull; // "SDQPINFO"
	static constexpr uint32_t kHasSrq = 1;
	static constexpr uint32_t kHasChannel = 2;
};

// A send request as the queue pair keeps it until it executes.
struct SendSlot {
	uint64_t wr_id = 0;
	ibv_wr_opcode opcode = IBV_WR_SEND;
	unsigned int send_flags = 0;
	uint32_t imm_data = 0; // network order
	uint32_t num_sge = 0;
	uint64_t remote_addr = 0;
	uint32_t rkey = 0;
	uint64_t compare_add = 0;
	uint64_t swap = 0;
	AddressHandle *ah = nullptr; // UD
	uint32_t remote_qpn = 0;     // UD
	uint32_t remote_qkey = 0;    // UD
	uint32_t inline_length = 0;  // IBV_SEND_INLINE: the data is in the slot's inline buffer
};

// A connection to another queue pair (possibly of this process): the transport's Peer and views
// of the peer's rings, each checked against what its info bytes declare before use.
struct RemoteQp {
	std::unique_ptr<device::rdma::transport::Peer> peer;
	std::string fabric;
	uint32_t qpn = 0;
	QpInfo info{};
	device::rdma::ReceiveRingHeader *rq = nullptr;  // the peer QP's header (and ring, without SRQ)
	device::rdma::ReceiveRingHeader *srq = nullptr; // its SRQ's ring
	device::rdma::CompletionRing cq;                // its receive CQ's shared ring
	bool has_channel = false;
};

class QueuePair {
public:
	ibv_qp_ex ibv{}; // ibv.qp_base is the struct ibv_qp applications see
	ibv_qp_cap cap{};
	bool send_ops = false; // created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (ibv_qp_to_qp_ex works)
	bool sq_sig_all = false;
	ibv_qp_attr attr{}; // the attributes modify_qp set (query_qp reports them)
	uint32_t pd_id = 0;
	// This process's registrations (lkey checks), found once: looking it up costs a lock and a
	// system call.
	device::rdma::transport::MemoryTable *table = nullptr;

	std::mutex mutex; // everything below, and state changes
	// The send queue: a private ring of cap.max_send_wr slots, executed in order.
	std::vector<SendSlot> sq;
	std::vector<ibv_sge> sq_sges;   // cap.max_send_sge per slot
	std::vector<uint8_t> sq_inline; // cap.max_inline_data per slot
	uint64_t sq_head = 0;           // next to post
	uint64_t sq_done = 0;           // next to execute
	uint64_t retry_deadline_ns = 0; // the head request waits (no receive posted, peer not ready)
	bool retry_rnr = false;         // ... and for which of the two: each kind has its own budget
	uint64_t lost_deadline_ns = 0;  // the peer went away with nothing outstanding: error from then
	ReceiveQueue rq;                // unused (0 slots) with an SRQ
	std::unique_ptr<device::rdma::transport::Binding> binding;
	std::unique_ptr<RemoteQp> remote; // RC: the connected queue pair
	std::vector<std::unique_ptr<RemoteQp>> ud_peers;
	// The extended send API's request being built (qp_ex.cpp), between wr_start and wr_complete.
	ibv_send_wr staged{};
	std::vector<ibv_sge> staged_sges;   // cap.max_send_sge
	std::vector<uint8_t> staged_inline; // cap.max_inline_data
	bool staged_active = false;
	int batch_error = 0;
	uint64_t batch_start = 0;
	// Scratch space of the data path, sized at creation (no allocation after it).
	std::vector<device::rdma::transport::RemoteOp> ops;
	std::vector<iovec> iov;
	std::atomic<bool> peer_lost{false};
	std::atomic<uint32_t> remote_pid{0}; // RC: the connected peer's process, 0 while none
	std::atomic<bool> pending{false};    // work waits in the send queue
	ProviderData provider;

	ibv_qp *qp() noexcept { return &ibv.qp_base; }
	static QueuePair *from(ibv_qp *qp) noexcept { return owner_of<QueuePair>(qp); }
	static QueuePair *from(ibv_qp_ex *qp) noexcept { return owner_of<QueuePair>(qp); }
};

} // namespace softdpu::verbs

// ---- Operations (implemented beside the classes; verbs_api.cpp forwards to them) ----
// Functions returning int return 0 or a positive errno value; those returning a pointer return
// null with errno set, as the verbs they implement.
namespace softdpu::verbs {

// context.cpp
void query_device(const Context &context, ibv_device_attr *attr) noexcept;
int query_device_ex(const Context &context, const ibv_query_device_ex_input *input, ibv_device_attr_ex *attr,
		    size_t attr_size) noexcept;
int query_port(const Context &context, uint8_t port_num, ibv_port_attr *attr, size_t attr_size) noexcept;
int query_gid_entry(const Context &context, uint32_t port_num, uint32_t index, ibv_gid_entry *entry) noexcept;

// resources.cpp
ibv_pd *alloc_pd(Context &context) noexcept;
int dealloc_pd(ibv_pd *pd) noexcept;
ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access) noexcept;
int dereg_mr(ibv_mr *mr) noexcept;
ibv_ah *create_ah(ibv_pd *pd, const ibv_ah_attr &attr) noexcept;
int destroy_ah(ibv_ah *ah) noexcept;
ibv_comp_channel *create_comp_channel(Context &context) noexcept;
int destroy_comp_channel(ibv_comp_channel *channel) noexcept;

// completion_queue.cpp
ibv_cq_ex *create_cq(Context &context, int cqe, void *cq_context, ibv_comp_channel *channel, int comp_vector) noexcept;
int destroy_cq(ibv_cq *cq) noexcept;
int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc) noexcept;
int req_notify_cq(ibv_cq *cq, int solicited_only) noexcept;
// Adds a completion the local device produced; false when the CQ overran (reported as an async
// event).
bool complete(CompletionQueue &cq, const ibv_wc &wc, bool solicited) noexcept;
int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context) noexcept;
// Puts a completion event of `cq` on its channel (libmlx5: the CQ was armed through its mlx5
// doorbell and got a CQE). 0, or ENOENT when the CQ has no channel.
int raise_cq_event(CompletionQueue &cq) noexcept;
// Moves the receive completions peers have published into the private ring (as far as it has
// room), so that completions the device adds now (a flush) come after them. Takes cq.mutex.
void absorb_peer_records(CompletionQueue &cq) noexcept;
void ack_cq_events(ibv_cq *cq, unsigned int nevents) noexcept;

// queue_pair.cpp
int check_modify(const QueuePair &qp, const ibv_qp_attr &attr, int mask, ibv_qp_state *next_state) noexcept;
void record_attributes(QueuePair &qp, const ibv_qp_attr &attr, int mask) noexcept;
void query_attributes(QueuePair &qp, ibv_qp_attr *attr, ibv_qp_init_attr *init_attr) noexcept;

// engine.cpp: what the device does (memory keys, queue pair life, work requests)
int register_memory(ProtectionDomain &pd, MemoryRegion *mr, uintptr_t addr, size_t length, uint64_t iova,
		    unsigned int access, uint32_t *key) noexcept;
void unregister_memory(uint32_t key) noexcept;
ibv_qp *create_qp(Context &context, ibv_qp_init_attr_ex &init_attr) noexcept;
int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask) noexcept;
int destroy_qp(ibv_qp *qp) noexcept;
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr &init_attr) noexcept;
int modify_srq(ibv_srq *srq, const ibv_srq_attr &attr, int mask) noexcept;
int query_srq(ibv_srq *srq, ibv_srq_attr *attr) noexcept;
int destroy_srq(ibv_srq *srq) noexcept;
int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
// Executes the work queued on the queue pairs that complete into `cq`.
void progress_for(CompletionQueue &cq) noexcept;
// Executes the work queued on every queue pair of a context (the application is about to sleep,
// in ibv_get_cq_event: what it posted must not wait for the background tick).
void progress_context(Context &context) noexcept;
// Runs the queued requests of one queue pair (qp.mutex held).
void progress_locked(QueuePair &qp) noexcept;
// Checks one send request and queues it (qp.mutex held). errno value.
int queue_send_locked(QueuePair &qp, const ibv_send_wr &wr) noexcept;
// Connects, from the application's thread, to the peers of the requests queued from sq position
// `first` on (qp.mutex held): the agent thread that runs them when nobody polls cannot connect.
void connect_ahead_locked(QueuePair &qp, uint64_t first) noexcept;
// After requests were queued from sq position `first` on (qp.mutex held): connects ahead, marks
// the queue pending, flushes it in ERR, and runs it at once when a message is among them.
void after_post_locked(QueuePair &qp, uint64_t first) noexcept;

// qp_ex.cpp: the extended send API (ibv_qp_to_qp_ex, ibv_wr_*)
void install_send_ops(QueuePair &qp) noexcept;

} // namespace softdpu::verbs
