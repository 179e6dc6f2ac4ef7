// SHA-256 for the attestation hash map, through OpenSSL's libcrypto (already loaded with libyara):
// its assembly (SHA extensions, AVX2) hashes a page several times faster than portable C++.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace softdpu::apsh::api {

using Sha256Digest = std::array<uint8_t, 32>;

// The digest of data. Does not allocate.
Sha256Digest sha256(std::span<const uint8_t> data) noexcept;

std::string to_hex(const Sha256Digest &digest);
bool from_hex(std::string_view text, Sha256Digest &digest) noexcept;

} // namespace softdpu::apsh::api
