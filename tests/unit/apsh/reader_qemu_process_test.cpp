// The QEMU process source (src/apsh/source/qemu_process.*): its parsers (/proc/PID/maps, the
// command line, `info ramblock`), the x86 PC layout rules, and real QEMU processes started paused
// (-S, no guest code runs): the derived layout against QMP's answer, reads of bytes QEMU's generic
// loader put into guest RAM, and the errors (not QEMU, no such process, another user, exit while
// being read). The real-QEMU tests skip without qemu-system-x86_64.
#include "apsh/source/physical_memory.hpp"
#include "apsh/source/qemu_process.hpp"
#include "apsh/source/qmp.hpp"

#include <gtest/gtest.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace softdpu::apsh;
using namespace softdpu::apsh::source;

namespace {

namespace fs = std::filesystem;
constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

std::string cmdline(std::initializer_list<std::string> args)
{
	std::string text;
	for (const std::string &arg : args)
		text += arg + std::string(1, '\0');
	return text;
}

QemuCommandLine parsed(std::initializer_list<std::string> args)
{
	QemuCommandLine out;
	const Status status = parse_qemu_cmdline(cmdline(args), out);
	EXPECT_TRUE(status.ok()) << status.reason;
	return out;
}

std::vector<RamRange> layout(std::initializer_list<std::string> args)
{
	std::vector<RamRange> out;
	const Status status = x86_pc_ram_layout(parsed(args), out);
	EXPECT_TRUE(status.ok()) << status.reason;
	return out;
}

void expect_ranges(const std::vector<RamRange> &got, const std::vector<RamRange> &want)
{
	ASSERT_EQ(got.size(), want.size());
	for (size_t i = 0; i < got.size(); i++) {
		EXPECT_EQ(got[i].gpa_start, want[i].gpa_start) << i;
		EXPECT_EQ(got[i].gpa_end, want[i].gpa_end) << i;
		EXPECT_EQ(got[i].file_offset, want[i].file_offset) << i;
	}
}

} // namespace

TEST(QemuProcessParsers, Sizes)
{
	EXPECT_EQ(parse_qemu_size("256", MiB), 256 * MiB);
	EXPECT_EQ(parse_qemu_size("256M", MiB), 256 * MiB);
	EXPECT_EQ(parse_qemu_size("4G", MiB), 4 * GiB);
	EXPECT_EQ(parse_qemu_size("1.5G", MiB), 3 * GiB / 2);
	EXPECT_EQ(parse_qemu_size("4194304k", MiB), 4 * GiB);
	EXPECT_EQ(parse_qemu_size("2147483648", 1), 2 * GiB);
	EXPECT_FALSE(parse_qemu_size("", MiB));
	EXPECT_FALSE(parse_qemu_size("12Q", MiB));
	EXPECT_FALSE(parse_qemu_size("1.5", MiB));
	EXPECT_FALSE(parse_qemu_size("99999999999999999999G", MiB));
	EXPECT_FALSE(parse_qemu_size("17179869184T", MiB));
}

TEST(QemuProcessParsers, CommandLine)
{
	QemuCommandLine plain =
	    parsed({"/usr/bin/qemu-system-x86_64", "-m", "300", "-name", "myvm", "-display", "none"});
	EXPECT_TRUE(is_qemu_program(plain.program));
	EXPECT_EQ(plain.ram_bytes, 300 * MiB);
	EXPECT_TRUE(plain.ram_given);
	EXPECT_EQ(plain.name, "myvm");
	EXPECT_EQ(plain.machine, "");

	// libvirt's style: -name guest=,  -machine type,key=value, -m size=..k, a JSON backend object.
	QemuCommandLine libvirt = parsed(
	    {"/usr/bin/qemu-system-x86_64", "-name", "guest=web,,1,debug-threads=on", "-machine",
	     "pc-q35-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram,max-ram-below-4g=1G", "-m", "size=4194304k",
	     "-object", R"({"qom-type":"memory-backend-ram","id":"pc.ram","size":4294967296})"});
	EXPECT_EQ(libvirt.name, "web,1");
	EXPECT_EQ(libvirt.machine, "pc-q35-7.2");
	EXPECT_EQ(libvirt.max_ram_below_4g, 1 * GiB);
	EXPECT_EQ(libvirt.memory_backend, "pc.ram");
	EXPECT_EQ(libvirt.ram_bytes, 4 * GiB);

	// A backend object given the QEMU way, no -m.
	QemuCommandLine backend = parsed({"qemu-system-x86_64", "--machine", "type=q35,memory-backend=m0", "-object",
					  "memory-backend-memfd,id=m0,size=2G,share=on"});
	EXPECT_EQ(backend.machine, "q35");
	EXPECT_EQ(backend.ram_bytes, 2 * GiB);

	// No -m: QEMU's default 128 MiB.
	QemuCommandLine none = parsed({"qemu-kvm", "-M", "pc"});
	EXPECT_EQ(none.ram_bytes, 128 * MiB);
	EXPECT_FALSE(none.ram_given);

	EXPECT_FALSE(is_qemu_program("/bin/sleep"));
	EXPECT_FALSE(is_qemu_program("qemu-img"));
	QemuCommandLine bad;
	EXPECT_FALSE(parse_qemu_cmdline(cmdline({"qemu-system-x86_64", "-m", "lots"}), bad).ok());
	EXPECT_FALSE(parse_qemu_cmdline("", bad).ok());
}

// QEMU 7.2's pc_init1 and pc_q35_init rules for RAM below and above 4 GiB.
TEST(QemuProcessLayout, PcAndQ35Rules)
{
	expect_ranges(layout({"qemu-system-x86_64", "-m", "256"}), {{0, 256 * MiB, 0}});
	// pc: under 3.5 GiB everything stays below 4 GiB (3.25 GiB included).
	expect_ranges(layout({"qemu-system-x86_64", "-m", "3328M"}), {{0, 3328 * MiB, 0}});
	// pc: from 3.5 GiB on, 3 GiB below and the rest from 4 GiB.
	expect_ranges(layout({"qemu-system-x86_64", "-m", "3584M"}),
		      {{0, 3 * GiB, 0}, {4 * GiB, 4 * GiB + 512 * MiB, 3 * GiB}});
	expect_ranges(layout({"qemu-system-x86_64", "-m", "8G", "-machine", "pc-i440fx-7.2"}),
		      {{0, 3 * GiB, 0}, {4 * GiB, 9 * GiB, 3 * GiB}});
	// q35: up to 2.75 GiB below, else 2 GiB below.
	expect_ranges(layout({"qemu-system-x86_64", "-m", "2G", "-machine", "q35"}), {{0, 2 * GiB, 0}});
	expect_ranges(layout({"qemu-system-x86_64", "-m", "2816M", "-machine", "q35"}),
		      {{0, 2 * GiB, 0}, {4 * GiB, 4 * GiB + 768 * MiB, 2 * GiB}});
	// max-ram-below-4g lowers the split.
	expect_ranges(layout({"qemu-system-x86_64", "-m", "2G", "-machine", "q35,max-ram-below-4g=1G"}),
		      {{0, 1 * GiB, 0}, {4 * GiB, 5 * GiB, 1 * GiB}});
	expect_ranges(layout({"qemu-system-x86_64", "-m", "2G", "-machine", "pc,max-ram-below-4g=1G"}),
		      {{0, 1 * GiB, 0}, {4 * GiB, 5 * GiB, 1 * GiB}});

	std::vector<RamRange> out;
	const Status status = x86_pc_ram_layout(parsed({"qemu-system-x86_64", "-M", "microvm"}), out);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(status.reason.find("give the QMP socket"), std::string::npos) << status.reason;
}

TEST(QemuProcessParsers, MapsAndRamMapping)
{
	const std::string text =
	    "555558332000-555558739000 r--p 00000000 fe:00 10977356   /usr/bin/qemu-system-x86_64\n"
	    "55555ec71000-55555faf8000 rw-p 00000000 00:00 0                          [heap]\n"
	    "7f2489200000-7f249be00000 rw-p 00000000 00:00 0 \n"
	    "7f24a4000000-7f24e3fff000 rwxp 00000000 00:00 0\n"
	    "7f24eb600000-7f24ebe00000 rw-p 00000000 00:00 0\n"
	    "7f24ec000000-7f24ec800000 rw-s 00000000 00:01 1234      /memfd:ram0 (deleted)\n";
	std::vector<ProcMapping> maps;
	ASSERT_TRUE(parse_proc_maps(text, maps).ok());
	ASSERT_EQ(maps.size(), 6u);
	EXPECT_EQ(maps[0].path, "/usr/bin/qemu-system-x86_64");
	EXPECT_EQ(maps[1].path, "[heap]");
	EXPECT_EQ(maps[2].path, "");
	EXPECT_EQ(maps[2].end - maps[2].start, 300 * MiB);
	EXPECT_EQ(maps[5].path, "/memfd:ram0 (deleted)");

	uint64_t address = 0;
	ASSERT_TRUE(find_ram_mapping(maps, 300 * MiB, address).ok());
	EXPECT_EQ(address, 0x7f2489200000u);
	// Two 8 MiB candidates (an anonymous one and a shared memfd): ambiguous, named.
	Status status = find_ram_mapping(maps, 8 * MiB, address);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(status.reason.find("0x7f24eb600000"), std::string::npos) << status.reason;
	status = find_ram_mapping(maps, 512 * MiB, address);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND);

	EXPECT_FALSE(parse_proc_maps("not a maps line\n", maps).ok());
	EXPECT_FALSE(parse_proc_maps("2000-1000 rw-p 0 00:00 0\n", maps).ok());
}

TEST(QemuProcessParsers, RamblockTable)
{
	const std::string text =
	    "\r\n              Block Name    PSize              Offset               Used              Total\r\n"
	    "                  pc.ram    4 KiB  0x0000000000000000 0x0000000012c00000 0x0000000012c00000\r\n"
	    "    /rom@etc/acpi/tables    4 KiB  0x0000000012c80000 0x0000000000020000 0x0000000000200000\r\n";
	std::vector<RamBlockInfo> blocks;
	ASSERT_TRUE(parse_ramblock_table(text, blocks).ok());
	ASSERT_EQ(blocks.size(), 2u);
	EXPECT_EQ(blocks[0].name, "pc.ram");
	EXPECT_EQ(blocks[0].used, 300 * MiB);
	EXPECT_EQ(blocks[1].name, "/rom@etc/acpi/tables");
	EXPECT_FALSE(parse_ramblock_table("pc.ram 4 KiB 0x0 0x0 0x0\n", blocks).ok());
	EXPECT_FALSE(parse_ramblock_table("Block Name\n pc.ram 4 KiB zero 0x0 0x0\n", blocks).ok());
}

namespace {

// A QEMU started paused (-S): no guest code runs, RAM holds what the generic loader put there.
class PausedQemu {
public:
	PausedQemu(const std::string &machine, const std::string &memory, const std::string &name,
		   const std::vector<std::pair<std::string, uint64_t>> &loads = {}, const std::string &accel = "tcg")
	{
		static int counter = 0;
		dir_ = fs::temp_directory_path() /
		       ("apsh_qemu." + std::to_string(::getpid()) + "." + std::to_string(counter++));
		fs::create_directories(dir_);
		std::string command = "qemu-system-x86_64 -S -accel " + accel + " -machine " + machine +
				      (memory.empty() ? std::string() : " -m " + memory) + " -name " + name +
				      " -display none -nodefaults -qmp unix:" + qmp() +
				      ",server=on,wait=off -pidfile " + (dir_ / "pid").string() + " -daemonize";
		for (const auto &[file, address] : loads)
			command +=
			    " -device loader,file=" + file + ",addr=" + std::to_string(address) + ",force-raw=on";
		command += " 2>" + (dir_ / "err").string();
		started_ = std::system(command.c_str()) == 0;
		if (started_) {
			std::ifstream in(dir_ / "pid");
			in >> pid_;
		}
	}
	~PausedQemu()
	{
		kill();
		std::error_code ignored;
		fs::remove_all(dir_, ignored);
	}
	void kill()
	{
		if (pid_ == 0)
			return;
		::kill(static_cast<pid_t>(pid_), SIGKILL);
		// Not our child (daemonized): wait until it is gone.
		for (int i = 0; i < 500 && ::kill(static_cast<pid_t>(pid_), 0) == 0; i++)
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
		pid_ = 0;
	}
	bool started() const { return started_ && pid_ != 0; }
	uint32_t pid() const { return pid_; }
	std::string qmp() const { return (dir_ / "qmp.sock").string(); }
	fs::path dir() const { return dir_; }

private:
	fs::path dir_;
	bool started_ = false;
	uint32_t pid_ = 0;
};

// The layout derived from the process (maps and command line) and the one asked of QMP: every piece
// QMP lists lies inside a derived range, at the same host address; derived_bytes is the derived
// ranges' size. Reads go by process_vm_readv (cross-memory attach) where it is allowed.
void expect_derived_layout_covers_qmp(const PausedQemu &qemu, uint64_t &derived_bytes)
{
	std::unique_ptr<QemuProcessMemory> process;
	std::vector<RamRange> derived, asked;
	Status status = open_qemu_process({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, process, derived);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_TRUE(process->cross_memory_attach());
	status = open_qemu_process({SourceKind::qemu_pid, std::to_string(qemu.pid()), qemu.qmp(), {}}, process, asked);
	ASSERT_TRUE(status.ok()) << status.reason;
	for (const RamRange &piece : asked) {
		bool covered = false;
		for (const RamRange &range : derived)
			if (piece.gpa_start >= range.gpa_start && piece.gpa_end <= range.gpa_end) {
				covered = true;
				EXPECT_EQ(piece.file_offset, range.file_offset + (piece.gpa_start - range.gpa_start))
				    << std::hex << piece.gpa_start;
			}
		EXPECT_TRUE(covered) << std::hex << piece.gpa_start << "-" << piece.gpa_end;
	}
	derived_bytes = 0;
	for (const RamRange &range : derived)
		derived_bytes += range.gpa_end - range.gpa_start;
}

bool have_qemu()
{
	return std::system("command -v qemu-system-x86_64 >/dev/null 2>&1") == 0;
}

std::vector<uint8_t> write_pattern(const fs::path &path, uint32_t seed)
{
	std::vector<uint8_t> bytes(8192);
	std::mt19937 random(seed);
	for (uint8_t &byte : bytes)
		byte = static_cast<uint8_t>(random());
	std::ofstream(path, std::ios::binary)
	    .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
	return bytes;
}

} // namespace

// The layout derived from the command line and maps covers every RAM piece QMP lists, at the
// same host address; bytes the generic loader wrote below and above 4 GiB read back.
TEST(QemuProcessLive, DerivedLayoutMatchesQmpAndReadsGuestRam)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	const fs::path data = fs::temp_directory_path() / ("apsh_pattern." + std::to_string(::getpid()));
	const auto low = write_pattern(data.string() + ".low", 1);
	const auto high = write_pattern(data.string() + ".high", 2);
	struct Case {
		std::string machine, memory;
		uint64_t high_address; // 0: none
	};
	for (const Case &c : {Case{"pc", "256", 0}, Case{"pc", "3584M", 4 * GiB + 4096},
			      Case{"q35", "3G", 4 * GiB + 64 * MiB}, Case{"q35", "1G", 0}}) {
		SCOPED_TRACE(c.machine + " " + c.memory);
		std::vector<std::pair<std::string, uint64_t>> loads = {{data.string() + ".low", 0x200000}};
		if (c.high_address != 0)
			loads.emplace_back(data.string() + ".high", c.high_address);
		PausedQemu qemu(c.machine, c.memory, "apsh-layout-test", loads);
		ASSERT_TRUE(qemu.started()) << "qemu did not start";

		uint64_t derived_bytes = 0;
		ASSERT_NO_FATAL_FAILURE(expect_derived_layout_covers_qmp(qemu, derived_bytes));
		EXPECT_EQ(derived_bytes, *parse_qemu_size(c.memory, MiB));
		Status status;

		for (const std::string &qmp : {std::string(), qemu.qmp()}) {
			std::unique_ptr<PhysicalMemory> memory;
			status =
			    PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), qmp, {}}, memory);
			ASSERT_TRUE(status.ok()) << status.reason;
			EXPECT_EQ(memory->process_id(), qemu.pid());
			std::vector<uint8_t> got(low.size());
			ASSERT_TRUE(memory->read(0x200000, got));
			EXPECT_EQ(got, low);
			if (c.high_address != 0) {
				ASSERT_TRUE(memory->read(c.high_address, got));
				EXPECT_EQ(got, high);
			}
		}
		// By -name as well.
		std::unique_ptr<PhysicalMemory> by_name;
		status = PhysicalMemory::open({SourceKind::qemu_name, "apsh-layout-test", "", {}}, by_name);
		ASSERT_TRUE(status.ok()) << status.reason;
		EXPECT_EQ(by_name->process_id(), qemu.pid());
	}
	fs::remove(data.string() + ".low");
	fs::remove(data.string() + ".high");
}

// libvirt: the pid file of the session daemon ($XDG_RUNTIME_DIR/libvirt/qemu/run/DOMAIN.pid).
TEST(QemuProcessLive, LibvirtDomainByItsPidFile)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("pc", "128", "apsh-libvirt-test-other-name");
	ASSERT_TRUE(qemu.started());
	const fs::path runtime = qemu.dir() / "xdg";
	fs::create_directories(runtime / "libvirt/qemu/run");
	std::ofstream(runtime / "libvirt/qemu/run/apsh-domain.pid") << qemu.pid() << "\n";
	const char *saved = std::getenv("XDG_RUNTIME_DIR");
	const std::string previous = saved != nullptr ? saved : "";
	::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
	std::unique_ptr<PhysicalMemory> memory;
	const Status status = PhysicalMemory::open({SourceKind::libvirt_domain, "apsh-domain", "", {}}, memory);
	if (saved != nullptr)
		::setenv("XDG_RUNTIME_DIR", previous.c_str(), 1);
	else
		::unsetenv("XDG_RUNTIME_DIR");
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(memory->process_id(), qemu.pid());
	EXPECT_EQ(memory->total_bytes(), 128 * MiB);
}

TEST(QemuProcessLive, ExitWhileReadIsAnErrorNotACrash)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("pc", "128", "apsh-exit-test");
	ASSERT_TRUE(qemu.started());
	std::unique_ptr<PhysicalMemory> memory;
	Status status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::vector<uint8_t> bytes(4096);
	ASSERT_TRUE(memory->read(0x100000, bytes));
	qemu.kill();
	EXPECT_FALSE(memory->read(0x100000, bytes));
	const Status failure = memory->failure();
	EXPECT_EQ(failure.code, DOCA_ERROR_IO_FAILED);
	EXPECT_NE(failure.reason.find("exited while it was read"), std::string::npos) << failure.reason;
	// A scan ends with the same error instead of hanging.
	memory->clear_failure();
	status = memory->scan({}, [](const ScanWindow &) { return true; });
	EXPECT_FALSE(status.ok());
}

// Many pages per process_vm_readv (read_pages, read_pieces): the same bytes as page by page, over
// two NUMA nodes adjacent in guest-physical memory (a page across them), a piece the process does
// not map in the middle of a batch (a short read: the pieces before and after it are read), more
// pieces than one call takes, and the process exiting: every page fails, with the reason.
TEST(QemuProcessLive, BatchedReadsAnswerAsSingleReads)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	const fs::path data = fs::temp_directory_path() / ("apsh_batch." + std::to_string(::getpid()));
	const auto low = write_pattern(data.string() + ".0", 41);
	const auto high = write_pattern(data.string() + ".1", 42);
	const std::string numa =
	    "pc -object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1536M"
	    " -numa node,memdev=m0 -numa node,memdev=m1";
	// Node 0 is [0, 1 GiB); the patterns lie on both sides of its end.
	PausedQemu qemu(numa, "2560M", "apsh-batch-test",
			{{data.string() + ".0", GiB - 8192}, {data.string() + ".1", GiB}});
	fs::remove(data.string() + ".0");
	fs::remove(data.string() + ".1");
	ASSERT_TRUE(qemu.started()) << "qemu did not start";
	std::unique_ptr<PhysicalMemory> memory;
	Status status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_GE(memory->ranges().size(), 2u);

	std::vector<uint64_t> gpas = {GiB - 8192, GiB - 4096, GiB - 2048 /* across the nodes */, GiB, GiB + 4096,
				      0x200000,   3 * GiB /* outside RAM */};
	for (uint64_t i = 0; i < 1500; ++i) // more than one call's 1,024 pieces
		gpas.push_back(0x100000 + i * 4096 * 3);
	std::vector<uint8_t> pages(gpas.size() * 4096), ok(gpas.size()), one(4096);
	memory->read_pages(gpas, pages, ok);
	for (size_t i = 0; i < gpas.size(); ++i) {
		const bool single = memory->read(gpas[i], one);
		ASSERT_EQ(ok[i], single ? 1 : 0) << i;
		if (single) {
			ASSERT_EQ(std::memcmp(pages.data() + i * 4096, one.data(), 4096), 0) << i;
		}
	}
	EXPECT_EQ(ok[2], 1);
	EXPECT_EQ(ok[6], 0);
	EXPECT_EQ(std::vector<uint8_t>(pages.begin(), pages.begin() + 8192), low);
	EXPECT_EQ(std::vector<uint8_t>(pages.begin() + 3 * 4096, pages.begin() + 5 * 4096), high);
	EXPECT_TRUE(memory->failure().ok()) << memory->failure().reason;

	// The byte source itself: a piece at a host address the process does not map, in the middle.
	std::unique_ptr<QemuProcessMemory> process;
	std::vector<RamRange> ranges;
	status = open_qemu_process({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, process, ranges);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::vector<uint8_t> a(4096), b(4096), c(4096);
	const uint64_t host = ranges[0].file_offset + (GiB - 8192 - ranges[0].gpa_start);
	const std::vector<ByteSource::Piece> pieces = {{host, a}, {4096, b}, {host + 4096, c}};
	std::string why;
	EXPECT_EQ(process->read_pieces(pieces, why), 1u);
	EXPECT_NE(why.find("can no longer be read"), std::string::npos) << why;
	EXPECT_EQ(std::vector<uint8_t>(a.begin(), a.end()), std::vector<uint8_t>(low.begin(), low.begin() + 4096));
	why.clear();
	EXPECT_EQ(process->read_pieces(std::span(pieces).subspan(2), why), 1u) << why;
	EXPECT_EQ(std::vector<uint8_t>(c.begin(), c.end()), std::vector<uint8_t>(low.begin() + 4096, low.end()));

	qemu.kill();
	std::fill(ok.begin(), ok.end(), 1);
	memory->read_pages(gpas, pages, ok);
	EXPECT_EQ(std::count(ok.begin(), ok.end(), 1), 0);
	const Status failure = memory->failure();
	EXPECT_EQ(failure.code, DOCA_ERROR_IO_FAILED);
	EXPECT_NE(failure.reason.find("exited while it was read"), std::string::npos) << failure.reason;
}

TEST(QemuProcessLive, ProcessesThatAreNotQemu)
{
	std::unique_ptr<PhysicalMemory> memory;
	// This test program: not QEMU.
	Status status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(::getpid()), "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("is not QEMU"), std::string::npos) << status.reason;
	// kthreadd: no command line.
	status = PhysicalMemory::open({SourceKind::qemu_pid, "2", "", {}}, memory);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("not QEMU"), std::string::npos) << status.reason;
	// A pid no process has (above pid_max's usual 4194304 is refused by the parser; use a dead child).
	const pid_t child = ::fork();
	if (child == 0)
		::_exit(0);
	::waitpid(child, nullptr, 0);
	status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(child), "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND);
	EXPECT_NE(status.reason.find("no process"), std::string::npos) << status.reason;
	status = PhysicalMemory::open({SourceKind::qemu_name, "no-such-vm-name-here", "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND);
	EXPECT_NE(status.reason.find("no running QEMU has -name"), std::string::npos) << status.reason;
	status = PhysicalMemory::open({SourceKind::libvirt_domain, "no-such-domain-here", "", {}}, memory);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND);
	EXPECT_NE(status.reason.find("is not running here"), std::string::npos) << status.reason;
}

// Another user's QEMU: the error names both users and the fix.
TEST(QemuProcessLive, AnotherUsersQemuIsRefusedWithTheCauseAndTheFix)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	if (::geteuid() != 0)
		GTEST_SKIP() << "needs root to run the reader as another user";
	PausedQemu qemu("pc", "128", "apsh-perm-test");
	ASSERT_TRUE(qemu.started());
	int pipe_fds[2];
	ASSERT_EQ(::pipe(pipe_fds), 0);
	const pid_t child = ::fork();
	if (child == 0) {
		::close(pipe_fds[0]);
		if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
			::_exit(3);
		std::unique_ptr<PhysicalMemory> memory;
		const Status status =
		    PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, memory);
		const std::string text = std::to_string(status.code) + "\n" + status.reason;
		(void)!::write(pipe_fds[1], text.data(), text.size());
		::_exit(0);
	}
	::close(pipe_fds[1]);
	std::string text;
	char buffer[4096];
	for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;)
		text.append(buffer, static_cast<size_t>(n));
	::close(pipe_fds[0]);
	int child_status = 0;
	::waitpid(child, &child_status, 0);
	ASSERT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0);
	EXPECT_EQ(text.substr(0, text.find('\n')), std::to_string(DOCA_ERROR_NOT_PERMITTED)) << text;
	EXPECT_NE(text.find("runs as root (uid 0)"), std::string::npos) << text;
	EXPECT_NE(text.find("uid 65534"), std::string::npos) << text;
	EXPECT_NE(text.find("CAP_SYS_PTRACE"), std::string::npos) << text;
}

// --consistent's pause and resume over QMP.
TEST(QemuProcessLive, PauseAndResumeOverQmp)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("pc", "128", "apsh-pause-test");
	ASSERT_TRUE(qemu.started());
	bool was_running = true;
	// Started with -S: already paused, so pausing reports it did not run.
	ASSERT_TRUE(pause_qemu_guest(qemu.qmp(), was_running).ok());
	EXPECT_FALSE(was_running);
	ASSERT_TRUE(resume_qemu_guest(qemu.qmp()).ok());
	ASSERT_TRUE(pause_qemu_guest(qemu.qmp(), was_running).ok());
	EXPECT_TRUE(was_running);
	QmpSession session;
	ASSERT_TRUE(session.open(qemu.qmp()).ok());
	std::string status;
	ASSERT_TRUE(session.execute("query-status", &status).ok());
	EXPECT_NE(status.find("\"running\":false"), std::string::npos) << status;
	EXPECT_EQ(pause_qemu_guest("/nonexistent/qmp.sock", was_running).code, DOCA_ERROR_NOT_CONNECTED);
}

// ---------------------------------------------------------------------------------------------
// Bad input and faults, with real processes.

namespace {

// A child process running argv (execvp), killed and reaped at the end.
class Child {
public:
	explicit Child(std::vector<std::string> argv, const std::string &argv0 = {})
	{
		pid_ = ::fork();
		if (pid_ == 0) {
			std::vector<char *> args;
			if (!argv0.empty())
				args.push_back(const_cast<char *>(argv0.c_str()));
			else
				args.push_back(argv[0].data());
			for (size_t i = 1; i < argv.size(); i++)
				args.push_back(argv[i].data());
			args.push_back(nullptr);
			::execvp(argv[0].c_str(), args.data());
			::_exit(127);
		}
		// Wait until exec replaced the forked copy (its cmdline is argv, not this test's).
		const std::string want = argv0.empty() ? argv[0] : argv0;
		for (int i = 0; i < 500; i++) {
			std::ifstream in("/proc/" + std::to_string(pid_) + "/cmdline");
			std::string first;
			std::getline(in, first, '\0');
			if (first == want)
				break;
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
		}
	}
	~Child()
	{
		if (pid_ > 0) {
			::kill(pid_, SIGKILL);
			::waitpid(pid_, nullptr, 0);
		}
	}
	uint32_t pid() const { return static_cast<uint32_t>(pid_); }

private:
	pid_t pid_ = -1;
};

Status open_pid(uint32_t pid, const std::string &qmp = {})
{
	std::unique_ptr<PhysicalMemory> memory;
	return PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(pid), qmp, {}}, memory);
}

} // namespace

TEST(QemuProcessFaults, SleepIsNotQemu)
{
	Child sleeper({"sleep", "60"});
	const Status status = open_pid(sleeper.pid());
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("(sleep) is not QEMU: its program is sleep"), std::string::npos) << status.reason;
}

// A process that calls itself qemu-system-x86_64 but holds no guest RAM: the RAM is not found.
TEST(QemuProcessFaults, ProgramNamedQemuWithoutGuestRam)
{
	Child impostor({"sleep", "60"}, "qemu-system-x86_64");
	const Status status = open_pid(impostor.pid());
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_FOUND) << status.reason;
	EXPECT_NE(status.reason.find("no read-write mapping of the guest RAM's size"), std::string::npos)
	    << status.reason;
}

// QEMU without a machine (-M none): no guest RAM, with or without QMP.
TEST(QemuProcessFaults, QemuWithoutAMachineHasNoGuestRam)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("none", "", "apsh-none-test"); // -M none has no RAM without -m
	ASSERT_TRUE(qemu.started());
	Status status = open_pid(qemu.pid());
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_SUPPORTED) << status.reason;
	EXPECT_NE(status.reason.find("machine type \"none\" is not an x86 PC"), std::string::npos) << status.reason;
	status = open_pid(qemu.pid(), qemu.qmp());
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("lists no RAM"), std::string::npos) << status.reason;
}

// SIGKILL while a scan of the whole of a 2 GiB guest's RAM runs in another thread: the scan ends
// with "exited while it was read", promptly.
TEST(QemuProcessFaults, KilledDuringAWholeRamScan)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("pc", "2G", "apsh-kill-scan-test");
	ASSERT_TRUE(qemu.started());
	std::unique_ptr<PhysicalMemory> memory;
	Status status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), "", {}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::atomic<uint64_t> windows{0};
	std::atomic<bool> done{false};
	Status scanned;
	std::thread scanner([&] {
		// Each window is slowed a little so that 2 GiB take longer than the kill takes to come.
		scanned = memory->scan({}, [&](const ScanWindow &) {
			windows++;
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
			return true;
		});
		done = true;
	});
	while (windows < 20 && !done)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	if (done) {
		// The scan ended (failed, or found too little RAM) before the kill: a failure, not a hang.
		scanner.join();
		FAIL() << "the scan ended after " << windows << " windows, before QEMU was killed: "
		       << (scanned.ok() ? std::string("it succeeded") : scanned.reason);
	}
	const auto killed = std::chrono::steady_clock::now();
	qemu.kill();
	scanner.join();
	const auto after = std::chrono::steady_clock::now() - killed;
	EXPECT_FALSE(scanned.ok());
	EXPECT_NE(scanned.reason.find("exited while it was read"), std::string::npos) << scanned.reason;
	EXPECT_LT(after, std::chrono::seconds(5));
}

namespace {

// A process serving a UNIX socket that is not (quite) QMP. Modes: "garbage" (a line of text),
// "silent" (accepts, says nothing), "drip" (a JSON object that never ends, a byte every 200 ms),
// "not-qmp" (JSON, but no greeting), "refuse" (greets, refuses qmp_capabilities), "bad-return"
// (greets, answers every command with garbage), "events" (greets, then events without end),
// "close" (accepts and hangs up), "bad-status" (a QMP whose query-status answers nonsense).
class FakeQmp {
public:
	explicit FakeQmp(const std::string &mode)
	{
		static int counter = 0;
		path_ = (fs::temp_directory_path() /
			 ("apsh_fakeqmp." + std::to_string(::getpid()) + "." + std::to_string(counter++)))
			    .string();
		::unlink(path_.c_str());
		const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path_.c_str());
		if (::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0 ||
		    ::listen(listener, 4) != 0)
			return;
		pid_ = ::fork();
		if (pid_ != 0) {
			::close(listener);
			return;
		}
		auto say = [](int fd, const std::string &text) { (void)!::write(fd, text.data(), text.size()); };
		const std::string greeting = R"({"QMP": {"version": {}, "capabilities": []}})"
					     "\n";
		for (;;) {
			const int fd = ::accept(listener, nullptr, nullptr);
			if (fd < 0)
				::_exit(1);
			if (mode == "garbage")
				say(fd, "220 smtp.example.com ESMTP ready\r\n");
			else if (mode == "drip") {
				say(fd, "{\"QMP\": ");
				for (;;) {
					std::this_thread::sleep_for(std::chrono::milliseconds(200));
					say(fd, " ");
				}
			} else if (mode == "not-qmp")
				say(fd, "{\"hello\": [1, 2, 3]}\n");
			else if (mode == "close") {
				::close(fd);
				continue;
			} else if (mode != "silent") {
				say(fd, greeting);
				char buffer[4096];
				for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) {
					const std::string command(buffer, static_cast<size_t>(n));
					if (mode == "refuse")
						say(fd,
						    R"({"error": {"class": "GenericError", "desc": "no capabilities today"}})"
						    "\n");
					else if (mode == "bad-return")
						say(fd, "]]] not json\n");
					else if (mode == "events")
						for (;;)
							say(fd, R"({"event": "RTC_CHANGE", "data": {}})"
								"\n");
					else if (mode == "bad-status" &&
						 command.find("query-status") != std::string::npos)
						say(fd, R"({"return": {"running": "maybe"}})"
							"\n");
					else
						say(fd, R"({"return": {}})"
							"\n");
				}
			}
			// silent, garbage, not-qmp: hold the connection open until killed.
			::pause();
		}
	}
	~FakeQmp()
	{
		if (pid_ > 0) {
			::kill(pid_, SIGKILL);
			::waitpid(pid_, nullptr, 0);
		}
		::unlink(path_.c_str());
	}
	const std::string &path() const { return path_; }

private:
	std::string path_;
	pid_t pid_ = -1;
};

} // namespace

TEST(QemuProcessFaults, QmpSocketsThatAreNotQmpFailClearlyAndInTime)
{
	struct Case {
		std::string mode;
		doca_error_t code;
		std::string says;
	};
	for (const Case &c : {Case{"garbage", DOCA_ERROR_IO_FAILED, "not a JSON object: \"220 smtp"},
			      Case{"silent", DOCA_ERROR_TIME_OUT, "did not greet within 5 s: another client holds"},
			      Case{"drip", DOCA_ERROR_TIME_OUT, "did not greet within 5 s"},
			      Case{"not-qmp", DOCA_ERROR_IO_FAILED, "JSON object that is no QMP message"},
			      Case{"refuse", DOCA_ERROR_IO_FAILED, "no capabilities today"},
			      Case{"bad-return", DOCA_ERROR_IO_FAILED, "not a JSON object: \"]]] not json"},
			      Case{"events", DOCA_ERROR_TIME_OUT, "did not answer within 5 s"},
			      Case{"close", DOCA_ERROR_CONNECTION_RESET, "closed the connection"}}) {
		SCOPED_TRACE(c.mode);
		FakeQmp fake(c.mode);
		const auto start = std::chrono::steady_clock::now();
		QmpSession session;
		const Status status = session.open(fake.path());
		EXPECT_EQ(status.code, c.code) << status.reason;
		EXPECT_NE(status.reason.find(c.says), std::string::npos) << status.reason;
		EXPECT_NE(status.reason.find(fake.path()), std::string::npos) << status.reason;
		EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
	}
	// A socket path with nobody behind it, and a file that is not a socket.
	QmpSession session;
	Status status = session.open("/nonexistent/qmp.sock");
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_CONNECTED) << status.reason;
	const fs::path file = fs::temp_directory_path() / ("apsh_not_a_socket." + std::to_string(::getpid()));
	std::ofstream(file) << "{}\n";
	status = session.open(file.string());
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_CONNECTED) << status.reason;
	fs::remove(file);
	// --consistent on a QMP whose query-status answers nonsense: an error, the guest untouched.
	FakeQmp bad_status("bad-status");
	bool was_running = true;
	status = pause_qemu_guest(bad_status.path(), was_running);
	EXPECT_EQ(status.code, DOCA_ERROR_IO_FAILED) << status.reason;
	EXPECT_NE(status.reason.find("query-status answered"), std::string::npos) << status.reason;
	EXPECT_FALSE(was_running);
}

// A real QEMU given a QMP socket that is not its own QMP: the open fails and says which socket.
TEST(QemuProcessFaults, RealQemuWithAQmpSocketThatAnswersGarbage)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	PausedQemu qemu("pc", "128", "apsh-badqmp-test");
	ASSERT_TRUE(qemu.started());
	FakeQmp fake("bad-return");
	const Status status = open_pid(qemu.pid(), fake.path());
	EXPECT_EQ(status.code, DOCA_ERROR_IO_FAILED) << status.reason;
	EXPECT_NE(status.reason.find("QEMU process " + std::to_string(qemu.pid())), std::string::npos) << status.reason;
	EXPECT_NE(status.reason.find(fake.path()), std::string::npos) << status.reason;
	// Its own QMP still works.
	EXPECT_TRUE(open_pid(qemu.pid(), qemu.qmp()).ok());
}

TEST(QemuProcessParsers, QmpMessages)
{
	QmpMessage message;
	ASSERT_TRUE(parse_qmp_message(R"({"QMP": {"version": {}}})", message).ok());
	EXPECT_EQ(message.kind, QmpMessage::Kind::greeting);
	ASSERT_TRUE(parse_qmp_message("{\"return\": \"text\\r\\n\"}\r", message).ok());
	EXPECT_EQ(message.kind, QmpMessage::Kind::success);
	EXPECT_EQ(message.value, "\"text\\r\\n\"");
	ASSERT_TRUE(parse_qmp_message(R"({"error": {"class": "GenericError", "desc": "bad"}})", message).ok());
	EXPECT_EQ(message.kind, QmpMessage::Kind::failure);
	EXPECT_EQ(message.error_class, "GenericError");
	EXPECT_EQ(message.error_text, "bad");
	ASSERT_TRUE(parse_qmp_message(R"({"event": "STOP", "timestamp": {}})", message).ok());
	EXPECT_EQ(message.kind, QmpMessage::Kind::event);
	EXPECT_EQ(message.value, "STOP");
	EXPECT_FALSE(parse_qmp_message("[1]", message).ok());
	EXPECT_FALSE(parse_qmp_message("{\"QMP\": 1}", message).ok());
	EXPECT_FALSE(parse_qmp_message(std::string("{\"ret\0", 6), message).ok());
	bool running = false;
	ASSERT_TRUE(parse_qmp_run_state(R"({"running": true, "status": "running"})", running).ok());
	EXPECT_TRUE(running);
	EXPECT_FALSE(parse_qmp_run_state(R"({"status": "paused"})", running).ok());
	EXPECT_FALSE(parse_qmp_run_state("null", running).ok());
	std::vector<uint8_t> bytes;
	ASSERT_TRUE(parse_hmp_xp_words("0000000000200000: 0x0807060504030201 0x0000000000000010\r\n", bytes).ok());
	EXPECT_EQ(bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 0x10, 0, 0, 0, 0, 0, 0, 0}));
	EXPECT_FALSE(parse_hmp_xp_words("Cannot access memory\r\n", bytes).ok());
	EXPECT_FALSE(parse_hmp_xp_words("0000000000200000: 0x1 zz\r\n", bytes).ok());
}

// ---------------------------------------------------------------------------------------------
// RAM in several QEMU RAM blocks: NUMA nodes with their own memory backends and a pc-dimm, on pc
// and q35, with and without QMP. Bytes the generic loader put into each block read back at
// their guest-physical addresses.

TEST(QemuProcessParsers, NumaNodesAndDimmsOnTheCommandLine)
{
	const QemuCommandLine line = parsed({"qemu-system-x86_64",
					     "-machine",
					     "q35",
					     "-m",
					     "4G,slots=2,maxmem=8G",
					     "-object",
					     "memory-backend-ram,id=m1,size=3G",
					     "-object",
					     R"({"qom-type":"memory-backend-ram","id":"m0","size":1073741824})",
					     "-numa",
					     "node,nodeid=1,memdev=m1",
					     "-numa",
					     "node,nodeid=0,memdev=m0",
					     "-object",
					     "memory-backend-ram,id=d0,size=512M",
					     "-object",
					     "memory-backend-ram,id=d1,size=256M",
					     "-device",
					     "pc-dimm,id=dimm0,memdev=d0",
					     "-device",
					     R"({"driver":"pc-dimm","memdev":"d1","id":"dimm1"})"});
	EXPECT_EQ(line.numa_memdevs, (std::vector<std::string>{"m0", "m1"}));
	EXPECT_EQ(line.ram_bytes, 4 * GiB);
	EXPECT_EQ(line.max_ram, 8 * GiB);
	ASSERT_EQ(line.dimms.size(), 2u);
	std::vector<RamBlockPiece> pieces;
	std::vector<std::pair<std::string, uint64_t>> blocks;
	const Status status = x86_pc_ram_blocks(line, pieces, blocks);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(blocks, (std::vector<std::pair<std::string, uint64_t>>{
			      {"m0", 1 * GiB}, {"m1", 3 * GiB}, {"d0", 512 * MiB}, {"d1", 256 * MiB}}));
	// q35 with 4 GiB: 2 GiB below 4 GiB, 2 GiB above; device memory from 6 GiB.
	const std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>> want = {
	    {"m0", 0, 1 * GiB, 0},
	    {"m1", 1 * GiB, 2 * GiB, 0},
	    {"m1", 4 * GiB, 6 * GiB, 1 * GiB},
	    {"d0", 6 * GiB, 6 * GiB + 512 * MiB, 0},
	    {"d1", 6 * GiB + 512 * MiB, 6 * GiB + 768 * MiB, 0}};
	ASSERT_EQ(pieces.size(), want.size());
	for (size_t i = 0; i < want.size(); i++) {
		EXPECT_EQ(pieces[i].block, std::get<0>(want[i])) << i;
		EXPECT_EQ(pieces[i].gpa_start, std::get<1>(want[i])) << i;
		EXPECT_EQ(pieces[i].gpa_end, std::get<2>(want[i])) << i;
		EXPECT_EQ(pieces[i].offset, std::get<3>(want[i])) << i;
	}
	// A dimm without maxmem, or naming no backend: refused.
	EXPECT_FALSE(x86_pc_ram_blocks(parsed({"qemu-system-x86_64", "-m", "1G", "-object",
					       "memory-backend-ram,id=d0,size=512M", "-device", "pc-dimm,memdev=d0"}),
				       pieces, blocks)
			 .ok());
	EXPECT_FALSE(
	    x86_pc_ram_blocks(parsed({"qemu-system-x86_64", "-m", "1G,maxmem=2G", "-device", "pc-dimm,memdev=nothing"}),
			      pieces, blocks)
		.ok());
	QemuCommandLine bad;
	EXPECT_FALSE(parse_qemu_cmdline(cmdline({"qemu-system-x86_64", "-numa", "node,memdev=missing"}), bad).ok());
}

// -m maxmem= that is not a size is the same clear error with or without a size beside it; a
// command line put together without the parser's checks (a node naming no backend, a maxmem near
// 2^64) is an error from the layout, not a crash or a wrapped device memory region.
TEST(QemuProcessParsers, MaxmemAndDeviceMemoryErrors)
{
	for (const std::string &m :
	     {std::string("maxmem=bogus"), std::string("1G,maxmem=bogus"), std::string("slots=2,maxmem=bogus")}) {
		SCOPED_TRACE(m);
		QemuCommandLine line;
		const Status status = parse_qemu_cmdline(cmdline({"qemu-system-x86_64", "-m", m}), line);
		EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
		EXPECT_EQ(status.reason, "-m maxmem=bogus: not a size");
	}
	// No size: the default RAM, maxmem taken.
	QemuCommandLine slots = parsed({"qemu-system-x86_64", "-m", "slots=4,maxmem=8G"});
	EXPECT_EQ(slots.ram_bytes, 128 * MiB);
	EXPECT_FALSE(slots.ram_given);
	EXPECT_EQ(slots.max_ram, 8 * GiB);

	std::vector<RamBlockPiece> pieces;
	std::vector<std::pair<std::string, uint64_t>> blocks;
	QemuCommandLine orphan;
	orphan.ram_bytes = 1 * GiB;
	orphan.numa_memdevs = {"m0"};
	Status status = x86_pc_ram_blocks(orphan, pieces, blocks);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("-numa node,memdev=m0: no memory-backend object"), std::string::npos)
	    << status.reason;

	QemuCommandLine huge;
	huge.ram_bytes = 1 * GiB;
	huge.max_ram = UINT64_MAX - 4096;
	huge.backends = {{"d0", 512 * MiB}};
	huge.dimms = {{"d0", std::nullopt}};
	status = x86_pc_ram_blocks(huge, pieces, blocks);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("overflows the address space"), std::string::npos) << status.reason;
	// The region: base 4 GiB (1 GiB of RAM lies below 4 GiB) + (maxmem - 1 GiB) + 1 GiB for the slot.
	// One byte past UINT64_MAX is refused; the largest maxmem that fits puts the dimm at the base.
	huge.max_ram = UINT64_MAX - 4 * GiB + 1;
	EXPECT_FALSE(x86_pc_ram_blocks(huge, pieces, blocks).ok());
	huge.max_ram = UINT64_MAX - 4 * GiB;
	status = x86_pc_ram_blocks(huge, pieces, blocks);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_FALSE(pieces.empty());
	EXPECT_EQ(pieces.back().gpa_start, 4 * GiB);
}

TEST(QemuProcessLive, NumaNodesAndADimmReadBackWithAndWithoutQmp)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	const fs::path data = fs::temp_directory_path() / ("apsh_numa." + std::to_string(::getpid()));
	const std::string numa = " -object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=3G"
				 " -numa node,memdev=m0 -numa node,memdev=m1"
				 " -object memory-backend-ram,id=d0,size=512M -device pc-dimm,memdev=d0,id=dimm0";
	struct Case {
		std::string machine;
		std::vector<uint64_t> addresses; // one in each piece
	};
	// pc with 4 GiB: 3 GiB below 4 GiB (m0, then m1's first 2 GiB), 1 GiB above; dimm at 5 GiB.
	// q35: 2 GiB below, 2 GiB above; dimm at 6 GiB.
	for (const Case &c : {Case{"pc", {0x200000, 2 * GiB + 4096, 4 * GiB + 8192, 5 * GiB + 0x10000}},
			      Case{"q35", {0x300000, 1 * GiB + 4096, 5 * GiB + 8192, 6 * GiB + 0x20000}}}) {
		SCOPED_TRACE(c.machine);
		std::vector<std::vector<uint8_t>> patterns;
		std::vector<std::pair<std::string, uint64_t>> loads;
		for (size_t i = 0; i < c.addresses.size(); i++) {
			const std::string file = data.string() + "." + std::to_string(i);
			patterns.push_back(write_pattern(file, static_cast<uint32_t>(10 + i)));
			loads.emplace_back(file, c.addresses[i]);
		}
		PausedQemu qemu(c.machine + numa, "4G,slots=2,maxmem=8G", "apsh-numa-test", loads);
		ASSERT_TRUE(qemu.started()) << "qemu did not start";
		uint64_t derived_bytes = 0;
		ASSERT_NO_FATAL_FAILURE(expect_derived_layout_covers_qmp(qemu, derived_bytes));
		EXPECT_EQ(derived_bytes, 4 * GiB + 512 * MiB);
		Status status;
		for (const std::string &qmp : {std::string(), qemu.qmp()}) {
			std::unique_ptr<PhysicalMemory> memory;
			status =
			    PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), qmp, {}}, memory);
			ASSERT_TRUE(status.ok()) << status.reason;
			for (size_t i = 0; i < c.addresses.size(); i++) {
				std::vector<uint8_t> got(patterns[i].size());
				ASSERT_TRUE(memory->read(c.addresses[i], got)) << std::hex << c.addresses[i];
				EXPECT_EQ(got, patterns[i])
				    << (qmp.empty() ? "derived " : "qmp ") << std::hex << c.addresses[i];
			}
		}
		for (size_t i = 0; i < c.addresses.size(); i++)
			fs::remove(data.string() + "." + std::to_string(i));
	}
}

// Two NUMA nodes of the same size: their mappings look alike. Without QMP that is a clear error;
// with QMP their contents tell them apart (pages QEMU shows at their guest-physical addresses
// against each mapping), unless both are still empty.
TEST(QemuProcessLive, EqualSizedNodesAreToldApartByContentOverQmpOnly)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	const std::string twins =
	    "pc -object memory-backend-ram,id=n0,size=512M -object memory-backend-ram,id=n1,size=512M"
	    " -numa node,memdev=n0 -numa node,memdev=n1";
	{
		PausedQemu empty(twins, "1G", "apsh-numa-twins-test");
		ASSERT_TRUE(empty.started());
		for (const std::string &qmp : {std::string(), empty.qmp()}) {
			const Status status = open_pid(empty.pid(), qmp);
			EXPECT_EQ(status.code, DOCA_ERROR_NOT_SUPPORTED) << status.reason;
			EXPECT_NE(status.reason.find("have the same size"), std::string::npos) << status.reason;
		}
	}
	// A pattern at the start of node 1 (512 MiB) only: node 0 is the other mapping.
	const fs::path data = fs::temp_directory_path() / ("apsh_twins." + std::to_string(::getpid()));
	const auto pattern = write_pattern(data, 31);
	PausedQemu qemu(twins, "1G", "apsh-numa-twins-test", {{data.string(), 512 * MiB}});
	fs::remove(data);
	ASSERT_TRUE(qemu.started());
	Status status = open_pid(qemu.pid());
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_SUPPORTED) << status.reason;
	EXPECT_NE(status.reason.find("without QMP"), std::string::npos) << status.reason;
	std::unique_ptr<PhysicalMemory> memory;
	status = PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), qemu.qmp(), {}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	std::vector<uint8_t> got(pattern.size());
	ASSERT_TRUE(memory->read(512 * MiB, got));
	EXPECT_EQ(got, pattern);
	ASSERT_TRUE(memory->read(8192, got));
	EXPECT_NE(got, pattern);
}

// Where process_vm_readv is blocked (a seccomp policy: EPERM) the source reads /proc/PID/mem, and
// equal-sized blocks are compared through that same reader: they are still told apart. Runs in a
// child process that installs the filter, so the test process keeps process_vm_readv.
TEST(QemuProcessLive, EqualSizedNodesAreToldApartWithoutProcessVmReadv)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	const std::string twins =
	    "pc -object memory-backend-ram,id=n0,size=512M -object memory-backend-ram,id=n1,size=512M"
	    " -numa node,memdev=n0 -numa node,memdev=n1";
	const fs::path data = fs::temp_directory_path() / ("apsh_twins_mem." + std::to_string(::getpid()));
	const auto pattern = write_pattern(data, 37);
	PausedQemu qemu(twins, "1G", "apsh-numa-twins-mem-test", {{data.string(), 512 * MiB}});
	fs::remove(data);
	ASSERT_TRUE(qemu.started());
	int pipe_fds[2];
	ASSERT_EQ(::pipe(pipe_fds), 0);
	const pid_t child = ::fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		::close(pipe_fds[0]);
		std::string result;
		sock_filter filter[] = {
		    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
		    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
		if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
			result = "skip: no seccomp filter here";
		} else {
			std::unique_ptr<QemuProcessMemory> process;
			std::vector<RamRange> ranges;
			Status status = open_qemu_process(
			    {SourceKind::qemu_pid, std::to_string(qemu.pid()), qemu.qmp(), {}}, process, ranges);
			std::unique_ptr<PhysicalMemory> memory;
			if (status.ok() && process->cross_memory_attach())
				status = {DOCA_ERROR_UNEXPECTED, "reads go through process_vm_readv under the filter"};
			if (status.ok())
				status = PhysicalMemory::open(
				    {SourceKind::qemu_pid, std::to_string(qemu.pid()), qemu.qmp(), {}}, memory);
			std::vector<uint8_t> got(pattern.size());
			if (!status.ok())
				result = status.reason;
			else if (!memory->read(512 * MiB, got) || got != pattern)
				result = "node 1's pattern does not read back at 512 MiB";
			else
				result = "ok";
		}
		const ssize_t written = ::write(pipe_fds[1], result.data(), result.size());
		::_exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
	}
	::close(pipe_fds[1]);
	std::string result;
	char buffer[512];
	for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;)
		result.append(buffer, static_cast<size_t>(n));
	::close(pipe_fds[0]);
	int wait_status = 0;
	ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
	ASSERT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << result;
	if (result.starts_with("skip: "))
		GTEST_SKIP() << result.substr(6);
	EXPECT_EQ(result, "ok");
}

// Under KVM QEMU registers the same RAM block mappings as KVM memory slots (kvm_set_phys_mem hands
// KVM memory_region_get_ram_ptr(): the host address TCG uses), so the layout and the reads are the
// accelerator's business only through QEMU's RAM blocks. A KVM QEMU started paused (-S: no guest
// code runs, which a PVM host's kvm_pvm allows too) is read like a TCG one. Skips without a usable
// /dev/kvm.
TEST(QemuProcessLive, KvmQemuIsReadLikeATcgOne)
{
	if (!have_qemu())
		GTEST_SKIP() << "no qemu-system-x86_64";
	if (::access("/dev/kvm", R_OK | W_OK) != 0)
		GTEST_SKIP() << "no usable /dev/kvm";
	const fs::path data = fs::temp_directory_path() / ("apsh_kvm." + std::to_string(::getpid()));
	const auto low = write_pattern(data.string() + ".low", 21);
	const auto high = write_pattern(data.string() + ".high", 22);
	PausedQemu qemu("q35", "3G", "apsh-kvm-test",
			{{data.string() + ".low", 0x200000}, {data.string() + ".high", 4 * GiB + 4096}}, "kvm");
	fs::remove(data.string() + ".low");
	fs::remove(data.string() + ".high");
	if (!qemu.started())
		GTEST_SKIP() << "QEMU does not start with -accel kvm here";
	for (const std::string &qmp : {std::string(), qemu.qmp()}) {
		std::unique_ptr<PhysicalMemory> memory;
		const Status status =
		    PhysicalMemory::open({SourceKind::qemu_pid, std::to_string(qemu.pid()), qmp, {}}, memory);
		ASSERT_TRUE(status.ok()) << status.reason;
		// QMP's flat view leaves out the legacy VGA window and option ROMs below 1 MiB.
		if (qmp.empty())
			EXPECT_EQ(memory->total_bytes(), 3 * GiB);
		else
			EXPECT_GT(memory->total_bytes(), 3 * GiB - MiB);
		std::vector<uint8_t> got(low.size());
		ASSERT_TRUE(memory->read(0x200000, got));
		EXPECT_EQ(got, low);
		ASSERT_TRUE(memory->read(4 * GiB + 4096, got));
		EXPECT_EQ(got, high);
	}
}
