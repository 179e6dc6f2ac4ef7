// x86-64 translation over hand-built page tables: 4 and 5 levels, 4 KiB / 2 MiB / 1 GiB pages,
// canonical checks, reads that stop at unmapped pages, garbage tables.
#include "apsh/paging/address_space.hpp"
#include "unit/apsh/reader_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>

using reader_test::PagedMemory;
using softdpu::apsh::paging::AddressSpace;
using softdpu::apsh::source::PhysicalMemory;

namespace {

constexpr uint64_t mib = 1ull << 20;

std::unique_ptr<PhysicalMemory> over(std::vector<uint8_t> &bytes)
{
	std::unique_ptr<PhysicalMemory> memory;
	EXPECT_TRUE(PhysicalMemory::over_bytes(bytes, {{0, bytes.size(), 0}}, memory).ok());
	return memory;
}

class ReaderPaging : public ::testing::TestWithParam<int> {};

TEST_P(ReaderPaging, TranslatesSmallAndLargePages)
{
	int levels = GetParam();
	PagedMemory guest(8 * mib, levels);
	const uint64_t kernel_va = levels == 5 ? 0xff11000000001000ull : 0xffff888000001000ull;
	guest.map(kernel_va, 0x5000);                  // 4 KiB
	guest.map(0x00007f0000200000ull, 0x200000, 2); // 2 MiB
	guest.map(0x0000004000000000ull, 0x0, 3);      // 1 GiB at PA 0
	std::memcpy(guest.bytes().data() + 0x5123, "kernel", 6);
	std::memcpy(guest.bytes().data() + 0x2abcde, "large", 5);
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), levels);

	EXPECT_EQ(space.translate(kernel_va + 0x123), 0x5123u);
	EXPECT_EQ(space.translate(0x00007f0000200000ull + 0xabcde), 0x2abcdeu);
	EXPECT_EQ(space.translate(0x0000004000000000ull + 0x345678), 0x345678u);
	char text[6] = {};
	ASSERT_TRUE(space.read_exact(kernel_va + 0x123, {reinterpret_cast<uint8_t *>(text), 6}));
	EXPECT_EQ(std::string(text, 6), "kernel");
	// Cached translations give the same answer.
	EXPECT_EQ(space.translate(kernel_va + 0x123), 0x5123u);
	EXPECT_FALSE(space.translate(kernel_va + 0x1000).has_value()); // next page: unmapped
}

TEST_P(ReaderPaging, ReadStopsAtTheFirstUnmappedPage)
{
	int levels = GetParam();
	PagedMemory guest(4 * mib, levels);
	guest.map(0x10000, 0x3000);
	guest.map(0x11000, 0x7000);
	guest.map(0x13000, 0x8000); // 0x12000 is a hole
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), levels);
	std::vector<uint8_t> buffer(4 * 4096);
	EXPECT_EQ(space.read(0x10800, buffer), 0x12000u - 0x10800u);
	EXPECT_FALSE(space.read_exact(0x11ff8, {buffer.data(), 16}));
	EXPECT_TRUE(space.read_exact(0x11ff0, {buffer.data(), 16}));
}

TEST_P(ReaderPaging, RejectsNonCanonicalAddresses)
{
	int levels = GetParam();
	PagedMemory guest(2 * mib, levels);
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), levels);
	EXPECT_TRUE(space.is_canonical(0x00007fffffffffffull));
	EXPECT_TRUE(space.is_canonical(0xffffffff81000000ull));
	EXPECT_FALSE(space.is_canonical(0x8000000000000000ull));
	// Between the halves: non-canonical only with 4 levels.
	EXPECT_EQ(space.is_canonical(0x0080000000000000ull), levels == 5);
	EXPECT_FALSE(space.translate(0x8000000000000000ull).has_value());
}

TEST_P(ReaderPaging, TranslatePagesAgreesWithTranslate)
{
	int levels = GetParam();
	PagedMemory guest(8 * mib, levels);
	// 4 KiB pages on both sides of a 2 MiB boundary with holes, then a 2 MiB page, then nothing.
	const uint64_t base = 0x00007f0000000000ull;
	guest.map(base + 0x1fd000, 0x3000);
	guest.map(base + 0x1ff000, 0x7000);
	guest.map(base + 0x200000, 0x8000);
	guest.map(base + 0x202000, 0x9000);
	guest.map(base + 0x400000, 0x400000, 2);
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), levels);
	const uint64_t start = base + 0x1fc000;
	std::vector<uint64_t> frames(0x808000 / 4096);
	space.translate_pages(start, frames);
	size_t present = 0;
	for (size_t i = 0; i < frames.size(); ++i) {
		const auto expected = space.translate(start + i * 4096);
		EXPECT_EQ(frames[i], expected.value_or(AddressSpace::kNoPage)) << "page " << i;
		present += expected.has_value();
	}
	EXPECT_EQ(present, 4u + 512u);
	EXPECT_EQ(frames[1], 0x3000u);
	EXPECT_EQ(frames[2], AddressSpace::kNoPage);
	EXPECT_EQ(frames[0x204 + 0x10], 0x410000u);

	// Pages past the top of the address space or outside the canonical halves are not present.
	std::vector<uint64_t> top(4);
	space.translate_pages(0xffffffffffffe000ull, top);
	for (uint64_t frame : top)
		EXPECT_EQ(frame, AddressSpace::kNoPage);
}

INSTANTIATE_TEST_SUITE_P(Levels, ReaderPaging, ::testing::Values(4, 5));

TEST(ReaderPagingGarbage, TablesPointingOutsideRamFailCleanly)
{
	PagedMemory guest(2 * mib, 4);
	// A top-level entry pointing far past the end of RAM, and one pointing back at the top table.
	guest.store(guest.top() + 0 * 8, 0x7ffff000000ull | 1);
	guest.store(guest.top() + 1 * 8, guest.top() | 1);
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), 4);
	EXPECT_FALSE(space.translate(0x1000).has_value());
	// A self-referencing entry at every level ends after the fixed number of levels, in the
	// top table itself (the "recursive mapping" trick).
	const uint64_t recursive = (1ull << 39) | (1ull << 30) | (1ull << 21) | (1ull << 12) | 0x18;
	EXPECT_EQ(space.translate(recursive), guest.top() + 0x18);
	EXPECT_FALSE(space.translate(0x0000008000000000ull).has_value()); // into the entry past RAM
	std::vector<uint8_t> buffer(64);
	EXPECT_EQ(space.read(0x1000, buffer), 0u);
}

TEST(ReaderPagingGarbage, FlushForgetsStaleTranslations)
{
	PagedMemory guest(2 * mib, 4);
	guest.map(0x400000, 0x1000);
	auto memory = over(guest.bytes());
	AddressSpace space(*memory, guest.top(), 4);
	EXPECT_EQ(space.translate(0x400000), 0x1000u);
	guest.map(0x400000, 0x2000); // the guest changes its tables
	space.flush();
	EXPECT_EQ(space.translate(0x400000), 0x2000u);
}

} // namespace
