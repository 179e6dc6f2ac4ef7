/*
 * softdpu extension to doca_log.h: rate-limited logging.
 *
 * DOCA 2.5's doca_log.h has no rate limiting (its 23 functions are listed in docs/logging.md).
 * DOCA 1.x had it, under the names used here: a bucket per call site, registered lazily by the
 * DOCA_LOG_RATE_LIMIT macro, and a process-wide quota of N records per time window. softdpu keeps
 * those names so such code builds, but passes the call site like 2.5's doca_log does.
 *
 * Per bucket: the first `quantity` records of a window are written, later ones are counted and
 * dropped. The first record after the window has passed first writes one line saying how many
 * were suppressed, then itself. Defaults: 10 records per 1 second. Records that no backend would
 * show do not use up the quota. The path is lock-free (a few atomic operations per record).
 */
#ifndef SOFTDPU_LOG_H_
#define SOFTDPU_LOG_H_

#include <stdint.h>

#include "../doca_compat.h"
#include "../doca_error.h"
#include "../doca_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocates a rate-limit bucket for a call site of a registered source. Invalid value: NULL
 * bucket or unknown source. DOCA_ERROR_FULL when all 4096 buckets are in use. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_bucket_register(int source, int *bucket);

/* doca_log with the bucket's quota applied. Invalid value: as doca_log, or an unknown bucket
 * (then nothing is written). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func, int bucket,
				 const char *format, ...) __attribute__((format(printf, 7, 8)));

/* Records let through per bucket and window (0 drops all). Applies to every bucket. */
DOCA_EXPERIMENTAL
void doca_log_set_quantity(uint16_t quantity);
DOCA_EXPERIMENTAL
uint16_t doca_log_get_quantity(void);

/* Window length in seconds (0 disables the limit). Applies to every bucket. */
DOCA_EXPERIMENTAL
void doca_log_set_bucket_time(uint16_t bucket_time);
DOCA_EXPERIMENTAL
uint16_t doca_log_get_bucket_time(void);

/* Rate-limited DOCA_LOG: one bucket per expansion site, registered on first use. Concurrent
 * first uses may register two buckets for one site; one of them is then simply never used. */
#define DOCA_LOG_RATE_LIMIT(level, ...)                                                                                \
	do {                                                                                                           \
		static int doca_log_bucket_ = -1;                                                                      \
		int doca_log_bucket_id_ = __atomic_load_n(&doca_log_bucket_, __ATOMIC_ACQUIRE);                        \
		if (doca_log_bucket_id_ < 0 &&                                                                         \
		    doca_log_rate_bucket_register(log_source, &doca_log_bucket_id_) == DOCA_SUCCESS)                   \
			__atomic_store_n(&doca_log_bucket_, doca_log_bucket_id_, __ATOMIC_RELEASE);                    \
		doca_log_rate_limit(DOCA_LOG_LEVEL_##level, log_source, __FILE__, __LINE__, __func__,                  \
				    doca_log_bucket_id_, __VA_ARGS__);                                                 \
	} while (0)

#define DOCA_LOG_RATE_LIMIT_CRIT(...) DOCA_LOG_RATE_LIMIT(CRIT, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_ERR(...) DOCA_LOG_RATE_LIMIT(ERROR, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_WARN(...) DOCA_LOG_RATE_LIMIT(WARNING, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_INFO(...) DOCA_LOG_RATE_LIMIT(INFO, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_DBG(...) DOCA_LOG_RATE_LIMIT(DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LOG_H_ */
