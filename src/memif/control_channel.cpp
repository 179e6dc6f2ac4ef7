#include "memif/control_channel.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace softdpu::memif {

int errno_to_memif(int error)
{
	switch (error) {
	case 0:
		return MEMIF_ERR_SUCCESS;
	case EACCES:
	case EPERM:
		return MEMIF_ERR_ACCES;
	case ECONNREFUSED:
		return MEMIF_ERR_CONNREFUSED;
	case ENOENT:
		return MEMIF_ERR_NO_FILE;
	case ENFILE:
		return MEMIF_ERR_FILE_LIMIT;
	case EMFILE:
		return MEMIF_ERR_PROC_FILE_LIMIT;
	case ENOMEM:
		return MEMIF_ERR_NOMEM;
	case EALREADY:
		return MEMIF_ERR_ALREADY;
	case EAGAIN:
		return MEMIF_ERR_AGAIN;
	case EBADF:
		return MEMIF_ERR_BAD_FD;
	default:
		return MEMIF_ERR_SYSCALL;
	}
}

int make_socket_address(const char *name, SocketAddress &out)
{
	if (name == nullptr || name[0] == '\0')
		return MEMIF_ERR_INVAL_ARG;
	out = SocketAddress{};
	out.address.sun_family = AF_UNIX;
	const size_t length = strlen(name);
	// An abstract name "@x" becomes "\0x"; its length counts no trailing NUL (DPDK's convention).
	if (name[0] == '@') {
		if (length > sizeof out.address.sun_path)
			return MEMIF_ERR_INVAL_ARG;
		out.abstract = true;
		std::memcpy(out.address.sun_path + 1, name + 1, length - 1);
		out.length = socklen_t(offsetof(sockaddr_un, sun_path) + length);
		return MEMIF_ERR_SUCCESS;
	}
	if (length >= sizeof out.address.sun_path)
		return MEMIF_ERR_INVAL_ARG;
	std::memcpy(out.address.sun_path, name, length);
	out.length = socklen_t(offsetof(sockaddr_un, sun_path) + length + 1);
	return MEMIF_ERR_SUCCESS;
}

int listen_on(const SocketAddress &address, UniqueFd &out)
{
	if (!address.abstract) {
		struct stat info {};
		if (stat(address.address.sun_path, &info) == 0) {
			if (!S_ISSOCK(info.st_mode))
				return MEMIF_ERR_FILE_NOT_SOCK;
			unlink(address.address.sun_path); // a stale socket from an earlier listener
		}
	}
	UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!fd.valid())
		return errno_to_memif(errno);
	const int on = 1;
	if (setsockopt(fd.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
		return errno_to_memif(errno);
	if (bind(fd.get(), reinterpret_cast<const sockaddr *>(&address.address), address.length) < 0)
		return errno_to_memif(errno);
	if (listen(fd.get(), 1) < 0)
		return errno_to_memif(errno);
	out = std::move(fd);
	return MEMIF_ERR_SUCCESS;
}

int connect_to(const SocketAddress &address, UniqueFd &out)
{
	UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!fd.valid())
		return errno_to_memif(errno);
	if (connect(fd.get(), reinterpret_cast<const sockaddr *>(&address.address), address.length) < 0)
		return errno_to_memif(errno);
	out = std::move(fd);
	return MEMIF_ERR_SUCCESS;
}

int receive_message(int socket_fd, ReceivedMessage &out, const char **reason)
{
	uint8_t bytes[kMessageSize];
	iovec io{bytes, sizeof bytes};
	// Room for the fd and for the SCM_CREDENTIALS a SO_PASSCRED socket attaches to every message;
	// a smaller buffer makes the kernel drop the fd silently (MSG_CTRUNC).
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(ucred))];
	msghdr header{};
	header.msg_iov = &io;
	header.msg_iovlen = 1;
	header.msg_control = control;
	header.msg_controllen = sizeof control;

	ssize_t received = recvmsg(socket_fd, &header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (received < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return MEMIF_ERR_AGAIN;
		if (errno == ECONNRESET)
			return MEMIF_ERR_DISCONNECTED;
		return errno_to_memif(errno);
	}
	if (received == 0)
		return MEMIF_ERR_DISCONNECTED;

	// Take ownership of every passed fd first, so none leaks whatever happens next.
	int fd_count = 0;
	for (cmsghdr *cmsg = CMSG_FIRSTHDR(&header); cmsg != nullptr; cmsg = CMSG_NXTHDR(&header, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; ++i) {
			int fd;
			std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
			if (fd_count++ == 0)
				out.fd.reset(fd);
			else
				::close(fd);
		}
	}
	if ((header.msg_flags & MSG_TRUNC) != 0) {
		if (reason != nullptr)
			*reason = "Invalid message size";
		return MEMIF_ERR_MFMSG;
	}
	if ((header.msg_flags & MSG_CTRUNC) != 0 || fd_count > 1) {
		if (reason != nullptr)
			*reason = "Too many file descriptors";
		return MEMIF_ERR_MFMSG;
	}
	return decode_message(std::span<const uint8_t>(bytes, size_t(received)), out.message, reason);
}

int send_message(int socket_fd, const Message &message, int fd_to_pass)
{
	WireBuffer bytes;
	encode_message(message, bytes);
	iovec io{bytes, sizeof bytes};
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
	msghdr header{};
	header.msg_iov = &io;
	header.msg_iovlen = 1;
	if (fd_to_pass >= 0) {
		header.msg_control = control;
		header.msg_controllen = sizeof control;
		cmsghdr *cmsg = CMSG_FIRSTHDR(&header);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		std::memcpy(CMSG_DATA(cmsg), &fd_to_pass, sizeof(int));
	}
	const ssize_t sent = sendmsg(socket_fd, &header, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (sent < 0)
		return errno == EPIPE || errno == ECONNRESET ? MEMIF_ERR_DISCONNECTED : errno_to_memif(errno);
	return sent == ssize_t(kMessageSize) ? MEMIF_ERR_SUCCESS : MEMIF_ERR_SYSCALL;
}

} // namespace softdpu::memif
