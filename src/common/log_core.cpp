#include "common/log_core.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstring>
#include <new>

#include <syslog.h>
#include <unistd.h>

namespace softdpu::log {

const char *level_tag(uint32_t level) noexcept
{
	if (level <= 20)
		return "CRIT";
	if (level <= 30)
		return "ERR";
	if (level <= 40)
		return "WARN";
	if (level <= 50)
		return "INFO";
	if (level <= 60)
		return "DBG";
	return "TRC";
}

namespace {

void append_location(std::string &out, const Record &record)
{
	out += '[';
	out += level_tag(record.level);
	out += "][";
	out += record.source;
	out += "][";
	out += record.file;
	out += ':';
	out += std::to_string(record.line);
	out += "][";
	out += record.function;
	out += "] ";
	out += record.message;
}

std::string_view base_name(const char *path) noexcept
{
	if (path == nullptr)
		return "?";
	const char *slash = std::strrchr(path, '/');
	return slash ? slash + 1 : path;
}

// SDK records carry no source id; name them after the softdpu module that wrote them, taken from
// the path of the source file ("src/dma/dma.cpp" -> "softdpu::dma").
std::string sdk_source_name(const char *path)
{
	std::string name = "softdpu";
	if (path == nullptr)
		return name;
	const char *src = std::strstr(path, "src/");
	if (src == nullptr)
		return name;
	src += 4;
	const char *end = std::strchr(src, '/');
	if (end != nullptr && end != src)
		name.append("::").append(src, end);
	return name;
}

class StreamBackend final : public Backend {
public:
	StreamBackend(Family family, FILE *stream) : Backend(family), stream_(stream) {}
	void write(const Record &, std::string_view line) noexcept override
	{
		// One fwrite per record; the FILE lock keeps it whole against other users of the stream.
		std::fwrite(line.data(), 1, line.size(), stream_);
		std::fflush(stream_);
	}

private:
	FILE *stream_;
};

class FdBackend final : public Backend {
public:
	FdBackend(Family family, int fd) : Backend(family), fd_(fd) {}
	void write(const Record &, std::string_view line) noexcept override
	{
		// A single write normally takes the whole record; loop only for short writes (pipes
		// that are nearly full) and signals.
		const char *data = line.data();
		size_t left = line.size();
		while (left > 0) {
			ssize_t written = ::write(fd_, data, left);
			if (written < 0) {
				if (errno == EINTR)
					continue;
				return; // a broken destination must not break the program that logs
			}
			data += written;
			left -= static_cast<size_t>(written);
		}
	}

private:
	int fd_;
};

class BufferBackend final : public Backend {
public:
	BufferBackend(Family family, char *buffer, size_t capacity, void (*flush)(char *))
	    : Backend(family), buffer_(buffer), capacity_(capacity), flush_(flush)
	{
	}
	void write(const Record &, std::string_view line) noexcept override
	{
		// capacity counts every char written, the terminating NUL included, so the handler
		// always gets a C string.
		size_t length = std::min(line.size(), capacity_ - 1);
		std::memcpy(buffer_, line.data(), length);
		buffer_[length] = '\0';
		flush_(buffer_);
	}

private:
	char *buffer_;
	size_t capacity_;
	void (*flush_)(char *);
};

class SyslogBackend final : public Backend {
public:
	SyslogBackend(Family family, std::string name) : Backend(family), name_(std::move(name)) {}
	~SyslogBackend() override { closelog(); }
	void write(const Record &record, std::string_view) noexcept override
	{
		try {
			std::string text = format_syslog_line(record);
			// openlog keeps a pointer to the ident; name_ lives as long as the backend.
			// Re-opening per record lets several syslog backends keep their own names.
			openlog(name_.c_str(), LOG_PID | LOG_NDELAY, LOG_USER);
			syslog(priority(record.level), "%s", text.c_str());
		} catch (...) {
		}
	}

private:
	static int priority(uint32_t level) noexcept
	{
		if (level <= 20)
			return LOG_CRIT;
		if (level <= 30)
			return LOG_ERR;
		if (level <= 40)
			return LOG_WARNING;
		if (level <= 50)
			return LOG_INFO;
		return LOG_DEBUG;
	}
	std::string name_;
};

} // namespace

std::string format_line(const Record &record)
{
	tm local{};
	localtime_r(&record.time.tv_sec, &local);
	char stamp[96];
	std::snprintf(stamp, sizeof(stamp), "[%04d-%02d-%02d %02d:%02d:%02d.%06ld][%ld]", local.tm_year + 1900,
		      local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
		      record.time.tv_nsec / 1000, static_cast<long>(record.pid));
	std::string out;
	out.reserve(96 + record.source.size() + record.file.size() + record.function.size() + record.message.size());
	out += stamp;
	append_location(out, record);
	out += '\n';
	return out;
}

std::string format_syslog_line(const Record &record)
{
	std::string out;
	append_location(out, record);
	return out;
}

bool Backend::accepts(uint32_t level) const noexcept
{
	if (level <= kMinLevel)
		return false;
	if (family_ == Family::sdk)
		return level <= sdk_level_;
	return level >= std::max(upper_, upper_floor_) && level <= std::min(lower_, lower_cap_);
}

uint32_t Backend::most_verbose_level() const noexcept
{
	if (family_ == Family::sdk)
		return sdk_level_ > kMinLevel ? sdk_level_ : 0;
	uint32_t lower = std::min(lower_, lower_cap_);
	uint32_t upper = std::max(upper_, upper_floor_);
	return (lower > kMinLevel && upper <= lower) ? lower : 0;
}

std::unique_ptr<Backend> make_stream_backend(Family family, FILE *stream)
{
	return std::make_unique<StreamBackend>(family, stream);
}

std::unique_ptr<Backend> make_fd_backend(Family family, int fd)
{
	return std::make_unique<FdBackend>(family, fd);
}

std::unique_ptr<Backend> make_buffer_backend(Family family, char *buffer, size_t capacity, void (*flush)(char *))
{
	return std::make_unique<BufferBackend>(family, buffer, capacity, flush);
}

std::unique_ptr<Backend> make_syslog_backend(Family family, std::string name)
{
	return std::make_unique<SyslogBackend>(family, std::move(name));
}

Logger &Logger::instance() noexcept
{
	// Never destroyed: it must outlive every static destructor that may still log. Built in static
	// storage, not on the heap: the first record may well be the report of an allocation failure.
	alignas(Logger) static unsigned char storage[sizeof(Logger)];
	static Logger *const logger = new (storage) Logger();
	return *logger;
}

doca_error_t Logger::register_source(const char *name, int *source) noexcept
{
	try {
		std::lock_guard lock(mutex_);
		if (sources_.empty())
			sources_.emplace_back(); // id 0 stays unused: a zero-initialised log_source is "unregistered"
		sources_.emplace_back(name);
		*source = static_cast<int>(sources_.size() - 1);
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t Logger::unregister_source(int source) noexcept
{
	std::lock_guard lock(mutex_);
	if (source <= 0 || static_cast<size_t>(source) >= sources_.size() || !sources_[source])
		return DOCA_ERROR_INVALID_VALUE;
	// Ids are never reused, so a stale id cannot log under somebody else's name.
	sources_[source].reset();
	return DOCA_SUCCESS;
}

bool Logger::is_registered(int source) noexcept
{
	std::lock_guard lock(mutex_);
	return source > 0 && static_cast<size_t>(source) < sources_.size() && sources_[source].has_value();
}

doca_error_t Logger::add_backend(std::unique_ptr<Backend> backend, Backend **out) noexcept
{
	try {
		std::lock_guard lock(mutex_);
		// New backends start from the current global limits.
		backend->lower_ = global_lower_;
		backend->upper_ = global_upper_;
		backend->sdk_level_ = global_sdk_;
		Backend *raw = backend.get();
		backends_.push_back(std::move(backend));
		if (raw->family() == Family::sdk)
			have_sdk_backend_ = true;
		refresh_fast_path_locked();
		if (out)
			*out = raw;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t Logger::create_standard() noexcept
{
	try {
		auto out = make_stream_backend(Family::application, stdout);
		out->upper_floor_ = 50; // INFO and more verbose
		auto err = make_stream_backend(Family::application, stderr);
		err->lower_cap_ = 40; // WARNING and more severe
		doca_error_t result = add_backend(std::move(out), nullptr);
		if (result != DOCA_SUCCESS)
			return result;
		return add_backend(std::move(err), nullptr);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

Backend *Logger::find_locked(const Backend *backend) const noexcept
{
	for (const auto &owned : backends_)
		if (owned.get() == backend)
			return owned.get();
	return nullptr;
}

bool Logger::owns(const Backend *backend) noexcept
{
	std::lock_guard lock(mutex_);
	return find_locked(backend) != nullptr;
}

doca_error_t Logger::set_backend_limit(Backend *backend, Limit which, uint32_t level) noexcept
{
	std::lock_guard lock(mutex_);
	Backend *found = find_locked(backend);
	if (found == nullptr || found->family() != Family::application)
		return DOCA_ERROR_INVALID_VALUE;
	if (which == Limit::lower) {
		if (found->lower_strict_)
			return DOCA_ERROR_NOT_PERMITTED;
		found->lower_ = level;
	} else {
		if (found->upper_strict_)
			return DOCA_ERROR_NOT_PERMITTED;
		found->upper_ = level;
	}
	refresh_fast_path_locked();
	return DOCA_SUCCESS;
}

doca_error_t Logger::make_backend_limit_strict(Backend *backend, Limit which) noexcept
{
	std::lock_guard lock(mutex_);
	Backend *found = find_locked(backend);
	if (found == nullptr || found->family() != Family::application)
		return DOCA_ERROR_INVALID_VALUE;
	(which == Limit::lower ? found->lower_strict_ : found->upper_strict_) = true;
	return DOCA_SUCCESS;
}

doca_error_t Logger::set_backend_sdk_level(Backend *backend, uint32_t level) noexcept
{
	std::lock_guard lock(mutex_);
	Backend *found = find_locked(backend);
	if (found == nullptr || found->family() != Family::sdk)
		return DOCA_ERROR_INVALID_VALUE;
	found->sdk_level_ = level;
	refresh_fast_path_locked();
	return DOCA_SUCCESS;
}

doca_error_t Logger::set_global_limit(Limit which, uint32_t level) noexcept
{
	std::lock_guard lock(mutex_);
	(which == Limit::lower ? global_lower_ : global_upper_) = level;
	for (auto &backend : backends_) {
		if (backend->family() != Family::application)
			continue;
		if (which == Limit::lower && !backend->lower_strict_)
			backend->lower_ = level;
		if (which == Limit::upper && !backend->upper_strict_)
			backend->upper_ = level;
	}
	refresh_fast_path_locked();
	return DOCA_SUCCESS;
}

uint32_t Logger::global_limit(Limit which) noexcept
{
	std::lock_guard lock(mutex_);
	return which == Limit::lower ? global_lower_ : global_upper_;
}

doca_error_t Logger::set_global_sdk_limit(uint32_t level) noexcept
{
	std::lock_guard lock(mutex_);
	global_sdk_ = level;
	for (auto &backend : backends_)
		if (backend->family() == Family::sdk)
			backend->sdk_level_ = level;
	refresh_fast_path_locked();
	return DOCA_SUCCESS;
}

uint32_t Logger::global_sdk_limit() noexcept
{
	std::lock_guard lock(mutex_);
	return global_sdk_;
}

void Logger::refresh_fast_path_locked() noexcept
{
	uint32_t application = 0;
	uint32_t sdk = 0;
	for (const auto &backend : backends_) {
		uint32_t &most_verbose = backend->family() == Family::application ? application : sdk;
		most_verbose = std::max(most_verbose, backend->most_verbose_level());
	}
	// Without any SDK backend, errors inside the library still reach stderr (doca_log.h), unless
	// the program lowered the global SDK limit below ERROR.
	if (!have_sdk_backend_) {
		uint32_t fallback = std::min(global_sdk_, kSdkFallbackLevel);
		sdk = fallback > kMinLevel ? fallback : 0;
	}
	application_most_verbose_.store(application, std::memory_order_relaxed);
	sdk_most_verbose_.store(sdk, std::memory_order_relaxed);
}

doca_error_t Logger::log(Family family, uint32_t level, int source, const char *source_name, const char *file, int line,
			 const char *function, const char *format, va_list args) noexcept
{
	// Records logged from inside a backend (a flush callback that logs) would deadlock on the
	// lock below; they are dropped instead.
	thread_local bool inside_logger = false;
	if (inside_logger)
		return DOCA_ERROR_IN_USE;

	try {
		char small[512];
		std::string large;
		std::string_view message;
		va_list copy;
		va_copy(copy, args);
		int length = std::vsnprintf(small, sizeof(small), format, copy);
		va_end(copy);
		if (length < 0)
			return DOCA_ERROR_INVALID_VALUE;
		if (static_cast<size_t>(length) < sizeof(small)) {
			message = std::string_view(small, static_cast<size_t>(length));
		} else {
			large.resize(static_cast<size_t>(length) + 1);
			std::vsnprintf(large.data(), large.size(), format, args);
			large.resize(static_cast<size_t>(length));
			message = large;
		}

		Record record{};
		record.level = level;
		record.file = base_name(file);
		record.line = line;
		record.function = function ? function : "?";
		record.message = message;
		clock_gettime(CLOCK_REALTIME, &record.time);
		record.pid = getpid();
		std::string sdk_name;
		if (family == Family::sdk) {
			sdk_name = source_name ? std::string(source_name) : sdk_source_name(file);
			record.source = sdk_name;
		}

		std::lock_guard lock(mutex_);
		inside_logger = true;
		if (family == Family::application) {
			bool known = source > 0 && static_cast<size_t>(source) < sources_.size() && sources_[source];
			record.source = known ? std::string_view(*sources_[source]) : std::string_view("UNKNOWN");
		}
		std::string formatted = format_line(record);
		for (const auto &backend : backends_)
			if (backend->family() == family && backend->accepts(level))
				backend->write(record, formatted);
		if (family == Family::sdk && !have_sdk_backend_ && sdk_enabled(level)) {
			std::fwrite(formatted.data(), 1, formatted.size(), stderr);
			std::fflush(stderr);
		}
		inside_logger = false;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		inside_logger = false;
		return DOCA_ERROR_NO_MEMORY;
	}
}

void Logger::reset_for_testing() noexcept
{
	std::lock_guard lock(mutex_);
	backends_.clear();
	global_lower_ = kDefaultLowerLimit;
	global_upper_ = kDefaultUpperLimit;
	global_sdk_ = kDefaultSdkLimit;
	have_sdk_backend_ = false;
	refresh_fast_path_locked();
	rate_limiter_.reset();
}

} // namespace softdpu::log
