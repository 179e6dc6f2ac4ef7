#include "core/xproc/identity.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace softdpu::xproc {

namespace {

BootId read_boot_id() noexcept
{
	BootId id{};
	const int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return id;
	char text[64] = {};
	const ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return id;
	// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n": 32 hex digits.
	size_t out = 0;
	int high = -1;
	for (ssize_t i = 0; i < n && out < id.size(); ++i) {
		const char c = text[i];
		int v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			continue;
		if (high < 0) {
			high = v;
		} else {
			id[out++] = static_cast<uint8_t>(high << 4 | v);
			high = -1;
		}
	}
	return id;
}

} // namespace

uint64_t process_start_time(uint32_t pid) noexcept
{
	if (pid == 0)
		return 0;
	char path[48];
	std::snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char text[1024];
	const ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	// comm (field 2) is in parentheses and may hold spaces or ')': fields resume after the last ')'.
	const char *p = std::strrchr(text, ')');
	if (p == nullptr)
		return 0;
	++p;
	// A process that has exited but was not reaped yet (zombie, or dead) keeps its /proc entry;
	// it can no longer be inside an access, so it has no live identity.
	while (*p == ' ')
		++p;
	if (*p == 'Z' || *p == 'X' || *p == 'x')
		return 0;
	// After ')' comes field 3 (state); start time is field 22, i.e. the 20th field from here.
	for (int field = 3; field < 22; ++field) {
		while (*p == ' ')
			++p;
		while (*p != ' ' && *p != '\0')
			++p;
		if (*p == '\0')
			return 0;
	}
	while (*p == ' ')
		++p;
	char *end = nullptr;
	const unsigned long long value = std::strtoull(p, &end, 10);
	return end == p ? 0 : static_cast<uint64_t>(value);
}

bool process_is(uint32_t pid, uint64_t start_time) noexcept
{
	return start_time != 0 && process_start_time(pid) == start_time;
}

const ProcessIdentity &self_identity() noexcept
{
	static std::mutex mutex;
	static ProcessIdentity identity;
	static thread_local ProcessIdentity cached;
	const auto pid = static_cast<uint32_t>(getpid());
	if (cached.pid == pid)
		return cached;
	std::lock_guard lock(mutex);
	if (identity.pid != pid) {
		ProcessIdentity fresh;
		fresh.pid = pid;
		fresh.start_time = process_start_time(pid);
		fresh.uid = static_cast<uint32_t>(getuid());
		fresh.boot_id = read_boot_id();
		identity = fresh;
	}
	cached = identity;
	return cached;
}

bool random_bytes(void *out, size_t len) noexcept
{
	auto *p = static_cast<uint8_t *>(out);
	while (len > 0) {
		const ssize_t n = getrandom(p, len, 0);
		if (n <= 0)
			return false;
		p += n;
		len -= static_cast<size_t>(n);
	}
	return true;
}

} // namespace softdpu::xproc
