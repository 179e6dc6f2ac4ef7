// common/bytes.hpp: hex digits, hex and decimal parsing, "0x" formatting, little-endian loads.
#include "common/bytes.hpp"

#include <gtest/gtest.h>

#include <array>

using namespace softdpu::common;

namespace {

TEST(Bytes, HexDigitTakesBothCases)
{
	EXPECT_EQ(hex_digit('0'), 0);
	EXPECT_EQ(hex_digit('9'), 9);
	EXPECT_EQ(hex_digit('a'), 10);
	EXPECT_EQ(hex_digit('F'), 15);
	for (char c : {'g', 'G', 'x', ' ', '/', ':', '@', '`', '\0'})
		EXPECT_EQ(hex_digit(c), -1) << "char " << int(c);
}

TEST(Bytes, ParseHexTakesOnlyWholeDigitStrings)
{
	EXPECT_EQ(parse_hex("0"), 0u);
	EXPECT_EQ(parse_hex("9fFf"), 0x9fffu);
	EXPECT_EQ(parse_hex("ffffffffffffffff"), UINT64_MAX);
	EXPECT_EQ(parse_hex("0000000000000001"), 1u);
	EXPECT_FALSE(parse_hex(""));
	EXPECT_FALSE(parse_hex("0x10")) << "no prefix";
	EXPECT_FALSE(parse_hex("12 "));
	EXPECT_FALSE(parse_hex("-1"));
	EXPECT_FALSE(parse_hex("10000000000000000")) << "17 digits";
}

TEST(Bytes, ConsumeHexStopsAtTheFirstNonDigit)
{
	std::string_view text = "7f00-8000 r";
	EXPECT_EQ(consume_hex(text), 0x7f00u);
	EXPECT_EQ(text, "-8000 r");
	text.remove_prefix(1);
	EXPECT_EQ(consume_hex(text), 0x8000u);
	EXPECT_EQ(text, " r");
	EXPECT_FALSE(consume_hex(text)) << "no digits";
	EXPECT_EQ(text, " r") << "left unchanged";

	std::string_view all = "DeadBeef";
	EXPECT_EQ(consume_hex(all), 0xdeadbeefu);
	EXPECT_TRUE(all.empty());

	std::string_view leading_zeros = "00000000000000000000000000ff-";
	EXPECT_EQ(consume_hex(leading_zeros), 0xffu) << "leading zeros do not count towards 64 bits";
	std::string_view too_big = "10000000000000000-";
	EXPECT_FALSE(consume_hex(too_big));
	EXPECT_EQ(too_big, "10000000000000000-");
}

TEST(Bytes, ParseDecimalRefusesOverflow)
{
	EXPECT_EQ(parse_decimal("0"), 0u);
	EXPECT_EQ(parse_decimal("4096"), 4096u);
	EXPECT_EQ(parse_decimal("18446744073709551615"), UINT64_MAX);
	EXPECT_FALSE(parse_decimal("18446744073709551616"));
	EXPECT_FALSE(parse_decimal("99999999999999999999"));
	EXPECT_FALSE(parse_decimal("100000000000000000000")) << "21 digits";
	EXPECT_FALSE(parse_decimal(""));
	EXPECT_FALSE(parse_decimal("+1"));
	EXPECT_FALSE(parse_decimal("-1"));
	EXPECT_FALSE(parse_decimal("1e9"));
	EXPECT_FALSE(parse_decimal("0x10"));
}

TEST(Bytes, ParseUnsignedTakesDecimalOrPrefixedHex)
{
	EXPECT_EQ(parse_unsigned("65536"), 65536u);
	EXPECT_EQ(parse_unsigned("0x10000"), 65536u);
	EXPECT_EQ(parse_unsigned("0XfF"), 255u);
	EXPECT_EQ(parse_unsigned("010"), 10u) << "decimal, not octal";
	EXPECT_FALSE(parse_unsigned("0x"));
	EXPECT_FALSE(parse_unsigned("ff"));
	EXPECT_FALSE(parse_unsigned(" 1"));
}

TEST(Bytes, HexFormatsWithPrefixAndNoPadding)
{
	EXPECT_EQ(hex(0), "0x0");
	EXPECT_EQ(hex(0xabc), "0xabc");
	EXPECT_EQ(hex(UINT64_MAX), "0xffffffffffffffff");
	EXPECT_EQ(parse_unsigned(hex(0x123456789a)), 0x123456789au) << "round trip";
}

TEST(Bytes, HexBytesRoundTripAndRefuseBadText)
{
	const std::array<uint8_t, 4> bytes{0x00, 0x9f, 0xa0, 0xff};
	EXPECT_EQ(softdpu::common::hex_bytes(bytes), "009fa0ff");
	EXPECT_EQ(softdpu::common::hex_bytes({}), "");
	std::array<uint8_t, 4> out{};
	EXPECT_TRUE(softdpu::common::parse_hex_bytes("009FA0ff", out));
	EXPECT_EQ(out, bytes);
	EXPECT_FALSE(softdpu::common::parse_hex_bytes("009fa0f", out)) << "odd length";
	EXPECT_FALSE(softdpu::common::parse_hex_bytes("009fa0ff00", out)) << "too long for out";
	EXPECT_FALSE(softdpu::common::parse_hex_bytes("009fa0fg", out)) << "not a hex digit";
	EXPECT_FALSE(softdpu::common::parse_hex_bytes("0x9fa0ff", out)) << "no prefix";
}

TEST(Bytes, LittleEndianLoadsAndStores)
{
	const std::array<uint8_t, 11> bytes = {0xaa, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xff, 0xff};
	EXPECT_EQ(load_le<uint16_t>(bytes, 1), 0x0201u);
	EXPECT_EQ(load_le<uint32_t>(bytes, 1), 0x04030201u);
	EXPECT_EQ(load_le<uint64_t>(bytes, 1), 0x0807060504030201u) << "unaligned";
	EXPECT_EQ(load_le<int16_t>(bytes, 9), -1);
	EXPECT_EQ(load_le<uint32_t>(bytes.data() + 5), 0x08070605u);

	std::array<uint8_t, 12> out{};
	store_le<uint64_t>(out.data() + 3, 0x1122334455667788u);
	EXPECT_EQ(out[3], 0x88);
	EXPECT_EQ(out[10], 0x11);
	EXPECT_EQ(out[2], 0) << "nothing before";
	EXPECT_EQ(out[11], 0) << "nothing after";
	EXPECT_EQ(load_le<uint64_t>(out, 3), 0x1122334455667788u);
}

} // namespace
