#include "device/link/link_stats.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/unique_fd.hpp"

namespace softdpu::device {

namespace {

// "SDPLSTAT" as the file's first eight bytes (little-endian).
constexpr uint64_t kMagic = 0x5441'5453'4c50'4453ULL;
constexpr uint32_t kVersion = 1;
constexpr size_t kFileSize = 4096;

// The file: a header, then the counters (64 bytes in all, one page on disk).
struct FileLayout {
	uint64_t magic; // written last (release), read first (acquire): the rest is then complete
	uint32_t version;
	uint32_t pid;
	LinkStats stats;
};
static_assert(sizeof(FileLayout) == 64 && alignof(LinkStats) == 8);

std::string system_reason(const char *what, const std::string &path)
{
	return std::string(what) + "(" + path + "): " + std::strerror(errno);
}

bool same_file(int fd, const std::string &path)
{
	struct stat by_fd {};
	struct stat by_path {};
	return fstat(fd, &by_fd) == 0 && stat(path.c_str(), &by_path) == 0 && by_fd.st_dev == by_path.st_dev &&
	       by_fd.st_ino == by_path.st_ino;
}

struct flock whole_file(short type)
{
	struct flock lock {};
	lock.l_type = type;
	lock.l_whence = SEEK_SET;
	lock.l_start = 0;
	lock.l_len = 0; // the whole file
	return lock;
}

// The keeper's lock: an OFD lock (it belongs to the open file, not the process, and goes with
// the last fd closed; a reader's F_OFD_GETLK does not disturb it, as a flock(LOCK_SH) would).
bool lock_file(int fd)
{
	struct flock lock = whole_file(F_WRLCK);
	return fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

// Whether some open file holds a lock on fd's file: its keeper is alive.
bool kept(int fd)
{
	struct flock lock = whole_file(F_WRLCK);
	return fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

uint64_t load(const uint64_t &value)
{
	return std::atomic_ref<const uint64_t>(value).load(std::memory_order_relaxed);
}

} // namespace

std::string link_stats_path(std::string_view run_dir, std::string_view link, LinkRole end)
{
	return link_socket_directory(run_dir) + "/" + std::string(link) + "." + to_string(end) + ".stats";
}

LinkStatsFile::LinkStatsFile(std::string path, int fd, void *map) noexcept
    : path_(std::move(path)), fd_(fd), map_(map), stats_(&static_cast<FileLayout *>(map)->stats)
{
}

LinkStatsFile::Created LinkStatsFile::create(const std::string &path, uint32_t pid)
{
	Created result;
	// The keeper holds an OFD write lock on the file at path (a reader tests it with F_OFD_GETLK,
	// which takes nothing, so a reader never makes a keeper fail). A new keeper locks whatever is at
	// path (a stale file or an empty one it creates), builds the new file under another name and
	// renames it over: a reader that has the stale file mapped keeps it, whole (a file is never
	// shrunk under a mapping: no SIGBUS), and one that opens path sees a finished file or the old one.
	// A keeper that is leaving unlinks the file before it lets go of the lock: a file locked here
	// but no longer at path is such a one's (or one just replaced), and we start again.
	for (int attempt = 0; attempt < 8; ++attempt) {
		common::UniqueFd old(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
		if (!old.valid()) {
			result.error = Error::system;
			result.reason = system_reason("open", path);
			return result;
		}
		if (!lock_file(old.get())) {
			const int err = errno;
			FileLayout header{};
			const bool known = pread(old.get(), &header, sizeof(header), 0) == ssize_t(sizeof(header)) &&
					   header.magic == kMagic;
			if (err == EAGAIN || err == EACCES) {
				result.error = Error::in_use;
				result.reason =
				    known ? "kept by process " + std::to_string(header.pid) : "kept by another process";
			} else {
				errno = err;
				result.error = Error::system;
				result.reason = system_reason("fcntl(F_OFD_SETLK)", path);
			}
			return result;
		}
		if (!same_file(old.get(), path))
			continue;
		const std::string building = path + "." + std::to_string(pid) + ".new";
		unlink(building.c_str()); // one left by an earlier process with our pid
		common::UniqueFd fd(open(building.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
		if (!fd.valid()) {
			result.error = Error::system;
			result.reason = system_reason("open", building);
			return result;
		}
		void *map = MAP_FAILED;
		const char *failed = nullptr;
		if (ftruncate(fd.get(), kFileSize) != 0)
			failed = "ftruncate";
		else if (!lock_file(fd.get()))
			failed = "fcntl(F_OFD_SETLK)";
		else if (map = mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
			 map == MAP_FAILED)
			failed = "mmap";
		if (failed == nullptr) {
			auto *layout = static_cast<FileLayout *>(map);
			layout->version = kVersion;
			layout->pid = pid;
			layout->stats = LinkStats{};
			std::atomic_ref<uint64_t>(layout->magic).store(kMagic, std::memory_order_release);
			if (rename(building.c_str(), path.c_str()) != 0)
				failed = "rename";
		}
		if (failed != nullptr) {
			result.error = Error::system;
			result.reason = system_reason(failed, failed == std::string("rename") ? building : path);
			if (map != MAP_FAILED)
				munmap(map, kFileSize);
			unlink(building.c_str());
			return result;
		}
		result.file.reset(new LinkStatsFile(path, fd.get(), map));
		fd.release();
		return result;
	}
	result.error = Error::system;
	result.reason = "open(" + path + "): the file keeps being replaced";
	return result;
}

LinkStatsFile::~LinkStatsFile()
{
	// Unlinked while still locked: a reader never sees a file that is locked by nobody yet ours.
	if (same_file(fd_, path_))
		unlink(path_.c_str());
	munmap(map_, kFileSize);
	close(fd_);
}

std::optional<LinkStatsReading> read_link_stats(const std::string &path)
{
	const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return std::nullopt;
	std::optional<LinkStatsReading> reading;
	struct stat st {};
	if (kept(fd) && fstat(fd, &st) == 0 && size_t(st.st_size) >= sizeof(FileLayout)) {
		void *map = mmap(nullptr, sizeof(FileLayout), PROT_READ, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED) {
			const auto *layout = static_cast<const FileLayout *>(map);
			if (std::atomic_ref<const uint64_t>(layout->magic).load(std::memory_order_acquire) == kMagic &&
			    layout->version == kVersion) {
				LinkStatsReading out;
				out.pid = layout->pid;
				out.stats.rx = {load(layout->stats.rx.packets), load(layout->stats.rx.bytes),
						load(layout->stats.rx.drops)};
				out.stats.tx = {load(layout->stats.tx.packets), load(layout->stats.tx.bytes),
						load(layout->stats.tx.drops)};
				reading = out;
			}
			munmap(map, sizeof(FileLayout));
		}
	}
	close(fd);
	return reading;
}

} // namespace softdpu::device
