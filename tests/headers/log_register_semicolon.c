/*
 * DOCA_LOG_REGISTER followed by a semicolon, as NVIDIA's samples write it. The ';' is an extra
 * one outside a function, which C (unlike C++) reports under -pedantic with DOCA's header as with
 * ours, so the C compile uses the samples' flags (-std=c11 -Wall -Wextra -Werror, no -pedantic);
 * the C++20 compile (generated wrapper) keeps -pedantic.
 */
#include <doca_log.h>

DOCA_LOG_REGISTER(HEADERS::SEMICOLON);

int headers_log_semicolon(void);

int headers_log_semicolon(void)
{
	DOCA_LOG_DBG("log source %d registered with a semicolon", log_source);
	return log_source;
}
