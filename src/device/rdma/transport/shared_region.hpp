// SharedRegion: shared memory another process may map (see transport.hpp).
#pragma once

#include "common/unique_fd.hpp"
#include "device/rdma/transport/status.hpp"

#include <fcntl.h>

#include <cstddef>
#include <cstdint>

namespace softdpu::device::rdma::transport {

// The seals every region carries: it never grows or shrinks (so no peer can make a mapping of it
// fault), and the seals never change.
inline constexpr unsigned kRegionSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW;

// size rounded up to whole pages.
size_t round_to_pages(size_t size) noexcept;

// A memfd of whole pages, mapped read-write (read-only for map_received(..., writable=false)),
// unmapped and closed by the destructor. Movable.
class SharedRegion {
public:
	SharedRegion() = default;
	SharedRegion(SharedRegion &&other) noexcept;
	SharedRegion &operator=(SharedRegion &&other) noexcept;
	SharedRegion(const SharedRegion &) = delete;
	SharedRegion &operator=(const SharedRegion &) = delete;
	~SharedRegion();

	// A new zero-filled region of round_to_pages(size) bytes (size > 0), sealed with kRegionSeals.
	// name shows in /proc/<pid>/fd (as "/memfd:<name>"). extra_seals are added after this
	// process's mapping is made (F_SEAL_FUTURE_WRITE: no other process can map it writable).
	// invalid_argument, system_error.
	static Status create(size_t size, const char *name, SharedRegion *out, unsigned extra_seals = 0) noexcept;

	// Maps a region another process sent (fd is duplicated; the caller keeps its own). Refused
	// (Status::refused, logged) unless fd is a memfd carrying kRegionSeals, whose size is exactly
	// round_to_pages(expected_size), and (writable) that can be mapped writable (a region sealed
	// against writes cannot).
	static Status map_received(int fd, size_t expected_size, SharedRegion *out, bool writable = true) noexcept;

	void *data() const noexcept { return data_; }
	size_t size() const noexcept { return size_; }
	int fd() const noexcept { return fd_.get(); }
	bool valid() const noexcept { return data_ != nullptr; }

private:
	void reset() noexcept;

	common::UniqueFd fd_;
	void *data_ = nullptr;
	size_t size_ = 0;
};

// What a received descriptor is: a memfd (its seals and size through *seals and *size), an eventfd,
// or something else. Reads /proc/self/fd/<fd>.
enum class FdKind : uint32_t { other = 0, memfd = 1, eventfd = 2 };
FdKind classify_fd(int fd, unsigned *seals, size_t *size) noexcept;

} // namespace softdpu::device::rdma::transport
