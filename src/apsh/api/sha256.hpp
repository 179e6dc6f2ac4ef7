// SHA-256 (FIPS 180-4), for the attestation hash map: small, dependency-free.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace softdpu::apsh::api {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
public:
	Sha256() noexcept { reset(); }
	void reset() noexcept;
	void update(std::span<const uint8_t> data) noexcept;
	Sha256Digest finish() noexcept;

	static Sha256Digest of(std::span<const uint8_t> data) noexcept;

private:
	void block(const uint8_t *p) noexcept;
	std::array<uint32_t, 8> state_{};
	std::array<uint8_t, 64> buffer_{};
	size_t buffered_ = 0;
	uint64_t total_ = 0;
};

std::string to_hex(const Sha256Digest &digest);
bool from_hex(std::string_view text, Sha256Digest &digest) noexcept;

} // namespace softdpu::apsh::api
