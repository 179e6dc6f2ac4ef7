// The devargs of doca_dpdk_port_probe, parsed: pure text functions (no DPDK, no topology), so they
// are unit-tested and fuzzed directly (fuzz/dpdk_devargs_fuzz.cpp).
//
// Devargs are DPDK's "key=value" (or "key") items separated by commas; a comma inside brackets
// belongs to the value ("representor=vf[0,2]", "representor=[pf0vf0,pf0sf0]"). The representor
// values follow DPDK's representor syntax (rte_eth_devargs, DPDK 22.11, and its mlx5 driver; the
// bracketed list of representors is DPDK 24.03's) as docs/dpdk-bridge.md tabulates it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace softdpu::dpdk_bridge {

struct Devargs {
	std::vector<std::pair<std::string, std::string>> items;
	std::vector<std::string> representors; // the value of each representor= item, in order
	std::string error;                     // set when the string is refused
};
// Refuses an empty item, an item without a key, a key outside [A-Za-z0-9_-], unbalanced
// brackets, and any item that is a PCI address ([domain:]bus:devid.func).
Devargs parse_devargs(std::string_view text);

enum class RepresentorKind : uint8_t {
	host_pf, // the host PF's representor (pfNhpf): "pfN", "vf65535", "vf-1", "sf65535"
	vf,      // a host VF's (pfNvfM)
	sf,      // a DPU SF's (pfNsfM)
};

// One representor a representor= value names.
struct RepresentorSelector {
	std::optional<uint16_t> pf; // "pfN" given: the DPU PF N; none: the probed PF
	RepresentorKind kind = RepresentorKind::vf;
	uint16_t number = 0; // the VF or SF number; 0 for host_pf

	// "pf0vf1", "vf1", "pf1hpf", "hpf": for messages.
	std::string spelling() const;
	friend bool operator==(const RepresentorSelector &, const RepresentorSelector &) = default;
};

struct RepresentorList {
	std::vector<RepresentorSelector> selectors; // in the order written, each once
	std::string error;                          // set when the value is refused
};

// Every list ([...], a-b ranges) holds at most this many numbers (as DPDK's RTE_MAX_ETHPORTS
// bounds its lists), and one value names at most kMaxRepresentors representors.
inline constexpr size_t kMaxListValues = 32;
inline constexpr size_t kMaxRepresentors = 256;

// Parses one representor= value. Refuses what DPDK refuses (a "pf" list followed by anything but
// vf/sf, an unclosed bracket, a reversed range, a number above 65535, trailing text) and the
// controller prefix "c<N>" (softdpu emulates one host, no multi-host controllers).
RepresentorList parse_representor(std::string_view value);

} // namespace softdpu::dpdk_bridge
