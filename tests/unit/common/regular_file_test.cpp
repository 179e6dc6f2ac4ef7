// common::open_data_file and read_small_file: only regular files (and block devices where a caller
// accepts them) are opened; a FIFO never blocks the open.
#include "common/regular_file.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace softdpu::common;

namespace {

class TempDir {
public:
	TempDir()
	    : path_(std::filesystem::temp_directory_path() /
		    ("softdpu_regular_file_test." + std::to_string(::getpid()) + "." +
		     ::testing::UnitTest::GetInstance()->current_test_info()->name()))
	{
		std::filesystem::create_directories(path_);
	}
	~TempDir()
	{
		std::error_code ignored;
		std::filesystem::remove_all(path_, ignored);
	}
	std::string path(const char *name) const { return (path_ / name).string(); }
	std::string file(const char *name, const std::string &content) const
	{
		std::ofstream(path(name), std::ios::binary) << content;
		return path(name);
	}

private:
	std::filesystem::path path_;
};

TEST(RegularFile, ReadsARegularFileUpToItsLimit)
{
	TempDir dir;
	std::string text, error;
	const std::string path = dir.file("ten", "0123456789");
	ASSERT_TRUE(read_small_file(path, 10, "a test file", text, error)) << error;
	EXPECT_EQ(text, "0123456789");
	EXPECT_FALSE(read_small_file(path, 9, "a test file", text, error));
	EXPECT_EQ(error, "larger than 9 bytes, the limit for a test file");
	EXPECT_TRUE(text.empty());
	ASSERT_TRUE(read_small_file(dir.file("empty", ""), 9, "a test file", text, error)) << error;
	EXPECT_TRUE(text.empty());

	OpenedFile opened;
	ASSERT_TRUE(open_data_file(path, FileKinds::regular, opened, error)) << error;
	EXPECT_EQ(opened.size, 10u);
	EXPECT_FALSE(opened.block_device);
	EXPECT_EQ(::fcntl(opened.fd.get(), F_GETFL) & O_NONBLOCK, 0); // blocking again once checked
	EXPECT_NE(::fcntl(opened.fd.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(RegularFile, RefusesWhatIsNotARegularFile)
{
	TempDir dir;
	OpenedFile opened;
	std::string error;
	EXPECT_FALSE(open_data_file(dir.path(""), FileKinds::regular, opened, error));
	EXPECT_EQ(error, "is a directory");
	EXPECT_EQ(opened.error_number, 0);
	EXPECT_FALSE(open_data_file("/dev/null", FileKinds::regular, opened, error));
	EXPECT_EQ(error, "not a regular file (a character device)");
	EXPECT_FALSE(open_data_file("/dev/zero", FileKinds::regular_or_block_device, opened, error));
	EXPECT_EQ(error, "not a regular file or block device (a character device)");
	EXPECT_FALSE(open_data_file(dir.path("missing"), FileKinds::regular, opened, error));
	EXPECT_EQ(error, "cannot open file: No such file or directory");
	EXPECT_EQ(opened.error_number, ENOENT);
	EXPECT_FALSE(opened.fd.valid());
}

TEST(RegularFile, FifoIsRefusedWithoutBlocking)
{
	TempDir dir;
	const std::string fifo = dir.path("fifo");
	ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
	std::promise<std::string> done;
	auto result = done.get_future();
	std::thread reader([&] {
		std::string text, error;
		read_small_file(fifo, 100, "a test file", text, error);
		done.set_value(error);
	});
	if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
		ADD_FAILURE() << "opening a FIFO blocked";
		const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC); // unblocks it
		reader.join();
		::close(writer);
		return;
	}
	reader.join();
	EXPECT_EQ(result.get(), "not a regular file (a FIFO)");
}

TEST(RegularFile, BlockDevicesOnlyWhereAccepted)
{
	// Any block device node this machine has will do; none is opened unless accepted.
	std::string device;
	for (const auto &entry : std::filesystem::directory_iterator("/dev")) {
		struct stat info {};
		if (::stat(entry.path().c_str(), &info) == 0 && S_ISBLK(info.st_mode) &&
		    ::access(entry.path().c_str(), R_OK) == 0) {
			device = entry.path();
			break;
		}
	}
	if (device.empty())
		GTEST_SKIP() << "no readable block device in /dev";
	OpenedFile opened;
	std::string error;
	EXPECT_FALSE(open_data_file(device, FileKinds::regular, opened, error));
	EXPECT_EQ(error, "not a regular file (a block device)");
	if (!open_data_file(device, FileKinds::regular_or_block_device, opened, error))
		GTEST_SKIP() << device << ": " << error; // e.g. an empty loop device: no medium
	EXPECT_TRUE(opened.block_device);
}

} // namespace
