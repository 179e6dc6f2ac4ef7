#include "core/dev/dev.hpp"

#include "common/injected_failures.hpp"
#include "common/sdk_log.hpp"

#include <map>
#include <new>

namespace softdpu::dev {

namespace {

common::InjectedFailures g_injected_allocation_failures;

// Test seam for the NO_MEMORY paths (testing::fail_next_allocations).
void check_allocation()
{
	if (g_injected_allocation_failures.consume())
		throw std::bad_alloc();
}

struct TableRegistry {
	std::mutex mutex;
	// Tables are never destroyed: application objects may point into any of them.
	std::map<const device::Topology *, std::unique_ptr<DeviceTable>> tables;
};

TableRegistry &table_registry()
{
	static TableRegistry registry;
	return registry;
}

bool rep_matches(const device::Representor &rep, int filter) noexcept
{
	if (filter == DOCA_DEVINFO_REP_FILTER_ALL)
		return true;
	if ((filter & DOCA_DEVINFO_REP_FILTER_NET) && !rep.is_emulated())
		return true;
	return (filter & DOCA_DEVINFO_REP_FILTER_EMULATED) && rep.is_emulated();
}

} // namespace

namespace testing {
void fail_next_allocations(int count) noexcept
{
	g_injected_allocation_failures.arm(count);
}
} // namespace testing

DeviceTable *DeviceTable::current(doca_error_t *error) noexcept
{
	bool out_of_memory = false;
	std::shared_ptr<const device::Topology> topology = device::Topology::current_shared(&out_of_memory);
	if (!topology) {
		*error = out_of_memory ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_NOT_FOUND;
		return nullptr;
	}
	TableRegistry &registry = table_registry();
	std::lock_guard lock(registry.mutex);
	try {
		auto &table = registry.tables[topology.get()];
		if (!table)
			table = std::make_unique<DeviceTable>(topology);
		return table.get();
	} catch (const std::bad_alloc &) {
		registry.tables.erase(topology.get()); // no half-made table stays behind
		*error = DOCA_ERROR_NO_MEMORY;
		return nullptr;
	}
}

DeviceTable::DeviceTable(std::shared_ptr<const device::Topology> topology) : topology_(std::move(topology))
{
	for (const device::Function *function : topology_->local_functions())
		devinfos_.push_back(std::make_unique<doca_devinfo>(*this, *function));
	for (const auto &devinfo : devinfos_) {
		if (!devinfo->exposes_representors())
			continue;
		for (const device::Representor *rep : topology_->representors_of_manager(devinfo->function()))
			devinfo_reps_.push_back(std::make_unique<doca_devinfo_rep>(*devinfo, *rep));
	}
}

doca_error_t DeviceTable::destroy_list_of_any_table(doca_devinfo **list) noexcept
{
	TableRegistry &registry = table_registry();
	std::lock_guard lock(registry.mutex);
	for (auto &[topology, table] : registry.tables)
		if (table->destroy_list(list) == DOCA_SUCCESS)
			return DOCA_SUCCESS;
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t DeviceTable::destroy_rep_list_of_any_table(doca_devinfo_rep **list) noexcept
{
	TableRegistry &registry = table_registry();
	std::lock_guard lock(registry.mutex);
	for (auto &[topology, table] : registry.tables)
		if (table->destroy_rep_list(list) == DOCA_SUCCESS)
			return DOCA_SUCCESS;
	return DOCA_ERROR_INVALID_VALUE;
}

doca_devinfo *DeviceTable::find_devinfo(const device::Function &function) const noexcept
{
	for (const auto &devinfo : devinfos_)
		if (&devinfo->function() == &function)
			return devinfo.get();
	return nullptr;
}

uint32_t DeviceTable::open_devices() const noexcept
{
	std::lock_guard lock(mutex_);
	return open_devices_;
}

doca_error_t DeviceTable::create_list(doca_devinfo ***list, uint32_t *count) noexcept
{
	try {
		check_allocation();
		std::vector<doca_devinfo *> entries;
		entries.reserve(devinfos_.size() + 1);
		for (const auto &devinfo : devinfos_)
			entries.push_back(devinfo.get());
		entries.push_back(nullptr);
		std::lock_guard lock(mutex_);
		doca_devinfo **data = entries.data();
		lists_.emplace(data, std::move(entries)); // moving a vector keeps its buffer
		*list = data;
		*count = static_cast<uint32_t>(devinfos_.size());
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to allocate the device list");
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t DeviceTable::destroy_list(doca_devinfo **list) noexcept
{
	std::lock_guard lock(mutex_);
	if (lists_.erase(list) == 0)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

doca_error_t DeviceTable::open(doca_devinfo &devinfo, doca_dev **dev) noexcept
{
	std::lock_guard lock(mutex_);
	if (devinfo.open_device_ != nullptr) {
		++devinfo.open_device_->open_count_;
		*dev = devinfo.open_device_;
		return DOCA_SUCCESS;
	}
	if (!devinfo.function().available) {
		SDK_LOG_ERR("device %s (%s) is not available: cannot open it", devinfo.function().name.c_str(),
			    devinfo.function().pci.to_string().c_str());
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (open_devices_ >= topology_->max_open_devices()) {
		SDK_LOG_ERR("cannot open device %s: %u devices already open (limit of the topology)",
			    devinfo.function().name.c_str(), open_devices_);
		return DOCA_ERROR_INITIALIZATION;
	}
	try {
		check_allocation();
		auto *opened = new doca_dev(devinfo);
		opened->open_count_ = 1;
		devinfo.open_device_ = opened;
		++open_devices_;
		*dev = opened;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to allocate device %s", devinfo.function().name.c_str());
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t DeviceTable::close(doca_dev &dev) noexcept
{
	std::lock_guard lock(mutex_);
	if (dev.open_count_ > 1) {
		--dev.open_count_;
		return DOCA_SUCCESS;
	}
	if (uint32_t users = dev.users(); users != 0) {
		SDK_LOG_ERR("cannot close device %s: still used by %u object(s)", dev.function().name.c_str(), users);
		return DOCA_ERROR_IN_USE;
	}
	if (!dev.from_pd())
		dev.devinfo_.open_device_ = nullptr;
	--open_devices_;
	dev.release_bridge_state();
	delete &dev;
	return DOCA_SUCCESS;
}

doca_error_t DeviceTable::open_from_pd(doca_devinfo &devinfo, doca_dev **dev) noexcept
{
	std::lock_guard lock(mutex_);
	if (open_devices_ >= topology_->max_open_devices()) {
		SDK_LOG_ERR("cannot open device %s: %u devices already open (limit of the topology)",
			    devinfo.function().name.c_str(), open_devices_);
		return DOCA_ERROR_INITIALIZATION;
	}
	try {
		check_allocation();
		auto *opened = new doca_dev(devinfo);
		opened->open_count_ = 1;
		opened->mark_from_pd();
		++open_devices_;
		*dev = opened;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to allocate device %s", devinfo.function().name.c_str());
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t DeviceTable::create_rep_list(doca_dev &dev, int filter, doca_devinfo_rep ***list, uint32_t *count) noexcept
{
	constexpr int kKnownFilters = DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED;
	if ((filter & ~kKnownFilters) != 0) {
		SDK_LOG_ERR("unknown representor filter bits 0x%x", filter & ~kKnownFilters);
		return DOCA_ERROR_INVALID_VALUE;
	}
	const device::Capabilities &caps = dev.caps();
	if (dev.from_pd() || !dev.devinfo().exposes_representors()) {
		SDK_LOG_ERR("device %s does not expose representors", dev.function().name.c_str());
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	const bool supported = filter == DOCA_DEVINFO_REP_FILTER_ALL
				   ? caps.rep_filter_all
				   : (!(filter & DOCA_DEVINFO_REP_FILTER_NET) || caps.rep_filter_net) &&
					 (!(filter & DOCA_DEVINFO_REP_FILTER_EMULATED) || caps.rep_filter_emulated);
	if (!supported) {
		SDK_LOG_ERR("device %s does not support representor filter 0x%x", dev.function().name.c_str(), filter);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	try {
		check_allocation();
		RepList rep_list{&dev, {}};
		for (const auto &devinfo_rep : devinfo_reps_)
			if (&devinfo_rep->manager() == &dev.devinfo() &&
			    rep_matches(devinfo_rep->representor(), filter))
				rep_list.entries.push_back(devinfo_rep.get());
		const auto entries = static_cast<uint32_t>(rep_list.entries.size());
		rep_list.entries.push_back(nullptr);
		std::lock_guard lock(mutex_);
		doca_devinfo_rep **data = rep_list.entries.data();
		rep_lists_.emplace(data, std::move(rep_list));
		dev.add_user(); // the list's entries belong to this device
		*list = data;
		*count = entries;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to allocate the representor list");
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t DeviceTable::destroy_rep_list(doca_devinfo_rep **list) noexcept
{
	std::lock_guard lock(mutex_);
	auto it = rep_lists_.find(list);
	if (it == rep_lists_.end())
		return DOCA_ERROR_INVALID_VALUE;
	it->second.dev->remove_user();
	rep_lists_.erase(it);
	return DOCA_SUCCESS;
}

doca_error_t DeviceTable::open_rep(doca_devinfo_rep &devinfo, doca_dev_rep **rep) noexcept
{
	std::lock_guard lock(mutex_);
	if (devinfo.open_representor_ != nullptr) {
		++devinfo.open_representor_->open_count_;
		*rep = devinfo.open_representor_;
		return DOCA_SUCCESS;
	}
	doca_dev *manager = devinfo.manager().open_device_;
	if (manager == nullptr) {
		// Its list was destroyed and its device closed: the devinfo_rep is stale.
		SDK_LOG_ERR("representor %s: its device %s is not open", devinfo.representor().name.c_str(),
			    devinfo.manager().function().name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	try {
		check_allocation();
		auto *opened = new doca_dev_rep(devinfo, *manager);
		opened->open_count_ = 1;
		manager->add_user();
		devinfo.open_representor_ = opened;
		*rep = opened;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("failed to allocate representor %s", devinfo.representor().name.c_str());
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t DeviceTable::close_rep(doca_dev_rep &rep) noexcept
{
	std::lock_guard lock(mutex_);
	if (rep.open_count_ > 1) {
		--rep.open_count_;
		return DOCA_SUCCESS;
	}
	if (uint32_t users = rep.users(); users != 0) {
		SDK_LOG_ERR("cannot close representor %s: still used by %u object(s)", rep.representor().name.c_str(),
			    users);
		return DOCA_ERROR_IN_USE;
	}
	rep.devinfo_.open_representor_ = nullptr;
	rep.manager_.remove_user();
	delete &rep;
	return DOCA_SUCCESS;
}

} // namespace softdpu::dev
