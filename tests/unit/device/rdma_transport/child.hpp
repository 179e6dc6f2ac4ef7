// Helpers of the transport tests: a forked child with a message channel, and Status printing.
#pragma once

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>

#include "device/rdma/transport/transport.hpp"

namespace softdpu::device::rdma::transport {
inline void PrintTo(Status status, std::ostream *os)
{
	*os << to_string(status);
}
} // namespace softdpu::device::rdma::transport

namespace transport_test {

// Whole messages over a stream socket; false on end, error or timeout.
inline bool send_all(int fd, const void *data, size_t len)
{
	const auto *p = static_cast<const char *>(data);
	while (len > 0) {
		const ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		p += n;
		len -= static_cast<size_t>(n);
	}
	return true;
}

inline bool recv_all(int fd, void *data, size_t len, int timeout_ms = 20000)
{
	auto *p = static_cast<char *>(data);
	while (len > 0) {
		struct pollfd pfd = {fd, POLLIN, 0};
		if (poll(&pfd, 1, timeout_ms) != 1)
			return false;
		const ssize_t n = ::recv(fd, p, len, 0);
		if (n <= 0)
			return false;
		p += n;
		len -= static_cast<size_t>(n);
	}
	return true;
}

inline bool send_u64(int fd, uint64_t v)
{
	return send_all(fd, &v, sizeof(v));
}
inline uint64_t recv_u64(int fd)
{
	uint64_t v = ~0ull;
	if (!recv_all(fd, &v, sizeof(v)))
		return ~0ull;
	return v;
}

// A forked child that runs fn(channel) and _exits with its result; killed (SIGKILL) and reaped
// by the destructor if still there.
class Child {
public:
	explicit Child(const std::function<int(int channel)> &fn)
	{
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			return;
		pid_ = fork();
		if (pid_ == 0) {
			close(sv[0]);
			_exit(fn(sv[1]));
		}
		close(sv[1]);
		fd_ = sv[0];
	}
	~Child()
	{
		if (pid_ > 0 && !reaped_) {
			kill(pid_, SIGKILL);
			waitpid(pid_, nullptr, 0);
		}
		if (fd_ >= 0)
			close(fd_);
	}
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;

	pid_t pid() const { return pid_; }
	int fd() const { return fd_; }
	bool send(uint64_t v) const { return send_u64(fd_, v); }
	uint64_t recv() const { return recv_u64(fd_); }
	// Exit code, or -signal; waits at most timeout_ms (then kills it and returns -1000).
	int wait_exit(int timeout_ms = 20000)
	{
		for (int waited = 0; waited < timeout_ms; waited += 5) {
			int status = 0;
			const pid_t r = waitpid(pid_, &status, WNOHANG);
			if (r == pid_) {
				reaped_ = true;
				return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
			}
			usleep(5000);
		}
		return -1000;
	}
	void kill9()
	{
		kill(pid_, SIGKILL);
		int status = 0;
		waitpid(pid_, &status, 0);
		reaped_ = true;
	}

private:
	pid_t pid_ = -1;
	int fd_ = -1;
	bool reaped_ = false;
};

// A fabric name of this test process, so concurrent test runs never meet.
inline std::string fabric(const char *what)
{
	return "test" + std::to_string(getpid()) + "/" + what;
}

} // namespace transport_test
