// Fixture of the cross-process tests: this process plays one side (ScopedTopology), xproc_peer
// the other.
#pragma once

#include "device/topology.hpp"
#include "xproc_peer/xproc_support.hpp"

#include <doca_sync_event.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace xproc_test {

inline std::unique_ptr<Peer> start_peer(const char *side)
{
	return std::make_unique<Peer>(XPROC_PEER_PATH, std::vector<std::string>{},
				      std::vector<std::string>{std::string("SOFTDPU_SIDE=") + side});
}

// This process as one side of the built-in topology for the test's duration.
class SideGuard {
public:
	explicit SideGuard(softdpu::device::Side side)
	    : scoped_(softdpu::device::Topology::builtin_default(side).topology)
	{
	}

private:
	softdpu::device::testing::ScopedTopology scoped_;
};

struct Export {
	std::vector<uint8_t> blob;
	uint64_t addr = 0;
};

// Asks the peer to export `bytes` filled with pattern `seed`; fails the test if it cannot.
inline Export peer_export(Peer &peer, const char *pci, size_t bytes, uint32_t permissions, const char *kind = "pci",
			  uint32_t seed = 1, int nth = 0)
{
	const std::string reply =
	    peer.call("export " + std::string(pci) + " " + std::to_string(nth) + " " + std::to_string(bytes) + " " +
		      std::to_string(permissions) + " " + kind + " " + std::to_string(seed));
	const std::vector<std::string> w = words(reply);
	Export out;
	EXPECT_EQ(w.size(), 3u) << reply;
	if (w.size() == 3 && w[0] == "ok") {
		out.blob = from_hex(w[1]);
		out.addr = std::stoull(w[2], nullptr, 16);
	}
	return out;
}

// Local and PCI read/write access: what an exporter of host memory for DMA grants.
inline constexpr uint32_t kReadWrite = DOCA_ACCESS_FLAG_PCI_READ_WRITE | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;

// A started mmap over `memory` for device dev with access `permissions`; nullptr if a call failed.
inline doca_mmap *started_mmap(std::vector<uint8_t> &memory, doca_dev *dev, uint32_t permissions)
{
	doca_mmap *mmap = nullptr;
	if (doca_mmap_create(&mmap) != DOCA_SUCCESS)
		return nullptr;
	if (doca_mmap_set_memrange(mmap, memory.data(), memory.size()) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(mmap, permissions) != DOCA_SUCCESS ||
	    doca_mmap_add_dev(mmap, dev) != DOCA_SUCCESS || doca_mmap_start(mmap) != DOCA_SUCCESS) {
		doca_mmap_destroy(mmap);
		return nullptr;
	}
	return mmap;
}

// A sync event the CPU of dev publishes and the DPU subscribes to, as an export to the DPU needs;
// not started. nullptr if a call failed.
inline doca_sync_event *cpu_to_dpu_event(doca_dev *dev)
{
	doca_sync_event *event = nullptr;
	if (doca_sync_event_create(&event) != DOCA_SUCCESS)
		return nullptr;
	if (doca_sync_event_add_publisher_location_cpu(event, dev) != DOCA_SUCCESS ||
	    doca_sync_event_add_subscriber_location_dpu(event) != DOCA_SUCCESS) {
		doca_sync_event_destroy(event);
		return nullptr;
	}
	return event;
}

// A local mmap over `bytes` of this process's memory for device dev.
struct LocalMemory {
	LocalMemory(doca_dev *dev, size_t bytes) : data(bytes)
	{
		doca_mmap_create(&mmap);
		doca_mmap_set_memrange(mmap, data.data(), data.size());
		doca_mmap_add_dev(mmap, dev);
		doca_mmap_start(mmap);
	}
	~LocalMemory() { doca_mmap_destroy(mmap); }
	std::vector<uint8_t> data;
	doca_mmap *mmap = nullptr;
};

} // namespace xproc_test
