// doca_mmap.h: configuration, state rules and every documented error.
#include "core/mem/mmap.hpp"
#include "core/mem/testing.hpp"
#include "mem_fixture.hpp"
#include "support/devices.hpp"

#include <doca_buf_array.h>
#include <doca_buf_pool.h>
#include <doca_dev.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <vector>

namespace {

using mem_test::StartedMmap;

class Mmap : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS); }
	void TearDown() override
	{
		if (mmap != nullptr) {
			EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
		}
	}
	std::array<uint8_t, 1024> memory{};
	doca_mmap *mmap = nullptr;
};

// A stand-in device pointer for argument checks that fail before the device is touched.
doca_dev *fake_dev()
{
	static int storage;
	return reinterpret_cast<doca_dev *>(&storage);
}

TEST(MmapCreate, RejectsNullOutput)
{
	EXPECT_EQ(doca_mmap_create(nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST(MmapNullArgs, EveryFunctionRejectsNullMmap)
{
	uint8_t flag = 0;
	uint32_t count = 0;
	void *addr = nullptr;
	size_t len = 0;
	union doca_data data = {};
	const void *desc = nullptr;
	EXPECT_EQ(doca_mmap_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_add_dev(nullptr, fake_dev()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_rm_dev(nullptr, fake_dev()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_memrange(nullptr, &flag, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(nullptr, 0, &flag, 0, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_memrange(nullptr, &addr, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_free_cb(
		      nullptr, [](void *, size_t, void *) {}, nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_permissions(nullptr, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_user_data(nullptr, data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_user_data(nullptr, &data), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_max_num_devices(nullptr, 4), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_max_num_devices(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_num_bufs(nullptr, &count), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_exported(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_from_export(nullptr, &flag), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_export_pci(nullptr, fake_dev(), &desc, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_export_rdma(nullptr, fake_dev(), &desc, &len), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Mmap, GettersRejectNullOutputs)
{
	EXPECT_EQ(doca_mmap_get_memrange(mmap, nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_user_data(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_max_num_devices(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_num_bufs(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_exported(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_get_from_export(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_add_dev(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(Mmap, DefaultsOfAFreshMmap)
{
	union doca_data data = {.u64 = 99};
	uint32_t count = 0;
	uint8_t flag = 7;
	ASSERT_EQ(doca_mmap_get_user_data(mmap, &data), DOCA_SUCCESS);
	EXPECT_EQ(data.u64, 0u);
	ASSERT_EQ(doca_mmap_get_max_num_devices(mmap, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 16u);
	ASSERT_EQ(doca_mmap_get_num_bufs(mmap, &count), DOCA_SUCCESS);
	EXPECT_EQ(count, 0u);
	ASSERT_EQ(doca_mmap_get_exported(mmap, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	ASSERT_EQ(doca_mmap_get_from_export(mmap, &flag), DOCA_SUCCESS);
	EXPECT_EQ(flag, 0);
	EXPECT_EQ(mmap->permissions(), static_cast<uint32_t>(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	EXPECT_EQ(mmap->origin(), doca_mmap::Origin::local);
	EXPECT_EQ(mmap->remote(), nullptr);
}

TEST_F(Mmap, MemrangeRoundTrip)
{
	void *addr = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_mmap_get_memrange(mmap, &addr, &len), DOCA_ERROR_BAD_STATE); // never set
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_get_memrange(mmap, &addr, &len), DOCA_SUCCESS);
	EXPECT_EQ(addr, memory.data());
	EXPECT_EQ(len, memory.size());
	EXPECT_EQ(mmap->memrange_start(), memory.data());
	EXPECT_EQ(mmap->memrange_len(), memory.size());
}

TEST_F(Mmap, MemrangeRejectsInvalidInput)
{
	EXPECT_EQ(doca_mmap_set_memrange(mmap, nullptr, 16), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_memrange(mmap, memory.data(), 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_memrange(mmap, reinterpret_cast<void *>(UINTPTR_MAX - 8), 16),
		  DOCA_ERROR_INVALID_VALUE); // addr + len overflows
}

TEST_F(Mmap, MemrangeCanBeSetOnlyOnce)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_memrange(mmap, memory.data(), 8), DOCA_ERROR_NOT_PERMITTED);
}

TEST_F(Mmap, MemrangeCannotChangeWhileStarted)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_memrange(mmap, memory.data(), 8), DOCA_ERROR_BAD_STATE);
}

TEST_F(Mmap, ContainsIsOverflowSafe)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	EXPECT_TRUE(mmap->contains(memory.data(), memory.size()));
	EXPECT_TRUE(mmap->contains(memory.data() + memory.size(), 0));
	EXPECT_FALSE(mmap->contains(memory.data() + 1, memory.size()));
	EXPECT_FALSE(mmap->contains(memory.data() - 1, 1));
	EXPECT_FALSE(mmap->contains(memory.data() + 8, SIZE_MAX));
}

TEST_F(Mmap, DmabufRejectsBadDescriptors)
{
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, -1, memory.data(), 0, memory.size()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 987654, memory.data(), 0, memory.size()),
		  DOCA_ERROR_INVALID_VALUE); // not open
	// An open descriptor that is not a dma-buf: a memfd and a pipe.
	const int memfd = memfd_create("not-a-dmabuf", 0);
	ASSERT_GE(memfd, 0);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, memfd, memory.data(), 0, memory.size()),
		  DOCA_ERROR_INVALID_VALUE);
	int pipe_fds[2];
	ASSERT_EQ(pipe(pipe_fds), 0);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, pipe_fds[0], memory.data(), 0, memory.size()),
		  DOCA_ERROR_INVALID_VALUE);
	close(memfd);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 0, nullptr, 0, 16), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 0, memory.data(), 0, 0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 0, reinterpret_cast<void *>(UINTPTR_MAX - 8), 0, 16),
		  DOCA_ERROR_INVALID_VALUE);
	// Nothing was recorded: a plain memrange can still be set.
	EXPECT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
}

TEST_F(Mmap, DmabufFollowsMemrangeStateRules)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 0, memory.data(), 0, 8), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_dmabuf_memrange(mmap, 0, memory.data(), 0, 8), DOCA_ERROR_BAD_STATE);
}

TEST_F(Mmap, PermissionsAcceptEveryDefinedCombination)
{
	const uint32_t all = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			     DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC |
			     DOCA_ACCESS_FLAG_PCI_READ_WRITE | DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING;
	EXPECT_EQ(doca_mmap_set_permissions(mmap, all), DOCA_SUCCESS);
	EXPECT_EQ(mmap->permissions(), all);
	EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY), DOCA_SUCCESS);
	EXPECT_EQ(mmap->permissions(), static_cast<uint32_t>(DOCA_ACCESS_FLAG_PCI_READ_ONLY));
}

TEST_F(Mmap, PermissionsRejectUndefinedFlagsAndPciConflict)
{
	EXPECT_EQ(doca_mmap_set_permissions(mmap, 1u << 7), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_permissions(mmap, 0x80000000u), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(mmap->permissions(), static_cast<uint32_t>(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)); // unchanged
}

TEST_F(Mmap, NothingChangesAfterStart)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_TRUE(mmap->is_started());
	union doca_data data = {.u64 = 5};
	EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_set_user_data(mmap, data), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_set_free_cb(
		      mmap, [](void *, size_t, void *) {}, nullptr),
		  DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 4), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_add_dev(mmap, fake_dev()), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, fake_dev()), DOCA_ERROR_NOT_PERMITTED);
}

TEST_F(Mmap, MaxDevicesCannotChangeAfterFirstStart)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_max_num_devices(mmap, 3), DOCA_SUCCESS);
	uint32_t max = 0;
	ASSERT_EQ(doca_mmap_get_max_num_devices(mmap, &max), DOCA_SUCCESS);
	EXPECT_EQ(max, 3u);
	EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 0), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 4), DOCA_ERROR_NOT_PERMITTED);
}

TEST_F(Mmap, UserDataRoundTrip)
{
	union doca_data data = {.u64 = 0xfeed};
	ASSERT_EQ(doca_mmap_set_user_data(mmap, data), DOCA_SUCCESS);
	union doca_data read = {};
	ASSERT_EQ(doca_mmap_get_user_data(mmap, &read), DOCA_SUCCESS);
	EXPECT_EQ(read.u64, 0xfeedu);
}

TEST_F(Mmap, StartNeedsAMemrange)
{
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_ERROR_BAD_STATE);
}

// What memory registration refuses on hardware: a range that is not mapped, or mapped without the
// access the flags ask for. Such memory used to pass start and crash the process in a DMA task.
class MmapStartChecksMemory : public ::testing::Test {
protected:
	void SetUp() override
	{
		page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
		void *p = ::mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(p, MAP_FAILED);
		pages_ = static_cast<uint8_t *>(p);
	}
	void TearDown() override { munmap(pages_, 2 * page_); }

	doca_error_t start(void *addr, size_t len, uint32_t permissions)
	{
		doca_mmap *m = nullptr;
		EXPECT_EQ(doca_mmap_create(&m), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_set_memrange(m, addr, len), DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_set_permissions(m, permissions), DOCA_SUCCESS);
		const doca_error_t result = doca_mmap_start(m);
		EXPECT_EQ(m->is_started(), result == DOCA_SUCCESS);
		EXPECT_EQ(doca_mmap_destroy(m), DOCA_SUCCESS);
		return result;
	}
	size_t page_ = 0;
	uint8_t *pages_ = nullptr;
};

TEST_F(MmapStartChecksMemory, UnmappedRangeIsInvalid)
{
	ASSERT_EQ(munmap(pages_ + page_, page_), 0);
	EXPECT_EQ(start(pages_, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_ + page_, 16, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_, page_, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
}

TEST_F(MmapStartChecksMemory, ReadOnlyPagesOnlyForReadOnlyAccess)
{
	ASSERT_EQ(mprotect(pages_, 2 * page_, PROT_READ), 0);
	EXPECT_EQ(start(pages_, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY | DOCA_ACCESS_FLAG_RDMA_WRITE),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_, 2 * page_,
			DOCA_ACCESS_FLAG_LOCAL_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_RDMA_READ),
		  DOCA_SUCCESS);
}

TEST_F(MmapStartChecksMemory, InaccessiblePagesAreInvalid)
{
	ASSERT_EQ(mprotect(pages_ + page_, page_, PROT_NONE), 0);
	EXPECT_EQ(start(pages_, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(pages_, page_, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_SUCCESS);
}

// A shared file mapping past the end of its file looks read-write in /proc/self/maps, but a load
// there raises SIGBUS: start faults every page in and refuses it.
TEST_F(MmapStartChecksMemory, FileMappingPastItsEndIsInvalid)
{
	char path[] = "/tmp/softdpu-mmap-test-XXXXXX";
	const int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	unlink(path);
	ASSERT_EQ(ftruncate(fd, static_cast<off_t>(page_)), 0);
	void *p = ::mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(p, MAP_FAILED);
	auto *file = static_cast<uint8_t *>(p);
	EXPECT_EQ(start(file, 2 * page_, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(file + page_, 8, DOCA_ACCESS_FLAG_LOCAL_READ_ONLY), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start(file, page_, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
	munmap(p, 2 * page_);
}

// Without a descriptor for /proc/self/maps the access rights cannot be read: start still faults
// every page in (no descriptor needed) and succeeds on good memory, refuses a hole.
TEST_F(MmapStartChecksMemory, NoDescriptorForTheMapsStillProbesEveryPage)
{
	doca_mmap *good = nullptr;
	doca_mmap *holed = nullptr;
	ASSERT_EQ(doca_mmap_create(&good), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_create(&holed), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(good, pages_, page_), DOCA_SUCCESS);
	ASSERT_EQ(munmap(pages_ + page_, page_), 0);
	ASSERT_EQ(doca_mmap_set_memrange(holed, pages_, 2 * page_), DOCA_SUCCESS);
	struct rlimit saved;
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
	struct rlimit low = saved;
	low.rlim_cur = 64;
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	std::vector<int> fds;
	for (int fd; (fd = dup(0)) >= 0;)
		fds.push_back(fd);
	const doca_error_t good_result = doca_mmap_start(good);
	const doca_error_t holed_result = doca_mmap_start(holed);
	for (int fd : fds)
		close(fd);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
	EXPECT_EQ(good_result, DOCA_SUCCESS);
	EXPECT_EQ(holed_result, DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_destroy(good), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(holed), DOCA_SUCCESS);
}

TEST_F(MmapStartChecksMemory, RefusedStartCanBeRetriedOnceTheMemoryIsThere)
{
	doca_mmap *m = nullptr;
	ASSERT_EQ(doca_mmap_create(&m), DOCA_SUCCESS);
	ASSERT_EQ(mprotect(pages_, page_, PROT_READ), 0);
	ASSERT_EQ(doca_mmap_set_memrange(m, pages_, page_), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_start(m), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(mprotect(pages_, page_, PROT_READ | PROT_WRITE), 0);
	EXPECT_EQ(doca_mmap_start(m), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(m), DOCA_SUCCESS);
}

TEST_F(Mmap, StartAndStopStateErrors)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_ERROR_BAD_STATE); // not started
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_ERROR_BAD_STATE); // already started
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_FALSE(mmap->is_started());
	// Stopped: configurable again, except the memrange (once only).
	EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
}

TEST_F(Mmap, FreeCallbackRunsOnDestroyOfAStartedMmap)
{
	struct Seen {
		void *addr = nullptr;
		size_t len = 0;
		int calls = 0;
	} seen;
	auto callback = [](void *addr, size_t len, void *cookie) {
		auto *s = static_cast<Seen *>(cookie);
		s->addr = addr;
		s->len = len;
		++s->calls;
	};
	EXPECT_EQ(doca_mmap_set_free_cb(mmap, nullptr, &seen), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_free_cb(mmap, callback, &seen), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	mmap = nullptr;
	EXPECT_EQ(seen.calls, 1);
	EXPECT_EQ(seen.addr, memory.data());
	EXPECT_EQ(seen.len, memory.size());
}

TEST_F(Mmap, FreeCallbackDoesNotRunForANeverStartedMmap)
{
	int calls = 0;
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_free_cb(
		      mmap, [](void *, size_t, void *cookie) { ++*static_cast<int *>(cookie); }, &calls),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	mmap = nullptr;
	EXPECT_EQ(calls, 0);
}

TEST_F(StartedMmap, DestroyAndStopRefusedWhileBuffersExist)
{
	doca_buf *buf = get(0, 64);
	EXPECT_EQ(num_bufs(), 1u);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_dec_refcount(buf, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(num_bufs(), 0u);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
}

TEST_F(StartedMmap, PoolAndArrayPinTheMmapUntilDestroyed)
{
	doca_buf_pool *pool = nullptr;
	ASSERT_EQ(doca_buf_pool_create(4, 64, mmap, &pool), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS);
	doca_buf_arr *arr = nullptr;
	ASSERT_EQ(doca_buf_arr_create(mmap, &arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
}

TEST_F(StartedMmap, ExportChecksItsInput)
{
	const void *desc = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_mmap_export_pci(mmap, nullptr, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_export_pci(mmap, fake_dev(), nullptr, &len), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_export_pci(mmap, fake_dev(), &desc, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, nullptr, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	// A real device (its name goes into the error message) that was never added.
	doca_dev *dev = softdpu_test::open_first_device([](doca_devinfo *) { return true; });
	ASSERT_NE(dev, nullptr);
	EXPECT_EQ(doca_mmap_export_pci(mmap, dev, &desc, &len), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, dev, &desc, &len), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	uint8_t exported = 1;
	ASSERT_EQ(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 0);
}

TEST(MmapCreateFromExport, ChecksInputThenTheDescriptor)
{
	const char desc[16] = {};
	doca_mmap *imported = nullptr;
	union doca_data data = {};
	EXPECT_EQ(doca_mmap_create_from_export(&data, nullptr, sizeof(desc), fake_dev(), &imported),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_create_from_export(&data, desc, 0, fake_dev(), &imported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_create_from_export(&data, desc, sizeof(desc), nullptr, &imported),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_create_from_export(&data, desc, sizeof(desc), fake_dev(), nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	// Not a descriptor (too short, no magic): rejected before the device is looked at.
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, desc, sizeof(desc), fake_dev(), &imported),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(imported, nullptr);
}

TEST(MmapCapabilities, ExportCapabilitiesFollowTheDeviceAndCheckInput)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	ASSERT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS); // the host side (test_env.cpp)
	ASSERT_GT(count, 0u);
	const doca_devinfo *devinfo = list[0];
	uint8_t supported = 1;
	EXPECT_EQ(doca_mmap_cap_is_export_pci_supported(nullptr, &supported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_cap_is_export_pci_supported(devinfo, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_cap_is_create_from_export_pci_supported(nullptr, &supported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_cap_is_create_from_export_pci_supported(devinfo, nullptr), DOCA_ERROR_INVALID_VALUE);
	// Host functions export to the DPU; only DPU PFs import PCI exports (docs/topology.md).
	supported = 0;
	ASSERT_EQ(doca_mmap_cap_is_export_pci_supported(devinfo, &supported), DOCA_SUCCESS);
	EXPECT_EQ(supported, 1);
	supported = 1;
	ASSERT_EQ(doca_mmap_cap_is_create_from_export_pci_supported(devinfo, &supported), DOCA_SUCCESS);
	EXPECT_EQ(supported, 0);
	doca_devinfo_destroy_list(list);
}

} // namespace

namespace {

using softdpu::mem::testing::MmapAccess;

// The state rules of exported and imported mmaps, with the kind set directly (the cross-process
// tests in tests/integration/xproc/ export and import for real).
TEST_F(Mmap, ExportedOrImportedMmapRefusesConfiguration)
{
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	for (const bool imported : {false, true}) {
		MmapAccess::set_kind(*mmap, !imported,
				     imported ? doca_mmap::Origin::imported : doca_mmap::Origin::local);
		EXPECT_EQ(doca_mmap_set_memrange(mmap, memory.data(), 8), DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 2), DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_set_free_cb(
			      mmap, [](void *, size_t, void *) {}, nullptr),
			  DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_add_dev(mmap, fake_dev()), DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_rm_dev(mmap, fake_dev()), DOCA_ERROR_NOT_PERMITTED);
		EXPECT_EQ(doca_mmap_start(mmap), DOCA_ERROR_NOT_PERMITTED);
		// An imported mmap cannot be stopped; an exported one is stopped like any other (which
		// revokes its exports, see tests/integration/xproc/), so this one, not started, is BAD_STATE.
		EXPECT_EQ(doca_mmap_stop(mmap), imported ? DOCA_ERROR_NOT_PERMITTED : DOCA_ERROR_BAD_STATE);
		uint8_t flag = 0;
		ASSERT_EQ(doca_mmap_get_exported(mmap, &flag), DOCA_SUCCESS);
		EXPECT_EQ(flag, imported ? 0 : 1);
		ASSERT_EQ(doca_mmap_get_from_export(mmap, &flag), DOCA_SUCCESS);
		EXPECT_EQ(flag, imported ? 1 : 0);
	}
	MmapAccess::set_kind(*mmap, false, doca_mmap::Origin::local);
}

} // namespace
