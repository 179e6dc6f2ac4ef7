/*
 * softdpu: DOCA 2.5 logging (doca_log.h). Written for softdpu from the DOCA 2.5 interface facts.
 *
 * Model
 *   A program registers log sources (DOCA_LOG_REGISTER, one per translation unit) and logs through
 *   DOCA_LOG_* macros. Records go to every *application* backend whose limits accept the level.
 *   The libraries' own diagnostics go to *SDK* backends (the *_sdk constructors) instead.
 *   Levels are numbers where smaller means more severe: DISABLE 10, CRIT 20, ... TRACE 70.
 *
 * Filtering
 *   Application backend: a record of level L is written when upper <= L <= lower. Each backend
 *   starts with the current global lower limit (default INFO) and global upper limit (default
 *   CRIT); changing a global limit moves the limit of every backend whose limit is not strict.
 *   A strict limit can be moved by neither global nor direct calls afterwards.
 *   SDK backend: a record of level L is written when L <= the backend's SDK level. New SDK
 *   backends take the global SDK limit (default INFO); changing it moves every SDK backend.
 *   Until a program creates an SDK backend, softdpu writes SDK records of level ERROR and worse
 *   to stderr, so failures inside the library are never silent.
 *
 * Line format (stable; docs/logging.md), one record per line, written with a single call:
 *   [YYYY-MM-DD HH:MM:SS.uuuuuu][pid][LVL][source][file:line][function] message
 *   LVL is CRIT, ERR, WARN, INFO, DBG or TRC; file is the base name of the source file. The
 *   syslog backends omit the time and pid, which syslog adds itself.
 *
 * Backends live until the process exits (DOCA has no call that destroys one). All functions are
 * thread safe; records from concurrent threads never interleave within a line.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10, /* no record passes */
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

/* A destination for log records. Opaque; owned by the library. */
struct doca_log_backend;

/* Called by a buffer backend after each record was written, NUL-terminated, into its buffer. */
typedef void (*log_flush_callback)(char *buffer);

/* Application backend limits. Invalid value: NULL or unknown backend, level outside 10..70, SDK
 * backend. Not permitted: the limit was made strict. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit);
/* Freezes the current limit: global changes skip it afterwards and direct changes return
 * DOCA_ERROR_NOT_PERMITTED. Invalid value: NULL, unknown or SDK backend. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend);

/* Global limits of application backends: the default for new backends, applied to existing ones
 * except where strict. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_lower_limit(uint32_t level);
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);
DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_lower_limit(void);
DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_upper_limit(void);

/* Source registration; works before main and before any backend exists. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_register_source(const char *source_name, int *source);
DOCA_EXPERIMENTAL
doca_error_t doca_log_unregister_source(int source);

/* Application backends. The FILE or fd stays owned by the caller and must outlive the process's
 * logging. The buffer backend writes each record (at most capacity - 1 chars plus NUL) at the
 * start of buffer, then calls handler(buffer). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buffer(char *buffer, size_t capacity, log_flush_callback handler,
						 struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend);

/* SDK backends: they receive the libraries' own records, filtered by their SDK level. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buffer_sdk(char *buffer, size_t capacity, log_flush_callback handler,
						     struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level);
DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_sdk_limit(void);

/* Two application backends: stdout for INFO up to the backend's lower limit, stderr for the
 * backend's upper limit up to WARNING. Their limits follow the global ones like any backend's,
 * but stdout never shows anything more severe than INFO and stderr nothing less severe than
 * WARNING, so each record appears on exactly one of the two. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_standard(void);

/* Writes one record to the matching application backends. Prefer the DOCA_LOG_* macros.
 * Invalid value: level outside 10..70 or NULL format. An unregistered source is logged under the
 * name "UNKNOWN". */
DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func, const char *format,
		      ...) __attribute__((format(printf, 6, 7)));

/* Logs at a level named without its prefix (CRIT, ERROR, WARNING, INFO, DEBUG, TRACE), under the
 * source that DOCA_LOG_REGISTER defined in this translation unit. */
#define DOCA_LOG(level, ...) doca_log(DOCA_LOG_LEVEL_##level, log_source, __FILE__, __LINE__, __func__, __VA_ARGS__)

#define DOCA_LOG_CRIT(...) DOCA_LOG(CRIT, __VA_ARGS__)
#define DOCA_LOG_ERR(...) DOCA_LOG(ERROR, __VA_ARGS__)
#define DOCA_LOG_WARN(...) DOCA_LOG(WARNING, __VA_ARGS__)
#define DOCA_LOG_INFO(...) DOCA_LOG(INFO, __VA_ARGS__)
#define DOCA_LOG_DBG(...) DOCA_LOG(DEBUG, __VA_ARGS__)

#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(...) DOCA_LOG(TRACE, __VA_ARGS__)
#else
/* Trace records are compiled out unless DOCA_LOGGING_ALLOW_TRACE is defined. */
#define DOCA_LOG_TRC(...)                                                                                              \
	do {                                                                                                           \
	} while (0)
#endif

/*
 * Defines this translation unit's log source. The name is stringised, so "A::B" and "A:B" are
 * fine. Priority 101 runs the registration before any user constructor, and unregisters after
 * every user destructor.
 *
 * The expansion ends with a function body, as DOCA's does, so both DOCA_LOG_REGISTER(X) and
 * DOCA_LOG_REGISTER(X); compile. With the semicolon (as NVIDIA's samples write it) a C compiler
 * in -pedantic mode warns about the extra ';' outside a function, as it does with DOCA's header;
 * C++ accepts it silently.
 */
#define DOCA_LOG_REGISTER(source)                                                                                      \
	static int log_source;                                                                                         \
	__attribute__((constructor(101), used)) static void doca_log_source_constructor(void)                          \
	{                                                                                                              \
		doca_log_register_source(#source, &log_source);                                                        \
	}                                                                                                              \
	__attribute__((destructor(101), used)) static void doca_log_source_destructor(void)                            \
	{                                                                                                              \
		doca_log_unregister_source(log_source);                                                                \
	}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
