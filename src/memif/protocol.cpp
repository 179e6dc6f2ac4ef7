#include "memif/protocol.hpp"

#include <algorithm>

namespace softdpu::memif {
namespace {

// Little-endian field access at fixed offsets (the wire format is packed and little-endian).
class Writer {
public:
	explicit Writer(WireBuffer &out) : out_(out) { std::memset(out_, 0, kMessageSize); }
	void u8(size_t at, uint8_t value) { out_[at] = value; }
	void u16(size_t at, uint16_t value)
	{
		out_[at] = uint8_t(value);
		out_[at + 1] = uint8_t(value >> 8);
	}
	void u32(size_t at, uint32_t value)
	{
		for (size_t i = 0; i < 4; ++i)
			out_[at + i] = uint8_t(value >> (8 * i));
	}
	void u64(size_t at, uint64_t value)
	{
		for (size_t i = 0; i < 8; ++i)
			out_[at + i] = uint8_t(value >> (8 * i));
	}
	void bytes(size_t at, const char *field, size_t size) { std::memcpy(out_ + at, field, size); }

private:
	WireBuffer &out_;
};

class Reader {
public:
	explicit Reader(const uint8_t *in) : in_(in) {}
	uint8_t u8(size_t at) const { return in_[at]; }
	uint16_t u16(size_t at) const { return uint16_t(in_[at] | (in_[at + 1] << 8)); }
	uint32_t u32(size_t at) const
	{
		uint32_t value = 0;
		for (size_t i = 0; i < 4; ++i)
			value |= uint32_t(in_[at + i]) << (8 * i);
		return value;
	}
	uint64_t u64(size_t at) const
	{
		uint64_t value = 0;
		for (size_t i = 0; i < 8; ++i)
			value |= uint64_t(in_[at + i]) << (8 * i);
		return value;
	}
	void bytes(size_t at, char *field, size_t size) const { std::memcpy(field, in_ + at, size); }

private:
	const uint8_t *in_;
};

} // namespace

void encode_message(const Message &message, WireBuffer &out)
{
	Writer w(out);
	w.u16(0, uint16_t(message.type));
	switch (message.type) {
	case MessageType::hello:
		w.bytes(2, message.hello.name, kNameSize);
		w.u16(34, message.hello.min_version);
		w.u16(36, message.hello.max_version);
		w.u16(38, message.hello.max_region);
		w.u16(40, message.hello.max_m2s_ring);
		w.u16(42, message.hello.max_s2m_ring);
		w.u8(44, message.hello.max_log2_ring_size);
		break;
	case MessageType::init:
		w.u16(2, message.init.version);
		w.u32(4, message.init.id);
		w.u8(8, message.init.mode);
		w.bytes(9, message.init.secret, kSecretSize);
		w.bytes(33, message.init.name, kNameSize);
		break;
	case MessageType::add_region:
		w.u16(2, message.add_region.index);
		w.u64(4, message.add_region.size);
		break;
	case MessageType::add_ring:
		w.u16(2, message.add_ring.flags);
		w.u16(4, message.add_ring.index);
		w.u16(6, message.add_ring.region);
		w.u32(8, message.add_ring.offset);
		w.u8(12, message.add_ring.log2_ring_size);
		w.u16(13, message.add_ring.private_hdr_size);
		break;
	case MessageType::connect:
	case MessageType::connected:
		w.bytes(2, message.name.if_name, kNameSize);
		break;
	case MessageType::disconnect:
		w.u32(2, message.disconnect.code);
		w.bytes(6, message.disconnect.reason, kReasonSize);
		break;
	case MessageType::none:
	case MessageType::ack:
		break;
	}
}

int decode_message(std::span<const uint8_t> bytes, Message &out, const char **reason)
{
	const char *ignored = nullptr;
	const char *&why = reason != nullptr ? *reason : ignored;
	if (bytes.size() != kMessageSize) {
		why = "Invalid message size";
		return MEMIF_ERR_MFMSG;
	}
	Reader r(bytes.data());
	out = Message{};
	const uint16_t type = r.u16(0);
	switch (MessageType(type)) {
	case MessageType::ack:
		break;
	case MessageType::hello:
		r.bytes(2, out.hello.name, kNameSize);
		out.hello.min_version = r.u16(34);
		out.hello.max_version = r.u16(36);
		out.hello.max_region = r.u16(38);
		out.hello.max_m2s_ring = r.u16(40);
		out.hello.max_s2m_ring = r.u16(42);
		out.hello.max_log2_ring_size = r.u8(44);
		break;
	case MessageType::init:
		out.init.version = r.u16(2);
		out.init.id = r.u32(4);
		out.init.mode = r.u8(8);
		r.bytes(9, out.init.secret, kSecretSize);
		r.bytes(33, out.init.name, kNameSize);
		break;
	case MessageType::add_region:
		out.add_region.index = r.u16(2);
		out.add_region.size = r.u64(4);
		break;
	case MessageType::add_ring:
		out.add_ring.flags = r.u16(2);
		out.add_ring.index = r.u16(4);
		out.add_ring.region = r.u16(6);
		out.add_ring.offset = r.u32(8);
		out.add_ring.log2_ring_size = r.u8(12);
		out.add_ring.private_hdr_size = r.u16(13);
		break;
	case MessageType::connect:
	case MessageType::connected:
		r.bytes(2, out.name.if_name, kNameSize);
		break;
	case MessageType::disconnect:
		out.disconnect.code = r.u32(2);
		r.bytes(6, out.disconnect.reason, kReasonSize);
		break;
	default:
		why = "Unknown message type";
		return MEMIF_ERR_UNKNOWN_MSG;
	}
	out.type = MessageType(type);
	return MEMIF_ERR_SUCCESS;
}

void copy_field_to_string(const char *field, size_t field_size, char *out)
{
	const size_t length = strnlen(field, field_size);
	std::memcpy(out, field, length);
	out[length] = '\0';
}

void copy_string_to_field(const char *text, char *field, size_t field_size)
{
	std::memset(field, 0, field_size);
	if (text != nullptr)
		std::memcpy(field, text, strnlen(text, field_size));
}

} // namespace softdpu::memif
