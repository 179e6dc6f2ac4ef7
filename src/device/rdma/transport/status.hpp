// The outcome of a transport operation (see transport.hpp for the whole interface).
#pragma once

#include <cstdint>

namespace softdpu::device::rdma::transport {

enum class Status : uint8_t {
	ok,
	remote_access_error,    // the target's table refused: key, tag, range, access bits or PD
	remote_invalid_request, // the request itself is malformed for the target (misaligned atomic)
	peer_gone,              // the peer process exited (or closed the connection)
	local_fault,            // our own memory (a local iovec) is not accessible
	not_found,              // connect: nobody bound that (fabric, qpn)
	refused,                // connect: the peer is another user, or sent something invalid
	invalid_argument,       // the caller's arguments are wrong (logged)
	no_resources,           // a table is full, no qpn left, too many iovecs or descriptors
	system_error,           // a system call failed unexpectedly (logged)
	skipped,                // an ordered batch stopped before this op (nothing of it was copied)
};

const char *to_string(Status status) noexcept;

} // namespace softdpu::device::rdma::transport
