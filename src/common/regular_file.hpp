// Opening a file the user named, to read it as data: only a regular file (or, where a caller means
// it, a block device) is opened. A FIFO would block the open until a writer comes, a character
// device runs its driver on open (and /dev/zero never ends), a directory is no data. The path is
// checked with stat before opening, then opened with O_NONBLOCK (a FIFO put in its place meanwhile
// cannot block the open) and what was opened is checked again with fstat. The error texts do not
// name the path; callers prefix it: "is a directory", "not a regular file (a FIFO)",
// "cannot open file: No such file or directory", "larger than 1048576 bytes, the limit for ...".
#pragma once

#include "common/unique_fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace softdpu::common {

// "a FIFO", "a character device", "a socket", ... (for messages).
const char *file_kind(mode_t mode);

enum class FileKinds {
	regular,                // regular files only
	regular_or_block_device // also block devices (a disk image on a raw device)
};

struct OpenedFile {
	UniqueFd fd;       // read-only, O_CLOEXEC, blocking again (O_NONBLOCK cleared)
	uint64_t size = 0; // st_size, or the device size for a block device
	bool block_device = false;
	int error_number = 0; // on failure: errno of the call that failed (0: the file was refused)
};

// Opens path read-only when it is a file of the accepted kinds; else error says why.
bool open_data_file(const std::string &path, FileKinds kinds, OpenedFile &out, std::string &error);

// Reads a whole regular file of at most max_bytes (the limit is checked again while reading: the
// file may grow after fstat). limit_for names what the limit is for, in the too-large message
// ("a topology file" gives "larger than N bytes, the limit for a topology file").
bool read_small_file(const std::string &path, uint64_t max_bytes, const char *limit_for, std::string &out,
		     std::string &error);

} // namespace softdpu::common
