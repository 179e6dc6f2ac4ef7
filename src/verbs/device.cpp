#include "verbs/verbs.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace softdpu::verbs {

namespace {

struct DeviceTable {
	std::vector<device::rdma::DeviceInfo> infos;
	std::vector<std::unique_ptr<Device>> devices;
	std::vector<Device *> list;
};

void copy_name(char *destination, size_t size, const std::string &text)
{
	std::snprintf(destination, size, "%s", text.c_str());
}

// Built once; devices are never freed while the process runs (contexts and lists point at them).
DeviceTable *table(int *error) noexcept
{
	static std::mutex mutex;
	static DeviceTable *built = nullptr;
	std::lock_guard lock(mutex);
	if (built != nullptr)
		return built;
	try {
		auto fresh = std::make_unique<DeviceTable>();
		if (device::Topology::current() == nullptr) {
			*error = ENODEV;
			return nullptr;
		}
		fresh->infos = device::rdma::local_devices();
		for (size_t i = 0; i < fresh->infos.size(); ++i) {
			auto device = std::make_unique<Device>();
			device->info = &fresh->infos[i];
			device->ibv.node_type = IBV_NODE_CA;
			device->ibv.transport_type = IBV_TRANSPORT_IB;
			copy_name(device->ibv.name, sizeof(device->ibv.name), device->info->name);
			copy_name(device->ibv.dev_name, sizeof(device->ibv.dev_name), "uverbs" + std::to_string(i));
			copy_name(device->ibv.dev_path, sizeof(device->ibv.dev_path),
				  "/sys/class/infiniband_verbs/uverbs" + std::to_string(i));
			copy_name(device->ibv.ibdev_path, sizeof(device->ibv.ibdev_path),
				  "/sys/class/infiniband/" + device->info->name);
			fresh->list.push_back(device.get());
			fresh->devices.push_back(std::move(device));
		}
		built = fresh.release();
		return built;
	} catch (const std::bad_alloc &) {
		*error = ENOMEM;
		return nullptr;
	}
}

} // namespace

const std::vector<Device *> *device_list() noexcept
{
	int error = 0;
	DeviceTable *devices = table(&error);
	if (devices == nullptr) {
		errno = error;
		return nullptr;
	}
	return &devices->list;
}

bool is_our_device(const ibv_device *device) noexcept
{
	const std::vector<Device *> *list = device_list();
	if (list == nullptr)
		return false;
	for (const Device *candidate : *list)
		if (&candidate->ibv == device)
			return true;
	return false;
}

} // namespace softdpu::verbs
