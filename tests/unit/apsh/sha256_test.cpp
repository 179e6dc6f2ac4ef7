// SHA-256 of attested pages: FIPS 180-4 test vectors and the hex forms of the hash map.
#include "apsh/api/sha256.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using softdpu::apsh::api::from_hex;
using softdpu::apsh::api::sha256;
using softdpu::apsh::api::Sha256Digest;
using softdpu::apsh::api::to_hex;

std::string hash_of(const std::string &text)
{
	return to_hex(sha256({reinterpret_cast<const uint8_t *>(text.data()), text.size()}));
}

TEST(Sha256, FipsVectors)
{
	EXPECT_EQ(hash_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	EXPECT_EQ(hash_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	EXPECT_EQ(hash_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	EXPECT_EQ(hash_of(std::string(1000000, 'a')),
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HexRoundTripAndRejects)
{
	const std::string text = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	Sha256Digest digest{};
	ASSERT_TRUE(from_hex(text, digest));
	EXPECT_EQ(to_hex(digest), text);
	std::string upper = text;
	for (char &c : upper)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	ASSERT_TRUE(from_hex(upper, digest));
	EXPECT_EQ(to_hex(digest), text);
	EXPECT_FALSE(from_hex(text.substr(1), digest));
	EXPECT_FALSE(from_hex(text.substr(0, 63) + "g", digest));
	EXPECT_FALSE(from_hex("", digest));
}

} // namespace
