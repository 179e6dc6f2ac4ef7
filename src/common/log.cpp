// Provisional SDK log sink: warnings and worse to stderr. Replaced by the doca_log.h backends.
#include "common/sdk_log.hpp"

#include <cstdarg>
#include <cstdio>

namespace softdpu::log {

bool sdk_enabled(uint32_t level) noexcept
{
	return level <= kWarning;
}

void sdk_message(uint32_t level, const char *file, int line, const char *func, const char *format, ...) noexcept
{
	(void)level;
	std::va_list args;
	va_start(args, format);
	std::fprintf(stderr, "[softdpu] %s:%d %s: ", file, line, func);
	std::vfprintf(stderr, format, args);
	std::fputc('\n', stderr);
	va_end(args);
}

} // namespace softdpu::log
