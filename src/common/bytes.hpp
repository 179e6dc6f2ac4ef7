// Bytes and the text that stands for them: hex digit values, hex and decimal parsing, "0x..."
// formatting, little-endian loads and stores. Written once here; every module uses these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace softdpu::common {

// The value of one hex digit (either case), or -1.
constexpr int hex_digit(char c) noexcept
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

// The value of `text` when it is 1 to 16 hex digits (either case, no "0x"), nothing otherwise.
constexpr std::optional<uint64_t> parse_hex(std::string_view text) noexcept
{
	if (text.empty() || text.size() > 16)
		return std::nullopt;
	uint64_t value = 0;
	for (char c : text) {
		const int digit = hex_digit(c);
		if (digit < 0)
			return std::nullopt;
		value = value << 4 | static_cast<uint64_t>(digit);
	}
	return value;
}

// The hex digits at the start of `text` (either case), for scanners: their value, with `text`
// advanced past them; nothing (and `text` unchanged) when there are none or they do not fit 64 bits.
constexpr std::optional<uint64_t> consume_hex(std::string_view &text) noexcept
{
	uint64_t value = 0;
	size_t used = 0;
	for (; used < text.size(); ++used) {
		const int digit = hex_digit(text[used]);
		if (digit < 0)
			break;
		if (value > (UINT64_MAX >> 4))
			return std::nullopt;
		value = value << 4 | static_cast<uint64_t>(digit);
	}
	if (used == 0)
		return std::nullopt;
	text.remove_prefix(used);
	return value;
}

// The value of `text` when it is 1 to 20 decimal digits whose value fits 64 bits.
constexpr std::optional<uint64_t> parse_decimal(std::string_view text) noexcept
{
	if (text.empty() || text.size() > 20)
		return std::nullopt;
	uint64_t value = 0;
	for (char c : text) {
		if (c < '0' || c > '9')
			return std::nullopt;
		const auto digit = static_cast<uint64_t>(c - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return std::nullopt;
		value = value * 10 + digit;
	}
	return value;
}

// An unsigned number as people write one: "0x" or "0X" and hex digits, or decimal digits.
constexpr std::optional<uint64_t> parse_unsigned(std::string_view text) noexcept
{
	if (text.starts_with("0x") || text.starts_with("0X"))
		return parse_hex(text.substr(2));
	return parse_decimal(text);
}

// "0x1f": lower-case hex digits after "0x", no leading zeros.
inline std::string hex(uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

// "00ff...": two lower-case hex digits per byte, no prefix (digests, keys).
inline std::string hex_bytes(std::span<const uint8_t> bytes)
{
	static constexpr char kDigits[] = "0123456789abcdef";
	std::string out;
	out.reserve(bytes.size() * 2);
	for (uint8_t byte : bytes) {
		out += kDigits[byte >> 4];
		out += kDigits[byte & 15];
	}
	return out;
}

// The bytes `text` spells with two hex digits (either case) each, filling all of `out`; false
// (and `out` partly written) when `text` is not exactly that.
constexpr bool parse_hex_bytes(std::string_view text, std::span<uint8_t> out) noexcept
{
	if (text.size() != out.size() * 2)
		return false;
	for (size_t i = 0; i < out.size(); ++i) {
		const int high = hex_digit(text[2 * i]);
		const int low = hex_digit(text[2 * i + 1]);
		if (high < 0 || low < 0)
			return false;
		out[i] = static_cast<uint8_t>(high << 4 | low);
	}
	return true;
}

// Little-endian integers in byte buffers. The caller checks the bounds. x86-64 and AArch64 Linux
// are little-endian: the static_assert keeps the plain copies honest.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian hosts only");

template <typename T> T load_le(const uint8_t *at) noexcept
{
	static_assert(std::is_trivially_copyable_v<T>);
	T value;
	std::memcpy(&value, at, sizeof(T));
	return value;
}

template <typename T> T load_le(std::span<const uint8_t> bytes, size_t offset) noexcept
{
	return load_le<T>(bytes.data() + offset);
}

template <typename T> void store_le(uint8_t *at, T value) noexcept
{
	static_assert(std::is_trivially_copyable_v<T>);
	std::memcpy(at, &value, sizeof(T));
}

} // namespace softdpu::common
