/*
 * Command-line helpers shared by the doca_argp samples; see sample_argp.h.
 */
#include "sample_argp.h"

#include <limits.h>
#include <string.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(SAMPLE_ARGP);

doca_error_t sample_argp_register_flag(const char *short_name, const char *long_name, const char *arguments,
				       const char *description, enum doca_argp_type type, doca_argp_param_cb_t callback,
				       bool mandatory)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_arguments(param, arguments);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, callback);
	doca_argp_param_set_type(param, type);
	if (mandatory)
		doca_argp_param_set_mandatory(param);
	result = doca_argp_register_param(param);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to register --%s: %s", long_name, doca_error_get_descr(result));
	return result;
}

doca_error_t sample_argp_copy_string(char *into, size_t size, const char *value, const char *flag)
{
	if (value[0] == '\0' || strlen(value) >= size) {
		DOCA_LOG_ERR("--%s: the value must have 1 to %zu characters", flag, size - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(into, value);
	return DOCA_SUCCESS;
}

doca_error_t sample_argp_parse_role(const char *value, bool *is_host)
{
	if (strcmp(value, "host") == 0)
		*is_host = true;
	else if (strcmp(value, "dpu") == 0)
		*is_host = false;
	else {
		DOCA_LOG_ERR("--role: \"%s\" is neither host nor dpu", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_argp_int_in_range(const void *param, const char *flag, int max, const char *unit, int *out)
{
	const int value = *(const int *)param;

	if (value > 0 && value <= max) {
		*out = value;
		return DOCA_SUCCESS;
	}
	if (max == INT_MAX)
		DOCA_LOG_ERR("--%s: %d is not a positive number of %s", flag, value, unit);
	else
		DOCA_LOG_ERR("--%s: %d is outside 1..%d%s%s", flag, value, max, unit != NULL ? " " : "",
			     unit != NULL ? unit : "");
	return DOCA_ERROR_INVALID_VALUE;
}
