#include "apsh/api/sha256.hpp"

#include "common/bytes.hpp"

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
	return common::hex_bytes(digest);
}

bool from_hex(std::string_view text, Sha256Digest &digest) noexcept
{
	return common::parse_hex_bytes(text, digest);
}

} // namespace softdpu::apsh::api
