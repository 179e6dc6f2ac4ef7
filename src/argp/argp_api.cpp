// C layer of doca_argp.h: argument checks, the process-wide session, no exceptions past here.
#include <doca_argp.h>
#include <doca_log.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include "argp/parser.hpp"
#include "common/sdk_log.hpp"

using softdpu::argp::Parser;

namespace {

// The parser of the current doca_argp_init ... doca_argp_destroy session.
std::unique_ptr<Parser> &session()
{
	static std::unique_ptr<Parser> parser;
	return parser;
}

// Log levels outlive the session: programs often read them after doca_argp_destroy.
int given_log_level = DOCA_LOG_LEVEL_INFO;
int given_sdk_log_level = DOCA_LOG_LEVEL_INFO;

} // namespace

extern "C" {

void doca_argp_usage(void)
{
	if (session()) {
		try {
			std::fputs(session()->usage().c_str(), stdout);
		} catch (...) {
		}
	}
	std::fflush(stdout);
	std::exit(EXIT_FAILURE);
}

doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	if (program_name == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (session()) {
		SDK_LOG_ERR("doca_argp_init: the parser is already initialised");
		return DOCA_ERROR_BAD_STATE;
	}
	try {
		session() = std::make_unique<Parser>(program_name, program_config);
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
	given_log_level = static_cast<int>(doca_log_level_get_global_lower_limit());
	given_sdk_log_level = static_cast<int>(doca_log_level_get_global_sdk_limit());
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_param(struct doca_argp_param *input_param)
{
	if (input_param == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	std::unique_ptr<doca_argp_param> owned(input_param); // freed on every failure path
	if (!session()) {
		SDK_LOG_ERR("doca_argp_register_param: call doca_argp_init first");
		return DOCA_ERROR_BAD_STATE;
	}
	try {
		std::string error;
		doca_error_t result = session()->register_param(std::move(owned), error);
		if (result != DOCA_SUCCESS)
			SDK_LOG_ERR("doca_argp_register_param: %s", error.c_str());
		return result;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback)
{
	if (callback == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!session())
		return DOCA_ERROR_BAD_STATE;
	session()->set_version_callback(callback);
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback)
{
	if (callback == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!session())
		return DOCA_ERROR_BAD_STATE;
	session()->set_validation_callback(callback);
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_start(int argc, char **argv)
{
	if (argc < 0 || (argc > 0 && argv == nullptr))
		return DOCA_ERROR_INVALID_VALUE;
	if (!session())
		return DOCA_ERROR_BAD_STATE;
	try {
		auto error = session()->start(argc, argv);
		if (session()->log_level())
			given_log_level = *session()->log_level();
		if (session()->sdk_log_level())
			given_sdk_log_level = *session()->sdk_log_level();
		if (!error)
			return DOCA_SUCCESS;
		// As in DOCA the user sees the error and the usage; unlike DOCA, the program gets the
		// error code back instead of the parser exiting for it (docs/argp.md).
		std::fprintf(stderr, "Error: %s\n\n%s", error->message.c_str(), session()->usage().c_str());
		std::fflush(stderr);
		return error->code;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t doca_argp_destroy(void)
{
	if (!session())
		return DOCA_ERROR_BAD_STATE;
	session().reset();
	return DOCA_SUCCESS;
}

void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback)
{
	if (!session()) {
		SDK_LOG_ERR("doca_argp_set_dpdk_program: call doca_argp_init first");
		return;
	}
	session()->set_dpdk_callback(callback);
}

void doca_argp_set_grpc_program(void)
{
	if (!session()) {
		SDK_LOG_ERR("doca_argp_set_grpc_program: call doca_argp_init first");
		return;
	}
	session()->set_grpc_program();
}

doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	if (param == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		*param = new doca_argp_param();
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

namespace {
// Setters return void in DOCA, so a failed copy can only be reported through the SDK log.
void assign(std::string &field, const char *text, const char *what) noexcept
{
	try {
		field = text ? text : "";
	} catch (...) {
		SDK_LOG_ERR("doca_argp_param_set_%s: out of memory", what);
	}
}
} // namespace

void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name)
{
	if (param != nullptr)
		assign(param->short_name, name, "short_name");
}

void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name)
{
	if (param != nullptr)
		assign(param->long_name, name, "long_name");
}

void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments)
{
	if (param != nullptr)
		assign(param->arguments, arguments, "arguments");
}

void doca_argp_param_set_description(struct doca_argp_param *param, const char *description)
{
	if (param != nullptr)
		assign(param->description, description, "description");
}

void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback)
{
	if (param != nullptr)
		param->callback = callback;
}

void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type)
{
	if (param != nullptr)
		param->type = type;
}

void doca_argp_param_set_mandatory(struct doca_argp_param *param)
{
	if (param != nullptr)
		param->mandatory = true;
}

void doca_argp_param_set_cli_only(struct doca_argp_param *param)
{
	if (param != nullptr)
		param->cli_only = true;
}

void doca_argp_param_set_multiplicity(struct doca_argp_param *param)
{
	if (param != nullptr)
		param->multiplicity = true;
}

doca_error_t doca_argp_param_destroy(struct doca_argp_param *param)
{
	if (param == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	delete param;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_get_grpc_addr(const char **address)
{
	if (address == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (!session() || !session()->grpc_address())
		return DOCA_ERROR_NOT_FOUND;
	*address = session()->grpc_address()->c_str();
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_get_log_level(int *log_level)
{
	if (log_level == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*log_level = given_log_level;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_get_sdk_log_level(int *log_level)
{
	if (log_level == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*log_level = given_sdk_log_level;
	return DOCA_SUCCESS;
}

} // extern "C"
