// Fuzz target: the RDMA device's rings as another process leaves them in shared memory. A sender
// attaches a peer's receive ring and claims entries from it; a producer attaches a peer's
// completion ring and appends to it; the owner of a completion ring reads records peers wrote.
// Whatever the bytes (a lying or crashed peer), every access stays inside the mapping, a claimed
// entry never reports more elements than were copied, and every loop ends.
#include "device/rdma/completion_ring.hpp"
#include "device/rdma/receive_ring.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using namespace softdpu::device::rdma;

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

constexpr uint32_t kMaxSge = 31;

void fuzz_receive_ring(const uint8_t *data, size_t size)
{
	if (size < 3)
		return;
	const uint32_t slots = data[0] % 8 == 7 ? 0 : 1u << (data[0] % 8);
	const uint32_t max_sge = data[1] % (kMaxSge + 2); // one past the limit too
	const size_t mapped = std::min<size_t>(size - 2, 1u << 16);
	// Aligned like a mapping, and exactly as large as the peer's region claims to be.
	std::vector<uint64_t> region((mapped + 7) / 8 + 1);
	std::memcpy(region.data(), data + 2, mapped);
	ReceiveRingHeader *ring = attach_receive_ring(region.data(), mapped, slots, max_sge, kMaxSge);
	if (ring == nullptr)
		return;
	require(receive_ring_bytes(slots, max_sge) <= mapped && max_sge <= kMaxSge);
	WireSge sges[kMaxSge];
	uint64_t last = 0;
	bool first = true;
	for (uint32_t i = 0; i < 2 * slots + 2; ++i) {
		uint64_t position = 0;
		uint32_t num_sge = 0;
		if (!claim_receive(ring, slots, max_sge, &position, sges, &num_sge))
			break;
		require(first || position == last + 1);
		first = false;
		last = position;
		// A malformed entry is reported as such (more elements than declared), never copied.
		if (num_sge <= max_sge)
			for (uint32_t j = 0; j < num_sge; ++j)
				(void)sges[j].length;
	}
}

void fuzz_completion_ring(const uint8_t *data, size_t size)
{
	const size_t mapped = std::min<size_t>(size, 1u << 16);
	std::vector<uint64_t> region((mapped + 7) / 8 + 1);
	std::memcpy(region.data(), data, mapped);
	CompletionRing producer;
	if (CompletionRing::attach(region.data(), mapped, &producer)) {
		require(completion_ring_bytes(producer.slots()) <= mapped);
		CompletionRecord record{};
		record.byte_len = 1;
		for (int i = 0; i < 4; ++i)
			if (producer.produce(record) == CompletionRing::Produced::full)
				break;
		(void)producer.take_notification(true);
	}
	// The owner's side: a ring it laid out, whose records a peer then overwrote.
	constexpr uint32_t kSlots = 8;
	std::vector<uint64_t> owned(completion_ring_bytes(kSlots) / 8 + 1);
	CompletionRing owner = CompletionRing::format(owned.data(), kSlots);
	const size_t records = std::min(mapped, static_cast<size_t>(kSlots) * sizeof(CompletionRecord));
	std::memcpy(reinterpret_cast<char *>(owned.data()) + sizeof(CompletionRingHeader), data, records);
	for (uint32_t i = 0; i < 2 * kSlots; ++i) {
		const CompletionRecord *next = owner.peek();
		if (next == nullptr)
			break;
		require(reinterpret_cast<const char *>(next) >= reinterpret_cast<const char *>(owned.data()) &&
			reinterpret_cast<const char *>(next + 1) <=
			    reinterpret_cast<const char *>(owned.data()) + completion_ring_bytes(kSlots));
		owner.pop();
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 0x80)
		fuzz_completion_ring(data + 1, size - 1);
	else
		fuzz_receive_ring(data + 1, size - 1);
	return 0;
}
