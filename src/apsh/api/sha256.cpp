#include "apsh/api/sha256.hpp"

// The low-level interface: its context lives on the stack. OpenSSL 3 deprecates it in favour of EVP,
// whose every digest (SHA256() included) fetches the algorithm and allocates; the compression
// function underneath is the same assembly.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace softdpu::apsh::api {

Sha256Digest sha256(std::span<const uint8_t> data) noexcept
{
	Sha256Digest digest;
	SHA256_CTX context;
	SHA256_Init(&context);
	SHA256_Update(&context, data.data(), data.size());
	SHA256_Final(digest.data(), &context);
	return digest;
}

std::string to_hex(const Sha256Digest &digest)
{
	static const char kDigits[] = "0123456789abcdef";
	std::string out;
	out.reserve(64);
	for (uint8_t byte : digest) {
		out += kDigits[byte >> 4];
		out += kDigits[byte & 15];
	}
	return out;
}

bool from_hex(std::string_view text, Sha256Digest &digest) noexcept
{
	if (text.size() != 64)
		return false;
	for (size_t i = 0; i < 32; ++i) {
		int value = 0;
		for (char c : text.substr(2 * i, 2)) {
			const char lower = static_cast<char>(c | 0x20);
			if (c >= '0' && c <= '9')
				value = value * 16 + (c - '0');
			else if (lower >= 'a' && lower <= 'f')
				value = value * 16 + (lower - 'a' + 10);
			else
				return false;
		}
		digest[i] = static_cast<uint8_t>(value);
	}
	return true;
}

} // namespace softdpu::apsh::api
