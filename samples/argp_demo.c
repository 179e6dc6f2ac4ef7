// pkg-config: doca-argp doca-common
/*
 * softdpu sample: the DOCA argument parser. Registers one flag of each type, parses a command
 * line it builds itself, then a JSON file it writes to /tmp, and checks every value.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen under -std=c11 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_error.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(ARGP_DEMO);

struct demo_config {
	char device[64];
	int queues;
	int ports[8];
	int port_count;
	bool verbose;
	char filter[128];
};

static doca_error_t device_cb(void *param, void *config)
{
	struct demo_config *cfg = config;
	const char *value = param;
	if (strlen(value) >= sizeof(cfg->device))
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(cfg->device, value);
	return DOCA_SUCCESS;
}

static doca_error_t queues_cb(void *param, void *config)
{
	((struct demo_config *)config)->queues = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t port_cb(void *param, void *config)
{
	struct demo_config *cfg = config;
	if (cfg->port_count == 8)
		return DOCA_ERROR_FULL;
	cfg->ports[cfg->port_count++] = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t verbose_cb(void *param, void *config)
{
	((struct demo_config *)config)->verbose = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t filter_cb(void *param, void *config)
{
	struct demo_config *cfg = config;
	snprintf(cfg->filter, sizeof(cfg->filter), "%s", (const char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t queues_positive(void *config)
{
	return ((struct demo_config *)config)->queues > 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t add_flag(const char *short_name, const char *long_name, const char *arguments,
			     enum doca_argp_type type, doca_argp_param_cb_t callback, bool mandatory, bool multiple)
{
	struct doca_argp_param *param;
	doca_error_t result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	if (short_name)
		doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	if (arguments)
		doca_argp_param_set_arguments(param, arguments);
	doca_argp_param_set_description(param, "demo flag");
	doca_argp_param_set_callback(param, callback);
	doca_argp_param_set_type(param, type);
	if (mandatory)
		doca_argp_param_set_mandatory(param);
	if (multiple)
		doca_argp_param_set_multiplicity(param);
	return doca_argp_register_param(param);
}

/* One parser session over argv; returns the parse result. */
static doca_error_t parse(struct demo_config *cfg, int argc, char **argv)
{
	doca_error_t result = doca_argp_init("argp_demo", cfg);
	if (result != DOCA_SUCCESS)
		return result;
	if ((result = add_flag("d", "device", "<pci>", DOCA_ARGP_TYPE_STRING, device_cb, true, false)) !=
		DOCA_SUCCESS ||
	    (result = add_flag("q", "queues", "<n>", DOCA_ARGP_TYPE_INT, queues_cb, false, false)) != DOCA_SUCCESS ||
	    (result = add_flag("p", "port", "<n>", DOCA_ARGP_TYPE_INT, port_cb, false, true)) != DOCA_SUCCESS ||
	    (result = add_flag(NULL, "verbose", NULL, DOCA_ARGP_TYPE_BOOLEAN, verbose_cb, false, false)) !=
		DOCA_SUCCESS ||
	    (result = add_flag(NULL, "filter", NULL, DOCA_ARGP_TYPE_JSON_OBJ, filter_cb, false, false)) !=
		DOCA_SUCCESS ||
	    (result = doca_argp_register_validation_callback(queues_positive)) != DOCA_SUCCESS) {
		doca_argp_destroy();
		return result;
	}
	result = doca_argp_start(argc, argv);
	doca_argp_destroy();
	return result;
}

#define CHECK(condition)                                                                                               \
	do {                                                                                                           \
		if (!(condition)) {                                                                                    \
			DOCA_LOG_ERR("check failed: %s", #condition);                                                  \
			return EXIT_FAILURE;                                                                           \
		}                                                                                                      \
	} while (0)

int main(void)
{
	struct doca_log_backend *sdk_log;
	struct demo_config cfg;
	doca_error_t result;

	if (doca_log_backend_create_standard() != DOCA_SUCCESS ||
	    doca_log_backend_create_with_file_sdk(stderr, &sdk_log) != DOCA_SUCCESS ||
	    doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return EXIT_FAILURE;

	/* 1. The command line. */
	char *cli[] = {"argp_demo", "-d", "03:00.0", "--queues=4", "-p", "1", "-p", "2", "--verbose", "-l", "50", NULL};
	memset(&cfg, 0, sizeof(cfg));
	result = parse(&cfg, 11, cli);
	CHECK(result == DOCA_SUCCESS);
	CHECK(strcmp(cfg.device, "03:00.0") == 0);
	CHECK(cfg.queues == 4);
	CHECK(cfg.port_count == 2 && cfg.ports[0] == 1 && cfg.ports[1] == 2);
	CHECK(cfg.verbose);
	DOCA_LOG_INFO("command line: device %s, %d queues, %d ports", cfg.device, cfg.queues, cfg.port_count);

	/* 2. A JSON file in DOCA's sectioned layout. */
	char path[] = "/tmp/argp_demo_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *file = fdopen(fd, "w");
	CHECK(file != NULL);
	fputs("{\"doca_general_flags\": {\"log-level\": 50},\n"
	      " \"doca_program_flags\": {\"device\": \"b1:00.3\", \"queues\": 16, \"port\": [7, 8, 9],\n"
	      "                        \"verbose\": false, \"filter\": {\"proto\": \"udp\"}}}\n",
	      file);
	fclose(file);
	char *json_cli[] = {"argp_demo", "--json", path, NULL};
	memset(&cfg, 0, sizeof(cfg));
	result = parse(&cfg, 3, json_cli);
	unlink(path);
	CHECK(result == DOCA_SUCCESS);
	CHECK(strcmp(cfg.device, "b1:00.3") == 0);
	CHECK(cfg.queues == 16);
	CHECK(cfg.port_count == 3 && cfg.ports[0] == 7 && cfg.ports[2] == 9);
	CHECK(!cfg.verbose);
	CHECK(strcmp(cfg.filter, "{\"proto\":\"udp\"}") == 0);
	DOCA_LOG_INFO("JSON file: device %s, %d queues, filter %s", cfg.device, cfg.queues, cfg.filter);

	/* 3. Invalid input is reported, not accepted (the parser also prints the usage). */
	char *bad[] = {"argp_demo", "-d", "03:00.0", "--no-such-flag", NULL};
	memset(&cfg, 0, sizeof(cfg));
	CHECK(parse(&cfg, 4, bad) == DOCA_ERROR_NOT_SUPPORTED);

	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
