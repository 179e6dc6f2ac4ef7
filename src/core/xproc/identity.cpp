#include "core/xproc/identity.hpp"

#include "common/bytes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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
		const int v = common::hex_digit(text[i]);
		if (v < 0)
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

namespace {

struct StatFields {
	char state = '?';
	uint64_t start_time = 0;
};

enum class StatRead { ok, gone, unknown };

// Fields 3 (state) and 22 (start time) of /proc/<pid>/stat.
StatRead read_stat(uint32_t pid, StatFields *out) noexcept
{
	char path[48];
	std::snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? StatRead::gone : StatRead::unknown;
	char text[1024];
	const ssize_t n = read(fd, text, sizeof(text) - 1);
	const int saved_errno = errno;
	close(fd);
	if (n <= 0)
		return n < 0 && saved_errno == ESRCH ? StatRead::gone : StatRead::unknown;
	text[n] = '\0';
	// comm (field 2) is in parentheses and may hold spaces or ')': fields resume after the last ')'.
	const char *p = std::strrchr(text, ')');
	if (p == nullptr)
		return StatRead::unknown;
	++p;
	while (*p == ' ')
		++p;
	out->state = *p;
	// After ')' comes field 3 (state); start time is field 22, i.e. the 20th field from here.
	for (int field = 3; field < 22; ++field) {
		while (*p == ' ')
			++p;
		while (*p != ' ' && *p != '\0')
			++p;
		if (*p == '\0')
			return StatRead::unknown;
	}
	while (*p == ' ')
		++p;
	char *end = nullptr;
	const unsigned long long value = std::strtoull(p, &end, 10);
	if (end == p)
		return StatRead::unknown;
	out->start_time = static_cast<uint64_t>(value);
	return StatRead::ok;
}

// A zombie thread-group leader whose other threads still run (it called pthread_exit, or the group
// is being killed and a thread is still finishing a system call) is not gone yet.
Liveness zombie_leader(uint32_t pid) noexcept
{
	char path[48];
	std::snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *dir = opendir(path);
	if (dir == nullptr)
		return errno == ENOENT || errno == ESRCH ? Liveness::gone : Liveness::unknown;
	int threads = 0;
	while (const dirent *entry = readdir(dir))
		if (entry->d_name[0] != '.')
			++threads;
	closedir(dir);
	return threads > 1 ? Liveness::alive : Liveness::gone;
}

} // namespace

uint64_t process_start_time(uint32_t pid) noexcept
{
	StatFields fields;
	if (pid == 0 || read_stat(pid, &fields) != StatRead::ok)
		return 0;
	// A process that has exited but was not reaped yet keeps its /proc entry; it has no live
	// identity any more.
	if (fields.state == 'Z' || fields.state == 'X' || fields.state == 'x')
		return 0;
	return fields.start_time;
}

Liveness process_liveness(uint32_t pid, uint64_t start_time) noexcept
{
	if (pid == 0 || start_time == 0)
		return Liveness::gone;
	StatFields fields;
	switch (read_stat(pid, &fields)) {
	case StatRead::gone:
		return Liveness::gone;
	case StatRead::unknown:
		return Liveness::unknown;
	case StatRead::ok:
		break;
	}
	if (fields.start_time != start_time)
		return Liveness::gone; // the pid now belongs to another process
	if (fields.state == 'Z' || fields.state == 'X' || fields.state == 'x')
		return zombie_leader(pid);
	return Liveness::alive;
}

bool process_is(uint32_t pid, uint64_t start_time) noexcept
{
	return process_liveness(pid, start_time) == Liveness::alive;
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

namespace {

std::atomic<uint64_t> g_fork_epoch{0};

void on_fork_child() noexcept
{
	g_fork_epoch.fetch_add(1, std::memory_order_relaxed);
}

// Registered when the library loads, before any import can exist.
[[maybe_unused]] const int g_fork_hook = pthread_atfork(nullptr, nullptr, on_fork_child);

} // namespace

uint64_t fork_epoch() noexcept
{
	return g_fork_epoch.load(std::memory_order_relaxed);
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
