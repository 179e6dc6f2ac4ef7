/*
 * softdpu extensions to doca_apsh.h (App Shield), in libdoca_apsh.
 *
 * User YARA rules: DOCA 2.5 scans only with its three built-in rules (enum doca_apsh_yara_rule).
 * softdpu also compiles rule text or rule files with libyara and scans a process with them,
 * using the system's scan window size and step exactly as doca_apsh_yara_get does; the results
 * are the same doca_apsh_yara objects (read with doca_apsh_yara_info_get, freed with
 * doca_apsh_yara_free).
 */
#ifndef SOFTDPU_APSH_H_
#define SOFTDPU_APSH_H_

#include <stdbool.h>
#include <stdint.h>

#include "../doca_apsh.h"
#include "../doca_compat.h"
#include "../doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compiled user rules. */
struct doca_apsh_user_yara_rules;

/* Compiles YARA rule text. INVALID_VALUE for NULL arguments or rules that do not compile (the
 * SDK log has libyara's message with the line); NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_create_from_string(const char *rules_text,
							  struct doca_apsh_user_yara_rules **rules);

/* The same for a rule file (INVALID_VALUE also when it cannot be read). */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_create_from_file(const char *rules_path,
							struct doca_apsh_user_yara_rules **rules);

/* Declares that every rule's condition can only become true, never false, when more bytes are
 * scanned ("any of them", "all of them", "N of them"; no "not", no counts compared with "<",
 * no filesize). Scans then skip the windows of memory in which no rule matches as a whole, which
 * is much faster. Default: false. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_set_monotonic(struct doca_apsh_user_yara_rules *rules, bool monotonic);

/* Rules stay valid for scans still running elsewhere; NULL is ignored. */
DOCA_EXPERIMENTAL
void doca_apsh_user_yara_rules_destroy(struct doca_apsh_user_yara_rules *rules);

/* doca_apsh_yara_get with user rules: every rule of the set counts. Same results and errors. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_get(struct doca_apsh_process *process, const struct doca_apsh_user_yara_rules *rules,
				     uint64_t scan_type, struct doca_apsh_yara ***yara_matches, int *yara_matches_size);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_APSH_H_ */
