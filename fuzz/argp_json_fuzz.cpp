// Fuzz target: the argument parser's JSON configuration path must accept or reject any bytes
// with a DOCA error and a message, never crash, and hand callbacks only well-formed values.
#include "argp/parser.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

doca_error_t on_text(void *value, void *)
{
	// STRING and JSON_OBJ values are NUL-terminated strings owned by the parser.
	require(value != nullptr);
	require(std::strlen(static_cast<const char *>(value)) < (1u << 30));
	return DOCA_SUCCESS;
}

doca_error_t on_int(void *value, void *)
{
	require(value != nullptr);
	volatile int copy = *static_cast<int *>(value);
	(void)copy;
	return DOCA_SUCCESS;
}

doca_error_t on_bool(void *value, void *)
{
	require(value != nullptr);
	unsigned char raw;
	std::memcpy(&raw, value, 1);
	require(raw == 0 || raw == 1);
	return DOCA_SUCCESS;
}

doca_error_t reject_negative(void *value, void *)
{
	return *static_cast<int *>(value) < 0 ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

void add(softdpu::argp::Parser &parser, const char *long_name, doca_argp_type type, doca_argp_param_cb_t callback,
	 bool multiplicity = false, bool cli_only = false, bool mandatory = false)
{
	auto param = std::make_unique<doca_argp_param>();
	param->long_name = long_name;
	param->description = "fuzz";
	param->type = type;
	param->callback = callback;
	param->multiplicity = multiplicity;
	param->cli_only = cli_only;
	param->mandatory = mandatory;
	std::string error;
	require(parser.register_param(std::move(param), error) == DOCA_SUCCESS);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	softdpu::argp::Parser parser("argp_json_fuzz", nullptr);
	add(parser, "name", DOCA_ARGP_TYPE_STRING, on_text);
	add(parser, "names", DOCA_ARGP_TYPE_STRING, on_text, true);
	add(parser, "count", DOCA_ARGP_TYPE_INT, on_int);
	add(parser, "sizes", DOCA_ARGP_TYPE_INT, on_int, true);
	add(parser, "positive", DOCA_ARGP_TYPE_INT, reject_negative);
	add(parser, "flag", DOCA_ARGP_TYPE_BOOLEAN, on_bool);
	add(parser, "object", DOCA_ARGP_TYPE_JSON_OBJ, on_text);
	add(parser, "secret", DOCA_ARGP_TYPE_STRING, on_text, false, true);
	parser.set_grpc_program();

	auto failure = parser.start_from_json_text(std::string_view(reinterpret_cast<const char *>(data), size));
	if (failure) {
		require(failure->code != DOCA_SUCCESS);
		require(!failure->message.empty());
	}
	return 0;
}
