// The emulated system: host and DPU PCI functions, the DPU's representors of host functions, and
// each function's capabilities. A process sees one side of it (SOFTDPU_SIDE); the whole topology
// (SOFTDPU_TOPOLOGY or the built-in default, see docs/topology.md) is loaded once per process.
#pragma once

#include "device/memory_source.hpp"
#include "device/pci_address.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::device {

enum class Side : uint8_t { host, dpu };

// Values equal enum doca_pci_func_type's.
enum class FuncType : uint8_t { pf = 0, vf = 1, sf = 2 };

enum class LinkLayer : uint8_t { ethernet, infiniband };

const char *to_string(Side side) noexcept;
const char *to_string(FuncType type) noexcept;
const char *to_string(LinkLayer layer) noexcept;

// What a local device can do. Defaults depend on side and function type (see default_capabilities);
// a topology file may override each field. mmap_max_devices is per device here although DOCA
// keeps the limit per mmap: an mmap accepts no more devices than the smallest mmap_max_devices of
// its devices (and than doca_mmap_set_max_num_devices, which doca_mmap_get_max_num_devices reports).
struct Capabilities {
	bool dma_memcpy = true;
	uint64_t dma_max_buf_size = 2ull << 30; // 2 GiB
	uint32_t dma_max_buf_list_len = 32;
	uint32_t dma_max_num_tasks = 65536;
	bool mmap_export_pci = true;
	bool mmap_export_rdma = true;
	bool mmap_create_from_export_pci = false;
	bool sync_event_export_to_dpu = false;
	bool sync_event_create_from_export = false;
	bool hotplug_manager = false;
	bool rep_filter_all = false;
	bool rep_filter_net = false;
	bool rep_filter_emulated = false;
	uint32_t mmap_max_devices = 64;

	friend bool operator==(const Capabilities &, const Capabilities &) = default;
};

// Defaults for a function of this side and type before the topology file's "caps" apply.
Capabilities default_capabilities(Side side, FuncType type) noexcept;

using MacAddress = std::array<uint8_t, 6>;
using Ipv4Address = std::array<uint8_t, 4>;
using Ipv6Address = std::array<uint8_t, 16>;

// "02:5d:00:0b:00:00", "192.168.100.1", "fd00:5d:b::1" (inet_ntop's forms).
std::string to_string(const MacAddress &mac);
std::string to_string(const Ipv4Address &address);
std::string to_string(const Ipv6Address &address);

// One local device: a PCI function (PF, VF) or a sub-function (SF, which has its parent's PCI address).
struct Function {
	std::string name; // unique in the topology, e.g. "pf0vf1", "p0", "p0s0"
	Side side = Side::host;
	FuncType type = FuncType::pf;
	PciAddress pci;
	const Function *parent = nullptr; // the PF of a VF or SF; null for a PF
	std::string ibdev;                // e.g. "mlx5_0"
	std::string iface;                // netdev name; empty when the function has none
	std::string vuid;                 // vendor unique id, stable across reboots
	std::optional<MacAddress> mac;
	std::optional<Ipv4Address> ipv4;
	std::optional<Ipv6Address> ipv6;
	LinkLayer link_layer = LinkLayer::ethernet;
	uint16_t lid = 0;      // port LID, meaningful for InfiniBand only
	bool available = true; // false: the driver cannot open it (doca_dev_open -> NOT_CONNECTED)
	Capabilities caps;
};

// A DPU-side representor of a function: a host PF/VF, a DPU SF, or an emulated (hot-plugged) host
// function such as a virtio-net or NVMe device that has no local Function of its own.
struct Representor {
	std::string name;                     // e.g. "hpf0vf0", "pf0sf0"
	const Function *manager = nullptr;    // the DPU PF that lists it (p0 or p1)
	const Function *represents = nullptr; // the represented function; null for emulated ones
	FuncType type = FuncType::pf;
	PciAddress pci;        // the represented function's address (host BDF for host functions)
	std::string vuid;      // the represented function's VUID
	std::string iface;     // representor netdev on the DPU, e.g. "pf0hpf"; may be empty
	std::string emulation; // empty for net representors; e.g. "virtio-net", "nvme"
	bool hotplug = false;
	std::optional<MemorySource> memory; // the watched system's RAM, for App Shield; optional

	bool is_emulated() const noexcept { return !emulation.empty(); }
};

class Topology {
public:
	// The process topology, loaded on first use from SOFTDPU_TOPOLOGY (or the built-in default)
	// and seen from SOFTDPU_SIDE. Thread-safe. Null when loading failed; see current_error(). A load
	// that ran out of memory is not remembered (*out_of_memory is set): the next call tries again.
	static const Topology *current() noexcept;
	static std::shared_ptr<const Topology> current_shared(bool *out_of_memory = nullptr) noexcept;
	// Why current() is null: "<file>: <json path>: <reason>". Empty after a successful load.
	static const std::string &current_error() noexcept;

	// Parses a topology document; the whole text is validated before anything is returned.
	// source names the text in error messages (a file path, or "<built-in>").
	struct ParseResult {
		std::shared_ptr<const Topology> topology;
		std::string error;          // set exactly when topology is null
		bool out_of_memory = false; // the text may be fine: memory ran out while reading it
	};
	static ParseResult parse(std::string_view text, std::string_view source, Side side);
	// Reads a regular file of at most kMaxFileBytes, then parses it; anything else (a directory, a
	// FIFO, /dev/zero, a larger file) is refused without reading it all.
	static constexpr size_t kMaxFileBytes = 1 << 20;
	static ParseResult load_file(const std::string &path, Side side);
	static ParseResult builtin_default(Side side);
	// The JSON text of the built-in default topology (also shown by docs/topology.md).
	static std::string_view builtin_default_text() noexcept;

	Side side() const noexcept { return side_; }
	const std::string &source() const noexcept { return source_; }

	// Local devices of this process's side, in listing order (PFs, their VFs/SFs, ...).
	const std::vector<const Function *> &local_functions() const noexcept { return local_; }
	// Every function of both sides, and every representor (only listed on the DPU side).
	const std::vector<std::unique_ptr<Function>> &all_functions() const noexcept { return functions_; }
	const std::vector<std::unique_ptr<Representor>> &representors() const noexcept { return representors_; }

	// Representors managed by a DPU PF, in topology order; empty for any other function.
	std::vector<const Representor *> representors_of_manager(const Function &manager) const;

	const Function *find_function(std::string_view name) const noexcept;
	const Function *find_function(Side side, const PciAddress &pci) const noexcept; // PF/VF only
	const Function *find_function_by_vuid(std::string_view vuid) const noexcept;
	const Representor *find_representor(std::string_view name) const noexcept;

	// Host <-> DPU matching (Core guide): the DPU representor of a host function or DPU SF...
	const Representor *representor_of(const Function &function) const noexcept;
	// ...and the DPU PF whose side of the card the host function lives on (host pf0 and its VFs
	// -> p0): the device to use on the DPU for memory the host exports from this function.
	const Function *dpu_manager_of(const Function &host_function) const noexcept;
	// Host <-> DPU matching (Core guide, "Local Device and Representor Matching"): whether DPU
	// function dpu_function reaches host_function over PCI, i.e. is the PF that manages
	// host_function's representor or one of that PF's SFs. The one rule for importing host exports
	// (mmaps and sync events); what a function may import is its capabilities' business.
	bool reaches_over_pci(const Function &dpu_function, const Function &host_function) const noexcept;
	// The reverse: host functions (PFs and VFs) whose representors a DPU PF manages.
	std::vector<const Function *> host_functions_of(const Function &dpu_manager) const;

	uint32_t max_open_devices() const noexcept { return max_open_devices_; }

	Topology(const Topology &) = delete;
	Topology &operator=(const Topology &) = delete;

private:
	Topology() = default;
	friend class TopologyBuilder;

	Side side_ = Side::dpu;
	std::string source_;
	uint32_t max_open_devices_ = 256;
	std::vector<std::unique_ptr<Function>> functions_;
	std::vector<std::unique_ptr<Representor>> representors_;
	std::vector<const Function *> local_;
};

// SOFTDPU_SIDE: "host" or "dpu" (default "dpu"); nullopt when set to anything else.
std::optional<Side> side_from_environment() noexcept;

namespace testing {
// Replaces the process topology until the returned guard is destroyed (tests only). Objects built
// on the old topology stay valid: every topology that was current is kept alive.
class ScopedTopology {
public:
	explicit ScopedTopology(std::shared_ptr<const Topology> topology);
	~ScopedTopology();
	ScopedTopology(const ScopedTopology &) = delete;
	ScopedTopology &operator=(const ScopedTopology &) = delete;

private:
	std::shared_ptr<const Topology> previous_;
	std::string previous_error_;
};
// Makes current() fail with this error message while the guard lives.
class ScopedTopologyError {
public:
	explicit ScopedTopologyError(std::string error);
	~ScopedTopologyError();
	ScopedTopologyError(const ScopedTopologyError &) = delete;
	ScopedTopologyError &operator=(const ScopedTopologyError &) = delete;

private:
	std::shared_ptr<const Topology> previous_;
	std::string previous_error_;
};
} // namespace testing

} // namespace softdpu::device
