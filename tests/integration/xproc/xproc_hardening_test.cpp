// What an importer or a peer of the same user can do to an export, and what it must not achieve
// (issue 18): a stop that returns while a copy can still land, an exec that hands the imports a new
// program, a registry a peer truncates or rewrites.
#include "xproc_fixture.hpp"

#include "core/xproc/registry.hpp"

#include <doca_mmap.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

using namespace xproc_test;
using softdpu::device::Side;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string fnv_hex(const uint8_t *p, size_t len)
{
	char out[32];
	std::snprintf(out, sizeof(out), "ok %016llx", (unsigned long long)fnv(p, len));
	return out;
}

// The export registry files of process pid: {descriptor number, name} of each.
std::vector<std::pair<int, std::string>> registry_files(pid_t pid)
{
	std::vector<std::pair<int, std::string>> out;
	for (int fd = 0; fd < 1024; ++fd) {
		char path[64], target[256];
		std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		const ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (std::strstr(target, "memfd:softdpu-export") != nullptr)
			out.emplace_back(fd, target);
	}
	return out;
}

uint32_t entry_index_of(const void *blob)
{
	uint32_t index = 0;
	std::memcpy(&index, static_cast<const uint8_t *>(blob) + 104, sizeof(index)); // docs/host-dpu.md: entry index
	return index;
}

// This process as the host: pf0 open, an mmap over `memory` started for PCI read-write and
// exported through pf0.
struct HostExport {
	doca_dev *pf0 = nullptr;
	doca_mmap *mmap = nullptr;
	const void *blob = nullptr;
	size_t len = 0;
};

::testing::AssertionResult export_from_host(std::vector<uint8_t> &memory, HostExport &out)
{
	out.pf0 = open_by_pci("0b:00.0");
	if (out.pf0 == nullptr)
		return ::testing::AssertionFailure() << "no host pf0";
	out.mmap = started_mmap(memory, out.pf0, kReadWrite);
	if (out.mmap == nullptr)
		return ::testing::AssertionFailure() << "cannot start an mmap";
	const doca_error_t result = doca_mmap_export_pci(out.mmap, out.pf0, &out.blob, &out.len);
	if (result != DOCA_SUCCESS)
		return ::testing::AssertionFailure() << "export_pci: " << doca_error_get_name(result);
	return ::testing::AssertionSuccess();
}

// This process's mappings of the export registry files, as lines of /proc/self/maps.
std::vector<std::string> registry_mappings()
{
	std::vector<std::string> out;
	std::ifstream maps("/proc/self/maps");
	for (std::string line; std::getline(maps, line);)
		if (line.find("softdpu-export") != std::string::npos)
			out.push_back(line);
	return out;
}

} // namespace

// Item 1: the DPU's copy into host memory stalls on its own source pages (userfaultfd). The
// host's stop must not report success while that copy can still land, and the copy, which lost
// its grant while it ran, must fail.
TEST(XprocStopTest, StopRefusesWhileAnImporterIsInsideACopyAndTheCopyFails)
{
	SideGuard side(Side::host);
	constexpr size_t kBytes = 8192;
	std::vector<uint8_t> memory(kBytes);
	fill_pattern(memory.data(), memory.size(), 3);
	HostExport host;
	ASSERT_TRUE(export_from_host(memory, host));
	// Whatever assertion ends the test early: the peer ends first (its destructor, declared
	// later), then the mmap and the device are released here.
	struct Cleanup {
		HostExport &host;
		~Cleanup()
		{
			if (host.mmap != nullptr && doca_mmap_destroy(host.mmap) != DOCA_SUCCESS) {
				doca_mmap_stop(host.mmap);
				doca_mmap_destroy(host.mmap);
			}
			if (host.pf0 != nullptr)
				doca_dev_close(host.pf0);
		}
	} cleanup{host};

	auto dpu = start_peer("dpu");
	ASSERT_EQ(dpu->call("import 03:00.0 0 " + to_hex(host.blob, host.len)), "ok");
	const std::string started = dpu->call("stallwrite " + std::to_string(kBytes) + " 6000 8");
	if (started.rfind("err userfaultfd", 0) == 0)
		GTEST_SKIP() << "the peer cannot use userfaultfd here: " << started;
	ASSERT_EQ(started, "ok started");
	// Until this peer is inside its (stalled) access, as this process's registry shows it. Only
	// its own slot counts: the entry may be a reused one whose earlier importers died inside an
	// access (XprocCrashConcurrentTest kills them so), and their slots stay behind, in_access
	// still set, with their pids and the entry's earlier generations.
	doca_error_t registry_error = DOCA_SUCCESS;
	softdpu::xproc::Registry *registry = softdpu::xproc::Registry::instance(&registry_error);
	ASSERT_NE(registry, nullptr);
	const uint32_t index = entry_index_of(host.blob);
	const uint64_t generation = registry->entry(index).generation.load();
	const auto inside = [&] {
		for (const auto &slot : registry->shared(index).slots)
			if (slot.pid.load() == static_cast<uint32_t>(dpu->pid()) &&
			    slot.generation.load() == generation && slot.in_access.load() != 0)
				return true;
		return false;
	};
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
	while (!inside() && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	ASSERT_TRUE(inside()) << "peer " << dpu->pid() << " never entered its access";

	// Stop refuses; were it to succeed, nothing below may touch the mmap as if still exported.
	auto t0 = std::chrono::steady_clock::now();
	ASSERT_EQ(doca_mmap_stop(host.mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_GE(ms_since(t0), 900.0);
	// Still started and exported: nothing is released, nothing can be re-exported meanwhile.
	uint8_t exported = 0;
	EXPECT_EQ(doca_mmap_get_exported(host.mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 1);
	EXPECT_EQ(doca_mmap_export_pci(host.mmap, host.pf0, &host.blob, &host.len), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_mmap_destroy(host.mmap), DOCA_ERROR_NOT_PERMITTED);

	// The copy resumes, lands (the host has not taken its memory back), and is reported failed.
	EXPECT_EQ(dpu->read_line(10000), "err DOCA_ERROR_NOT_CONNECTED");
	t0 = std::chrono::steady_clock::now();
	EXPECT_EQ(doca_mmap_stop(host.mmap), DOCA_SUCCESS);
	EXPECT_LT(ms_since(t0), 500.0);
	EXPECT_EQ(doca_mmap_get_exported(host.mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 0);
	// After stop returned nothing lands any more: the importer's next write fails, memory unchanged.
	const std::vector<uint8_t> after_stop = memory;
	const std::string again = dpu->call("stallwrite 4096 0 9");
	EXPECT_EQ(again, "ok started");
	EXPECT_EQ(dpu->read_line(10000), "err DOCA_ERROR_NOT_CONNECTED");
	EXPECT_EQ(memory, after_stop);
	EXPECT_EQ(doca_mmap_destroy(host.mmap), DOCA_SUCCESS);
	host.mmap = nullptr;
	dpu.reset();
	EXPECT_EQ(doca_dev_close(host.pf0), DOCA_SUCCESS);
	host.pf0 = nullptr;
}

// Item 2: imports end with the address space they were granted for. The exporter execs a fresh
// program (same pid, start time and pidfd) that lays its memory out the same way: nothing of it is
// written or read through the old import, and the old descriptor no longer imports.
TEST(XprocExecTest, ExecOfTheExporterEndsItsImports)
{
	SideGuard side(Side::dpu);
	constexpr size_t kBytes = 8192;
	auto host = start_peer("host");
	ASSERT_EQ(host->call("exec"), "ok exec"); // address space randomization off from here on
	const std::string pid_before = host->call("pid");
	ASSERT_EQ(pid_before, "ok " + std::to_string(host->pid()));
	const Export first = peer_export(*host, "0b:00.0", kBytes, kReadWrite, "pci", 7);
	ASSERT_FALSE(first.blob.empty());

	doca_dev *p0 = open_by_pci("03:00.0");
	ASSERT_NE(p0, nullptr);
	doca_mmap *remote = nullptr;
	ASSERT_EQ(doca_mmap_create_from_export(nullptr, first.blob.data(), first.blob.size(), p0, &remote),
		  DOCA_SUCCESS);
	{
		DmaRig rig(p0);
		LocalMemory local(p0, kBytes);
		auto *r = reinterpret_cast<uint8_t *>(first.addr);
		doca_buf *src = rig.buf(remote, r, kBytes, kBytes);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
		ASSERT_EQ(rig.copy(src, dst), DOCA_SUCCESS);
		EXPECT_TRUE(check_pattern(local.data.data(), kBytes, 7));

		// The same program again, from the start, with the same commands: the same layout.
		ASSERT_EQ(host->call("exec"), "ok exec");
		EXPECT_EQ(host->call("pid"), pid_before);
		const Export second = peer_export(*host, "0b:00.0", kBytes, kReadWrite, "pci", 9);
		ASSERT_FALSE(second.blob.empty());
		if (second.addr != first.addr)
			std::printf("note: the new program's memory is at 0x%llx, not 0x%llx as before exec\n",
				    (unsigned long long)second.addr, (unsigned long long)first.addr);

		rig.restart();
		fill_pattern(local.data.data(), kBytes, 11);
		doca_buf *lsrc = rig.buf(local.mmap, local.data.data(), kBytes, kBytes);
		doca_buf *rdst = rig.buf(remote, r, kBytes, 0);
		EXPECT_EQ(rig.copy(lsrc, rdst), DOCA_ERROR_NOT_CONNECTED);
		char sum[32];
		std::snprintf(sum, sizeof(sum), "sum 0 %zu", kBytes);
		std::vector<uint8_t> expected(kBytes);
		fill_pattern(expected.data(), kBytes, 9);
		EXPECT_EQ(host->call(sum), fnv_hex(expected.data(), kBytes)) << "the new program was written";

		rig.restart();
		std::memset(local.data.data(), 0, kBytes);
		doca_buf_set_data(dst, local.data.data(), 0);
		EXPECT_EQ(rig.copy(src, dst), DOCA_ERROR_NOT_CONNECTED);
		EXPECT_FALSE(check_pattern(local.data.data(), 64, 9)) << "the new program was read";
		for (doca_buf *buf : {src, dst, lsrc, rdst})
			doca_buf_dec_refcount(buf, nullptr);
	}
	doca_mmap *again = nullptr;
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, first.blob.data(), first.blob.size(), p0, &again),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

// Items 3 and 4: a same-user process opens the exporter's registry files through /proc. It can
// neither resize them (which used to kill exporter and importers with SIGBUS) nor write the access
// rules (which used to let it widen an export); the importer maps the rules read-only.
TEST(XprocRegistryTest, PeersCannotResizeTheRegistryOrRewriteItsRules)
{
	SideGuard side(Side::dpu);
	constexpr size_t kBytes = 4096;
	auto host = start_peer("host");
	const Export exported = peer_export(
	    *host, "0b:00.0", kBytes, DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, "pci", 5);
	ASSERT_FALSE(exported.blob.empty());
	doca_dev *p0 = open_by_pci("03:00.0");
	ASSERT_NE(p0, nullptr);
	// The import's own views: the rules read-only, the shared state read-write (this process's own
	// registry, from exports of earlier tests, is among the mappings too: only new ones count).
	const std::vector<std::string> before = registry_mappings();
	doca_mmap *remote = nullptr;
	ASSERT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), exported.blob.size(), p0, &remote),
		  DOCA_SUCCESS);
	std::vector<std::string> added;
	for (const std::string &line : registry_mappings())
		if (std::find(before.begin(), before.end(), line) == before.end())
			added.push_back(line);
	ASSERT_EQ(added.size(), 2u);
	for (const std::string &line : added) {
		const std::string perms = line.substr(line.find(' ') + 1, 4);
		if (line.find("softdpu-export-rules") != std::string::npos)
			EXPECT_EQ(perms, "r--s") << line;
		else
			EXPECT_EQ(perms, "rw-s") << line;
	}

	const auto files = registry_files(host->pid());
	ASSERT_EQ(files.size(), 2u);
	for (const auto &[number, name] : files) {
		char path[64];
		std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", host->pid(), number);
		const int fd = open(path, O_RDWR | O_CLOEXEC);
		ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
		struct stat st;
		ASSERT_EQ(fstat(fd, &st), 0);
		EXPECT_EQ(ftruncate(fd, 0), -1) << name;
		EXPECT_EQ(errno, EPERM) << name;
		EXPECT_EQ(ftruncate(fd, st.st_size + 4096), -1) << name;
		EXPECT_EQ(errno, EPERM) << name;
		if (name.find("softdpu-export-rules") != std::string::npos) {
			const uint32_t widened = ~0u;
			EXPECT_EQ(pwrite(fd, &widened, sizeof(widened), 4096), -1);
			EXPECT_EQ(errno, EPERM);
			EXPECT_EQ(mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
			EXPECT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size), -1);
			void *view = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
			ASSERT_NE(view, MAP_FAILED);
			EXPECT_EQ(mprotect(view, st.st_size, PROT_READ | PROT_WRITE), -1);
			munmap(view, st.st_size);
		}
		close(fd);
	}

	// Both sides carry on: the import still reads, still cannot write, the exporter stops.
	{
		DmaRig rig(p0);
		LocalMemory local(p0, kBytes);
		auto *r = reinterpret_cast<uint8_t *>(exported.addr);
		doca_buf *src = rig.buf(remote, r, kBytes, kBytes);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
		EXPECT_EQ(rig.copy(src, dst), DOCA_SUCCESS);
		EXPECT_TRUE(check_pattern(local.data.data(), kBytes, 5));
		rig.restart();
		doca_buf *back = rig.buf(remote, r, kBytes, 0);
		EXPECT_EQ(rig.copy(dst, back), DOCA_ERROR_NOT_PERMITTED);
		for (doca_buf *buf : {src, dst, back})
			doca_buf_dec_refcount(buf, nullptr);
	}
	EXPECT_EQ(words(host->call("stop")).at(0), "ok");
	EXPECT_EQ(host->call("pid"), "ok " + std::to_string(host->pid()));
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

// Item 2 for shared sync events: a waiter on the DPU learns that the host exec'd (its event is
// gone with the program that exported it) instead of waiting forever.
TEST(XprocExecTest, ExecOfTheExporterEndsWaitsOnItsEvents)
{
	SideGuard side(Side::dpu);
	auto host = start_peer("host");
	const std::vector<std::string> exported = words(host->call("se_export 0b:00.0"));
	ASSERT_EQ(exported.size(), 3u);
	doca_dev *p0 = open_by_pci("03:00.0");
	ASSERT_NE(p0, nullptr);
	const std::vector<uint8_t> blob = from_hex(exported[2]);
	doca_sync_event *event = nullptr;
	ASSERT_EQ(doca_sync_event_create_from_export(p0, blob.data(), blob.size(), &event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	ASSERT_EQ(host->call("se_set 0 5"), "ok 0");
	EXPECT_EQ(doca_sync_event_wait_gt(event, 4, UINT64_MAX), DOCA_SUCCESS);

	ASSERT_EQ(host->call("exec"), "ok exec");
	ASSERT_EQ(host->call("pid"), "ok " + std::to_string(host->pid()));
	const auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ(doca_sync_event_wait_gt(event, 5, UINT64_MAX), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_LT(ms_since(t0), 5000.0);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

// A forked child of an exporter inherits the records of its parent's exports but has a registry of
// its own: destroying the inherited mmap must not put the parent's entry into the child's free
// list (it used to, and the child's next two exports then shared one entry).
TEST(XprocForkTest, ExporterChildNeverSharesAnEntryBetweenTwoExports)
{
	SideGuard side(Side::host);
	std::vector<uint8_t> memory(4096);
	HostExport host;
	ASSERT_TRUE(export_from_host(memory, host));
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int code = doca_mmap_destroy(host.mmap) == DOCA_SUCCESS ? 0 : 10;
		std::vector<uint8_t> a(4096), b(4096);
		doca_mmap *ma = started_mmap(a, host.pf0, kReadWrite);
		doca_mmap *mb = started_mmap(b, host.pf0, kReadWrite);
		const void *da = nullptr, *db = nullptr;
		size_t la = 0, lb = 0;
		if (ma == nullptr || mb == nullptr || doca_mmap_export_pci(ma, host.pf0, &da, &la) != DOCA_SUCCESS ||
		    doca_mmap_export_pci(mb, host.pf0, &db, &lb) != DOCA_SUCCESS)
			code = 11;
		else if (entry_index_of(da) == entry_index_of(db))
			code = 12;
		_exit(code);
	}
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0) << "10: destroy failed, 11: export failed, 12: two exports in one entry";
	// The parent's export is untouched by the child.
	auto dpu = start_peer("dpu");
	EXPECT_EQ(dpu->call("import 03:00.0 0 " + to_hex(host.blob, host.len)), "ok");
	dpu.reset();
	EXPECT_EQ(doca_mmap_destroy(host.mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(host.pf0), DOCA_SUCCESS);
}

// An importer that forks: the child cannot use the parent's import, and dropping its copy leaves
// the parent's accessor slot (what the exporter's stop waits on) in place.
TEST(XprocForkTest, ImporterChildLeavesTheParentsSlotAlone)
{
	SideGuard side(Side::dpu);
	constexpr size_t kBytes = 4096;
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", kBytes, kReadWrite, "pci", 3);
	ASSERT_FALSE(exported.blob.empty());
	doca_dev *p0 = open_by_pci("03:00.0");
	ASSERT_NE(p0, nullptr);
	doca_mmap *remote = nullptr;
	ASSERT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), exported.blob.size(), p0, &remote),
		  DOCA_SUCCESS);
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int code = 0;
		{
			DmaRig rig(p0);
			LocalMemory local(p0, kBytes);
			doca_buf *src = rig.buf(remote, reinterpret_cast<uint8_t *>(exported.addr), kBytes, kBytes);
			doca_buf *dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
			if (rig.copy(src, dst) != DOCA_ERROR_NOT_CONNECTED)
				code = 20;
			doca_buf_dec_refcount(src, nullptr);
			doca_buf_dec_refcount(dst, nullptr);
		}
		if (doca_mmap_destroy(remote) != DOCA_SUCCESS)
			code = 21;
		_exit(code);
	}
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0) << "20: the child used the parent's import, 21: destroy failed";
	// Look at the exporter's shared state: this process still holds its slot.
	bool found = false;
	for (const auto &[number, name] : registry_files(host->pid())) {
		if (name.find("softdpu-export-registry") == std::string::npos)
			continue;
		char path[64];
		std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", host->pid(), number);
		const int fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		void *view = mmap(nullptr, sizeof(softdpu::xproc::SharedLayout), PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		ASSERT_NE(view, MAP_FAILED);
		const auto *state = static_cast<const softdpu::xproc::SharedLayout *>(view);
		for (const auto &entry : state->entries)
			for (const auto &slot : entry.slots)
				found = found ||
					(slot.pid.load() == static_cast<uint32_t>(getpid()) && slot.users.load() == 1);
		munmap(view, sizeof(softdpu::xproc::SharedLayout));
	}
	EXPECT_TRUE(found);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

// An entry's earlier life leaves its importers' slots behind (a dead importer of a stopped mmap);
// a sync event exported into the entry next must not count them: its waiter is not "lost".
TEST(XprocSlotTest, ImportersOfAnEarlierLifeDoNotCount)
{
	SideGuard side(Side::host);
	std::vector<uint8_t> memory(4096);
	HostExport host;
	ASSERT_TRUE(export_from_host(memory, host));
	const uint32_t entry = entry_index_of(host.blob);
	{
		auto dpu = start_peer("dpu");
		ASSERT_EQ(dpu->call("import 03:00.0 0 " + to_hex(host.blob, host.len)), "ok");
		dpu->kill9();
		EXPECT_EQ(dpu->wait(), SIGKILL);
	}
	ASSERT_EQ(doca_mmap_stop(host.mmap), DOCA_SUCCESS); // the entry is free again
	doca_sync_event *event = cpu_to_dpu_event(host.pf0);
	ASSERT_NE(event, nullptr);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	const uint8_t *event_blob = nullptr;
	size_t event_len = 0;
	ASSERT_EQ(doca_sync_event_export_to_dpu(event, host.pf0, &event_blob, &event_len), DOCA_SUCCESS);
	EXPECT_EQ(entry_index_of(event_blob), entry) << "the test needs the entry reused";
	std::thread updater([event] {
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
		doca_sync_event_update_set(event, 1);
	});
	EXPECT_EQ(doca_sync_event_wait_gt(event, 0, UINT64_MAX), DOCA_SUCCESS);
	updater.join();
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(host.mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(host.pf0), DOCA_SUCCESS);
}
