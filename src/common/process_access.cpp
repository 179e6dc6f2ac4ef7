#include "common/process_access.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace softdpu::common {

void allow_same_user_access() noexcept
{
	const int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char c = '0';
	const ssize_t n = read(fd, &c, 1);
	close(fd);
	if (n == 1 && c == '1')
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

bool process_exited(uint32_t pid) noexcept
{
	if (pid == 0)
		return false;
	const int fd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
	if (fd < 0)
		return errno == ESRCH;
	// A pidfd polls readable once the process has exited (zombie included).
	struct pollfd p = {fd, POLLIN, 0};
	const int ready = poll(&p, 1, 0);
	close(fd);
	return ready == 1 && (p.revents & POLLIN) != 0;
}

} // namespace softdpu::common
