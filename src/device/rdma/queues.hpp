// The queues of the software RDMA device that other processes write into, as they lie in shared
// memory (transport::SharedRegion): a completion queue's ring, which every peer whose messages
// complete there produces into, and a receive queue's ring, whose posted entries peers claim. A
// peer may be buggy, crashed half-way or lying: the owner validates everything it reads back
// (indices, counts, which queue pair a completion names) and never trusts an address or a count
// from these files beyond the bounds it knows.
//
// Completion ring: the owner consumes in order; producers (the owner itself for send completions,
// peers for receive completions) reserve a slot with a compare-and-swap on `tail` that never passes
// `head + slots`, fill it, then publish it by storing `sequence = position + 1` (release). A slot
// reserved and never published (its producer died in between) holds the ring at that position:
// documented, as a hardware CQ whose producer fails is lost too.
//
// Receive ring: the owner posts at `head`; a peer claims the entry at `tail` with a
// compare-and-swap (several peers may share one ring: UD queue pairs, SRQs), reads it, and writes
// the completion naming the entry's index, from which the owner recovers the wr_id it kept.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace softdpu::device::rdma {

inline constexpr uint64_t kCompletionRingMagic = 0x4e49524d4f435344ull; // "DSCOMRIN"
inline constexpr uint64_t kReceiveRingMagic = 0x474e495256434552ull;    // "RECVRING"

// A scatter/gather element as a receive ring holds it.
struct WireSge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct alignas(64) CompletionRecord {
	std::atomic<uint64_t> sequence; // position + 1 once published
	uint64_t wr_id;                 // local completions only; a peer's carry recv_index instead
	uint32_t status;                // enum ibv_wc_status
	uint32_t opcode;                // enum ibv_wc_opcode
	uint32_t byte_len;
	uint32_t imm_data; // network byte order, as ibv_wc has it
	uint32_t qp_num;   // the queue pair of this CQ the completion belongs to
	uint32_t src_qp;
	uint32_t wc_flags;
	uint32_t recv_index; // receive completions: the receive ring position consumed
	uint32_t from_peer;  // 1: written by another process (a receive); 0: by the owner
	uint32_t solicited;
};
static_assert(sizeof(CompletionRecord) == 64);

struct alignas(64) CompletionRingHeader {
	uint64_t magic;
	uint32_t slots; // a power of two
	uint32_t reserved;
	alignas(64) std::atomic<uint64_t> tail;  // next position to reserve (producers)
	alignas(64) std::atomic<uint64_t> head;  // next position to consume (owner)
	alignas(64) std::atomic<uint32_t> armed; // 0: not armed, 1: next completion, 2: solicited only
	std::atomic<uint32_t> event_pending;     // set by whoever disarmed, taken by the channel
	std::atomic<uint32_t> overrun;           // a producer found the ring full
};

// The bytes a completion ring of `slots` entries needs.
constexpr size_t completion_ring_bytes(uint32_t slots)
{
	return sizeof(CompletionRingHeader) + static_cast<size_t>(slots) * sizeof(CompletionRecord);
}

// A queue pair's state as its peers read it, and its receive ring (none when it uses an SRQ).
struct alignas(64) ReceiveRingHeader {
	uint64_t magic;
	uint32_t slots; // a power of two, or 0 (the queue pair receives from an SRQ)
	uint32_t max_sge;
	std::atomic<uint32_t> qp_state; // enum ibv_qp_state of the owning queue pair (0 for an SRQ)
	std::atomic<uint32_t> qkey;     // UD: the Q_Key senders must match
	uint32_t pd_id;                 // the protection domain receives land in
	uint32_t qpn;
	// Set by a sender whose request this queue pair refused as responder (IB spec 10.8.3.3: the
	// responder's queue pair goes to the error state too): kResponderFailed, or kResponderEvent |
	// the ibv_event_type to report. The owner acts on it at its next poll or tick.
	std::atomic<uint32_t> responder_error;
	std::atomic<uint32_t> qp_access;        // RC: the queue pair's IBV_ACCESS_REMOTE_* flags (modify_qp)
	alignas(64) std::atomic<uint64_t> head; // posted (owner)
	alignas(64) std::atomic<uint64_t> tail; // claimed (peers)
};

inline constexpr uint32_t kResponderFailed = 1;
inline constexpr uint32_t kResponderEvent = 0x100;

struct ReceiveEntry {
	uint32_t num_sge;
	uint32_t reserved;
	WireSge sge[1]; // max_sge of them
};

constexpr size_t receive_entry_bytes(uint32_t max_sge)
{
	return 8 + static_cast<size_t>(max_sge == 0 ? 1 : max_sge) * sizeof(WireSge);
}

constexpr size_t receive_ring_bytes(uint32_t slots, uint32_t max_sge)
{
	return sizeof(ReceiveRingHeader) + static_cast<size_t>(slots) * receive_entry_bytes(max_sge);
}

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
	      "shared-memory atomics must be lock-free");

} // namespace softdpu::device::rdma
