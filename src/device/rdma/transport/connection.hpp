// Addressing, connections and one-sided remote memory access between processes of one machine
// (see transport.hpp for the whole interface and the protocol).
#pragma once

#include "device/rdma/transport/memory_table.hpp"
#include "device/rdma/transport/shared_region.hpp"
#include "device/rdma/transport/status.hpp"

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::device::rdma::transport {

inline constexpr uint32_t kMinQpn = 0x100;
inline constexpr uint32_t kMaxQpn = 0xFFFFFF;
inline constexpr size_t kMaxFabricName = 64;
inline constexpr size_t kMaxBoundFds = 16;
inline constexpr size_t kMaxInfoBytes = 1024;
// How long connect() waits for the bound process's agent to answer.
inline constexpr int kConnectTimeoutMs = 5000;

// Called on the agent thread when a connection ends (the other process exited, or closed its
// Binding or Peer): the pid of the other process. Must not wait for a thread that is destroying a
// Binding, Peer or Ticker.
using DisconnectCallback = std::function<void(uint32_t pid)>;

struct BindingState;
struct PeerConnection;

// A queue pair's address: a qpn unique on the machine for its fabric name, bound while the object
// lives. Every process that connects receives fds and info.
class Binding {
public:
	// fabric: 1..kMaxFabricName printable characters ("host/pf0"). fds (at most kMaxBoundFds):
	// memfds made by SharedRegion::create (the connector maps them read-write) or eventfds; they
	// are duplicated. info: at most kMaxInfoBytes opaque bytes. on_disconnect (may be empty): a
	// connected process went away. invalid_argument, no_resources (no free qpn), system_error.
	static Status bind(std::string_view fabric, std::span<const int> fds, std::span<const uint8_t> info,
			   DisconnectCallback on_disconnect, std::unique_ptr<Binding> *out) noexcept;
	// Unbinds: the qpn is free again, every connection is closed (their Peers see a disconnect).
	~Binding();
	Binding(const Binding &) = delete;
	Binding &operator=(const Binding &) = delete;

	uint32_t qpn() const noexcept { return qpn_; }
	const std::string &fabric() const noexcept { return fabric_; }

private:
	Binding() = default;
	std::shared_ptr<BindingState> state_;
	std::string fabric_;
	uint32_t qpn_ = 0;
	uint64_t listener_id_ = 0;
};

// One remote operation of a batch; status is set by write_batch/read_batch.
struct RemoteOp {
	const struct iovec *local = nullptr; // this process's buffers, in order; their total is the length
	size_t local_count = 0;
	uint32_t key = 0;         // the target's registration
	uint64_t remote_addr = 0; // in the registration's iova space
	Status status = Status::ok;
};

// A connection to the process that bound (fabric, qpn): what it sent, its memory table, and
// one-sided access to its registered memory. Thread-safe after connect().
class Peer {
public:
	// not_found: nobody bound it; refused (logged): another user, or it sent something invalid
	// (descriptors that are not memfds with kRegionSeals of their declared size or eventfds, a
	// malformed message, a table that does not validate); peer_gone: it closed before answering;
	// invalid_argument; no_resources; system_error.
	static Status connect(std::string_view fabric, uint32_t qpn, DisconnectCallback on_disconnect,
			      std::unique_ptr<Peer> *out) noexcept;
	// Closes the connection (the Binding's side sees a disconnect).
	~Peer();
	Peer(const Peer &) = delete;
	Peer &operator=(const Peer &) = delete;

	uint32_t pid() const noexcept { return pid_; }
	uint32_t qpn() const noexcept { return qpn_; }
	const std::vector<uint8_t> &info() const noexcept { return info_; }
	// The descriptors the Binding gave, in its order: memfds (mapped read-write: region(i)) and
	// eventfds (notify(i)).
	size_t fd_count() const noexcept { return kinds_.size(); }
	FdKind fd_kind(size_t index) const noexcept { return index < kinds_.size() ? kinds_[index] : FdKind::other; }
	SharedRegion *region(size_t index) noexcept;
	// The connection ended (seen by the agent thread or by a failed access): every access now
	// returns peer_gone.
	bool gone() const noexcept;

	// Writes 1 to eventfd `index`. invalid_argument (not an eventfd), peer_gone.
	Status notify(size_t index) noexcept;

	// One-sided copies into / out of the peer's registered memory, checked against its table:
	// key valid (state, tag), [remote_addr, remote_addr + total) inside the registration, access
	// bits required_access granted, pd_id equal to the registration's. The local iovecs total the
	// length (0 is allowed: only the key, access and PD are checked). ok, remote_access_error,
	// peer_gone, local_fault, no_resources (more than IOV_MAX local iovecs).
	Status write(const struct iovec *local, size_t local_count, uint32_t key, uint64_t remote_addr, uint32_t pd_id,
		     uint32_t required_access = kAccessRemoteWrite) noexcept;
	Status read(const struct iovec *local, size_t local_count, uint32_t key, uint64_t remote_addr, uint32_t pd_id,
		    uint32_t required_access = kAccessRemoteRead) noexcept;
	// Many operations, as few system calls as IOV_MAX allows (one for up to 1024 small writes);
	// each op's status is set as by write/read. Returns the number of ops that are ok.
	size_t write_batch(RemoteOp *ops, size_t count, uint32_t pd_id,
			   uint32_t required_access = kAccessRemoteWrite) noexcept;
	size_t read_batch(RemoteOp *ops, size_t count, uint32_t pd_id,
			  uint32_t required_access = kAccessRemoteRead) noexcept;
	// write_batch in order, as a queue pair's requests run: an op the target's table refuses
	// stops the batch there, and the ops after it are not copied (Status::skipped). Returns the
	// number of leading ops that are ok.
	size_t write_ordered(RemoteOp *ops, size_t count, uint32_t pd_id,
			     uint32_t required_access = kAccessRemoteWrite) noexcept;

	// Remote atomics on 8 bytes at remote_addr (8-aligned: else remote_invalid_request), atomic
	// against every other softdpu atomic on that memory (never against plain CPU stores of the
	// target). *original: the value before. ok, remote_access_error, remote_invalid_request,
	// peer_gone, system_error.
	Status compare_swap(uint32_t key, uint64_t remote_addr, uint64_t compare, uint64_t swap, uint32_t pd_id,
			    uint64_t *original, uint32_t required_access = kAccessRemoteAtomic) noexcept;
	Status fetch_add(uint32_t key, uint64_t remote_addr, uint64_t add, uint32_t pd_id, uint64_t *original,
			 uint32_t required_access = kAccessRemoteAtomic) noexcept;

private:
	Peer() = default;
	Status transfer(bool write, RemoteOp *ops, size_t count, uint32_t pd_id, uint32_t required_access,
			size_t *ok_count, bool ordered = false) noexcept;
	Status atomic(uint32_t key, uint64_t remote_addr, bool cas, uint64_t compare, uint64_t value, uint32_t pd_id,
		      uint32_t required_access, uint64_t *original) noexcept;
	Status copy_failed(int err, bool write, const struct iovec *local, size_t local_count) noexcept;

	std::shared_ptr<PeerConnection> conn_;
	std::shared_ptr<RemoteTable> table_;
	std::vector<FdKind> kinds_;
	std::vector<SharedRegion> regions_;
	std::vector<common::UniqueFd> eventfds_;
	std::vector<uint8_t> info_;
	uint32_t pid_ = 0;
	uint32_t qpn_ = 0;
	uint64_t conn_id_ = 0;
};

// A periodic callback on the agent thread, every kTickPeriodUs while any Ticker lives; stopped
// (and not running) once the destructor returns (unless destroyed from its own callback).
inline constexpr unsigned kTickPeriodUs = 1000;
class Ticker {
public:
	static Status start(std::function<void()> tick, std::unique_ptr<Ticker> *out) noexcept;
	~Ticker();
	Ticker(const Ticker &) = delete;
	Ticker &operator=(const Ticker &) = delete;

private:
	Ticker() = default;
	void *agent_ = nullptr;
	uint64_t id_ = 0;
};

} // namespace softdpu::device::rdma::transport
