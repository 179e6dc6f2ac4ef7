#include "common/regular_file.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace softdpu::common {

namespace {

// Why a file of this mode cannot be read as data; empty if it can.
std::string unusable(mode_t mode, FileKinds kinds)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISREG(mode) || (S_ISBLK(mode) && kinds == FileKinds::regular_or_block_device))
		return {};
	return std::string(kinds == FileKinds::regular ? "not a regular file ("
						       : "not a regular file or block device (") +
	       file_kind(mode) + ")";
}

std::string too_large(uint64_t max_bytes, const char *limit_for)
{
	return "larger than " + std::to_string(max_bytes) + " bytes, the limit for " + limit_for;
}

} // namespace

const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "of an unusual type";
}

bool open_data_file(const std::string &path, FileKinds kinds, OpenedFile &out, std::string &error)
{
	out = OpenedFile{};
	// Refused before opening when possible: opening a device node runs its driver.
	struct stat info {};
	if (::stat(path.c_str(), &info) == 0) {
		error = unusable(info.st_mode, kinds);
		if (!error.empty())
			return false;
	}
	// O_NONBLOCK: if a FIFO took the file's place since stat, the open must not wait for a writer.
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
	if (!fd.valid()) {
		out.error_number = errno;
		error = std::string("cannot open file: ") + std::strerror(errno);
		return false;
	}
	if (::fstat(fd.get(), &info) != 0) {
		out.error_number = errno;
		error = std::string("cannot stat file: ") + std::strerror(errno);
		return false;
	}
	error = unusable(info.st_mode, kinds);
	if (!error.empty())
		return false;
	const int flags = ::fcntl(fd.get(), F_GETFL);
	if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
		out.error_number = errno;
		error = std::string("cannot use file: ") + std::strerror(errno);
		return false;
	}
	out.block_device = S_ISBLK(info.st_mode);
	if (out.block_device) {
		uint64_t bytes = 0;
		if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) != 0) {
			out.error_number = errno;
			error = std::string("cannot get the block device's size: ") + std::strerror(errno);
			return false;
		}
		out.size = bytes;
	} else {
		out.size = static_cast<uint64_t>(info.st_size);
	}
	out.fd = std::move(fd);
	return true;
}

bool read_small_file(const std::string &path, uint64_t max_bytes, const char *limit_for, std::string &out,
		     std::string &error)
{
	out.clear();
	OpenedFile file;
	if (!open_data_file(path, FileKinds::regular, file, error))
		return false;
	if (file.size > max_bytes) {
		error = too_large(max_bytes, limit_for);
		return false;
	}
	out.reserve(static_cast<size_t>(file.size));
	char chunk[16384];
	for (;;) {
		const ssize_t n = ::read(file.fd.get(), chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error = std::string("read error: ") + std::strerror(errno);
			out.clear();
			return false;
		}
		if (n == 0)
			return true;
		if (out.size() + static_cast<size_t>(n) > max_bytes) {
			error = too_large(max_bytes, limit_for);
			out.clear();
			return false;
		}
		out.append(chunk, static_cast<size_t>(n));
	}
}

} // namespace softdpu::common
