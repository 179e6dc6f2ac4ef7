// Packet links between emulated functions (docs/links.md). Every function with an Ethernet network
// interface has a packet port; a function and its DPU representor are the two ends of one link (a
// frame sent on one end arrives at the other, in order and unmodified: switchdev with no offload
// rules); a DPU PF's port is an uplink, whose other end is outside the emulated system. A link is
// a memif connection: one socket per link in the run-time directory, served by one end (the memif
// master) and connected to by the other (the slave). Pure functions of the topology.
#pragma once

#include "device/topology.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::device {

enum class LinkKind : uint8_t {
	representor, // a host function (or DPU SF) <-> its representor on the DPU
	uplink,      // a DPU PF (p0, p1) <-> the outside (another memif peer)
	external,    // another function with no representor <-> the outside
};

enum class LinkRole : uint8_t { server, client }; // memif master (listens) / slave (connects)

const char *to_string(LinkKind kind) noexcept;
const char *to_string(LinkRole role) noexcept;

// One end of a link: a function, a representor, or the outside (owner empty).
struct LinkEnd {
	std::string owner;      // function or representor name; empty for the outside end
	std::string iface;      // its network interface; empty for the outside end
	Side side = Side::host; // where the owner lives (representors: dpu); unused for the outside end
	LinkRole role = LinkRole::server;

	bool is_outside() const noexcept { return owner.empty(); }
};

struct Link {
	std::string name; // the representor's name for a representor link, else the function's
	LinkKind kind = LinkKind::representor;
	std::string socket;         // memif control socket path
	uint32_t interface_id = 0;  // memif interface id on that socket
	uint32_t buffer_size = 0;   // memif buffer size: one buffer holds a 9000-byte frame
	uint8_t log2_ring_size = 0; // memif ring size
	LinkEnd server;             // serves the socket: the DPU end (representor, uplink PF)
	LinkEnd client;             // connects: the host function, or the outside
};

inline constexpr uint32_t kLinkBufferSize = 16384;
inline constexpr uint8_t kLinkLog2RingSize = 10;
// sun_path holds 108 bytes, the NUL included.
inline constexpr size_t kLinkMaxSocketPath = 107;

// The socket of link `name` under run-time directory run_dir: "<run_dir>/links/<name>.sock".
std::string link_socket_path(std::string_view run_dir, std::string_view name);
// The directory that holds every link's socket: "<run_dir>/links".
std::string link_socket_directory(std::string_view run_dir);

struct LinkTable {
	std::vector<Link> links; // in topology order: functions (host, then DPU), then uplinks' order
	std::string error;       // set when a socket path is longer than kLinkMaxSocketPath (links empty)
};

// Every link of the topology (both sides, whatever side the process sees), sockets under run_dir.
LinkTable links_of(const Topology &topology, std::string_view run_dir);

// The link that function or representor `name` is an end of, and which end: nullopt when it has
// none (no such name, no network interface, InfiniBand, an emulated representor).
struct LinkEndRef {
	const Link *link = nullptr;
	bool is_server = false; // name is the link's server end (else its client end)
};
std::optional<LinkEndRef> find_link_end(const LinkTable &table, std::string_view name) noexcept;

} // namespace softdpu::device
