// C layer of doca_log.h and softdpu/log.h: argument checks, then the Logger.
#include <doca_log.h>
#include <softdpu/log.h>

#include <cstdarg>
#include <new>
#include <string>

#include "common/log_core.hpp"
#include "common/sdk_log.hpp"

using softdpu::log::Backend;
using softdpu::log::Family;
using softdpu::log::is_valid_level;
using softdpu::log::Logger;

namespace {

// The opaque public handle is the engine's Backend; struct doca_log_backend is never defined.

Backend *to_backend(doca_log_backend *handle) noexcept
{
	return reinterpret_cast<Backend *>(handle);
}

doca_error_t publish(std::unique_ptr<Backend> backend, doca_log_backend **out) noexcept
{
	Backend *raw = nullptr;
	doca_error_t result = Logger::instance().add_backend(std::move(backend), &raw);
	if (result == DOCA_SUCCESS)
		*out = reinterpret_cast<doca_log_backend *>(raw);
	return result;
}

doca_error_t create_file(Family family, FILE *fptr, doca_log_backend **backend) noexcept
{
	if (fptr == nullptr || backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		return publish(softdpu::log::make_stream_backend(family, fptr), backend);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t create_fd(Family family, int fd, doca_log_backend **backend) noexcept
{
	if (fd < 0 || backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		return publish(softdpu::log::make_fd_backend(family, fd), backend);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t create_buffer(Family family, char *buffer, size_t capacity, log_flush_callback handler,
			   doca_log_backend **backend) noexcept
{
	if (buffer == nullptr || capacity == 0 || handler == nullptr || backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		return publish(softdpu::log::make_buffer_backend(family, buffer, capacity, handler), backend);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t create_syslog(Family family, const char *name, doca_log_backend **backend) noexcept
{
	if (name == nullptr || backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		return publish(softdpu::log::make_syslog_backend(family, name), backend);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t log_application(uint32_t level, int source, const char *fname, int line, const char *func,
			     const char *format, ...) noexcept __attribute__((format(printf, 6, 7)));
doca_error_t log_application(uint32_t level, int source, const char *fname, int line, const char *func,
			     const char *format, ...) noexcept
{
	va_list args;
	va_start(args, format);
	doca_error_t result =
	    Logger::instance().log(Family::application, level, source, nullptr, fname, line, func, format, args);
	va_end(args);
	return result;
}

doca_error_t set_limit(doca_log_backend *backend, Logger::Limit which, uint32_t level) noexcept
{
	if (backend == nullptr || !is_valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().set_backend_limit(to_backend(backend), which, level);
}

} // namespace

extern "C" {

doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level)
{
	return set_limit(backend, Logger::Limit::lower, level);
}

doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit)
{
	return set_limit(backend, Logger::Limit::upper, upper_limit);
}

doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend)
{
	if (backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().make_backend_limit_strict(to_backend(backend), Logger::Limit::lower);
}

doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend)
{
	if (backend == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().make_backend_limit_strict(to_backend(backend), Logger::Limit::upper);
}

doca_error_t doca_log_level_set_global_lower_limit(uint32_t level)
{
	if (!is_valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().set_global_limit(Logger::Limit::lower, level);
}

doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit)
{
	if (!is_valid_level(upper_limit))
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().set_global_limit(Logger::Limit::upper, upper_limit);
}

uint32_t doca_log_level_get_global_lower_limit(void)
{
	return Logger::instance().global_limit(Logger::Limit::lower);
}

uint32_t doca_log_level_get_global_upper_limit(void)
{
	return Logger::instance().global_limit(Logger::Limit::upper);
}

doca_error_t doca_log_register_source(const char *source_name, int *source)
{
	if (source_name == nullptr || source == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().register_source(source_name, source);
}

doca_error_t doca_log_unregister_source(int source)
{
	return Logger::instance().unregister_source(source);
}

doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend)
{
	return create_file(Family::application, fptr, backend);
}

doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend)
{
	return create_fd(Family::application, fd, backend);
}

doca_error_t doca_log_backend_create_with_buffer(char *buffer, size_t capacity, log_flush_callback handler,
						 struct doca_log_backend **backend)
{
	return create_buffer(Family::application, buffer, capacity, handler, backend);
}

doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend)
{
	return create_syslog(Family::application, name, backend);
}

doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level)
{
	if (backend == nullptr || !is_valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().set_backend_sdk_level(to_backend(backend), level);
}

doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend)
{
	return create_file(Family::sdk, fptr, backend);
}

doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend)
{
	return create_fd(Family::sdk, fd, backend);
}

doca_error_t doca_log_backend_create_with_buffer_sdk(char *buffer, size_t capacity, log_flush_callback handler,
						     struct doca_log_backend **backend)
{
	return create_buffer(Family::sdk, buffer, capacity, handler, backend);
}

doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend)
{
	return create_syslog(Family::sdk, name, backend);
}

doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level)
{
	if (!is_valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	return Logger::instance().set_global_sdk_limit(level);
}

uint32_t doca_log_level_get_global_sdk_limit(void)
{
	return Logger::instance().global_sdk_limit();
}

doca_error_t doca_log_backend_create_standard(void)
{
	return Logger::instance().create_standard();
}

doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func, const char *format,
		      ...)
{
	if (!is_valid_level(level) || format == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	Logger &logger = Logger::instance();
	if (!logger.application_enabled(level))
		return DOCA_SUCCESS;
	va_list args;
	va_start(args, format);
	doca_error_t result = logger.log(Family::application, level, source, nullptr, fname, line, func, format, args);
	va_end(args);
	return result;
}

doca_error_t doca_log_rate_bucket_register(int source, int *bucket)
{
	Logger &logger = Logger::instance();
	if (bucket == nullptr || !logger.is_registered(source))
		return DOCA_ERROR_INVALID_VALUE;
	int id = logger.rate_limiter().register_bucket();
	if (id < 0)
		return DOCA_ERROR_FULL;
	*bucket = id;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func, int bucket,
				 const char *format, ...)
{
	Logger &logger = Logger::instance();
	if (!is_valid_level(level) || format == nullptr || !logger.rate_limiter().is_registered(bucket))
		return DOCA_ERROR_INVALID_VALUE;
	// Records nobody would see must not use up the quota.
	if (!logger.application_enabled(level))
		return DOCA_SUCCESS;
	auto decision = logger.rate_limiter().admit(bucket);
	doca_error_t result = DOCA_SUCCESS;
	if (decision.suppressed_before > 0) {
		// Reported through the same path, so the line carries this call site.
		result = log_application(level, source, fname, line, func,
					 "%llu similar messages suppressed by the rate limit",
					 static_cast<unsigned long long>(decision.suppressed_before));
	}
	if (!decision.write)
		return result;
	va_list args;
	va_start(args, format);
	result = logger.log(Family::application, level, source, nullptr, fname, line, func, format, args);
	va_end(args);
	return result;
}

void doca_log_set_quantity(uint16_t quantity)
{
	Logger::instance().rate_limiter().set_quantity(quantity);
}

uint16_t doca_log_get_quantity(void)
{
	return Logger::instance().rate_limiter().quantity();
}

void doca_log_set_bucket_time(uint16_t bucket_time)
{
	Logger::instance().rate_limiter().set_window_ns(uint64_t{bucket_time} * 1'000'000'000u);
}

uint16_t doca_log_get_bucket_time(void)
{
	return static_cast<uint16_t>(Logger::instance().rate_limiter().window_ns() / 1'000'000'000u);
}

// The SDK's own diagnostics (common/sdk_log.hpp).
bool priv_doca_sdk_log_enabled(uint32_t level) noexcept
{
	return Logger::instance().sdk_enabled(level);
}

void priv_doca_sdk_log(uint32_t level, const char *file, int line, const char *func, const char *format, ...) noexcept
{
	if (!is_valid_level(level) || format == nullptr)
		return;
	va_list args;
	va_start(args, format);
	Logger::instance().log(Family::sdk, level, 0, nullptr, file, line, func, format, args);
	va_end(args);
}

} // extern "C"
