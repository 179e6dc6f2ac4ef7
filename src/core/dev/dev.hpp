// The DOCA device objects behind doca_dev.h. The opaque C types are these C++ classes.
//
// Ownership: a DeviceTable exists per loaded topology and lives for the rest of the process. It
// owns one doca_devinfo per local function and one doca_devinfo_rep per representor, so list
// elements and the devinfo of an open device stay valid whatever the application destroys.
// doca_dev / doca_dev_rep are created by the first open of a devinfo and deleted by the last close.
// Objects built on a device (mmaps, contexts, representor lists, open representors) hold a "user"
// reference on it; closing the last open reference of a device that still has users is refused.
#pragma once

#include "device/topology.hpp"

#include <doca_dev.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace softdpu::dev {
class DeviceTable;
} // namespace softdpu::dev

struct doca_devinfo {
public:
	doca_devinfo(softdpu::dev::DeviceTable &table, const softdpu::device::Function &function) noexcept
	    : table_(table), function_(function)
	{
	}
	doca_devinfo(const doca_devinfo &) = delete;
	doca_devinfo &operator=(const doca_devinfo &) = delete;

	const softdpu::device::Function &function() const noexcept { return function_; }
	const softdpu::device::Capabilities &caps() const noexcept { return function_.caps; }
	softdpu::dev::DeviceTable &table() const noexcept { return table_; }
	// True when the function can list representors with at least one filter.
	bool exposes_representors() const noexcept
	{
		return caps().rep_filter_all || caps().rep_filter_net || caps().rep_filter_emulated;
	}

private:
	friend class softdpu::dev::DeviceTable;
	softdpu::dev::DeviceTable &table_;
	const softdpu::device::Function &function_;
	doca_dev *open_device_ = nullptr; // guarded by the table's mutex
};

struct doca_dev {
public:
	explicit doca_dev(doca_devinfo &devinfo) noexcept : devinfo_(devinfo) {}
	doca_dev(const doca_dev &) = delete;
	doca_dev &operator=(const doca_dev &) = delete;

	doca_devinfo &devinfo() const noexcept { return devinfo_; }
	const softdpu::device::Function &function() const noexcept { return devinfo_.function(); }
	const softdpu::device::Capabilities &caps() const noexcept { return devinfo_.caps(); }
	softdpu::device::Side side() const noexcept { return devinfo_.function().side; }

	// An object that needs this device to stay open registers itself as a user for its lifetime.
	void add_user() noexcept { users_.fetch_add(1, std::memory_order_relaxed); }
	void remove_user() noexcept { users_.fetch_sub(1, std::memory_order_release); }
	uint32_t users() const noexcept { return users_.load(std::memory_order_acquire); }

	// The verbs device the RDMA bridge opened for this device (doca_rdma_bridge.h), released by
	// `release` when the device closes. Set and read under the bridge's own lock.
	void *bridge_state() const noexcept { return bridge_state_; }
	void set_bridge_state(void *state, void (*release)(void *state)) noexcept
	{
		bridge_state_ = state;
		bridge_release_ = release;
	}
	void release_bridge_state() noexcept
	{
		if (bridge_release_ != nullptr)
			bridge_release_(bridge_state_);
		bridge_state_ = nullptr;
		bridge_release_ = nullptr;
	}
	// A device doca_rdma_bridge_open_dev_from_pd made: it has no devinfo of its own to report
	// (doca_dev_as_devinfo gives NULL) and lists no representors.
	bool from_pd() const noexcept { return from_pd_; }
	void mark_from_pd() noexcept { from_pd_ = true; }

private:
	friend class softdpu::dev::DeviceTable;
	void *bridge_state_ = nullptr;
	void (*bridge_release_)(void *state) = nullptr;
	bool from_pd_ = false;
	doca_devinfo &devinfo_;
	uint32_t open_count_ = 0; // guarded by the table's mutex
	std::atomic<uint32_t> users_{0};
};

struct doca_devinfo_rep {
public:
	doca_devinfo_rep(doca_devinfo &manager, const softdpu::device::Representor &representor) noexcept
	    : manager_(manager), representor_(representor)
	{
	}
	doca_devinfo_rep(const doca_devinfo_rep &) = delete;
	doca_devinfo_rep &operator=(const doca_devinfo_rep &) = delete;

	const softdpu::device::Representor &representor() const noexcept { return representor_; }
	// The DPU local device that lists this representor.
	doca_devinfo &manager() const noexcept { return manager_; }

private:
	friend class softdpu::dev::DeviceTable;
	doca_devinfo &manager_;
	const softdpu::device::Representor &representor_;
	doca_dev_rep *open_representor_ = nullptr; // guarded by the table's mutex
};

struct doca_dev_rep {
public:
	doca_dev_rep(doca_devinfo_rep &devinfo, doca_dev &manager) noexcept : devinfo_(devinfo), manager_(manager) {}
	doca_dev_rep(const doca_dev_rep &) = delete;
	doca_dev_rep &operator=(const doca_dev_rep &) = delete;

	doca_devinfo_rep &devinfo() const noexcept { return devinfo_; }
	const softdpu::device::Representor &representor() const noexcept { return devinfo_.representor(); }
	// The open local device through which this representor was opened (held as a user).
	doca_dev &manager() const noexcept { return manager_; }

	void add_user() noexcept { users_.fetch_add(1, std::memory_order_relaxed); }
	void remove_user() noexcept { users_.fetch_sub(1, std::memory_order_release); }
	uint32_t users() const noexcept { return users_.load(std::memory_order_acquire); }

private:
	friend class softdpu::dev::DeviceTable;
	doca_devinfo_rep &devinfo_;
	doca_dev &manager_;
	uint32_t open_count_ = 0; // guarded by the table's mutex
	std::atomic<uint32_t> users_{0};
};

namespace softdpu::dev {

// Devices of one topology, seen from its side. See the file comment for ownership.
class DeviceTable {
public:
	// The table of the current process topology; null with *error set (NOT_FOUND: the topology
	// failed to load; NO_MEMORY).
	static DeviceTable *current(doca_error_t *error) noexcept;

	explicit DeviceTable(std::shared_ptr<const device::Topology> topology);
	DeviceTable(const DeviceTable &) = delete;
	DeviceTable &operator=(const DeviceTable &) = delete;

	const device::Topology &topology() const noexcept { return *topology_; }
	const std::vector<std::unique_ptr<doca_devinfo>> &devinfos() const noexcept { return devinfos_; }
	doca_devinfo *find_devinfo(const device::Function &function) const noexcept;

	// The C API's operations; each validates what only the table can know.
	doca_error_t create_list(doca_devinfo ***list, uint32_t *count) noexcept;
	doca_error_t destroy_list(doca_devinfo **list) noexcept;
	// Lists are released without knowing their table (tests may have swapped the topology).
	static doca_error_t destroy_list_of_any_table(doca_devinfo **list) noexcept;
	static doca_error_t destroy_rep_list_of_any_table(doca_devinfo_rep **list) noexcept;
	doca_error_t open(doca_devinfo &devinfo, doca_dev **dev) noexcept;
	doca_error_t close(doca_dev &dev) noexcept;
	// A device of its own over a verbs protection domain the application made
	// (doca_rdma_bridge_open_dev_from_pd): not the devinfo's shared open device.
	doca_error_t open_from_pd(doca_devinfo &devinfo, doca_dev **dev) noexcept;
	doca_error_t create_rep_list(doca_dev &dev, int filter, doca_devinfo_rep ***list, uint32_t *count) noexcept;
	doca_error_t destroy_rep_list(doca_devinfo_rep **list) noexcept;
	doca_error_t open_rep(doca_devinfo_rep &devinfo, doca_dev_rep **rep) noexcept;
	doca_error_t close_rep(doca_dev_rep &rep) noexcept;

	// Number of devices currently open (distinct doca_dev objects).
	uint32_t open_devices() const noexcept;

private:
	struct RepList {
		doca_dev *dev;
		std::vector<doca_devinfo_rep *> entries; // NULL-terminated
	};

	std::shared_ptr<const device::Topology> topology_;
	std::vector<std::unique_ptr<doca_devinfo>> devinfos_;
	std::vector<std::unique_ptr<doca_devinfo_rep>> devinfo_reps_;
	mutable std::mutex mutex_;
	uint32_t open_devices_ = 0;
	// Outstanding lists, so destroy can tell its own lists from anything else.
	std::unordered_map<doca_devinfo **, std::vector<doca_devinfo *>> lists_;
	std::unordered_map<doca_devinfo_rep **, RepList> rep_lists_;
};

namespace testing {
// Makes the next `count` allocations done by the device layer fail as if memory ran out.
void fail_next_allocations(int count) noexcept;
} // namespace testing

} // namespace softdpu::dev
