// Internal logging for softdpu's own diagnostics. DOCA calls these "SDK" messages: they go to the
// SDK log backends (doca_log_backend_create_with_*_sdk) and are filtered by the SDK log level.
#pragma once

#include <cstdint>

namespace softdpu::log {

// Numeric DOCA log levels (doca_log.h: enum doca_log_level).
enum Level : uint32_t { kCrit = 20, kError = 30, kWarning = 40, kInfo = 50, kDebug = 60, kTrace = 70 };

// True when some SDK backend would show a message of this level; keeps the fast path free of
// formatting work.
bool sdk_enabled(uint32_t level) noexcept;

void sdk_message(uint32_t level, const char *file, int line, const char *func, const char *format, ...) noexcept
	__attribute__((format(printf, 5, 6)));

} // namespace softdpu::log

#define SOFTDPU_SDK_LOG(level, ...)                                                                \
	do {                                                                                       \
		if (softdpu::log::sdk_enabled(level))                                              \
			softdpu::log::sdk_message(level, __FILE__, __LINE__, __func__, __VA_ARGS__);       \
	} while (0)
#define SDK_LOG_CRIT(...) SOFTDPU_SDK_LOG(softdpu::log::kCrit, __VA_ARGS__)
#define SDK_LOG_ERR(...) SOFTDPU_SDK_LOG(softdpu::log::kError, __VA_ARGS__)
#define SDK_LOG_WARN(...) SOFTDPU_SDK_LOG(softdpu::log::kWarning, __VA_ARGS__)
#define SDK_LOG_INFO(...) SOFTDPU_SDK_LOG(softdpu::log::kInfo, __VA_ARGS__)
#define SDK_LOG_DBG(...) SOFTDPU_SDK_LOG(softdpu::log::kDebug, __VA_ARGS__)
