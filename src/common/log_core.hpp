// The logging engine behind doca_log.h: sources, backends, filtering and the line format.
// The C functions in log_api.cpp only validate arguments and forward here.
#pragma once

#include <doca_error.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>
#include <time.h>

#include "common/log_rate_limit.hpp"

namespace softdpu::log {

inline constexpr uint32_t kMinLevel = 10; // DOCA_LOG_LEVEL_DISABLE
inline constexpr uint32_t kMaxLevel = 70; // DOCA_LOG_LEVEL_TRACE
inline constexpr uint32_t kDefaultLowerLimit = 50;
inline constexpr uint32_t kDefaultUpperLimit = 20;
inline constexpr uint32_t kDefaultSdkLimit = 50;
// Most verbose SDK level written to stderr while the program has created no SDK backend (ERROR).
inline constexpr uint32_t kSdkFallbackLevel = 30;

constexpr bool is_valid_level(uint32_t level) noexcept
{
	return level >= kMinLevel && level <= kMaxLevel;
}

// Short level tag used in lines: CRIT, ERR, WARN, INFO, DBG, TRC. Levels between the named ones
// take the tag of the next more verbose named level (45 -> INFO).
const char *level_tag(uint32_t level) noexcept;

// Everything a backend may print about one record.
struct Record {
	uint32_t level;
	std::string_view source;
	std::string_view file; // base name only
	int line;
	std::string_view function;
	std::string_view message;
	timespec time;
	pid_t pid;
};

// "[YYYY-MM-DD HH:MM:SS.uuuuuu][pid][LVL][source][file:line][function] message\n"
std::string format_line(const Record &record);
// The same without time and pid (syslog adds those) and without the newline.
std::string format_syslog_line(const Record &record);

enum class Family { application, sdk };

class Backend {
public:
	// Limits are set when the logger adopts the backend (Logger::add_backend).
	explicit Backend(Family family) : family_(family) {}
	virtual ~Backend() = default;
	Backend(const Backend &) = delete;
	Backend &operator=(const Backend &) = delete;

	Family family() const noexcept { return family_; }
	bool accepts(uint32_t level) const noexcept;
	// The most verbose level this backend writes, 0 if none.
	uint32_t most_verbose_level() const noexcept;

	// Called with the logger's lock held; `line` is format_line(record).
	virtual void write(const Record &record, std::string_view line) noexcept = 0;

private:
	Family family_;

public:
	// Limits of application backends (see doca_log.h for the rules).
	uint32_t lower_ = kDefaultLowerLimit;
	uint32_t upper_ = kDefaultUpperLimit;
	bool lower_strict_ = false;
	bool upper_strict_ = false;
	// Fixed bounds the moving limits cannot cross; the standard stdout/stderr pair uses them so
	// that each record lands on exactly one of the two.
	uint32_t lower_cap_ = kMaxLevel;
	uint32_t upper_floor_ = kMinLevel;
	// Threshold of SDK backends.
	uint32_t sdk_level_ = kDefaultSdkLimit;
};

std::unique_ptr<Backend> make_stream_backend(Family family, FILE *stream);
std::unique_ptr<Backend> make_fd_backend(Family family, int fd);
std::unique_ptr<Backend> make_buffer_backend(Family family, char *buffer, size_t capacity, void (*flush)(char *));
std::unique_ptr<Backend> make_syslog_backend(Family family, std::string name);

// Process-wide logger. Created on first use and never destroyed, so that sources can register
// from constructors and unregister from destructors in any order relative to other statics.
class Logger {
public:
	static Logger &instance() noexcept;

	doca_error_t register_source(const char *name, int *source) noexcept;
	doca_error_t unregister_source(int source) noexcept;
	bool is_registered(int source) noexcept;

	// Takes ownership; returns the raw pointer handed out as struct doca_log_backend *.
	doca_error_t add_backend(std::unique_ptr<Backend> backend, Backend **out) noexcept;
	doca_error_t create_standard() noexcept;
	bool owns(const Backend *backend) noexcept;

	enum class Limit { lower, upper };
	doca_error_t set_backend_limit(Backend *backend, Limit which, uint32_t level) noexcept;
	doca_error_t make_backend_limit_strict(Backend *backend, Limit which) noexcept;
	doca_error_t set_backend_sdk_level(Backend *backend, uint32_t level) noexcept;

	doca_error_t set_global_limit(Limit which, uint32_t level) noexcept;
	uint32_t global_limit(Limit which) noexcept;
	doca_error_t set_global_sdk_limit(uint32_t level) noexcept;
	uint32_t global_sdk_limit() noexcept;

	// Cheap pre-checks, so disabled records are never formatted.
	bool application_enabled(uint32_t level) const noexcept
	{
		return level > kMinLevel && level <= application_most_verbose_.load(std::memory_order_relaxed);
	}
	bool sdk_enabled(uint32_t level) const noexcept
	{
		return level > kMinLevel && level <= sdk_most_verbose_.load(std::memory_order_relaxed);
	}

	// Writes a record to every matching backend of the family. `source_name` overrides the
	// registered name (SDK records carry no source id).
	doca_error_t log(Family family, uint32_t level, int source, const char *source_name, const char *file, int line,
			 const char *function, const char *format, va_list args) noexcept;

	RateLimiter &rate_limiter() noexcept { return rate_limiter_; }

	// Tests only: forget every backend and restore the default limits. Sources stay.
	void reset_for_testing() noexcept;

private:
	Logger() = default;
	void refresh_fast_path_locked() noexcept;
	Backend *find_locked(const Backend *backend) const noexcept;

	mutable std::mutex mutex_;
	std::vector<std::unique_ptr<Backend>> backends_;
	std::vector<std::optional<std::string>> sources_; // index = source id
	uint32_t global_lower_ = kDefaultLowerLimit;
	uint32_t global_upper_ = kDefaultUpperLimit;
	uint32_t global_sdk_ = kDefaultSdkLimit;
	bool have_sdk_backend_ = false;
	std::atomic<uint32_t> application_most_verbose_{0};
	// Until a program creates an SDK backend, library errors go to stderr (refresh_fast_path_locked).
	std::atomic<uint32_t> sdk_most_verbose_{kSdkFallbackLevel};
	RateLimiter rate_limiter_;
};

} // namespace softdpu::log
