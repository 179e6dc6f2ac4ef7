// System start through the DOCA flow with the real reader on files that are not a Linux guest's
// memory (issue 5, robustness): not a memory image, truncated ELF-core and LiME images, random
// data the size of the test guest's RAM, zeros, and an image of another OS (with decoy Linux
// strings). Each must fail doca_apsh_system_start with DOCA_ERROR_INITIALIZATION and an SDK error
// that says why, in bounded time, and leave the system usable for another start.
#include "device/topology.hpp"

#include <doca_apsh.h>
#include <doca_dev.h>
#include <doca_log.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The SDK's error records, captured once for the process.
std::vector<std::string> &sdk_errors()
{
	static std::vector<std::string> errors;
	return errors;
}

char sdk_buffer[4096];

void on_record(char *record)
{
	if (std::strstr(record, "[ERROR]") != nullptr || std::strstr(record, "[ERR]") != nullptr)
		sdk_errors().emplace_back(record);
}

void capture_sdk_errors()
{
	static bool done = false;
	if (done)
		return;
	done = true;
	doca_log_backend *backend = nullptr;
	if (doca_log_backend_create_with_buffer_sdk(sdk_buffer, sizeof(sdk_buffer), on_record, &backend) ==
	    DOCA_SUCCESS)
		doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_ERROR);
}

template <typename T> void put(std::vector<uint8_t> &bytes, size_t at, T value)
{
	if (bytes.size() < at + sizeof(T))
		bytes.resize(at + sizeof(T));
	std::memcpy(bytes.data() + at, &value, sizeof(T));
}

class ApshRobustness : public ::testing::Test {
protected:
	void SetUp() override
	{
		capture_sdk_errors();
		auto topology = softdpu::device::Topology::builtin_default(softdpu::device::Side::dpu);
		ASSERT_TRUE(topology.topology) << topology.error;
		scoped_ = std::make_unique<softdpu::device::testing::ScopedTopology>(topology.topology);
		ASSERT_EQ(doca_devinfo_create_list(&list_, &count_), DOCA_SUCCESS);
		for (uint32_t i = 0; i < count_ && dev_ == nullptr; ++i) {
			char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
			ASSERT_EQ(doca_devinfo_get_ibdev_name(list_[i], ibdev, sizeof(ibdev)), DOCA_SUCCESS);
			if (std::strcmp(ibdev, "mlx5_0") == 0) {
				ASSERT_EQ(doca_dev_open(list_[i], &dev_), DOCA_SUCCESS);
			}
		}
		ASSERT_NE(dev_, nullptr);
		ASSERT_EQ(doca_devinfo_rep_create_list(dev_, DOCA_DEVINFO_REP_FILTER_NET, &reps_, &rep_count_),
			  DOCA_SUCCESS);
		ASSERT_GT(rep_count_, 0u);
		ASSERT_EQ(doca_dev_rep_open(reps_[0], &rep_), DOCA_SUCCESS);
		ctx_ = doca_apsh_create();
		ASSERT_EQ(doca_apsh_dma_dev_set(ctx_, dev_), DOCA_SUCCESS);
		ASSERT_EQ(doca_apsh_start(ctx_), DOCA_SUCCESS);
		dir_ = fs::temp_directory_path() / ("apsh_robustness." + std::to_string(::getpid()));
		fs::create_directories(dir_);
	}

	void TearDown() override
	{
		if (system_ != nullptr)
			doca_apsh_system_destroy(system_);
		if (ctx_ != nullptr)
			doca_apsh_destroy(ctx_);
		if (rep_ != nullptr)
			doca_dev_rep_close(rep_);
		if (reps_ != nullptr)
			doca_devinfo_rep_destroy_list(reps_);
		if (dev_ != nullptr)
			doca_dev_close(dev_);
		if (list_ != nullptr)
			doca_devinfo_destroy_list(list_);
		::unsetenv("SOFTDPU_APSH_MEMORY");
		std::error_code ignored;
		fs::remove_all(dir_, ignored);
	}

	fs::path write(const std::string &name, const std::vector<uint8_t> &bytes)
	{
		const fs::path path = dir_ / name;
		std::ofstream(path, std::ios::binary)
		    .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
		return path;
	}

	// Starts a system on "<kind>:<path>"; returns the start's result and the SDK errors it logged.
	doca_error_t start(const std::string &source, std::string &errors, double &seconds)
	{
		::setenv("SOFTDPU_APSH_MEMORY", source.c_str(), 1);
		if (system_ != nullptr)
			doca_apsh_system_destroy(system_);
		system_ = doca_apsh_system_create(ctx_);
		EXPECT_EQ(doca_apsh_sys_os_type_set(system_, DOCA_APSH_SYSTEM_LINUX), DOCA_SUCCESS);
		EXPECT_EQ(doca_apsh_sys_dev_set(system_, rep_), DOCA_SUCCESS);
		sdk_errors().clear();
		const auto begin = std::chrono::steady_clock::now();
		const doca_error_t result = doca_apsh_system_start(system_);
		seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
		errors.clear();
		for (const std::string &error : sdk_errors())
			errors += error;
		return result;
	}

	// System start fails with INITIALIZATION, within the time limit, with an error containing `why`.
	void expect_refused(const std::string &source, const std::string &why, double limit_s = 20)
	{
		SCOPED_TRACE(source);
		std::string errors;
		double seconds = 0;
		EXPECT_EQ(start(source, errors, seconds), DOCA_ERROR_INITIALIZATION);
		EXPECT_NE(errors.find(why), std::string::npos) << errors;
		EXPECT_LT(seconds, limit_s);
		// Queries on the failed system are refused, not crashes.
		doca_apsh_process **processes = nullptr;
		int count = 0;
		EXPECT_NE(doca_apsh_processes_get(system_, &processes, &count), DOCA_SUCCESS);
	}

	std::unique_ptr<softdpu::device::testing::ScopedTopology> scoped_;
	doca_devinfo **list_ = nullptr;
	uint32_t count_ = 0;
	doca_dev *dev_ = nullptr;
	doca_devinfo_rep **reps_ = nullptr;
	uint32_t rep_count_ = 0;
	doca_dev_rep *rep_ = nullptr;
	doca_apsh_ctx *ctx_ = nullptr;
	doca_apsh_system *system_ = nullptr;
	fs::path dir_;
};

// Fast pseudo-random bytes (xorshift64*).
std::vector<uint8_t> random_bytes(size_t size, uint64_t seed)
{
	std::vector<uint8_t> bytes(size);
	uint64_t x = seed | 1;
	for (size_t i = 0; i + 8 <= size; i += 8) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		const uint64_t value = x * 0x2545F4914F6CDD1Dull;
		std::memcpy(bytes.data() + i, &value, 8);
	}
	return bytes;
}

} // namespace

TEST_F(ApshRobustness, NotAMemoryImage)
{
	std::vector<uint8_t> text(1000);
	for (size_t i = 0; i < text.size(); ++i)
		text[i] = static_cast<uint8_t>("not a memory image\n"[i % 19]);
	const fs::path file = write("notes.txt", text);
	expect_refused("raw:" + file.string(), "not a memory image");
	expect_refused("auto:" + file.string(), "not a memory image");
	expect_refused("elf_core:" + file.string(), file.string());
	expect_refused("lime:" + file.string(), file.string());
	expect_refused("raw:" + (dir_ / "missing.raw").string(), "missing.raw");
	const fs::path empty = write("empty.raw", {});
	expect_refused("raw:" + empty.string(), "empty.raw");
}

TEST_F(ApshRobustness, TruncatedElfCoreAndLime)
{
	// An ELF core whose RAM segment (64 MiB) runs past the end of the file (1 MiB).
	std::vector<uint8_t> core(64, 0);
	core[0] = 0x7f, core[1] = 'E', core[2] = 'L', core[3] = 'F', core[4] = 2, core[5] = 1, core[6] = 1;
	put<uint16_t>(core, 16, 4);  // ET_CORE
	put<uint16_t>(core, 18, 62); // x86-64
	put<uint64_t>(core, 32, 64); // program headers
	put<uint16_t>(core, 54, 56);
	put<uint16_t>(core, 56, 1);
	put<uint32_t>(core, 64, 1);              // PT_LOAD
	put<uint64_t>(core, 64 + 8, 4096);       // offset
	put<uint64_t>(core, 64 + 24, 0);         // paddr
	put<uint64_t>(core, 64 + 32, 64u << 20); // filesz
	put<uint64_t>(core, 64 + 40, 64u << 20); // memsz
	core.resize(1u << 20, 0);
	expect_refused("elf_core:" + write("cut.elf", core).string(), "truncated");
	expect_refused("auto:" + (dir_ / "cut.elf").string(), "truncated");

	// LiME: one range [1 MiB, 65 MiB) announced, 1 MiB of it present.
	std::vector<uint8_t> lime;
	put<uint32_t>(lime, 0, 0x4C694D45);
	put<uint32_t>(lime, 4, 1);
	put<uint64_t>(lime, 8, 1u << 20);
	put<uint64_t>(lime, 16, (65u << 20) - 1); // inclusive end
	put<uint64_t>(lime, 24, 0);
	lime.resize(32 + (1u << 20), 0);
	expect_refused("lime:" + write("cut.lime", lime).string(), "truncated");
	expect_refused("auto:" + (dir_ / "cut.lime").string(), "truncated");
}

TEST_F(ApshRobustness, RandomDataTheSizeOfRam)
{
	// 256 MiB, as the test guest: every scan for the kernel's notes and tables covers it all.
	const fs::path file = write("random.raw", random_bytes(256u << 20, 42));
	expect_refused("raw:" + file.string(), "not a memory image");
	expect_refused("auto:" + file.string(), "not a memory image");
}

TEST_F(ApshRobustness, AnotherOsWithDecoys)
{
	// 64 MiB of zeros with a DOS/PE header, other kernels' banners, and Linux-looking decoys: a
	// banner, VMCOREINFO keys outside any ELF note, and a note header with garbage sizes.
	std::vector<uint8_t> image(64u << 20, 0);
	auto text = [&](size_t at, const char *value) { std::memcpy(image.data() + at, value, std::strlen(value)); };
	text(0x100000, "MZ\x90");
	put<uint32_t>(image, 0x10003c, 0x80);
	text(0x100080, "PE\0\0");
	text(0x200000, "FreeBSD 14.0-RELEASE #0 releng/14.0-n265380-f9716eee8ab4: GENERIC amd64");
	text(0x201000, "Microsoft Windows NT 10.0.22631");
	text(0x300000, "Linux version 6.1.0-56-amd64 (debian-kernel@lists.debian.org) (gcc-12)");
	text(0x301000, "OSRELEASE=6.1.0-56-amd64\nPAGESIZE=4096\nSYMBOL(init_uts_ns)=ffffffff82a13f00\n");
	put<uint32_t>(image, 0x302000, 11);         // namesz
	put<uint32_t>(image, 0x302004, 0x7fffffff); // descsz: far beyond the image
	put<uint32_t>(image, 0x302008, 0);
	text(0x30200c, "VMCOREINFO");
	text(0x302018, "OSRELEASE=6.1.0-56-amd64\n");
	for (size_t i = 0x1000000; i < 0x1100000; i += 8) // a page-table-like area of present entries
		put<uint64_t>(image, i, 0x2000067 + ((i - 0x1000000) << 9));
	const fs::path file = write("other-os.raw", image);
	expect_refused("raw:" + file.string(), "not a memory image");
}
