// App Shield's context and system (system.hpp).
#include "apsh/api/system.hpp"

#include "apsh/api/config_files.hpp"
#include "apsh/api/objects.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"

#include <cstdint>
#include <exception>
#include <new>

namespace softdpu::apsh::api {

Context::~Context()
{
	if (dma_dev_ != nullptr)
		dma_dev_->remove_user();
}

doca_error_t Context::set_dma_dev(doca_dev *dma_dev) noexcept
{
	std::lock_guard lock(mutex_);
	if (started_) {
		SDK_LOG_ERR("doca_apsh_dma_dev_set: the context is already started");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!dma_dev->caps().dma_memcpy) {
		SDK_LOG_ERR("doca_apsh_dma_dev_set: device %s has no DMA engine", dma_dev->function().name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	dma_dev->add_user();
	if (dma_dev_ != nullptr)
		dma_dev_->remove_user();
	dma_dev_ = dma_dev;
	return DOCA_SUCCESS;
}

doca_error_t Context::start() noexcept
{
	std::lock_guard lock(mutex_);
	if (dma_dev_ == nullptr) {
		SDK_LOG_ERR("doca_apsh_start: no DMA device (doca_apsh_dma_dev_set is mandatory)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	started_ = true;
	return DOCA_SUCCESS;
}

doca_error_t Context::admits(const doca_dev_rep *rep, const char *function) noexcept
{
	std::lock_guard lock(mutex_);
	if (!started_) {
		SDK_LOG_ERR("%s: the App Shield context is not started (doca_apsh_start)", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rep == nullptr) {
		SDK_LOG_ERR("%s: no representor (doca_apsh_sys_dev_set is mandatory)", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (&rep->manager() != dma_dev_) {
		SDK_LOG_ERR("%s: representor %s was not opened through the context's DMA device %s", function,
			    rep->representor().name.c_str(), dma_dev_->function().name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

std::string protection_string(uint32_t prot)
{
	std::string text = "---";
	if (prot & 1)
		text[0] = 'r';
	if (prot & 2)
		text[1] = 'w';
	if (prot & 4)
		text[2] = 'x';
	return text;
}

Status memory_source_of(const doca_dev_rep &rep, SourceSpec &out)
{
	std::string error;
	std::optional<device::MemorySource> source = device::memory_source_from_environment(error);
	if (!error.empty())
		return {DOCA_ERROR_INITIALIZATION, error};
	if (!source)
		source = rep.representor().memory;
	if (!source)
		return {DOCA_ERROR_INITIALIZATION,
			"representor " + rep.representor().name +
			    " has no memory source: give it \"memory\" in the topology or set SOFTDPU_APSH_MEMORY "
			    "(docs/apsh.md)"};
	out = {};
	switch (source->kind) {
	case device::MemoryKind::automatic:
		out.kind = SourceKind::automatic;
		break;
	case device::MemoryKind::qemu_shared_ram:
		out.kind = SourceKind::qemu_shared_ram;
		break;
	case device::MemoryKind::raw:
		out.kind = SourceKind::raw;
		break;
	case device::MemoryKind::elf_core:
		out.kind = SourceKind::elf_core;
		break;
	case device::MemoryKind::lime:
		out.kind = SourceKind::lime;
		break;
	case device::MemoryKind::qemu_pid:
		out.kind = SourceKind::qemu_pid;
		break;
	case device::MemoryKind::qemu_name:
		out.kind = SourceKind::qemu_name;
		break;
	case device::MemoryKind::libvirt:
		out.kind = SourceKind::libvirt_domain;
		break;
	}
	out.path = source->path;
	out.qmp_socket = source->qmp_socket;
	return Status::success();
}

System::~System()
{
	if (settings_.rep != nullptr)
		settings_.rep->remove_user();
}

// ---- Configuration: the public setters lock, the *_locked bodies expect the lock held ----

doca_error_t System::set_symbol_map(const char *path, const char *function)
{
	std::lock_guard lock(mutex_);
	return symbol_map_locked(path, function);
}

doca_error_t System::set_mem_region(const char *path, const char *function)
{
	std::lock_guard lock(mutex_);
	return mem_region_locked(path, function);
}

doca_error_t System::set_kpgd_file(const char *path, const char *function)
{
	std::lock_guard lock(mutex_);
	return kpgd_file_locked(path, function);
}

doca_error_t System::set_dev(doca_dev_rep *dev, const char *function)
{
	std::lock_guard lock(mutex_);
	return dev_locked(dev, function);
}

doca_error_t System::set_os_type(long os_type, const char *function)
{
	std::lock_guard lock(mutex_);
	return os_type_locked(os_type, function);
}

doca_error_t System::set_window_size(uint32_t size, const char *function)
{
	std::lock_guard lock(mutex_);
	return window_size_locked(size, function);
}

doca_error_t System::set_window_step(uint32_t step, const char *function)
{
	std::lock_guard lock(mutex_);
	return window_step_locked(step, function);
}

// Setters that change what start reads are refused once the system runs.
doca_error_t System::refuse_if_started(const char *function) const noexcept
{
	if (started()) {
		SDK_LOG_ERR("%s: the system is already started", function);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t System::symbol_map_locked(const char *path, const char *function)
{
	if (path == nullptr) {
		SDK_LOG_ERR("%s: NULL path", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(function); result != DOCA_SUCCESS)
		return result;
	KernelHints hints = settings_.hints;
	hints.symbols.clear();
	hints.symbols_are_slid = true;
	hints.btf.clear();
	if (Status status = load_symbol_map(path, hints); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	settings_.hints = std::move(hints);
	settings_.symbol_map_path = path;
	settings_.symbol_map_set = true;
	return DOCA_SUCCESS;
}

doca_error_t System::mem_region_locked(const char *path, const char *function)
{
	if (path == nullptr) {
		SDK_LOG_ERR("%s: NULL path", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(function); result != DOCA_SUCCESS)
		return result;
	std::vector<RamRange> ranges;
	if (Status status = load_mem_regions(path, ranges); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	settings_.ranges = std::move(ranges);
	settings_.mem_region_path = path;
	settings_.mem_region_set = true;
	return DOCA_SUCCESS;
}

doca_error_t System::kpgd_file_locked(const char *path, const char *function)
{
	if (path == nullptr || *path == '\0') {
		SDK_LOG_ERR("%s: %s path", function, path == nullptr ? "NULL" : "empty");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(function); result != DOCA_SUCCESS)
		return result;
	KernelHints hints = settings_.hints;
	if (Status status = load_kpgd_file(path, hints); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	settings_.hints = std::move(hints);
	settings_.kpgd_path = path;
	return DOCA_SUCCESS;
}

doca_error_t System::dev_locked(doca_dev_rep *dev, const char *function) noexcept
{
	if (dev == nullptr) {
		SDK_LOG_ERR("%s: NULL representor", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(function); result != DOCA_SUCCESS)
		return result;
	dev->add_user();
	if (settings_.rep != nullptr)
		settings_.rep->remove_user();
	settings_.rep = dev;
	return DOCA_SUCCESS;
}

doca_error_t System::os_type_locked(long os_type, const char *function) noexcept
{
	if (os_type != DOCA_APSH_SYSTEM_LINUX && os_type != DOCA_APSH_SYSTEM_WINDOWS) {
		SDK_LOG_ERR("%s: invalid OS type %ld", function, os_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(function); result != DOCA_SUCCESS)
		return result;
	if (os_type == DOCA_APSH_SYSTEM_WINDOWS) {
		SDK_LOG_ERR("%s: Windows systems are not supported by softdpu (Linux guests only)", function);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	settings_.os_type_set = true;
	return DOCA_SUCCESS;
}

doca_error_t System::window_size_locked(uint32_t size, const char *function) noexcept
{
	if (size == 0 || (size % 4096 != 0 && 4096 % size != 0)) {
		SDK_LOG_ERR("%s: window size %u: it must be a multiple or a divisor of the page size (4096)", function,
			    size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	settings_.window.size = size;
	if (size % settings_.window.step != 0) {
		SDK_LOG_DBG("%s: step %u does not divide the new size %u; step reset to %u", function,
			    settings_.window.step, size, size);
		settings_.window.step = size;
	}
	return DOCA_SUCCESS;
}

doca_error_t System::window_step_locked(uint32_t step, const char *function) noexcept
{
	if (step == 0 || settings_.window.size % step != 0) {
		SDK_LOG_ERR("%s: window step %u must divide the window size %u", function, step, settings_.window.size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	settings_.window.step = step;
	return DOCA_SUCCESS;
}

namespace {

doca_error_t set_limit(uint32_t &limit, void *value, const char *what) noexcept
{
	const auto number = static_cast<intptr_t>(reinterpret_cast<uintptr_t>(value));
	if (number <= 0 || number > INT32_MAX) {
		SDK_LOG_ERR("doca_apsh_sys_config: %s must be a positive int, got %ld", what,
			    static_cast<long>(number));
		return DOCA_ERROR_INVALID_VALUE;
	}
	limit = static_cast<uint32_t>(number);
	return DOCA_SUCCESS;
}

} // namespace

doca_error_t System::configure(long attr, void *value)
{
	static const char *const kFunction = "doca_apsh_sys_config";
	std::lock_guard lock(mutex_);
	if (attr < 0 || attr > DOCA_APSH_STRING_LIMIT) {
		SDK_LOG_ERR("doca_apsh_sys_config: unknown attribute %ld", attr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(kFunction); result != DOCA_SUCCESS)
		return result;
	SystemSettings &settings = settings_;
	switch (static_cast<doca_apsh_system_config_attr>(attr)) {
	case DOCA_APSH_OS_SYMBOL_MAP:
		return symbol_map_locked(static_cast<const char *>(value), kFunction);
	case DOCA_APSH_MEM_REGION:
		return mem_region_locked(static_cast<const char *>(value), kFunction);
	case DOCA_APSH_KPGD_FILE:
		return kpgd_file_locked(static_cast<const char *>(value), kFunction);
	case DOCA_APSH_VHCA_ID:
		return dev_locked(static_cast<doca_dev_rep *>(value), kFunction);
	case DOCA_APSH_OS_TYPE:
		return os_type_locked(static_cast<long>(reinterpret_cast<uintptr_t>(value)), kFunction);
	case DOCA_APSH_SCAN_WIN_SIZE: {
		const uintptr_t size = reinterpret_cast<uintptr_t>(value);
		if (size > UINT32_MAX) {
			SDK_LOG_ERR("doca_apsh_sys_config: window size out of range");
			return DOCA_ERROR_INVALID_VALUE;
		}
		return window_size_locked(static_cast<uint32_t>(size), kFunction);
	}
	case DOCA_APSH_SCAN_WIN_STEP: {
		const uintptr_t step = reinterpret_cast<uintptr_t>(value);
		if (step > UINT32_MAX) {
			SDK_LOG_ERR("doca_apsh_sys_config: window step out of range");
			return DOCA_ERROR_INVALID_VALUE;
		}
		return window_step_locked(static_cast<uint32_t>(step), kFunction);
	}
	case DOCA_APSH_HASHTEST_LIMIT:
		return set_limit(settings.hashtest_limit, value, "DOCA_APSH_HASHTEST_LIMIT");
	case DOCA_APSH_MODULES_LIMIT:
		return set_limit(settings.limits.modules, value, "DOCA_APSH_MODULES_LIMIT");
	case DOCA_APSH_PROCESS_LIMIT:
		return set_limit(settings.limits.processes, value, "DOCA_APSH_PROCESS_LIMIT");
	case DOCA_APSH_THREADS_LIMIT:
		return set_limit(settings.limits.threads, value, "DOCA_APSH_THREADS_LIMIT");
	case DOCA_APSH_LDRMODULES_LIMIT:
		return set_limit(settings.ldrmodules_limit, value, "DOCA_APSH_LDRMODULES_LIMIT");
	case DOCA_APSH_LIBS_LIMIT:
		return set_limit(settings.limits.libs, value, "DOCA_APSH_LIBS_LIMIT");
	case DOCA_APSH_VADS_LIMIT:
		return set_limit(settings.limits.vads, value, "DOCA_APSH_VADS_LIMIT");
	case DOCA_APSH_WINDOWS_ENVARS_LIMIT:
		return set_limit(settings.windows_envars_limit, value, "DOCA_APSH_WINDOWS_ENVARS_LIMIT");
	case DOCA_APSH_HANDLES_LIMIT:
		return set_limit(settings.handles_limit, value, "DOCA_APSH_HANDLES_LIMIT");
	case DOCA_APSH_STRING_LIMIT:
		return set_limit(settings.limits.string_bytes, value, "DOCA_APSH_STRING_LIMIT");
	}
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t System::start()
{
	std::lock_guard lock(mutex_);
	if (started()) {
		SDK_LOG_ERR("doca_apsh_system_start: the system is already started");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = ctx_->admits(settings_.rep, "doca_apsh_system_start"); result != DOCA_SUCCESS)
		return result;
	SourceSpec source;
	if (Status status = memory_source_of(*settings_.rep, source); !status.ok()) {
		SDK_LOG_ERR("doca_apsh_system_start: %s", status.reason.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	source.ranges = settings_.ranges;
	std::unique_ptr<LinuxSystem> guest;
	Status status;
	try {
		status = current_opener()(source, settings_.hints, settings_.limits, guest);
	} catch (const std::bad_alloc &) {
		status = {DOCA_ERROR_NO_MEMORY, "out of memory"};
	} catch (const std::exception &error) {
		status = {DOCA_ERROR_INITIALIZATION, error.what()};
	}
	if (!status.ok() || guest == nullptr) {
		// The reader's reasons usually name the file already.
		const std::string label = source_label(source);
		if (status.reason.starts_with(label + ":"))
			SDK_LOG_ERR("doca_apsh_system_start: %s", status.reason.c_str());
		else
			SDK_LOG_ERR("doca_apsh_system_start: %s: %s", label.c_str(),
				    status.reason.empty() ? "cannot open the system" : status.reason.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	SDK_LOG_INFO("App Shield system on %s: %s", source_label(source).c_str(), guest->describe().c_str());
	guest_ = std::move(guest);
	return DOCA_SUCCESS;
}

} // namespace softdpu::apsh::api
