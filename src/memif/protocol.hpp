// memif protocol 2.0: constants, the 128-byte control messages, and the shared ring layout.
// Everything that knows a byte offset of the wire format lives here.
#pragma once

#include <libmemif.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace softdpu::memif {

inline constexpr uint32_t kCookie = 0x3E31F20;
inline constexpr uint16_t kProtocolVersion = (2 << 8) | 0;
inline constexpr size_t kMessageSize = 128;
inline constexpr size_t kNameSize = 32;
inline constexpr size_t kSecretSize = 24;
inline constexpr size_t kReasonSize = 96;
inline constexpr uint8_t kMaxLog2RingSize = 14;
inline constexpr uint16_t kMaxRegionIndex = 255;
inline constexpr uint16_t kMaxRingIndex = 255;
inline constexpr size_t kRingHeaderSize = 128;
inline constexpr size_t kDescriptorSize = 16;

enum class MessageType : uint16_t {
	none = 0,
	ack = 1,
	hello = 2,
	init = 3,
	add_region = 4,
	add_ring = 5,
	connect = 6,
	connected = 7,
	disconnect = 8,
};

inline constexpr uint16_t kRingFlagS2M = 1;     // ADD_RING flags: the ring carries client -> server
inline constexpr uint16_t kRingFlagMaskInt = 1; // ring header flags: consumer does not want interrupts
inline constexpr uint16_t kDescFlagNext = 1;    // descriptor flags: the packet continues in the next slot

struct HelloMessage {
	char name[kNameSize];
	uint16_t min_version;
	uint16_t max_version;
	uint16_t max_region;
	uint16_t max_m2s_ring;
	uint16_t max_s2m_ring;
	uint8_t max_log2_ring_size;
};

struct InitMessage {
	uint16_t version;
	uint32_t id;
	uint8_t mode;
	char secret[kSecretSize];
	char name[kNameSize];
};

struct AddRegionMessage {
	uint16_t index;
	uint64_t size;
};

struct AddRingMessage {
	uint16_t flags;
	uint16_t index;
	uint16_t region;
	uint32_t offset;
	uint8_t log2_ring_size;
	uint16_t private_hdr_size;
};

struct NameMessage { // CONNECT and CONNECTED
	char if_name[kNameSize];
};

struct DisconnectMessage {
	uint32_t code;
	char reason[kReasonSize];
};

// A decoded control message. Only the member matching `type` is meaningful.
struct Message {
	MessageType type = MessageType::none;
	HelloMessage hello{};
	InitMessage init{};
	AddRegionMessage add_region{};
	AddRingMessage add_ring{};
	NameMessage name{};
	DisconnectMessage disconnect{};
};

using WireBuffer = uint8_t[kMessageSize];

// Encodes `message` into exactly kMessageSize bytes (unused bytes zero).
void encode_message(const Message &message, WireBuffer &out);

// Decodes one received message. Returns MEMIF_ERR_SUCCESS, MEMIF_ERR_MFMSG (wrong size) or
// MEMIF_ERR_UNKNOWN_MSG; `reason` gets a short explanation on failure.
int decode_message(std::span<const uint8_t> bytes, Message &out, const char **reason);

// Copies a NUL-padded fixed field into a NUL-terminated string of capacity field_size + 1.
void copy_field_to_string(const char *field, size_t field_size, char *out);
// Copies a C string into a fixed NUL-padded field (truncating; a full field has no NUL).
void copy_string_to_field(const char *text, char *field, size_t field_size);

// --- Shared memory layout -----------------------------------------------------------------

struct Descriptor {
	uint16_t flags;
	uint16_t region;
	uint32_t length;
	uint32_t offset;
	uint32_t metadata;
};
static_assert(sizeof(Descriptor) == kDescriptorSize);

// The ring header as it lies in shared memory: head and tail on separate cachelines.
struct RingHeader {
	uint32_t cookie;
	uint16_t flags;
	uint16_t head; // written only by the client
	uint8_t pad0[56];
	uint16_t tail; // written only by the server
	uint8_t pad1[62];
	Descriptor desc[1]; // really 2^log2_ring_size entries
};
static_assert(offsetof(RingHeader, head) == 6);
static_assert(offsetof(RingHeader, tail) == 64);
static_assert(offsetof(RingHeader, desc) == kRingHeaderSize);

inline constexpr size_t ring_bytes(uint8_t log2_ring_size)
{
	return kRingHeaderSize + kDescriptorSize * (size_t{1} << log2_ring_size);
}

// Ring indices are published with a single 16-bit store: release on the producer, acquire on
// the consumer, so descriptors and data written before the store are visible after the load.
inline uint16_t load_acquire(const uint16_t &index)
{
	return std::atomic_ref<const uint16_t>(index).load(std::memory_order_acquire);
}
inline void store_release(uint16_t &index, uint16_t value)
{
	std::atomic_ref<uint16_t>(index).store(value, std::memory_order_release);
}
inline uint16_t load_relaxed(const uint16_t &value)
{
	return std::atomic_ref<const uint16_t>(value).load(std::memory_order_relaxed);
}
inline void store_relaxed(uint16_t &field, uint16_t value)
{
	std::atomic_ref<uint16_t>(field).store(value, std::memory_order_relaxed);
}

// Reads a descriptor the peer may be changing concurrently: one snapshot, then only the snapshot
// is validated and used.
inline Descriptor snapshot(const Descriptor &shared)
{
	Descriptor copy;
	std::memcpy(&copy, const_cast<const Descriptor *>(&shared), sizeof copy);
	std::atomic_signal_fence(std::memory_order_acquire);
	return copy;
}

// The bounds of one mapped region, as descriptor validation needs them.
struct RegionBounds {
	uint8_t *base = nullptr;
	uint64_t size = 0;
};

// Returns the address of a descriptor's data if [offset, offset + length) lies inside its region,
// nullptr otherwise. 64-bit arithmetic: no wrap-around.
inline uint8_t *resolve_descriptor(std::span<const RegionBounds> regions, const Descriptor &desc)
{
	if (desc.region >= regions.size())
		return nullptr;
	const RegionBounds &region = regions[desc.region];
	if (region.base == nullptr || uint64_t{desc.offset} + uint64_t{desc.length} > region.size)
		return nullptr;
	return region.base + desc.offset;
}

} // namespace softdpu::memif
