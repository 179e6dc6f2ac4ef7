#include "device/rdma/transport/shared_region.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/sdk_log.hpp"

namespace softdpu::device::rdma::transport {

const char *to_string(Status status) noexcept
{
	switch (status) {
	case Status::ok:
		return "ok";
	case Status::remote_access_error:
		return "remote access error";
	case Status::remote_invalid_request:
		return "remote invalid request";
	case Status::peer_gone:
		return "peer gone";
	case Status::local_fault:
		return "local memory fault";
	case Status::not_found:
		return "not found";
	case Status::refused:
		return "refused";
	case Status::invalid_argument:
		return "invalid argument";
	case Status::no_resources:
		return "no resources";
	case Status::system_error:
		return "system error";
	case Status::skipped:
		return "skipped";
	}
	return "unknown status";
}

size_t round_to_pages(size_t size) noexcept
{
	const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	if (size > SIZE_MAX - (page - 1))
		return 0;
	return (size + page - 1) / page * page;
}

SharedRegion::SharedRegion(SharedRegion &&other) noexcept
    : fd_(std::move(other.fd_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0))
{
}

SharedRegion &SharedRegion::operator=(SharedRegion &&other) noexcept
{
	if (this != &other) {
		reset();
		fd_ = std::move(other.fd_);
		data_ = std::exchange(other.data_, nullptr);
		size_ = std::exchange(other.size_, 0);
	}
	return *this;
}

SharedRegion::~SharedRegion()
{
	reset();
}

void SharedRegion::reset() noexcept
{
	if (data_ != nullptr)
		munmap(data_, size_);
	data_ = nullptr;
	size_ = 0;
	fd_.reset();
}

Status SharedRegion::create(size_t size, const char *name, SharedRegion *out, unsigned extra_seals) noexcept
{
	const size_t rounded = round_to_pages(size);
	if (size == 0 || rounded == 0 || rounded > static_cast<size_t>(INT64_MAX)) {
		SDK_LOG_ERR("rdma transport: cannot create a shared region of %zu bytes", size);
		return Status::invalid_argument;
	}
	common::UniqueFd fd(static_cast<int>(
	    syscall(SYS_memfd_create, name != nullptr ? name : "softdpu-rdma", MFD_CLOEXEC | MFD_ALLOW_SEALING)));
	if (!fd.valid() || ftruncate(fd.get(), static_cast<off_t>(rounded)) != 0 ||
	    fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
		SDK_LOG_ERR("rdma transport: cannot create a shared region of %zu bytes: %s", rounded,
			    std::strerror(errno));
		return Status::system_error;
	}
	void *data = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
	if (data == MAP_FAILED) {
		SDK_LOG_ERR("rdma transport: cannot map a shared region of %zu bytes: %s", rounded,
			    std::strerror(errno));
		return Status::system_error;
	}
	// After the writable mapping exists: F_SEAL_FUTURE_WRITE leaves this one working.
	if (fcntl(fd.get(), F_ADD_SEALS, extra_seals | F_SEAL_SEAL) != 0) {
		SDK_LOG_ERR("rdma transport: cannot seal a shared region: %s", std::strerror(errno));
		munmap(data, rounded);
		return Status::system_error;
	}
	out->reset();
	out->fd_ = std::move(fd);
	out->data_ = data;
	out->size_ = rounded;
	return Status::ok;
}

FdKind classify_fd(int fd, unsigned *seals, size_t *size) noexcept
{
	*seals = 0;
	*size = 0;
	char path[64];
	char target[256];
	std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	const ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return FdKind::other;
	target[n] = '\0';
	if (std::strcmp(target, "anon_inode:[eventfd]") == 0)
		return FdKind::eventfd;
	struct stat st;
	if (std::strncmp(target, "/memfd:", 7) != 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return FdKind::other;
	// Only memfds (and hugetlbfs/shmem files made sealable) answer F_GET_SEALS.
	const int have = fcntl(fd, F_GET_SEALS);
	if (have < 0)
		return FdKind::other;
	*seals = static_cast<unsigned>(have);
	*size = static_cast<size_t>(st.st_size);
	return FdKind::memfd;
}

Status SharedRegion::map_received(int fd, size_t expected_size, SharedRegion *out, bool writable) noexcept
{
	unsigned seals = 0;
	size_t size = 0;
	const size_t expected = round_to_pages(expected_size);
	if (classify_fd(fd, &seals, &size) != FdKind::memfd) {
		SDK_LOG_ERR("rdma transport: refused a shared region: descriptor %d is not a memfd", fd);
		return Status::refused;
	}
	if ((seals & kRegionSeals) != kRegionSeals) {
		SDK_LOG_ERR("rdma transport: refused a shared region: its memfd is not sealed against growing, "
			    "shrinking and new seals (seals 0x%x)",
			    seals);
		return Status::refused;
	}
	if (expected_size == 0 || size != expected) {
		SDK_LOG_ERR("rdma transport: refused a shared region: it has %zu bytes, %zu expected", size, expected);
		return Status::refused;
	}
	common::UniqueFd own(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (!own.valid()) {
		SDK_LOG_ERR("rdma transport: cannot keep a received shared region: %s", std::strerror(errno));
		return Status::no_resources;
	}
	const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
	void *data = mmap(nullptr, size, prot, MAP_SHARED, own.get(), 0);
	if (data == MAP_FAILED) {
		const int err = errno;
		SDK_LOG_ERR("rdma transport: refused a shared region: cannot map it %s: %s",
			    writable ? "writable" : "read-only", std::strerror(err));
		return err == EPERM || err == EACCES ? Status::refused : Status::system_error;
	}
	out->reset();
	out->fd_ = std::move(own);
	out->data_ = data;
	out->size_ = size;
	return Status::ok;
}

} // namespace softdpu::device::rdma::transport
