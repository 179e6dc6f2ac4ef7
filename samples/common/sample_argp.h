/*
 * Command-line helpers shared by the samples that parse flags with doca_argp (dma_copy and the
 * DPDK samples). Compiled only into those samples: it needs doca-argp.
 */
#ifndef SAMPLE_ARGP_H_
#define SAMPLE_ARGP_H_

#include <stdbool.h>
#include <stddef.h>

#include <doca_argp.h>
#include <doca_error.h>

/* Registers one flag with doca_argp; logs and returns the error when registration fails. */
doca_error_t sample_argp_register_flag(const char *short_name, const char *long_name, const char *arguments,
				       const char *description, enum doca_argp_type type, doca_argp_param_cb_t callback,
				       bool mandatory);

/* Copies a string flag's value into [into, into + size): DOCA_ERROR_INVALID_VALUE (logged, naming
 * --flag) when the value is empty or does not fit. */
doca_error_t sample_argp_copy_string(char *into, size_t size, const char *value, const char *flag);

/* Reads a --role flag's value: *is_host tells "host" from "dpu"; DOCA_ERROR_INVALID_VALUE (logged)
 * for anything else. */
doca_error_t sample_argp_parse_role(const char *value, bool *is_host);

/*
 * Reads an int flag's value (param points at an int) into *out when it is in 1..max:
 * DOCA_ERROR_INVALID_VALUE (logged, naming --flag) otherwise. With max == INT_MAX the
 * log says "is not a positive number of <unit>"; else "is outside 1..<max>", followed by
 * " <unit>" when unit is not NULL.
 */
doca_error_t sample_argp_int_in_range(const void *param, const char *flag, int max, const char *unit, int *out);

#endif /* SAMPLE_ARGP_H_ */
