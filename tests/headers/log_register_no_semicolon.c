/*
 * DOCA_LOG_REGISTER without a semicolon, as DOCA's own header documents it. Strict everywhere:
 * C11 and (through a generated wrapper) C++20, both -pedantic -Werror.
 */
#include <doca_log.h>

DOCA_LOG_REGISTER(HEADERS::NO_SEMICOLON)

int headers_log_no_semicolon(void);

int headers_log_no_semicolon(void)
{
	DOCA_LOG_INFO("log source %d registered without a semicolon", log_source);
	return log_source;
}
