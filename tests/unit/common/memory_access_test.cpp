// common::check_range_access: what /proc/self/maps says about a range (doca_mmap_start's check).
#include "common/memory_access.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using softdpu::common::check_range_access;
using softdpu::common::RangeAccess;

// Three pages: read-write, read-only, then nothing (unmapped).
class RangeAccessTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
		void *p = mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(p, MAP_FAILED);
		base_ = reinterpret_cast<uintptr_t>(p);
		ASSERT_EQ(mprotect(reinterpret_cast<void *>(base_ + page_), page_, PROT_READ), 0);
		ASSERT_EQ(munmap(reinterpret_cast<void *>(base_ + 2 * page_), page_), 0);
	}
	void TearDown() override { munmap(reinterpret_cast<void *>(base_), 2 * page_); }

	RangeAccess check(uintptr_t addr, size_t len, bool write)
	{
		bad_ = 0;
		return check_range_access(addr, len, write, &bad_);
	}
	size_t page_ = 0;
	uintptr_t base_ = 0;
	uintptr_t bad_ = 0;
};

TEST_F(RangeAccessTest, ReadWritePageAllowsBoth)
{
	EXPECT_EQ(check(base_, page_, true), RangeAccess::ok);
	EXPECT_EQ(check(base_ + 10, 1, false), RangeAccess::ok);
}

TEST_F(RangeAccessTest, ReadOnlyPageRefusesWriteAndSaysWhere)
{
	EXPECT_EQ(check(base_, 2 * page_, false), RangeAccess::ok);
	EXPECT_EQ(check(base_, 2 * page_, true), RangeAccess::no_write);
	EXPECT_EQ(bad_, base_ + page_);
}

TEST_F(RangeAccessTest, UnmappedTailIsFound)
{
	EXPECT_EQ(check(base_, 3 * page_, false), RangeAccess::unmapped);
	EXPECT_EQ(bad_, base_ + 2 * page_);
	EXPECT_EQ(check(base_ + 2 * page_ + 8, 8, false), RangeAccess::unmapped);
	EXPECT_EQ(bad_, base_ + 2 * page_ + 8);
}

TEST_F(RangeAccessTest, InaccessiblePageIsNotReadable)
{
	ASSERT_EQ(mprotect(reinterpret_cast<void *>(base_), page_, PROT_NONE), 0);
	EXPECT_EQ(check(base_ + page_ - 1, 2, false), RangeAccess::no_read);
	EXPECT_EQ(bad_, base_ + page_ - 1);
	EXPECT_EQ(check(base_ + page_, page_, false), RangeAccess::ok);
}

TEST_F(RangeAccessTest, AdjacentMappingsWithTheAccessCountAsOne)
{
	ASSERT_EQ(mprotect(reinterpret_cast<void *>(base_ + page_), page_, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	EXPECT_EQ(check(base_, 2 * page_, true), RangeAccess::ok);
}

TEST(RangeAccess, StackAndHighAddresses)
{
	int local = 0;
	uintptr_t bad = 0;
	EXPECT_EQ(check_range_access(reinterpret_cast<uintptr_t>(&local), sizeof(local), true, &bad), RangeAccess::ok);
	EXPECT_EQ(check_range_access(UINTPTR_MAX - 4095, 4096, false, &bad), RangeAccess::unmapped);
	EXPECT_EQ(check_range_access(4096, 4096, false, &bad), RangeAccess::unmapped);
	EXPECT_EQ(bad, 4096u);
}

// More pages than one system call probes (1024): the hole is found in a later batch.
TEST(ProbeRange, FindsAHoleFarIntoALargeRange)
{
	const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	constexpr size_t kPages = 3000;
	void *p = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(p, MAP_FAILED);
	const auto base = reinterpret_cast<uintptr_t>(p);
	uintptr_t bad = 0;
	EXPECT_EQ(softdpu::common::probe_range(base + 3, kPages * page - 3, &bad), RangeAccess::ok);
	ASSERT_EQ(munmap(reinterpret_cast<void *>(base + 2500 * page), page), 0);
	EXPECT_EQ(softdpu::common::probe_range(base + 3, kPages * page - 3, &bad), RangeAccess::unmapped);
	EXPECT_EQ(bad, base + 2500 * page);
	EXPECT_EQ(softdpu::common::probe_range(base + 2501 * page, 10, &bad), RangeAccess::ok);
	munmap(p, kPages * page);
}

} // namespace
