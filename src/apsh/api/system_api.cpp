// doca_apsh.h: the App Shield context, systems and their configuration.
#include <doca_apsh.h>

#include "apsh/api/config_files.hpp"
#include "apsh/api/objects.hpp"
#include "common/sdk_log.hpp"
#include "core/dev/dev.hpp"

#include <cstring>
#include <new>
#include <type_traits>

namespace softdpu::apsh::api {

ContextState::~ContextState()
{
	if (dma_dev != nullptr)
		dma_dev->remove_user();
}

SystemState::~SystemState()
{
	if (settings.rep != nullptr)
		settings.rep->remove_user();
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
	}
	out.path = source->path;
	out.qmp_socket = source->qmp_socket;
	return Status::success();
}

} // namespace softdpu::apsh::api

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;

namespace {

// An enum argument as the integer the caller passed: C callers may pass values outside the enum,
// and loading such a value as the enum type is undefined behaviour in C++.
template <typename Enum> long as_integer(const Enum &value)
{
	std::underlying_type_t<Enum> raw;
	std::memcpy(&raw, &value, sizeof(raw));
	return static_cast<long>(raw);
}

// Setters that change what start reads are refused once the system runs.
doca_error_t refuse_if_started(SystemState &state, const char *function)
{
	if (state.started()) {
		SDK_LOG_ERR("%s: the system is already started", function);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t set_symbol_map(SystemState &state, const char *path, const char *function)
{
	if (path == nullptr) {
		SDK_LOG_ERR("%s: NULL path", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, function); result != DOCA_SUCCESS)
		return result;
	KernelHints hints = state.settings.hints;
	hints.symbols.clear();
	hints.symbols_are_slid = true;
	hints.btf.clear();
	if (Status status = load_symbol_map(path, hints); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	state.settings.hints = std::move(hints);
	state.settings.symbol_map_path = path;
	state.settings.symbol_map_set = true;
	return DOCA_SUCCESS;
}

doca_error_t set_mem_region(SystemState &state, const char *path, const char *function)
{
	if (path == nullptr) {
		SDK_LOG_ERR("%s: NULL path", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, function); result != DOCA_SUCCESS)
		return result;
	std::vector<RamRange> ranges;
	if (Status status = load_mem_regions(path, ranges); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	state.settings.ranges = std::move(ranges);
	state.settings.mem_region_path = path;
	state.settings.mem_region_set = true;
	return DOCA_SUCCESS;
}

doca_error_t set_kpgd_file(SystemState &state, const char *path, const char *function)
{
	if (path == nullptr || *path == '\0') {
		SDK_LOG_ERR("%s: %s path", function, path == nullptr ? "NULL" : "empty");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, function); result != DOCA_SUCCESS)
		return result;
	KernelHints hints = state.settings.hints;
	if (Status status = load_kpgd_file(path, hints); !status.ok()) {
		SDK_LOG_ERR("%s: %s", function, status.reason.c_str());
		return status.code;
	}
	state.settings.hints = std::move(hints);
	state.settings.kpgd_path = path;
	return DOCA_SUCCESS;
}

doca_error_t set_dev(SystemState &state, doca_dev_rep *dev, const char *function)
{
	if (dev == nullptr) {
		SDK_LOG_ERR("%s: NULL representor", function);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, function); result != DOCA_SUCCESS)
		return result;
	dev->add_user();
	if (state.settings.rep != nullptr)
		state.settings.rep->remove_user();
	state.settings.rep = dev;
	return DOCA_SUCCESS;
}

doca_error_t set_os_type(SystemState &state, long os_type, const char *function)
{
	if (os_type != DOCA_APSH_SYSTEM_LINUX && os_type != DOCA_APSH_SYSTEM_WINDOWS) {
		SDK_LOG_ERR("%s: invalid OS type %ld", function, os_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, function); result != DOCA_SUCCESS)
		return result;
	if (os_type == DOCA_APSH_SYSTEM_WINDOWS) {
		SDK_LOG_ERR("%s: Windows systems are not supported by softdpu (Linux guests only)", function);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	state.settings.os_type_set = true;
	return DOCA_SUCCESS;
}

doca_error_t set_window_size(SystemState &state, uint32_t size, const char *function)
{
	if (size == 0 || (size % 4096 != 0 && 4096 % size != 0)) {
		SDK_LOG_ERR("%s: window size %u: it must be a multiple or a divisor of the page size (4096)", function,
			    size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	state.settings.window.size = size;
	if (size % state.settings.window.step != 0) {
		SDK_LOG_DBG("%s: step %u does not divide the new size %u; step reset to %u", function,
			    state.settings.window.step, size, size);
		state.settings.window.step = size;
	}
	return DOCA_SUCCESS;
}

doca_error_t set_window_step(SystemState &state, uint32_t step, const char *function)
{
	if (step == 0 || state.settings.window.size % step != 0) {
		SDK_LOG_ERR("%s: window step %u must divide the window size %u", function, step,
			    state.settings.window.size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	state.settings.window.step = step;
	return DOCA_SUCCESS;
}

doca_error_t set_limit(uint32_t &limit, void *value, const char *what)
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

extern "C" {

doca_apsh_ctx *doca_apsh_create(void)
{
	auto *ctx = new (std::nothrow) doca_apsh_ctx();
	if (ctx == nullptr)
		SDK_LOG_ERR("doca_apsh_create: out of memory");
	return ctx;
}

void doca_apsh_destroy(doca_apsh_ctx *ctx)
{
	delete ctx;
}

doca_error_t doca_apsh_dma_dev_set(doca_apsh_ctx *ctx, doca_dev *dma_dev)
{
	if (ctx == nullptr || dma_dev == nullptr) {
		SDK_LOG_ERR("doca_apsh_dma_dev_set: NULL %s", ctx == nullptr ? "context" : "device");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ContextState &state = *ctx->state;
	std::lock_guard lock(state.mutex);
	if (state.started) {
		SDK_LOG_ERR("doca_apsh_dma_dev_set: the context is already started");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!dma_dev->caps().dma_memcpy) {
		SDK_LOG_ERR("doca_apsh_dma_dev_set: device %s has no DMA engine", dma_dev->function().name.c_str());
		return DOCA_ERROR_INVALID_VALUE;
	}
	dma_dev->add_user();
	if (state.dma_dev != nullptr)
		state.dma_dev->remove_user();
	state.dma_dev = dma_dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_apsh_start(doca_apsh_ctx *ctx)
{
	if (ctx == nullptr) {
		SDK_LOG_ERR("doca_apsh_start: NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ContextState &state = *ctx->state;
	std::lock_guard lock(state.mutex);
	if (state.dma_dev == nullptr) {
		SDK_LOG_ERR("doca_apsh_start: no DMA device (doca_apsh_dma_dev_set is mandatory)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	state.started = true;
	return DOCA_SUCCESS;
}

doca_apsh_system *doca_apsh_system_create(doca_apsh_ctx *ctx)
{
	if (ctx == nullptr) {
		SDK_LOG_ERR("doca_apsh_system_create: NULL context");
		return nullptr;
	}
	auto *system = new (std::nothrow) doca_apsh_system();
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_system_create: out of memory");
		return nullptr;
	}
	system->state->ctx = ctx->state;
	return system;
}

void doca_apsh_system_destroy(doca_apsh_system *system)
{
	delete system;
}

doca_error_t doca_apsh_sys_os_symbol_map_set(doca_apsh_system *system, const char *system_os_symbol_map_path)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_os_symbol_map_set: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_symbol_map(*system->state, system_os_symbol_map_path, __func__);
}

doca_error_t doca_apsh_sys_mem_region_set(doca_apsh_system *system, const char *system_mem_region_path)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_mem_region_set: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_mem_region(*system->state, system_mem_region_path, __func__);
}

doca_error_t doca_apsh_sys_kpgd_file_set(doca_apsh_system *system, const char *system_kpgd_file_path)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_kpgd_file_set: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_kpgd_file(*system->state, system_kpgd_file_path, __func__);
}

doca_error_t doca_apsh_sys_dev_set(doca_apsh_system *system, doca_dev_rep *dev)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_dev_set: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_dev(*system->state, dev, __func__);
}

doca_error_t doca_apsh_sys_os_type_set(doca_apsh_system *system, enum doca_apsh_system_os os_type)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_os_type_set: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_os_type(*system->state, as_integer(os_type), __func__);
}

doca_error_t doca_apsh_sys_set_scan_window_size(doca_apsh_system *system, uint32_t scan_window_size)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_set_scan_window_size: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_window_size(*system->state, scan_window_size, __func__);
}

doca_error_t doca_apsh_sys_set_scan_window_step(doca_apsh_system *system, uint32_t scan_window_step)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_set_scan_window_step: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	std::lock_guard lock(system->state->mutex);
	return set_window_step(*system->state, scan_window_step, __func__);
}

doca_error_t __doca_apsh_sys_config(doca_apsh_system *system, enum doca_apsh_system_config_attr attr, void *value)
{
	static const char *const kFunction = "doca_apsh_sys_config";
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_sys_config: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SystemState &state = *system->state;
	std::lock_guard lock(state.mutex);
	const long attr_value = as_integer(attr);
	if (attr_value < 0 || attr_value > DOCA_APSH_STRING_LIMIT) {
		SDK_LOG_ERR("doca_apsh_sys_config: unknown attribute %ld", attr_value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_error_t result = refuse_if_started(state, kFunction); result != DOCA_SUCCESS)
		return result;
	SystemSettings &settings = state.settings;
	switch (attr) {
	case DOCA_APSH_OS_SYMBOL_MAP:
		return set_symbol_map(state, static_cast<const char *>(value), kFunction);
	case DOCA_APSH_MEM_REGION:
		return set_mem_region(state, static_cast<const char *>(value), kFunction);
	case DOCA_APSH_KPGD_FILE:
		return set_kpgd_file(state, static_cast<const char *>(value), kFunction);
	case DOCA_APSH_VHCA_ID:
		return set_dev(state, static_cast<doca_dev_rep *>(value), kFunction);
	case DOCA_APSH_OS_TYPE:
		return set_os_type(state, static_cast<long>(reinterpret_cast<uintptr_t>(value)), kFunction);
	case DOCA_APSH_SCAN_WIN_SIZE: {
		const uintptr_t size = reinterpret_cast<uintptr_t>(value);
		if (size > UINT32_MAX) {
			SDK_LOG_ERR("doca_apsh_sys_config: window size out of range");
			return DOCA_ERROR_INVALID_VALUE;
		}
		return set_window_size(state, static_cast<uint32_t>(size), kFunction);
	}
	case DOCA_APSH_SCAN_WIN_STEP: {
		const uintptr_t step = reinterpret_cast<uintptr_t>(value);
		if (step > UINT32_MAX) {
			SDK_LOG_ERR("doca_apsh_sys_config: window step out of range");
			return DOCA_ERROR_INVALID_VALUE;
		}
		return set_window_step(state, static_cast<uint32_t>(step), kFunction);
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

doca_error_t doca_apsh_system_start(doca_apsh_system *system)
{
	if (system == nullptr) {
		SDK_LOG_ERR("doca_apsh_system_start: NULL system");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SystemState &state = *system->state;
	std::lock_guard lock(state.mutex);
	if (state.started()) {
		SDK_LOG_ERR("doca_apsh_system_start: the system is already started");
		return DOCA_ERROR_INVALID_VALUE;
	}
	{
		std::lock_guard ctx_lock(state.ctx->mutex);
		if (!state.ctx->started) {
			SDK_LOG_ERR("doca_apsh_system_start: the App Shield context is not started (doca_apsh_start)");
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (state.settings.rep == nullptr) {
			SDK_LOG_ERR("doca_apsh_system_start: no representor (doca_apsh_sys_dev_set is mandatory)");
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (&state.settings.rep->manager() != state.ctx->dma_dev) {
			SDK_LOG_ERR("doca_apsh_system_start: representor %s was not opened through the context's DMA "
				    "device %s",
				    state.settings.rep->representor().name.c_str(),
				    state.ctx->dma_dev->function().name.c_str());
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	SourceSpec source;
	if (Status status = memory_source_of(*state.settings.rep, source); !status.ok()) {
		SDK_LOG_ERR("doca_apsh_system_start: %s", status.reason.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	source.ranges = state.settings.ranges;
	std::unique_ptr<LinuxSystem> guest;
	Status status;
	try {
		status = current_opener()(source, state.settings.hints, state.settings.limits, guest);
	} catch (const std::bad_alloc &) {
		status = {DOCA_ERROR_NO_MEMORY, "out of memory"};
	} catch (const std::exception &error) {
		status = {DOCA_ERROR_INITIALIZATION, error.what()};
	}
	if (!status.ok() || guest == nullptr) {
		// The reader's reasons usually name the file already.
		if (status.reason.starts_with(source.path + ":"))
			SDK_LOG_ERR("doca_apsh_system_start: %s", status.reason.c_str());
		else
			SDK_LOG_ERR("doca_apsh_system_start: %s: %s", source.path.c_str(),
				    status.reason.empty() ? "cannot open the system" : status.reason.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	SDK_LOG_INFO("App Shield system on %s: %s", source.path.c_str(), guest->describe().c_str());
	state.guest = std::move(guest);
	return DOCA_SUCCESS;
}

} // extern "C"
