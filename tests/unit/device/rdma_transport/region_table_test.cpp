// SharedRegion and MemoryTable within one process: sealing, what map_received refuses, keys and
// tags, a full table, and remove() waiting for accessors (through the table's shared file).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <vector>

#include "child.hpp"

namespace {

using namespace softdpu::device::rdma::transport;
using transport_test::Child;

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// Callers pass verbs' access flags unchanged.
static_assert(kAccessLocalWrite == IBV_ACCESS_LOCAL_WRITE && kAccessRemoteWrite == IBV_ACCESS_REMOTE_WRITE &&
	      kAccessRemoteRead == IBV_ACCESS_REMOTE_READ && kAccessRemoteAtomic == IBV_ACCESS_REMOTE_ATOMIC);

TEST(RdmaTransportRegion, CreateRoundsToPagesAndSeals)
{
	SharedRegion region;
	ASSERT_EQ(SharedRegion::create(100, "test-region", &region), Status::ok);
	EXPECT_EQ(region.size(), kPage);
	ASSERT_NE(region.data(), nullptr);
	const int seals = fcntl(region.fd(), F_GET_SEALS);
	EXPECT_EQ(static_cast<unsigned>(seals) & kRegionSeals, kRegionSeals);
	// Growing or shrinking is refused, so no mapping of it can ever fault.
	EXPECT_NE(ftruncate(region.fd(), static_cast<off_t>(kPage * 2)), 0);
	EXPECT_NE(ftruncate(region.fd(), 0), 0);
	std::memset(region.data(), 0x5a, region.size());

	SharedRegion peer;
	ASSERT_EQ(SharedRegion::map_received(region.fd(), 100, &peer), Status::ok);
	EXPECT_EQ(peer.size(), kPage);
	EXPECT_EQ(static_cast<unsigned char *>(peer.data())[kPage - 1], 0x5a);
	static_cast<unsigned char *>(peer.data())[0] = 0x11;
	EXPECT_EQ(static_cast<unsigned char *>(region.data())[0], 0x11) << "the same memory, shared";

	EXPECT_EQ(SharedRegion::create(0, "empty", &peer), Status::invalid_argument);
	SharedRegion moved(std::move(region));
	EXPECT_FALSE(region.valid()); // NOLINT(bugprone-use-after-move): the moved-from state is tested
	EXPECT_TRUE(moved.valid());
}

TEST(RdmaTransportRegion, MapReceivedRefusesWhatIsNotASealedMemfdOfTheSize)
{
	SharedRegion out;
	// Not a memfd: a pipe, an eventfd, a regular file.
	int pipefd[2];
	ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
	EXPECT_EQ(SharedRegion::map_received(pipefd[0], kPage, &out), Status::refused);
	close(pipefd[0]);
	close(pipefd[1]);
	const int efd = eventfd(0, EFD_CLOEXEC);
	EXPECT_EQ(SharedRegion::map_received(efd, kPage, &out), Status::refused);
	unsigned seals = 0;
	size_t size = 0;
	EXPECT_EQ(classify_fd(efd, &seals, &size), FdKind::eventfd);
	close(efd);
	char path[] = "/tmp/softdpu-rdma-test-XXXXXX";
	const int file = mkstemp(path);
	ASSERT_GE(file, 0);
	unlink(path);
	ASSERT_EQ(ftruncate(file, static_cast<off_t>(kPage)), 0);
	EXPECT_EQ(SharedRegion::map_received(file, kPage, &out), Status::refused);
	EXPECT_EQ(classify_fd(file, &seals, &size), FdKind::other);
	close(file);

	// A memfd without seals: its owner could shrink it under our mapping.
	const int unsealed = static_cast<int>(syscall(SYS_memfd_create, "unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	ASSERT_GE(unsealed, 0);
	ASSERT_EQ(ftruncate(unsealed, static_cast<off_t>(kPage)), 0);
	EXPECT_EQ(SharedRegion::map_received(unsealed, kPage, &out), Status::refused);
	// Sealed against shrinking but not growing is not enough either.
	ASSERT_EQ(fcntl(unsealed, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	EXPECT_EQ(SharedRegion::map_received(unsealed, kPage, &out), Status::refused);
	close(unsealed);

	// A sealed region of another size.
	SharedRegion region;
	ASSERT_EQ(SharedRegion::create(kPage * 2, "two-pages", &region), Status::ok);
	EXPECT_EQ(SharedRegion::map_received(region.fd(), kPage, &out), Status::refused);
	EXPECT_EQ(SharedRegion::map_received(region.fd(), kPage * 3, &out), Status::refused);
	EXPECT_EQ(SharedRegion::map_received(region.fd(), 0, &out), Status::refused);
	EXPECT_FALSE(out.valid());

	// Sealed against writes by others: maps read-only, never writable.
	SharedRegion readonly;
	ASSERT_EQ(SharedRegion::create(kPage, "rules", &readonly, F_SEAL_FUTURE_WRITE), Status::ok);
	EXPECT_EQ(SharedRegion::map_received(readonly.fd(), kPage, &out), Status::refused);
	EXPECT_EQ(SharedRegion::map_received(readonly.fd(), kPage, &out, false), Status::ok);
}

TEST(RdmaTransportTable, AddLookupRemoveWithRotatingTags)
{
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	std::vector<char> buffer(4096);
	const auto addr = reinterpret_cast<uint64_t>(buffer.data());
	uint32_t key = 0;
	ASSERT_EQ(table->add(addr, buffer.size(), 0x1000, kAccessRemoteWrite | kAccessLocalWrite, 3, &key), Status::ok);
	EXPECT_NE(key, 0u);
	EXPECT_NE(key & 0xff, 0u) << "the tag is never 0";
	const auto reg = table->lookup(key);
	ASSERT_TRUE(reg.has_value());
	EXPECT_EQ(reg->addr, addr);
	EXPECT_EQ(reg->iova, 0x1000u);
	EXPECT_EQ(reg->length, buffer.size());
	EXPECT_EQ(reg->access, kAccessRemoteWrite | kAccessLocalWrite);
	EXPECT_EQ(reg->pd_id, 3u);
	EXPECT_FALSE(table->lookup(key ^ 0x1).has_value()) << "another tag of the same entry";
	uint64_t where = 0;
	EXPECT_EQ(table->check(key, 0x1000 + 100, 200, kAccessLocalWrite, 3, &where), Status::ok);
	EXPECT_EQ(where, addr + 100) << "iova translated to the address";
	EXPECT_EQ(table->check(key, 0x1000, 4096, 0, 3, &where), Status::ok) << "the whole range";
	EXPECT_EQ(table->check(key, 0x1000, 4097, 0, 3, &where), Status::remote_access_error);
	EXPECT_EQ(table->check(key, 0xfff, 1, 0, 3, &where), Status::remote_access_error);
	EXPECT_EQ(table->check(key, 0x1000, 1, kAccessRemoteRead, 3, &where), Status::remote_access_error);
	EXPECT_EQ(table->check(key, 0x1000, 1, 0, 4, &where), Status::remote_access_error);
	EXPECT_EQ(table->check(key ^ 0x1, 0x1000, 1, 0, 3, &where), Status::remote_access_error);
	EXPECT_FALSE(table->lookup(0).has_value());
	EXPECT_FALSE(table->lookup(0xffffffffu).has_value());

	ASSERT_EQ(table->remove(key), Status::ok);
	EXPECT_FALSE(table->lookup(key).has_value());
	EXPECT_EQ(table->remove(key), Status::invalid_argument) << "removed twice";
	EXPECT_EQ(table->remove(0xffffffffu), Status::invalid_argument);

	// Freed entries come back oldest first; when this one does, it has the next tag.
	std::set<uint32_t> seen{key};
	uint32_t again = key ^ 0x100; // another entry, until the loop has run
	for (uint32_t i = 0; i <= kTableEntries && (again >> 8) != (key >> 8); ++i) {
		ASSERT_EQ(table->add(addr, 64, addr, kAccessRemoteRead, 1, &again), Status::ok);
		EXPECT_NE(again & 0xff, 0u);
		EXPECT_TRUE(seen.insert(again).second) << "key 0x" << std::hex << again << " handed out twice";
		ASSERT_EQ(table->remove(again), Status::ok);
	}
	ASSERT_EQ(again >> 8, key >> 8) << "the entry came back";
	EXPECT_EQ(again & 0xff, (key & 0xff) % 255 + 1);
	EXPECT_FALSE(table->lookup(key).has_value());

	EXPECT_EQ(table->add(addr, 0, addr, 0, 0, &key), Status::invalid_argument);
	EXPECT_EQ(table->add(~0ull - 10, 100, 0, 0, 0, &key), Status::invalid_argument) << "wrapping range";
}

TEST(RdmaTransportTable, AddTaggedKeepsTheCallersTagAndNeverHandsOutKeyZero)
{
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	std::vector<char> buffer(4096);
	const auto addr = reinterpret_cast<uint64_t>(buffer.data());
	uint32_t key = 0;
	ASSERT_EQ(table->add_tagged(addr, buffer.size(), 0x2000, kAccessRemoteRead, 5, 0x5a, &key), Status::ok);
	EXPECT_EQ(key & 0xff, 0x5au);
	uint64_t where = 0;
	EXPECT_EQ(table->check(key, 0x2000, 16, kAccessRemoteRead, 5, &where), Status::ok);
	EXPECT_EQ(where, addr);
	EXPECT_EQ(table->check((key & ~0xffu) | 0x5b, 0x2000, 16, 0, 5, &where), Status::remote_access_error);
	ASSERT_EQ(table->remove(key), Status::ok);

	// Tag 0 through every entry of the ring (index 0 among them): never key 0.
	for (uint32_t i = 0; i <= kTableEntries; ++i) {
		ASSERT_EQ(table->add_tagged(addr, 64, addr, 0, 1, 0, &key), Status::ok);
		ASSERT_NE(key, 0u);
		EXPECT_EQ(key & 0xff, 0u);
		ASSERT_EQ(table->remove(key), Status::ok);
	}
}

TEST(RdmaTransportTable, FullTableFailsCleanly)
{
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	std::vector<uint32_t> keys;
	uint32_t key = 0;
	Status status = Status::ok;
	while ((status = table->add(0x10000, 4096, 0x10000, kAccessRemoteRead, 1, &key)) == Status::ok)
		keys.push_back(key);
	EXPECT_EQ(status, Status::no_resources);
	EXPECT_LE(keys.size(), kTableEntries);
	EXPECT_GE(keys.size(), kTableEntries - 16) << "only a few are held by other tests";
	EXPECT_EQ(std::set<uint32_t>(keys.begin(), keys.end()).size(), keys.size());
	for (const uint32_t k : keys)
		ASSERT_EQ(table->remove(k), Status::ok);
	ASSERT_EQ(table->add(0x10000, 4096, 0x10000, kAccessRemoteRead, 1, &key), Status::ok);
	EXPECT_EQ(table->remove(key), Status::ok);
}

// remove() waits for a live accessor inside an access, bounded, and retires the entry when the
// wait runs out; an accessor that died is not waited for.
TEST(RdmaTransportTable, RemoveWaitsForAccessesInProgress)
{
	MemoryTable *table = MemoryTable::instance();
	ASSERT_NE(table, nullptr);
	SharedRegion state;
	ASSERT_EQ(SharedRegion::map_received(table->shared_fd(), sizeof(TableShared), &state), Status::ok);
	SharedRegion rules;
	ASSERT_EQ(SharedRegion::map_received(table->rules_fd(), sizeof(TableRules), &rules, false), Status::ok);
	auto &shared = *static_cast<TableShared *>(state.data());
	AccessorSlot *slot = nullptr;
	for (AccessorSlot &s : shared.slots) {
		uint32_t expected = 0;
		if (s.pid.compare_exchange_strong(expected, 1)) {
			slot = &s;
			break;
		}
	}
	ASSERT_NE(slot, nullptr);

	// A live process (a child that sleeps) inside an access.
	Child sleeper([](int channel) {
		transport_test::recv_u64(channel);
		return 0;
	});
	slot->pid.store(static_cast<uint32_t>(sleeper.pid()));
	slot->in_access.store(1);
	uint32_t key = 0;
	ASSERT_EQ(table->add(0x20000, 4096, 0x20000, kAccessRemoteWrite, 1, &key), Status::ok);
	auto start = std::chrono::steady_clock::now();
	EXPECT_EQ(table->remove(key, std::chrono::milliseconds(200)), Status::ok);
	auto waited = std::chrono::steady_clock::now() - start;
	EXPECT_GE(waited, std::chrono::milliseconds(200));
	EXPECT_FALSE(table->lookup(key).has_value());
	const auto &entry = static_cast<const TableRules *>(rules.data())->entries[key >> 8];
	EXPECT_EQ(entry.state.load(), static_cast<uint32_t>(EntryState::retired)) << "never reused";

	// The same process, once dead, is not waited for.
	sleeper.kill9();
	ASSERT_EQ(table->add(0x20000, 4096, 0x20000, kAccessRemoteWrite, 1, &key), Status::ok);
	start = std::chrono::steady_clock::now();
	EXPECT_EQ(table->remove(key, std::chrono::milliseconds(5000)), Status::ok);
	waited = std::chrono::steady_clock::now() - start;
	EXPECT_LT(waited, std::chrono::milliseconds(2000));
	EXPECT_EQ(static_cast<const TableRules *>(rules.data())->entries[key >> 8].state.load(),
		  static_cast<uint32_t>(EntryState::free));

	slot->in_access.store(0);
	slot->pid.store(0);
}

TEST(RdmaTransportTable, ForkedChildGetsATableOfItsOwn)
{
	MemoryTable *parent = MemoryTable::instance();
	ASSERT_NE(parent, nullptr);
	const int parent_fd = parent->rules_fd();
	Child child([parent, parent_fd](int) {
		MemoryTable *mine = MemoryTable::instance();
		if (mine == nullptr || mine == parent || mine->owner_pid() != static_cast<uint32_t>(getpid()))
			return 1;
		struct stat a, b;
		if (fstat(mine->rules_fd(), &a) != 0 || fstat(parent_fd, &b) != 0 || a.st_ino == b.st_ino)
			return 2;
		return 0;
	});
	EXPECT_EQ(child.wait_exit(), 0);
}

} // namespace
