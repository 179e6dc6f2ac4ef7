// The binary BTF reader on hand-built blobs: members through anonymous structs and unions,
// dotted paths, bitfields, arrays and typedefs; malformed blobs fail with a reason.
#include "apsh/kernel/btf.hpp"
#include "unit/apsh/reader_test_support.hpp"

#include <gtest/gtest.h>

using reader_test::BtfBuilder;
using softdpu::apsh::kernel::Btf;

namespace {

// struct inner { long a; long b; };
// struct outer { int x; union { long u1; struct { int p; int q; }; }; struct inner in;
//                int flags:3, mode:5; inner_t arr[4]; const char *name; };
std::vector<uint8_t> sample_blob()
{
	BtfBuilder b;
	uint32_t int_type = b.add_int("int", 4);
	uint32_t long_type = b.add_int("long", 8);
	uint32_t char_type = b.add_int("char", 1);
	uint32_t inner = b.add_struct("inner", 16, {{"a", long_type, 0}, {"b", long_type, 64}});
	uint32_t inner_t = b.add_typedef("inner_t", inner);
	uint32_t pq = b.add_struct("", 8, {{"p", int_type, 0}, {"q", int_type, 32}});
	uint32_t anon_union = b.add_struct("", 8, {{"u1", long_type, 0}, {"", pq, 0}}, true);
	uint32_t array = b.add_array(inner_t, int_type, 4);
	uint32_t name_pointer = b.add_ptr(b.add_const(char_type));
	b.add_struct("outer", 112,
		     {{"x", int_type, 0},
		      {"", anon_union, 64},
		      {"in", inner, 128},
		      {"flags", int_type, 256, 3},
		      {"mode", int_type, 259, 5},
		      {"arr", array, 320},
		      {"name", name_pointer, 832}});
	return b.blob();
}

Btf parsed(const std::vector<uint8_t> &blob)
{
	Btf btf;
	auto status = Btf::parse(blob, btf);
	EXPECT_TRUE(status.ok()) << status.reason;
	return btf;
}

TEST(ReaderBtf, MembersThroughAnonymousStructsAndUnions)
{
	Btf btf = parsed(sample_blob());
	EXPECT_EQ(btf.struct_size("outer"), 112u);
	EXPECT_EQ(btf.member("outer", "x")->offset(), 0u);
	EXPECT_EQ(btf.member("outer", "u1")->offset(), 8u);
	EXPECT_EQ(btf.member("outer", "p")->offset(), 8u);
	EXPECT_EQ(btf.member("outer", "q")->offset(), 12u);
	EXPECT_EQ(btf.member("outer", "in.b")->offset(), 24u);
	EXPECT_FALSE(btf.member("outer", "missing").has_value());
	EXPECT_FALSE(btf.member("outer", "in.missing").has_value());
	EXPECT_FALSE(btf.member("nosuchstruct", "x").has_value());
}

TEST(ReaderBtf, BitfieldsArraysPointersAndTypedefs)
{
	Btf btf = parsed(sample_blob());
	auto mode = btf.member("outer", "mode");
	ASSERT_TRUE(mode);
	EXPECT_EQ(mode->bit_offset, 259u);
	EXPECT_EQ(mode->bitfield_bits, 5u);
	auto arr = btf.member("outer", "arr");
	ASSERT_TRUE(arr);
	EXPECT_EQ(arr->offset(), 40u);
	EXPECT_EQ(btf.size_of(arr->type), 64u); // 4 × sizeof(inner_t) through the typedef
	auto info = btf.array_info(arr->type);
	ASSERT_TRUE(info);
	EXPECT_EQ(info->second, 4u);
	EXPECT_EQ(btf.name(btf.resolve(info->first)), "inner");
	auto name = btf.member("outer", "name");
	ASSERT_TRUE(name);
	EXPECT_EQ(btf.size_of(name->type), 8u);
	EXPECT_EQ(btf.kind(name->type), Btf::kind_ptr);
}

TEST(ReaderBtf, RejectsMalformedBlobs)
{
	std::vector<uint8_t> blob = sample_blob();
	Btf btf;
	EXPECT_FALSE(Btf::parse({blob.data(), 10}, btf).ok());
	std::vector<uint8_t> bad_magic = blob;
	bad_magic[0] = 0;
	auto status = Btf::parse(bad_magic, btf);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("magic"), std::string::npos);
	// Cut inside the type section: the header still claims the full length.
	EXPECT_FALSE(Btf::parse({blob.data(), blob.size() - 40}, btf).ok());
	// A type of unknown kind.
	std::vector<uint8_t> bad_kind = blob;
	bad_kind[24 + 7] = 0x1f;
	EXPECT_FALSE(Btf::parse(bad_kind, btf).ok());
	// String section not NUL-terminated.
	std::vector<uint8_t> unterminated = blob;
	unterminated.back() = 'x';
	EXPECT_FALSE(Btf::parse(unterminated, btf).ok());
}

TEST(ReaderBtf, QualifierCyclesAndBadIdsDoNotHang)
{
	BtfBuilder b;
	uint32_t first = b.next_id();
	b.add_typedef("loop_a", first + 1);
	b.add_typedef("loop_b", first);
	uint32_t holder = b.add_struct("holder", 8, {{"field", first, 0}, {"dangling", 999, 32}});
	Btf btf = parsed(b.blob());
	EXPECT_EQ(btf.resolve(first), 0u);
	EXPECT_FALSE(btf.size_of(first).has_value());
	EXPECT_FALSE(btf.size_of(999).has_value());
	EXPECT_FALSE(btf.member(holder, "dangling.x").has_value());
	EXPECT_TRUE(btf.member(holder, "dangling").has_value());
}

TEST(ReaderBtf, PrefersTheCompleteDefinitionOfAName)
{
	BtfBuilder b;
	uint32_t int_type = b.add_int("int", 4);
	b.add_struct("task", 0, {});
	b.add_struct("task", 8, {{"pid", int_type, 32}});
	Btf btf = parsed(b.blob());
	EXPECT_EQ(btf.member("task", "pid")->offset(), 4u);
}

} // namespace
