// The memif control channel: AF_UNIX SOCK_SEQPACKET sockets carrying 128-byte messages, with at
// most one file descriptor per message (SCM_RIGHTS).
#pragma once

#include "memif/protocol.hpp"
#include "memif/support.hpp"

#include <sys/socket.h>
#include <sys/un.h>

namespace softdpu::memif {

// A socket name: a filesystem path, or (leading '@') an abstract name.
struct SocketAddress {
	sockaddr_un address{};
	socklen_t length = 0;
	bool abstract = false;
};

// Parses `name`; MEMIF_ERR_INVAL_ARG when empty or too long for sockaddr_un.
int make_socket_address(const char *name, SocketAddress &out);

// Creates a listening socket (SO_PASSCRED, backlog 1). A stale filesystem socket is replaced;
// another kind of file at the path gives MEMIF_ERR_FILE_NOT_SOCK.
int listen_on(const SocketAddress &address, UniqueFd &out);

// Connects a new non-blocking client socket (a full listener backlog fails with MEMIF_ERR_AGAIN).
int connect_to(const SocketAddress &address, UniqueFd &out);

// A received message with the fd it carried (if any).
struct ReceivedMessage {
	Message message;
	UniqueFd fd;
};

// Receives one message. Returns MEMIF_ERR_SUCCESS, MEMIF_ERR_DISCONNECTED (peer closed),
// MEMIF_ERR_AGAIN (nothing to read), MEMIF_ERR_MFMSG / MEMIF_ERR_UNKNOWN_MSG (bad message; the
// reason says why) or a system error.
int receive_message(int socket_fd, ReceivedMessage &out, const char **reason);

// Sends one message, optionally with a file descriptor.
int send_message(int socket_fd, const Message &message, int fd_to_pass = -1);

} // namespace softdpu::memif
