// The bound side's one message to a connector (internal to connection.cpp; tests forge it to play a
// lying peer).
#pragma once

#include "device/rdma/transport/connection.hpp"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace softdpu::device::rdma::transport {

inline constexpr uint64_t kReplyMagic = 0x594c504552414452ull; // "RDAREPLY"
inline constexpr uint32_t kReplyVersion = 1;
inline constexpr uint32_t kReplyOk = 0;
inline constexpr uint32_t kReplyRefused = 1;

struct FdDesc {
	uint32_t kind; // FdKind
	uint32_t reserved;
	uint64_t size; // memfd: its size
};

struct Reply {
	uint64_t magic;
	uint32_t version;
	uint32_t status;
	uint32_t qpn;
	uint32_t fd_count; // bound descriptors; the table's two follow them
	uint32_t info_len;
	uint32_t reserved;
	FdDesc fds[kMaxBoundFds];
	uint8_t info[kMaxInfoBytes];
};

inline constexpr size_t kMaxSentFds = kMaxBoundFds + 2;

// The abstract socket address of (this process's euid, fabric, qpn); *len its length.
void make_address(std::string_view fabric, uint32_t qpn, struct sockaddr_un *addr, socklen_t *len) noexcept;

} // namespace softdpu::device::rdma::transport
