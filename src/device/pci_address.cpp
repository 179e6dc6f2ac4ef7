#include "device/pci_address.hpp"

#include "common/bytes.hpp"

#include <cstdio>

namespace softdpu::device {

namespace {

// Reads exactly `digits` hex digits from text at pos.
bool read_hex(std::string_view text, size_t &pos, size_t digits, uint32_t &value) noexcept
{
	if (pos + digits > text.size())
		return false;
	const auto parsed = common::parse_hex(text.substr(pos, digits));
	if (!parsed)
		return false;
	value = static_cast<uint32_t>(*parsed);
	pos += digits;
	return true;
}

bool expect(std::string_view text, size_t &pos, char c) noexcept
{
	if (pos >= text.size() || text[pos] != c)
		return false;
	++pos;
	return true;
}

} // namespace

std::optional<PciAddress> PciAddress::parse(std::string_view text) noexcept
{
	PciAddress address;
	size_t pos = 0;
	uint32_t value = 0;
	if (text.size() == 12) {
		if (!read_hex(text, pos, 4, value) || !expect(text, pos, ':'))
			return std::nullopt;
		address.domain = static_cast<uint16_t>(value);
	} else if (text.size() != 7) {
		return std::nullopt;
	}
	if (!read_hex(text, pos, 2, value) || !expect(text, pos, ':'))
		return std::nullopt;
	address.bus = static_cast<uint8_t>(value);
	if (!read_hex(text, pos, 2, value) || value > 0x1f || !expect(text, pos, '.'))
		return std::nullopt;
	address.device = static_cast<uint8_t>(value);
	if (!read_hex(text, pos, 1, value) || value > 7)
		return std::nullopt;
	address.function = static_cast<uint8_t>(value);
	return address;
}

void PciAddress::format(char *out) const noexcept
{
	// Masks keep the output provably within 12 characters.
	std::snprintf(out, 13, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu, function & 7u);
}

std::string PciAddress::to_string() const
{
	char text[13];
	format(text);
	return text;
}

std::string PciAddress::bdf_string() const
{
	char text[13];
	std::snprintf(text, sizeof(text), "%02x:%02x.%x", bus, device, function);
	return text;
}

} // namespace softdpu::device
