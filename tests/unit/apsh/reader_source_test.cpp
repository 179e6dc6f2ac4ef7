// Memory image files as sources (issue 18, items 6 to 9): a file that shrinks while it is read,
// sparse files whose holes must stay holes, huge sparse images searched in bounded time and
// memory, and FIFOs and other files that are not images, refused without blocking.
#include "apsh/api/config_files.hpp"
#include "apsh/kernel/vmcoreinfo.hpp"
#include "apsh/linux/guest_linux.hpp"
#include "apsh/source/physical_memory.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace softdpu::apsh;
using namespace softdpu::apsh::source;

namespace {

const char *const note_text = "OSRELEASE=6.1.0-56-amd64\n"
			      "SYMBOL(init_top_pgt)=ffffffffabc10000\n"
			      "NUMBER(phys_base)=0\n"
			      "KERNELOFFSET=2ae00000\n";

bool on_tmpfs(const std::string &directory)
{
	struct statfs info {};
	return ::statfs(directory.c_str(), &info) == 0 && info.f_type == TMPFS_MAGIC;
}

// A scratch file, sparse until written; /dev/shm (tmpfs, where QEMU keeps guest RAM) when there.
class Scratch {
public:
	explicit Scratch(uint64_t size, bool tmpfs = true)
	{
		std::string directory =
		    tmpfs && on_tmpfs("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
		path_ = directory + "/reader_source_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++);
		fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		EXPECT_GE(fd_, 0) << path_ << ": " << std::strerror(errno);
		EXPECT_EQ(::ftruncate(fd_, static_cast<off_t>(size)), 0) << std::strerror(errno);
	}
	~Scratch()
	{
		::close(fd_);
		::unlink(path_.c_str());
	}
	const std::string &path() const { return path_; }
	void write(uint64_t offset, const void *bytes, size_t size)
	{
		ASSERT_EQ(::pwrite(fd_, bytes, size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
	}
	void write(uint64_t offset, const std::string &text) { write(offset, text.data(), text.size()); }
	void truncate(uint64_t size) { ASSERT_EQ(::ftruncate(fd_, static_cast<off_t>(size)), 0); }
	// Bytes the file system has allocated for the file.
	uint64_t allocated() const
	{
		struct stat info {};
		EXPECT_EQ(::fstat(fd_, &info), 0);
		return static_cast<uint64_t>(info.st_blocks) * 512;
	}

private:
	std::string path_;
	int fd_ = -1;
	static inline int counter_ = 0;
};

// Resets this process's peak RSS (VmHWM; Linux 4.0 and later) and reads it, in bytes.
bool reset_peak_rss()
{
	std::ofstream out("/proc/self/clear_refs");
	out << "5";
	out.flush();
	return out.good();
}
uint64_t peak_rss()
{
	std::ifstream in("/proc/self/status");
	for (std::string line; std::getline(in, line);)
		if (line.starts_with("VmHWM:"))
			return std::stoull(line.substr(6)) * 1024;
	return 0;
}

std::unique_ptr<PhysicalMemory> open_raw(const std::string &path)
{
	std::unique_ptr<PhysicalMemory> memory;
	Status status = PhysicalMemory::open({SourceKind::raw, path, "", {}}, memory);
	EXPECT_TRUE(status.ok()) << status.reason;
	return memory;
}

TEST(ReaderSource, FileThatShrinksGivesAReadErrorNamingIt)
{
	Scratch file(4 << 20);
	for (uint64_t at = 0; at < (4u << 20); at += 4096)
		file.write(at, &at, sizeof(at));
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	EXPECT_EQ(memory->read_value<uint64_t>(3 << 20), uint64_t{3 << 20});

	file.truncate(1 << 20);
	// Through a mapping, this read was a SIGBUS that killed the process.
	EXPECT_FALSE(memory->read_value<uint64_t>(3 << 20).has_value());
	Status failure = memory->failure();
	EXPECT_EQ(failure.code, DOCA_ERROR_IO_FAILED);
	EXPECT_NE(failure.reason.find(file.path() + ": the file shrank while it was read"), std::string::npos)
	    << failure.reason;
	EXPECT_NE(failure.reason.find("it is now 1048576 bytes, it was 4194304"), std::string::npos) << failure.reason;
	// What the file still holds reads as before; the failure stays until cleared.
	EXPECT_EQ(memory->read_value<uint64_t>(4096), uint64_t{4096});
	EXPECT_FALSE(memory->failure().ok());
	memory->clear_failure();
	EXPECT_TRUE(memory->failure().ok());

	// A search over the whole image reports the same, not "no VMCOREINFO".
	kernel::VmcoreInfo info;
	Status status = kernel::find_vmcoreinfo(*memory, info);
	EXPECT_EQ(status.code, DOCA_ERROR_IO_FAILED);
	EXPECT_NE(status.reason.find(file.path()), std::string::npos) << status.reason;
}

TEST(ReaderSource, SmallReadsShareAPageWithinAQueryOnly)
{
	Scratch file(2 << 20);
	const uint64_t first = 0x1111, second = 0x2222;
	file.write(0x5008, &first, sizeof(first));
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	memory->begin_query();
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), first);
	file.write(0x5008, &second, sizeof(second));
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), first); // the query's copy of the page
	std::vector<uint8_t> page(4096);
	ASSERT_TRUE(memory->read(0x5000, page)); // a whole page: from the file
	EXPECT_EQ(std::memcmp(page.data() + 8, &second, sizeof(second)), 0);
	memory->end_query();
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), second); // outside a query: the file
	// A file that shrinks during a query: pages not yet read fail, and say why.
	memory->begin_query();
	file.truncate(1 << 20);
	EXPECT_FALSE(memory->read_value<uint64_t>(0x180000).has_value());
	EXPECT_NE(memory->failure().reason.find("the file shrank"), std::string::npos);
	memory->end_query();
}

// A held cache (a watch's poll) keeps the pages across queries; the hold's end forgets them.
TEST(ReaderSource, HeldCacheSpansQueriesUntilReleased)
{
	Scratch file(2 << 20);
	const uint64_t first = 0x1111, second = 0x2222;
	file.write(0x5008, &first, sizeof(first));
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	memory->hold_cache(true);
	memory->begin_query();
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), first);
	memory->end_query();
	file.write(0x5008, &second, sizeof(second));
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), first); // between queries: still the hold's copy
	memory->begin_query();
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), first); // the next query too
	memory->end_query();
	memory->hold_cache(false);
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), second);
	memory->begin_query();
	EXPECT_EQ(memory->read_value<uint64_t>(0x5008), second); // a query after the hold reads afresh
	memory->end_query();
}

// The 4-way page cache keeps every page of a walk that touches many pages a power of two apart
// (which a direct-mapped cache of that size evicted each other): all are read once.
TEST(ReaderSource, PagesAPowerOfTwoApartDoNotEvictEachOther)
{
	Scratch file(8 << 20);
	for (uint64_t i = 0; i < 16; ++i) {
		const uint64_t value = i + 1;
		file.write(i * (512 << 10), &value, sizeof(value));
	}
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	memory->begin_query();
	for (uint64_t i = 0; i < 16; ++i)
		EXPECT_EQ(memory->read_value<uint64_t>(i * (512 << 10)), i + 1);
	for (uint64_t i = 0; i < 16; ++i) { // changed in the file, still the query's copies
		const uint64_t value = 100 + i;
		file.write(i * (512 << 10), &value, sizeof(value));
	}
	for (uint64_t i = 0; i < 16; ++i)
		EXPECT_EQ(memory->read_value<uint64_t>(i * (512 << 10)), i + 1) << i;
	memory->end_query();
}

// read_pages gives what read() gives page by page: pages inside a range, across two adjacent
// ranges, partly or wholly outside RAM, over bytes and over a file.
TEST(ReaderSource, ReadPagesAnswersAsSinglePageReads)
{
	// Two ranges adjacent in GPA ([0x10000, 0x14000) and [0x14000, 0x20000)) at file offsets that
	// are not adjacent, and a third further up.
	const std::vector<RamRange> ranges = {
	    {0x10000, 0x14000, 0x8000}, {0x14000, 0x20000, 0x0}, {0x40000, 0x42000, 0x20000}};
	std::vector<uint8_t> bytes(0x30000);
	for (size_t i = 0; i < bytes.size(); ++i)
		bytes[i] = static_cast<uint8_t>(i * 7 + i / 4096);
	Scratch file(1 << 20); // an image file's least size
	file.write(0, bytes.data(), bytes.size());
	std::unique_ptr<PhysicalMemory> in_memory, from_file;
	ASSERT_TRUE(PhysicalMemory::over_bytes(bytes, ranges, in_memory).ok());
	const Status opened = PhysicalMemory::open({SourceKind::raw, file.path(), "", ranges}, from_file);
	ASSERT_TRUE(opened.ok()) << opened.reason;
	const std::vector<uint64_t> gpas = {0x10000,
					    0x13000,
					    0x13800 /* across the two ranges */,
					    0x14000,
					    0x1f000,
					    0x1f800 /* partly outside */,
					    0x20000 /* outside */,
					    0x41000,
					    0x41001,
					    0x0,
					    0x10000 /* again */};
	for (PhysicalMemory *memory : {in_memory.get(), from_file.get()}) {
		std::vector<uint8_t> pages(gpas.size() * 4096, 0xee), one(4096);
		std::vector<uint8_t> ok(gpas.size(), 2);
		memory->read_pages(gpas, pages, ok);
		for (size_t i = 0; i < gpas.size(); ++i) {
			SCOPED_TRACE(std::to_string(i));
			const bool single = memory->read(gpas[i], one);
			EXPECT_EQ(ok[i], single ? 1 : 0);
			if (single) {
				EXPECT_EQ(std::memcmp(pages.data() + i * 4096, one.data(), 4096), 0);
			}
		}
		EXPECT_EQ(ok[2], 1); // across adjacent ranges: read whole
		EXPECT_EQ(ok[5], 0);
		EXPECT_EQ(ok[6], 0);
		EXPECT_TRUE(memory->failure().ok()) << memory->failure().reason;
	}
}

// A file that shrinks: the pages beyond its end fail as read() does, with the reason recorded,
// and the pages after a failed one in the same batch are still read.
TEST(ReaderSource, ReadPagesOfAFileThatShrank)
{
	Scratch file(1 << 20);
	for (uint64_t at = 0; at < (1u << 20); at += 4096)
		file.write(at, &at, sizeof(at));
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	file.truncate(512 << 10);
	const std::vector<uint64_t> gpas = {0x1000, 0x90000, 0x2000, 0xa0000, 0x3000};
	std::vector<uint8_t> pages(gpas.size() * 4096), ok(gpas.size());
	memory->read_pages(gpas, pages, ok);
	EXPECT_EQ(ok, (std::vector<uint8_t>{1, 0, 1, 0, 1}));
	for (size_t i : {0u, 2u, 4u}) {
		uint64_t value = 0;
		std::memcpy(&value, pages.data() + i * 4096, sizeof(value));
		EXPECT_EQ(value, gpas[i]);
	}
	EXPECT_NE(memory->failure().reason.find(file.path() + ": the file shrank while it was read"), std::string::npos)
	    << memory->failure().reason;
}

TEST(ReaderSource, GuestWhoseFileShrinksWhileQueried)
{
	// The test guest's snapshot (made by tests/guest; skipped when absent), copied to a file that
	// is then cut to 1 MiB between queries, as `softdpu apsh ps` met it mid-query.
	const auto snapshot = std::filesystem::path(SOFTDPU_SOURCE_DIR) / "build/guest-snapshots/g4/memory.raw";
	if (!std::filesystem::exists(snapshot))
		GTEST_SKIP() << "no guest snapshot " << snapshot << " (tests/guest/snapshot makes one)";
	Scratch file(0);
	{
		std::ifstream in(snapshot, std::ios::binary);
		std::vector<char> chunk(1 << 20);
		uint64_t at = 0;
		while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
			file.write(at, chunk.data(), static_cast<size_t>(in.gcount()));
			at += static_cast<uint64_t>(in.gcount());
		}
	}
	std::unique_ptr<LinuxSystem> system;
	Status status = LinuxSystem::open({SourceKind::raw, file.path(), "", {}}, {}, {}, system);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::vector<Process> processes;
	status = system->processes(processes);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_FALSE(processes.empty());
	const Process target = processes.back();

	file.truncate(1 << 20);
	status = system->processes(processes); // through a mapping: SIGBUS
	EXPECT_EQ(status.code, DOCA_ERROR_IO_FAILED);
	EXPECT_NE(status.reason.find(file.path() + ": the file shrank while it was read"), std::string::npos)
	    << status.reason;
	std::vector<MemoryArea> areas;
	status = system->memory_areas(target, areas);
	EXPECT_NE(status.reason.find(file.path() + ": the file shrank"), std::string::npos) << status.reason;
	std::vector<uint8_t> page(4096);
	EXPECT_EQ(system->read_user(target, 0x400000, page), 0u);
	EXPECT_FALSE(system->source_failure().ok());
}

TEST(ReaderSource, HolesOfASparseFileAreNotAllocated)
{
	if (!on_tmpfs("/dev/shm"))
		GTEST_SKIP() << "/dev/shm is not tmpfs";
	// 64 MiB of guest RAM the guest never touched, but for the page holding VMCOREINFO.
	Scratch file(64 << 20);
	const uint64_t note_at = (40 << 20) + 24;
	file.write(note_at, note_text);
	const uint64_t allocated_before = file.allocated();
	ASSERT_LE(allocated_before, 64u << 10);

	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	kernel::VmcoreInfo info;
	uint64_t found_at = 0;
	Status status = kernel::find_vmcoreinfo(*memory, info, &found_at);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(found_at, note_at);
	// Holes read as zeros.
	for (uint64_t gpa : {uint64_t{0}, uint64_t{8} << 20, (uint64_t{64} << 20) - 8})
		EXPECT_EQ(memory->read_value<uint64_t>(gpa), uint64_t{0});
	std::vector<uint8_t> whole(4 << 20, 0xff);
	ASSERT_TRUE(memory->read(20 << 20, whole));
	EXPECT_TRUE(std::all_of(whole.begin(), whole.end(), [](uint8_t byte) { return byte == 0; }));
	// Through a mapping, the search alone allocated all 64 MiB.
	EXPECT_EQ(file.allocated(), allocated_before);
}

// An image of the given size with nothing in it but a VMCOREINFO note near its end.
class HugeSparseImage : public ::testing::TestWithParam<uint64_t> {};

TEST_P(HugeSparseImage, IsSearchedInBoundedTimeAndMemory)
{
	const uint64_t size = GetParam();
	Scratch file(size);
	const uint64_t note_offset = size - (1 << 20) + 24; // a raw file above 3 GiB: GPA = offset + 1 GiB
	file.write(note_offset, note_text);
	file.write(size / 2, "OSRELEASE=%s\n"); // a decoy (the format string in .rodata)
	const bool peak_resettable = reset_peak_rss();
	const uint64_t peak_before = peak_rss();
	const auto started = std::chrono::steady_clock::now();

	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	kernel::VmcoreInfo info;
	uint64_t found_at = 0;
	Status status = kernel::find_vmcoreinfo(*memory, info, &found_at);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(found_at, note_offset + (1ull << 30));
	EXPECT_EQ(info.osrelease, "6.1.0-56-amd64");

	const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	// Holes are skipped: a few system calls per data extent, whatever the size (it took 25 s and
	// 8.2 GB for 8 GiB through a mapping, and about an hour for 1 TiB).
	EXPECT_LT(seconds, 5.0);
	if (peak_resettable) {
		EXPECT_LT(peak_rss(), peak_before + (32u << 20)) << "peak RSS grew from " << peak_before;
	}
	EXPECT_EQ(file.allocated() <= (64u << 10), true);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HugeSparseImage, ::testing::Values(uint64_t{4} << 30, uint64_t{1} << 40),
			 [](const auto &info) { return std::to_string(info.param >> 30) + "GiB"; });

TEST(ReaderSource, ScanWindowsCoverEveryByteOnceWithTheirContext)
{
	std::vector<uint8_t> bytes(10000);
	for (size_t i = 0; i < bytes.size(); i++)
		bytes[i] = static_cast<uint8_t>(i * 7);
	std::unique_ptr<PhysicalMemory> memory;
	ASSERT_TRUE(
	    PhysicalMemory::over_bytes(bytes, {{0x1000, 0x1000 + 6000, 0}, {0x10000, 0x10000 + 4000, 6000}}, memory)
		.ok());
	std::vector<int> seen(bytes.size());
	const ScanOptions options{.lookbehind = 3, .lookahead = 50, .chunk_bytes = 1000};
	Status status = memory->scan(options, [&](const ScanWindow &window) {
		const bool second = window.gpa >= 0x10000;
		const uint64_t range_start = second ? 0x10000 : 0x1000,
			       range_end = range_start + (second ? 4000 : 6000);
		const uint64_t file_base = second ? 6000 : 0;
		EXPECT_EQ(window.begin, window.gpa == range_start ? 0u : 3u);
		EXPECT_LE(window.end - window.begin, 1000u);
		const uint64_t end_gpa = window.gpa + window.end;
		EXPECT_EQ(window.bytes.size() - window.end, std::min<uint64_t>(50, range_end - end_gpa));
		for (size_t i = 0; i < window.bytes.size(); i++)
			EXPECT_EQ(window.bytes[i], bytes[file_base + (window.gpa - range_start) + i]);
		for (size_t i = window.begin; i < window.end; i++)
			seen[file_base + (window.gpa - range_start) + i]++;
		return true;
	});
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int count) { return count == 1; }));

	int windows = 0;
	ASSERT_TRUE(memory->scan(options, [&](const ScanWindow &) { return ++windows < 2; }).ok());
	EXPECT_EQ(windows, 2); // visit returning false ends the scan
}

TEST(ReaderSource, ScanVisitsOnlyTheDataOfASparseFile)
{
	Scratch file(256 << 20, false);
	const std::string marks[] = {"first", "second", "third"};
	const uint64_t at[] = {3 << 20, (100 << 20) + 4000, (256 << 20) - 4096};
	for (int i = 0; i < 3; i++)
		file.write(at[i], marks[i]);
	if (file.allocated() >= (256u << 20))
		GTEST_SKIP() << "the file system does not keep holes";
	auto memory = open_raw(file.path());
	ASSERT_TRUE(memory);
	uint64_t visited = 0;
	std::vector<uint64_t> found;
	Status status = memory->scan({}, [&](const ScanWindow &window) {
		visited += window.end - window.begin;
		for (int i = 0; i < 3; i++) {
			auto *hit = static_cast<const uint8_t *>(memmem(window.bytes.data() + window.begin,
									window.end - window.begin, marks[i].data(),
									marks[i].size()));
			if (hit)
				found.push_back(window.gpa + static_cast<uint64_t>(hit - window.bytes.data()));
		}
		return true;
	});
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(found, std::vector<uint64_t>(std::begin(at), std::end(at)));
	// Three data extents of a page or a few (file systems allocate in blocks, some in larger units).
	EXPECT_LE(visited, 3u * (2u << 20)) << "holes were read";
	EXPECT_GT(visited, 0u);
	EXPECT_EQ(memory->next_data(8 << 20), at[1] & ~uint64_t{4095});
}

// Runs open_file on another thread; fails the test instead of hanging when it blocks, and then
// unblocks it by opening the FIFO's write end (what a writer would do).
template <typename Open> void expect_refused_without_blocking(const std::string &fifo, Open open_file)
{
	std::promise<Status> done;
	auto result = done.get_future();
	std::thread opener([&] { done.set_value(open_file()); });
	if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
		ADD_FAILURE() << "opening the FIFO " << fifo << " blocked";
		int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		opener.join();
		::close(writer);
		return;
	}
	opener.join();
	Status status = result.get();
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find(fifo + ": not a regular file"), std::string::npos) << status.reason;
	EXPECT_NE(status.reason.find("(a FIFO)"), std::string::npos) << status.reason;
}

TEST(ReaderSource, FifoAsTheImageIsRefusedWithoutBlocking)
{
	const std::string fifo =
	    std::filesystem::temp_directory_path() / ("reader_source_fifo_" + std::to_string(::getpid()));
	::unlink(fifo.c_str());
	ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
	for (SourceKind kind : {SourceKind::automatic, SourceKind::qemu_shared_ram, SourceKind::elf_core})
		expect_refused_without_blocking(fifo, [&] {
			std::unique_ptr<PhysicalMemory> memory;
			return PhysicalMemory::open({kind, fifo, "", {}}, memory);
		});
	::unlink(fifo.c_str());

	// Character devices are not opened either (/dev/zero would read as an endless image).
	std::unique_ptr<PhysicalMemory> memory;
	Status status = PhysicalMemory::open({SourceKind::raw, "/dev/zero", "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(status.reason, "/dev/zero: not a regular file or block device (a character device)");
	status = PhysicalMemory::open({SourceKind::raw, "/nonexistent/ram", "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(status.reason, "/nonexistent/ram: cannot open file: No such file or directory");
}

TEST(ReaderSource, FifoAsAConfigurationFileIsRefusedWithoutBlocking)
{
	const std::string fifo =
	    std::filesystem::temp_directory_path() / ("reader_source_config_fifo_" + std::to_string(::getpid()));
	::unlink(fifo.c_str());
	ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
	expect_refused_without_blocking(fifo, [&] {
		KernelHints hints;
		return api::load_symbol_map(fifo, hints);
	});
	expect_refused_without_blocking(fifo, [&] {
		std::vector<RamRange> ranges;
		return api::load_mem_regions(fifo, ranges);
	});
	expect_refused_without_blocking(fifo, [&] {
		KernelHints hints;
		return api::load_kpgd_file(fifo, hints);
	});
	::unlink(fifo.c_str());
	// /dev/zero read as a symbol map was an empty file ("derive everything from memory").
	KernelHints hints;
	Status status = api::load_symbol_map("/dev/zero", hints);
	EXPECT_EQ(status.reason, "/dev/zero: not a regular file (a character device)");
	// Size limits: a memory-regions file holds at most 4096 regions.
	Scratch large(api::kMaxMemRegionsFileBytes + 1, false);
	std::vector<RamRange> ranges;
	status = api::load_mem_regions(large.path(), ranges);
	EXPECT_EQ(status.reason, large.path() + ": larger than 4194304 bytes, the limit for this file");
}

} // namespace
