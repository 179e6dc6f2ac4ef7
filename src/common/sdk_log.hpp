// Internal logging for softdpu's own diagnostics. DOCA calls these "SDK" messages: they go to the
// SDK log backends (doca_log_backend_create_with_*_sdk) and are filtered by the SDK log level.
#pragma once

#include <cstdint>

namespace softdpu::log {

// Numeric DOCA log levels (doca_log.h: enum doca_log_level).
enum class Level : uint32_t { crit = 20, error = 30, warning = 40, info = 50, debug = 60, trace = 70 };

} // namespace softdpu::log

// Defined in libdoca_common and called from the other libraries too, so they have C names: the
// shared libraries export no C++ symbols (cmake/exports.map). "priv_" as DOCA names its own
// library-internal entry points; applications must not call them.
extern "C" {

// True when some SDK backend would show a message of this level; keeps the fast path free of
// formatting work.
bool priv_doca_sdk_log_enabled(uint32_t level) noexcept;

void priv_doca_sdk_log(uint32_t level, const char *file, int line, const char *func, const char *format, ...) noexcept
    __attribute__((format(printf, 5, 6)));

} // extern "C"

#define SOFTDPU_SDK_LOG(level, ...)                                                                                    \
	do {                                                                                                           \
		if (priv_doca_sdk_log_enabled(static_cast<uint32_t>(level)))                                           \
			priv_doca_sdk_log(static_cast<uint32_t>(level), __FILE__, __LINE__, __func__, __VA_ARGS__);    \
	} while (0)
#define SDK_LOG_CRIT(...) SOFTDPU_SDK_LOG(softdpu::log::Level::crit, __VA_ARGS__)
#define SDK_LOG_ERR(...) SOFTDPU_SDK_LOG(softdpu::log::Level::error, __VA_ARGS__)
#define SDK_LOG_WARN(...) SOFTDPU_SDK_LOG(softdpu::log::Level::warning, __VA_ARGS__)
#define SDK_LOG_INFO(...) SOFTDPU_SDK_LOG(softdpu::log::Level::info, __VA_ARGS__)
#define SDK_LOG_DBG(...) SOFTDPU_SDK_LOG(softdpu::log::Level::debug, __VA_ARGS__)
