// PCI addresses of emulated functions: parsing ("0000:3a:00.0" or "3a:00.0") and formatting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace softdpu::device {

struct PciAddress {
	uint16_t domain = 0;
	uint8_t bus = 0;
	uint8_t device = 0;   // 5 bits: 0x00..0x1f
	uint8_t function = 0; // 3 bits: 0..7

	// Accepts "DDDD:BB:DD.F" and "BB:DD.F" with hex digits of either case; nullopt otherwise.
	static std::optional<PciAddress> parse(std::string_view text) noexcept;

	// "DDDD:BB:DD.F" in lower-case hex: 12 characters.
	std::string to_string() const;
	// Writes "DDDD:BB:DD.F" plus NUL into out, which must hold at least 13 bytes.
	void format(char *out) const noexcept;
	// "BB:DD.F": 7 characters.
	std::string bdf_string() const;

	friend bool operator==(const PciAddress &, const PciAddress &) = default;
	// NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
	friend auto operator<=>(const PciAddress &, const PciAddress &) = default;
};

} // namespace softdpu::device
