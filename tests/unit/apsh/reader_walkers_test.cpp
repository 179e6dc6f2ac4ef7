// The walkers on a real guest snapshot (made by tests/guest; skipped when absent), then on
// copies of it with corrupted lists: cycles, garbage pointers and a broken maple tree must end in
// a bounded error, never a hang or a crash.
#include "apsh/linux/guest_linux.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace softdpu::apsh;

namespace {

std::filesystem::path snapshot_path(const char *tag)
{
	return std::filesystem::path(SOFTDPU_SOURCE_DIR) / "build/guest-snapshots" / tag / "memory.raw";
}

// A guest over a private, writable copy of a snapshot.
class GuestCopy {
public:
	bool load(const char *tag, const Limits &limits = {})
	{
		auto path = snapshot_path(tag);
		std::ifstream in(path, std::ios::binary);
		if (!in)
			return false;
		bytes_.resize(std::filesystem::file_size(path));
		in.read(reinterpret_cast<char *>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
		return reopen(limits);
	}
	bool reopen(const Limits &limits = {})
	{
		std::unique_ptr<source::PhysicalMemory> memory;
		if (!source::PhysicalMemory::over_bytes(bytes_, {{0, bytes_.size(), 0}}, memory).ok())
			return false;
		auto image = std::make_unique<kernel::KernelImage>();
		Status status = kernel::locate_kernel(*memory, {}, *image);
		EXPECT_TRUE(status.ok()) << status.reason;
		if (!status.ok())
			return false;
		status = os::GuestLinux::create(std::move(memory), std::move(image), limits, system_);
		EXPECT_TRUE(status.ok()) << status.reason;
		return status.ok();
	}
	os::GuestLinux &system() { return *system_; }
	// Overwrites 8 bytes at a kernel virtual address.
	void poke(uint64_t va, uint64_t value)
	{
		auto pa = system_->image().kernel_space->translate(va);
		ASSERT_TRUE(pa.has_value());
		std::memcpy(bytes_.data() + *pa, &value, 8);
		system_->image().kernel_space->flush();
	}

private:
	std::vector<uint8_t> bytes_;
	std::unique_ptr<os::GuestLinux> system_;
};

#define LOAD_OR_SKIP(guest, tag, ...)                                                                                  \
	if (!std::filesystem::exists(snapshot_path(tag)))                                                              \
		GTEST_SKIP() << "no guest snapshot " << snapshot_path(tag) << " (tests/guest/snapshot makes one)";     \
	ASSERT_TRUE(guest.load(tag, ##__VA_ARGS__))

const Process *find_process(const std::vector<Process> &processes, const std::string &comm)
{
	for (const Process &process : processes)
		if (process.comm == comm)
			return &process;
	return nullptr;
}

TEST(ReaderWalkers, SnapshotHasTheTestTargets)
{
	for (const char *tag : {"g4", "g5"}) {
		GuestCopy guest;
		LOAD_OR_SKIP(guest, tag);
		std::vector<Process> processes;
		ASSERT_TRUE(guest.system().processes(processes).ok());
		const Process *target = find_process(processes, "apsh_target");
		ASSERT_NE(target, nullptr) << tag;
		std::vector<Thread> threads;
		ASSERT_TRUE(guest.system().threads(*target, threads).ok());
		EXPECT_EQ(threads.size(), 4u);
		std::vector<Library> libraries;
		ASSERT_TRUE(guest.system().libraries(*target, libraries).ok());
		auto has = [&](const char *needle) {
			return std::any_of(libraries.begin(), libraries.end(),
					   [&](const Library &l) { return l.path.find(needle) != std::string::npos; });
		};
		EXPECT_TRUE(has("libc.so.6"));
		EXPECT_TRUE(has("ld-linux-x86-64.so.2"));
		std::vector<Injection> injections;
		ASSERT_TRUE(guest.system().injections(*target, injections).ok());
		ASSERT_EQ(injections.size(), 1u);
		uint8_t first[3] = {};
		EXPECT_EQ(guest.system().read_user(*target, injections[0].suspected_start, first), 3u);
		EXPECT_EQ(first[0], 0x90);
		EXPECT_EQ(first[2], 0xc3);
		std::vector<EnvVar> env;
		ASSERT_TRUE(guest.system().envars(*target, env).ok());
		EXPECT_TRUE(std::any_of(env.begin(), env.end(), [](const EnvVar &e) {
			return e.variable == "APSH_DYN_MARKER" && e.value == "apsh_dyn_env_d00dfeed";
		}));
	}
}

TEST(ReaderWalkers, TaskListCycleEndsWithAnError)
{
	GuestCopy guest;
	LOAD_OR_SKIP(guest, "g4");
	std::vector<Process> processes;
	ASSERT_TRUE(guest.system().processes(processes).ok());
	ASSERT_GT(processes.size(), 10u);
	uint64_t link = guest.system().layout().task_tasks.offset;
	// The 8th task's next pointer goes back to the 3rd.
	guest.poke(processes[7].task + link, processes[2].task + link);
	auto start = std::chrono::steady_clock::now();
	std::vector<Process> looped;
	Status status = guest.system().processes(looped);
	EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
	EXPECT_EQ(status.code, DOCA_ERROR_BAD_STATE);
	EXPECT_NE(status.reason.find("loops"), std::string::npos) << status.reason;
	EXPECT_EQ(looped.size(), 8u); // everything up to the cycle
}

TEST(ReaderWalkers, GarbagePointersEndWithAnError)
{
	GuestCopy guest;
	LOAD_OR_SKIP(guest, "g4");
	std::vector<Process> processes;
	ASSERT_TRUE(guest.system().processes(processes).ok());
	const Process *target = find_process(processes, "apsh_target");
	ASSERT_NE(target, nullptr);
	const auto &layout = guest.system().layout();
	guest.poke(processes[4].task + layout.task_tasks.offset, 0xdeadbeefdeadbeefull);
	std::vector<Process> torn;
	Status status = guest.system().processes(torn);
	EXPECT_EQ(status.code, DOCA_ERROR_BAD_STATE);
	EXPECT_NE(status.reason.find("torn"), std::string::npos) << status.reason;
	EXPECT_EQ(torn.size(), 5u);

	// The thread list of the target: its second thread points into unmapped kernel space.
	auto signal =
	    guest.system().image().kernel_space->read_value<uint64_t>(target->task + layout.task_signal.offset);
	ASSERT_TRUE(signal);
	guest.poke(*signal + layout.signal_thread_head.offset, 0xffffffffff000000ull);
	std::vector<Thread> threads;
	EXPECT_EQ(guest.system().threads(*target, threads).code, DOCA_ERROR_BAD_STATE);

	// A maple tree root that points at garbage.
	auto mm = guest.system().image().kernel_space->read_value<uint64_t>(target->task + layout.task_mm.offset);
	ASSERT_TRUE(mm);
	guest.poke(*mm + layout.mm_maple_root.offset, 0xffff888000000002ull | (2 << 3));
	std::vector<MemoryArea> areas;
	status = guest.system().memory_areas(*target, areas);
	EXPECT_FALSE(status.ok());
	EXPECT_TRUE(areas.empty());

	// A process handle that no longer names a live task.
	Process gone = *target;
	gone.pid += 100000;
	EXPECT_EQ(guest.system().memory_areas(gone, areas).code, DOCA_ERROR_NOT_FOUND);
}

TEST(ReaderWalkers, MapleTreeCycleIsBounded)
{
	GuestCopy guest;
	LOAD_OR_SKIP(guest, "g5");
	std::vector<Process> processes;
	ASSERT_TRUE(guest.system().processes(processes).ok());
	const Process *target = find_process(processes, "apsh_target");
	ASSERT_NE(target, nullptr);
	const auto &layout = guest.system().layout();
	auto &kernel = *guest.system().image().kernel_space;
	auto mm = kernel.read_value<uint64_t>(target->task + layout.task_mm.offset);
	auto root = kernel.read_value<uint64_t>(*mm + layout.mm_maple_root.offset);
	ASSERT_TRUE(root);
	ASSERT_EQ(*root & 3, 2u); // an internal node: the target has more VMAs than one leaf holds
	// Make the root's first child the root itself.
	uint64_t node = *root & ~uint64_t{0xff};
	uint64_t slot_offset = ((*root >> 3) & 0xf) == 3 ? layout.arange64_slot.offset : layout.range64_slot.offset;
	guest.poke(node + slot_offset, *root);
	auto start = std::chrono::steady_clock::now();
	std::vector<MemoryArea> areas;
	Status status = guest.system().memory_areas(*target, areas);
	EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
	EXPECT_EQ(status.code, DOCA_ERROR_BAD_STATE) << status.reason;
}

TEST(ReaderWalkers, LimitsTruncateWalks)
{
	GuestCopy guest;
	Limits limits;
	limits.processes = 5;
	limits.vads = 3;
	LOAD_OR_SKIP(guest, "g4", limits);
	std::vector<Process> processes;
	ASSERT_TRUE(guest.system().processes(processes).ok());
	EXPECT_EQ(processes.size(), 5u);
	std::vector<MemoryArea> areas;
	guest.system().memory_areas(processes[0], areas); // init
	EXPECT_LE(areas.size(), 3u);
}

} // namespace
