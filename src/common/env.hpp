// Environment variables: read in one place, so every module treats unset, empty and malformed
// values alike.
#pragma once

#include "common/bytes.hpp"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace softdpu::common {

// The value of environment variable `name` when it is set and not empty.
inline std::optional<std::string_view> env_value(const char *name) noexcept
{
	const char *value = std::getenv(name);
	if (value == nullptr || *value == '\0')
		return std::nullopt;
	return std::string_view(value);
}

// The number in environment variable `name` (decimal, or hex after "0x") when it is set, well
// formed and within [min, max]; nothing otherwise, so callers fall back to their default.
inline std::optional<uint64_t> env_unsigned(const char *name, uint64_t min, uint64_t max) noexcept
{
	const auto text = env_value(name);
	if (!text)
		return std::nullopt;
	const auto value = parse_unsigned(*text);
	if (!value || *value < min || *value > max)
		return std::nullopt;
	return value;
}

} // namespace softdpu::common
