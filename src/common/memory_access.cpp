#include "common/memory_access.hpp"

#include "common/bytes.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace softdpu::common {

namespace {

// One line of /proc/self/maps: "start-end perms offset dev inode path".
struct MapsLine {
	uintptr_t start = 0;
	uintptr_t end = 0;
	bool read = false;
	bool write = false;
};

bool parse_hex(const char *&p, const char *end, uintptr_t *out) noexcept
{
	std::string_view text(p, static_cast<size_t>(end - p));
	const auto value = consume_hex(text);
	if (!value || static_cast<uintptr_t>(*value) != *value)
		return false;
	*out = static_cast<uintptr_t>(*value);
	p = text.data();
	return true;
}

bool parse_line(const char *p, const char *end, MapsLine *line) noexcept
{
	if (!parse_hex(p, end, &line->start) || p >= end || *p++ != '-' || !parse_hex(p, end, &line->end) ||
	    end - p < 3 || *p++ != ' ')
		return false;
	line->read = p[0] == 'r';
	line->write = p[1] == 'w';
	return line->end > line->start;
}

} // namespace

RangeAccess check_range_access(uintptr_t addr, size_t len, bool need_write, uintptr_t *first_bad) noexcept
{
	int fd;
	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return RangeAccess::unknown;
	// The lines are sorted by address; `next` is the first byte not yet known to be usable.
	uintptr_t next = addr;
	const uintptr_t last = addr + (len - 1);
	RangeAccess result = RangeAccess::unknown;
	char buf[4096];
	size_t have = 0;
	bool eof = false;
	bool skipping = false; // inside the rest of a line longer than buf (a very long path)
	for (;;) {
		if (!eof && have < sizeof(buf)) {
			const ssize_t n = read(fd, buf + have, sizeof(buf) - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			eof = n == 0;
			have += static_cast<size_t>(n);
		}
		if (have == 0 && eof) {
			*first_bad = next;
			result = RangeAccess::unmapped;
			break;
		}
		const auto *newline = static_cast<const char *>(std::memchr(buf, '\n', have));
		if (newline == nullptr && !eof && have < sizeof(buf))
			continue;
		const char *line_end = newline != nullptr ? newline : buf + have;
		const size_t used = newline != nullptr ? static_cast<size_t>(newline - buf) + 1 : have;
		MapsLine line;
		if (!skipping && parse_line(buf, line_end, &line) && line.end > next) {
			if (line.start > next)
				result = RangeAccess::unmapped;
			else if (!line.read)
				result = RangeAccess::no_read;
			else if (need_write && !line.write)
				result = RangeAccess::no_write;
			else if (line.end - 1 >= last)
				result = RangeAccess::ok;
			else
				next = line.end;
			if (result != RangeAccess::unknown) {
				if (result != RangeAccess::ok)
					*first_bad = next;
				break;
			}
		}
		skipping = newline == nullptr;
		std::memmove(buf, buf + used, have - used);
		have -= used;
	}
	close(fd);
	return result;
}

RangeAccess probe_range(uintptr_t addr, size_t len, uintptr_t *first_bad) noexcept
{
	constexpr size_t kPages = 1024; // UIO_MAXIOV
	const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
	const uintptr_t last = addr + (len - 1);
	uint8_t sink[kPages];
	struct iovec local = {sink, 0};
	struct iovec remote[kPages];
	uintptr_t at = addr;
	for (;;) {
		size_t count = 0;
		for (; count < kPages; ++count) {
			remote[count] = {reinterpret_cast<void *>(at), 1};
			const uintptr_t next = (at & ~(page - 1)) + page;
			if (next == 0 || next > last) {
				++count;
				break;
			}
			at = next;
		}
		local.iov_len = count;
		const ssize_t n = process_vm_readv(getpid(), &local, 1, remote, count, 0);
		if (n < 0 && errno != EFAULT)
			return RangeAccess::unknown;
		if (n != static_cast<ssize_t>(count)) {
			*first_bad = reinterpret_cast<uintptr_t>(remote[n < 0 ? 0 : n].iov_base);
			return RangeAccess::unmapped;
		}
		const uintptr_t done = reinterpret_cast<uintptr_t>(remote[count - 1].iov_base);
		if ((done & ~(page - 1)) + page - 1 >= last)
			return RangeAccess::ok;
		at = (done & ~(page - 1)) + page;
	}
}

const char *to_string(RangeAccess access) noexcept
{
	switch (access) {
	case RangeAccess::ok:
		return "mapped with the access asked for";
	case RangeAccess::unmapped:
		return "not mapped (or not backed: reading it faults)";
	case RangeAccess::no_read:
		return "mapped without read access";
	case RangeAccess::no_write:
		return "mapped read-only, but write access was asked for";
	case RangeAccess::unknown:
		break;
	}
	return "of unknown access (/proc/self/maps could not be read)";
}

} // namespace softdpu::common
