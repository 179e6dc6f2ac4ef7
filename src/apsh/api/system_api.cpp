// doca_apsh.h: the App Shield context, systems and their configuration; argument checks over
// Context and System (system.hpp).
#include <doca_apsh.h>

#include "apsh/api/objects.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <cstring>
#include <new>
#include <type_traits>

using softdpu::common::api_barrier;
using softdpu::common::api_barrier_or;

namespace {

// An enum argument as the integer the caller passed: C callers may pass values outside the enum,
// and loading such a value as the enum type is undefined behaviour in C++.
template <typename Enum> long as_integer(const Enum &value)
{
	std::underlying_type_t<Enum> raw;
	std::memcpy(&raw, &value, sizeof(raw));
	return static_cast<long>(raw);
}

// The system behind a handle, or NULL (logged) for a NULL handle.
softdpu::apsh::api::System *system_of(doca_apsh_system *system, const char *function) noexcept
{
	if (system == nullptr) {
		SDK_LOG_ERR("%s: NULL system", function);
		return nullptr;
	}
	return system->system.get();
}

} // namespace

extern "C" {

doca_apsh_ctx *doca_apsh_create(void)
{
	return api_barrier_or<doca_apsh_ctx *>(__func__, nullptr, [] { return new doca_apsh_ctx(); });
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
	return ctx->context->set_dma_dev(dma_dev);
}

doca_error_t doca_apsh_start(doca_apsh_ctx *ctx)
{
	if (ctx == nullptr) {
		SDK_LOG_ERR("doca_apsh_start: NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ctx->context->start();
}

doca_apsh_system *doca_apsh_system_create(doca_apsh_ctx *ctx)
{
	if (ctx == nullptr) {
		SDK_LOG_ERR("doca_apsh_system_create: NULL context");
		return nullptr;
	}
	return api_barrier_or<doca_apsh_system *>(__func__, nullptr,
						  [&] { return new doca_apsh_system(ctx->context); });
}

void doca_apsh_system_destroy(doca_apsh_system *system)
{
	delete system;
}

doca_error_t doca_apsh_sys_os_symbol_map_set(doca_apsh_system *system, const char *system_os_symbol_map_path)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(__func__, [&] { return target->set_symbol_map(system_os_symbol_map_path, api_name); });
}

doca_error_t doca_apsh_sys_mem_region_set(doca_apsh_system *system, const char *system_mem_region_path)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(__func__, [&] { return target->set_mem_region(system_mem_region_path, api_name); });
}

doca_error_t doca_apsh_sys_kpgd_file_set(doca_apsh_system *system, const char *system_kpgd_file_path)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	const char *const api_name = __func__; // __func__ in the lambda would be "operator()"
	return api_barrier(__func__, [&] { return target->set_kpgd_file(system_kpgd_file_path, api_name); });
}

doca_error_t doca_apsh_sys_dev_set(doca_apsh_system *system, doca_dev_rep *dev)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return target->set_dev(dev, __func__);
}

doca_error_t doca_apsh_sys_os_type_set(doca_apsh_system *system, enum doca_apsh_system_os os_type)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return target->set_os_type(as_integer(os_type), __func__);
}

doca_error_t doca_apsh_sys_set_scan_window_size(doca_apsh_system *system, uint32_t scan_window_size)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return target->set_window_size(scan_window_size, __func__);
}

doca_error_t doca_apsh_sys_set_scan_window_step(doca_apsh_system *system, uint32_t scan_window_step)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return target->set_window_step(scan_window_step, __func__);
}

doca_error_t __doca_apsh_sys_config(doca_apsh_system *system, enum doca_apsh_system_config_attr attr, void *value)
{
	auto *target = system_of(system, "doca_apsh_sys_config");
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier("doca_apsh_sys_config", [&] { return target->configure(as_integer(attr), value); });
}

doca_error_t doca_apsh_system_start(doca_apsh_system *system)
{
	auto *target = system_of(system, __func__);
	if (target == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(
	    __func__, [&] { return target->start(); }, DOCA_ERROR_INITIALIZATION);
}

} // extern "C"
