/*
 * softdpu: DOCA 2.5 argument parser (doca_argp.h), in libdoca_argp.so.2. Written for softdpu from
 * the DOCA 2.5 interface facts; behaviour details are in docs/argp.md.
 *
 * Order of use: doca_argp_init -> doca_argp_param_create / set_* / doca_argp_register_param for
 * each flag -> doca_argp_start(argc, argv) -> ... -> doca_argp_destroy.
 *
 * Built-in "DOCA Flags": -h/--help, -v/--version, -l/--log-level <n>, --sdk-log-level <n>,
 * -j/--json <path> (and -g/--grpc-address <addr> in gRPC mode). The long name of a parameter is
 * also its JSON key.
 *
 * Parameter callbacks receive a pointer owned by the parser, valid only during the call:
 * char * for STRING, int * for INT, bool * for BOOLEAN (the flag takes no value on the command
 * line), and for JSON_OBJ a char * holding the value as JSON text.
 *
 * The parser keeps process-wide state and is not thread safe, as in DOCA.
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handles one parsed value; config is the pointer given to doca_argp_init. */
typedef doca_error_t (*doca_argp_param_cb_t)(void *param, void *config);
/* Receives the DPDK flags (argv[0] plus everything before "--"). */
typedef doca_error_t (*doca_argp_dpdk_cb_t)(int argc, char **argv);
/* Checks the whole configuration once every flag was handled. */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *config);

enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,
	DOCA_ARGP_TYPE_INT,
	DOCA_ARGP_TYPE_BOOLEAN,
	DOCA_ARGP_TYPE_JSON_OBJ, /* JSON mode only */
};

/* One program flag. Opaque. */
struct doca_argp_param;

/* Prints the usage text to stdout and exits with EXIT_FAILURE (programs call it on bad input). */
DOCA_EXPERIMENTAL
void doca_argp_usage(void);

/* Starts a parser session. Invalid value: NULL program_name. Bad state: already initialised. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_init(const char *program_name, void *program_config);

/* Adds a flag; the parser owns input_param from now on, also when this fails.
 * Initialization: no name, description, callback or type. Already exist: a name is taken (also
 * by a built-in flag). Invalid value: NULL. Bad state: not initialised. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/* Replaces the built-in --version output; called as callback(NULL, config), then the program
 * exits with EXIT_SUCCESS. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);

/* Called with the config after every flag was handled; its error fails doca_argp_start. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);

/* Parses the command line (and a JSON file given with -j). On invalid input it prints the error
 * and the usage text to stderr and returns: NOT_SUPPORTED (unknown flag or JSON key),
 * INVALID_VALUE (missing or malformed value, repeated flag, missing mandatory flag), IO_FAILED
 * (JSON file unreadable or not valid JSON), or the error of a failing callback. -h and -v print
 * and exit with EXIT_SUCCESS. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_start(int argc, char **argv);

/* Ends the session and frees every parameter and forwarded DPDK argument. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_destroy(void);

/* Marks the program as a DPDK program (after init): the arguments before the first "--" are
 * handed to callback, the ones after it are parsed as DOCA and program flags. */
DOCA_EXPERIMENTAL
void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback);

/* Marks the program as a gRPC program (after init): adds -g/--grpc-address <address>. */
DOCA_EXPERIMENTAL
void doca_argp_set_grpc_program(void);

DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_create(struct doca_argp_param **param);
DOCA_EXPERIMENTAL
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);
DOCA_EXPERIMENTAL
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);
/* Text shown after the flag in the usage, e.g. "<path>". */
DOCA_EXPERIMENTAL
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);
DOCA_EXPERIMENTAL
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);
DOCA_EXPERIMENTAL
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);
DOCA_EXPERIMENTAL
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);
DOCA_EXPERIMENTAL
void doca_argp_param_set_mandatory(struct doca_argp_param *param);
/* The flag is not accepted from a JSON file. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_cli_only(struct doca_argp_param *param);
/* The flag may repeat; in JSON its values form an array. The callback runs once per value. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);
/* Frees a parameter that was not registered. Invalid value: NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/* The address given with --grpc-address; owned by the parser. Invalid value: NULL. Not found:
 * none was given (or not a gRPC program). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_grpc_addr(const char **address);
/* The level given with --log-level / --sdk-log-level, else the logging default at init. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_log_level(int *log_level);
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
