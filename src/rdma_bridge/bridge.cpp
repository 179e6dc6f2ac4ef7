#include "rdma_bridge/bridge.hpp"

#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"
#include "core/mem/buf.hpp"
#include "core/mem/mmap.hpp"

#include <doca_types.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace softdpu::rdma_bridge {

namespace {

// One lock for every bridge state: the calls are set-up calls, not a data path.
std::mutex &bridge_mutex()
{
	static std::mutex mutex;
	return mutex;
}

// The protection domains the bridge allocated for DOCA devices: doca_rdma_bridge_open_dev_from_pd
// refuses them (DOCA documents it).
std::vector<const ibv_pd *> &bridge_pds()
{
	static std::vector<const ibv_pd *> pds;
	return pds;
}

// What a DOCA device holds (doca_dev::bridge_state).
struct DeviceVerbs {
	ibv_context *context = nullptr; // null for a device made from the application's PD
	ibv_pd *pd = nullptr;
};

void release_device(void *state)
{
	auto *verbs = static_cast<DeviceVerbs *>(state);
	if (verbs->context != nullptr) {
		std::erase(bridge_pds(), verbs->pd);
		if (int error = ibv_dealloc_pd(verbs->pd); error != 0)
			SDK_LOG_ERR("RDMA bridge: cannot free the protection domain of a closing device: %s",
				    std::strerror(error));
		(void)ibv_close_device(verbs->context);
	}
	delete verbs;
}

// What a started mmap holds (doca_mmap::bridge_state): a registration per device.
struct MmapRegistrations {
	std::vector<std::pair<const doca_dev *, ibv_mr *>> regions;
};

void release_registrations(void *state)
{
	auto *registrations = static_cast<MmapRegistrations *>(state);
	for (auto &[dev, mr] : registrations->regions)
		if (int error = ibv_dereg_mr(mr); error != 0)
			SDK_LOG_ERR("RDMA bridge: cannot deregister an mmap's memory: %s", std::strerror(error));
	delete registrations;
}

// Opens the verbs device named like the DOCA device's function. Called with the bridge lock held.
doca_error_t open_verbs(doca_dev &dev, DeviceVerbs **out)
{
	const std::string &name = dev.function().ibdev;
	int count = 0;
	ibv_device **list = ibv_get_device_list(&count);
	if (list == nullptr) {
		SDK_LOG_ERR("RDMA bridge: no verbs device list (%s): is softdpu's libibverbs on the loader path? "
			    "(docs/rdma.md)",
			    std::strerror(errno));
		return DOCA_ERROR_BAD_STATE;
	}
	ibv_device *found = nullptr;
	for (int i = 0; i < count && found == nullptr; ++i)
		if (name == ibv_get_device_name(list[i]))
			found = list[i];
	if (found == nullptr) {
		ibv_free_device_list(list);
		SDK_LOG_ERR("RDMA bridge: libibverbs has no device %s: run the program with softdpu's libibverbs "
			    "(LD_LIBRARY_PATH=<prefix>/lib/.../softdpu-rdma, or softdpu run --; docs/rdma.md)",
			    name.c_str());
		return DOCA_ERROR_BAD_STATE;
	}
	ibv_context *context = ibv_open_device(found);
	ibv_free_device_list(list);
	if (context == nullptr) {
		SDK_LOG_ERR("RDMA bridge: cannot open verbs device %s: %s", name.c_str(), std::strerror(errno));
		return DOCA_ERROR_BAD_STATE;
	}
	ibv_pd *pd = ibv_alloc_pd(context);
	if (pd == nullptr) {
		SDK_LOG_ERR("RDMA bridge: cannot allocate a protection domain on %s: %s", name.c_str(),
			    std::strerror(errno));
		(void)ibv_close_device(context);
		return DOCA_ERROR_BAD_STATE;
	}
	auto *verbs = new (std::nothrow) DeviceVerbs{context, pd};
	try {
		bridge_pds().push_back(pd);
	} catch (const std::bad_alloc &) {
		delete verbs;
		verbs = nullptr;
	}
	if (verbs == nullptr) {
		(void)ibv_dealloc_pd(pd);
		(void)ibv_close_device(context);
		return DOCA_ERROR_NO_MEMORY;
	}
	*out = verbs;
	return DOCA_SUCCESS;
}

doca_error_t device_pd(doca_dev &dev, ibv_pd **pd)
{
	auto *verbs = static_cast<DeviceVerbs *>(dev.bridge_state());
	if (verbs == nullptr) {
		const doca_error_t opened = open_verbs(dev, &verbs);
		if (opened != DOCA_SUCCESS)
			return opened;
		dev.set_bridge_state(verbs, release_device);
	}
	*pd = verbs->pd;
	return DOCA_SUCCESS;
}

} // namespace

unsigned int verbs_access(uint32_t permissions) noexcept
{
	unsigned int access = 0;
	if ((permissions & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) != 0)
		access |= IBV_ACCESS_LOCAL_WRITE;
	if ((permissions & DOCA_ACCESS_FLAG_RDMA_READ) != 0)
		access |= IBV_ACCESS_REMOTE_READ;
	// Remote writes and atomics need local write too (verbs refuses them without it).
	if ((permissions & DOCA_ACCESS_FLAG_RDMA_WRITE) != 0)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if ((permissions & DOCA_ACCESS_FLAG_RDMA_ATOMIC) != 0)
		access |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	if ((permissions & DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING) != 0)
		access |= IBV_ACCESS_RELAXED_ORDERING;
	return access;
}

doca_error_t get_dev_pd(doca_dev &dev, ibv_pd **pd) noexcept
{
	std::lock_guard lock(bridge_mutex());
	return device_pd(dev, pd);
}

doca_error_t open_dev_from_pd(ibv_pd &pd, doca_dev **dev) noexcept
{
	const char *name = ibv_get_device_name(pd.context->device);
	doca_error_t error = DOCA_SUCCESS;
	dev::DeviceTable *table = dev::DeviceTable::current(&error);
	if (table == nullptr)
		return error;
	const device::Topology *topology = device::Topology::current();
	const device::Function *function = nullptr;
	if (topology != nullptr && name != nullptr)
		for (const device::Function *candidate : topology->local_functions())
			if (candidate->ibdev == name)
				function = candidate;
	doca_devinfo *devinfo = function != nullptr ? table->find_devinfo(*function) : nullptr;
	if (devinfo == nullptr) {
		SDK_LOG_ERR("RDMA bridge: the protection domain belongs to %s, which is not a softdpu device of this "
			    "side",
			    name != nullptr ? name : "an unknown device");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(bridge_mutex());
	if (std::find(bridge_pds().begin(), bridge_pds().end(), &pd) != bridge_pds().end()) {
		SDK_LOG_ERR("RDMA bridge: the protection domain is a DOCA device's own (doca_rdma_bridge_get_dev_pd): "
			    "use that device");
		return DOCA_ERROR_INVALID_VALUE;
	}
	doca_dev *opened = nullptr;
	error = table->open_from_pd(*devinfo, &opened);
	if (error != DOCA_SUCCESS)
		return error;
	auto *verbs = new (std::nothrow) DeviceVerbs{nullptr, &pd};
	if (verbs == nullptr) {
		(void)table->close(*opened);
		return DOCA_ERROR_NO_MEMORY;
	}
	opened->set_bridge_state(verbs, release_device);
	*dev = opened;
	return DOCA_SUCCESS;
}

doca_error_t get_buf_mkey(const doca_buf &buf, doca_dev &dev, uint32_t *mkey) noexcept
{
	doca_mmap *mmap = buf.mmap();
	if (mmap == nullptr || !mmap->is_started() || !mmap->has_device(&dev)) {
		SDK_LOG_ERR("RDMA bridge: the buffer's mmap is not started on device %s", dev.function().name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (mmap->origin() != doca_mmap::Origin::local) {
		SDK_LOG_ERR("RDMA bridge: the buffer's mmap was imported from another process: its memory has no key "
			    "on a local device");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	std::lock_guard lock(bridge_mutex());
	auto *registrations = static_cast<MmapRegistrations *>(mmap->bridge_state());
	if (registrations != nullptr)
		for (auto &[owner, mr] : registrations->regions)
			if (owner == &dev) {
				*mkey = mr->lkey;
				return DOCA_SUCCESS;
			}
	ibv_pd *pd = nullptr;
	doca_error_t error = device_pd(dev, &pd);
	if (error != DOCA_SUCCESS)
		return error;
	const unsigned int access = verbs_access(mmap->permissions());
	ibv_mr *mr = ibv_reg_mr_iova2(pd, mmap->memrange_start(), mmap->memrange_len(),
				      reinterpret_cast<uintptr_t>(mmap->memrange_start()), access);
	if (mr == nullptr) {
		SDK_LOG_ERR("RDMA bridge: cannot register the mmap's memory on %s: %s", dev.function().name.c_str(),
			    std::strerror(errno));
		return errno == EINVAL ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_NO_MEMORY;
	}
	try {
		if (registrations == nullptr) {
			registrations = new MmapRegistrations();
			mmap->set_bridge_state(registrations, release_registrations);
		}
		registrations->regions.emplace_back(&dev, mr);
	} catch (const std::bad_alloc &) {
		(void)ibv_dereg_mr(mr);
		return DOCA_ERROR_NO_MEMORY;
	}
	*mkey = mr->lkey;
	return DOCA_SUCCESS;
}

} // namespace softdpu::rdma_bridge
