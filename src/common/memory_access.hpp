// What this process's address space allows over a range of addresses, from /proc/self/maps:
// doca_mmap_start refuses memory that a device could not register (unmapped, or without the access
// its flags ask for), as memory registration does on hardware. Reads the file into a fixed buffer:
// no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace softdpu::common {

enum class RangeAccess : uint8_t {
	ok,       // every byte is mapped with the access asked for
	unmapped, // some byte is not mapped at all (*first_bad says where)
	no_read,  // some byte is mapped without read access
	no_write, // write access was asked for and some byte is mapped read-only
	unknown,  // /proc/self/maps could not be read (*first_bad unset)
};

// Checks [addr, addr + len); len > 0 and the range must not wrap (callers check).
RangeAccess check_range_access(uintptr_t addr, size_t len, bool need_write, uintptr_t *first_bad) noexcept;

const char *to_string(RangeAccess access) noexcept;

// Reads one byte of every page of [addr, addr + len) through process_vm_readv on this process,
// which fails where a plain load would raise SIGSEGV or SIGBUS (an unmapped page, a file mapping
// past the end of its file), as memory registration faults every page in on hardware. ok or
// unmapped (*first_bad set); unknown when the system call itself is refused (seccomp).
RangeAccess probe_range(uintptr_t addr, size_t len, uintptr_t *first_bad) noexcept;

} // namespace softdpu::common
