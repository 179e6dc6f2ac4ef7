// Command-line parsing, built-in flags, registration rules and error returns.
#include <doca_argp.h>
#include <doca_log.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "argp_test_support.hpp"

namespace softdpu::argp::test {
namespace {

using ArgpCli = ArgpTest;

TEST_F(ArgpCli, ParsesEveryTypeFromTheCommandLine)
{
	register_standard_flags();
	ASSERT_EQ(start({"--name", "alpha", "-s", "4", "--size=8", "-V", "-c", "-12"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.name, "alpha");
	EXPECT_EQ(config_.sizes, (std::vector<int>{4, 8}));
	EXPECT_TRUE(config_.verbose);
	EXPECT_EQ(config_.count, -12);
	EXPECT_EQ(config_.order, (std::vector<std::string>{"name", "size", "size", "verbose", "count"}));
	EXPECT_EQ(errors_, "");
}

TEST_F(ArgpCli, AcceptsAttachedValues)
{
	register_standard_flags();
	ASSERT_EQ(start({"-c7", "--name=with=equals", "--verbose=false"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.count, 7);
	EXPECT_EQ(config_.name, "with=equals");
	EXPECT_FALSE(config_.verbose);
	EXPECT_EQ(config_.order.size(), 3u);
}

TEST_F(ArgpCli, UnknownFlagIsNotSupportedAndPrintsUsage)
{
	register_standard_flags();
	EXPECT_EQ(start({"--name", "x", "--bogus"}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(errors_.find("Error: unknown flag \"--bogus\""), std::string::npos) << errors_;
	EXPECT_NE(errors_.find("Usage: argp_test [DOCA Flags] [Program Flags]"), std::string::npos) << errors_;
	// Nothing is handed to the program when the command line is invalid.
	EXPECT_TRUE(config_.order.empty());
}

TEST_F(ArgpCli, PositionalArgumentsAreNotSupported)
{
	register_standard_flags();
	EXPECT_EQ(start({"stray"}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(errors_.find("unexpected argument \"stray\""), std::string::npos) << errors_;
	EXPECT_EQ(start({"--", "-c", "1"}), DOCA_ERROR_NOT_SUPPORTED);
}

TEST_F(ArgpCli, MalformedValuesAreInvalid)
{
	register_standard_flags();
	EXPECT_EQ(start({"-c"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("needs a value"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-c", "12abc"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("expects an integer, got \"12abc\""), std::string::npos) << errors_;
	EXPECT_EQ(start({"-c", "99999999999"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start({"--verbose=maybe"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_TRUE(config_.order.empty());
}

TEST_F(ArgpCli, JsonObjectFlagsOnlyComeFromJson)
{
	register_standard_flags();
	EXPECT_EQ(start({"--object", "{}"}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(errors_.find("can only be set from a JSON file"), std::string::npos) << errors_;
}

TEST_F(ArgpCli, SingleValueFlagsMayNotRepeat)
{
	register_standard_flags();
	EXPECT_EQ(start({"-c", "1", "--count", "2"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("--count may be given only once"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-l", "50", "-l", "60"}), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ArgpCli, MissingMandatoryFlagIsInvalid)
{
	ASSERT_EQ(register_flag({"c", "count", DOCA_ARGP_TYPE_INT, on_count, true}), DOCA_SUCCESS);
	EXPECT_EQ(start({}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("missing mandatory flag --count"), std::string::npos) << errors_;
	EXPECT_NE(errors_.find("(mandatory)"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-c", "3"}), DOCA_SUCCESS);
	EXPECT_EQ(config_.count, 3);
}

TEST_F(ArgpCli, LogLevelFlagsSetTheLoggingLimits)
{
	register_standard_flags();
	ASSERT_EQ(start({"-l", "60", "--sdk-log-level", "30"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);
	EXPECT_EQ(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_ERROR);
	int level = 0;
	ASSERT_EQ(doca_argp_get_log_level(&level), DOCA_SUCCESS);
	EXPECT_EQ(level, 60);
	ASSERT_EQ(doca_argp_get_sdk_log_level(&level), DOCA_SUCCESS);
	EXPECT_EQ(level, 30);
	// The long form works as well.
	ASSERT_EQ(start({"--log-level=40"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_WARNING);
}

TEST_F(ArgpCli, LogLevelsDefaultToTheLoggingDefaults)
{
	int level = 0;
	ASSERT_EQ(doca_argp_get_log_level(&level), DOCA_SUCCESS);
	EXPECT_EQ(level, static_cast<int>(doca_log_level_get_global_lower_limit()));
	ASSERT_EQ(doca_argp_get_sdk_log_level(&level), DOCA_SUCCESS);
	EXPECT_EQ(level, static_cast<int>(doca_log_level_get_global_sdk_limit()));
	EXPECT_EQ(doca_argp_get_log_level(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_argp_get_sdk_log_level(nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ArgpCli, InvalidLogLevelsAreRejected)
{
	EXPECT_EQ(start({"-l", "5"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start({"--sdk-log-level", "80"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(start({"-l", "info"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("expects a log level"), std::string::npos) << errors_;
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
}

doca_error_t fail_with_in_use(void *, void *)
{
	return DOCA_ERROR_IN_USE;
}

TEST_F(ArgpCli, CallbackErrorsAreReturned)
{
	ASSERT_EQ(register_flag({"x", "explode", DOCA_ARGP_TYPE_BOOLEAN, fail_with_in_use}), DOCA_SUCCESS);
	EXPECT_EQ(start({"-x"}), DOCA_ERROR_IN_USE);
	EXPECT_NE(errors_.find("handling flag --explode failed"), std::string::npos) << errors_;
}

int validations = 0;
doca_error_t validate_count_positive(void *config)
{
	++validations;
	auto *cfg = static_cast<ProgramConfig *>(config);
	// Runs after every flag callback, so it sees the final configuration.
	return cfg->count > 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

TEST_F(ArgpCli, ValidationCallbackSeesTheWholeConfiguration)
{
	validations = 0;
	register_standard_flags();
	ASSERT_EQ(doca_argp_register_validation_callback(validate_count_positive), DOCA_SUCCESS);
	EXPECT_EQ(start({"-c", "0"}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("rejected its configuration"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-c", "5"}), DOCA_SUCCESS);
	EXPECT_EQ(validations, 2);
	EXPECT_EQ(doca_argp_register_validation_callback(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_argp_register_version_callback(nullptr), DOCA_ERROR_INVALID_VALUE);
}

std::vector<std::string> dpdk_seen;
int dpdk_argv_terminator_checked = 0;
doca_error_t remember_dpdk(int argc, char **argv)
{
	dpdk_seen.assign(argv, argv + argc);
	dpdk_argv_terminator_checked = argv[argc] == nullptr;
	return DOCA_SUCCESS;
}

TEST_F(ArgpCli, DpdkFlagsBeforeTheSeparatorGoToTheDpdkCallback)
{
	dpdk_seen.clear();
	register_standard_flags();
	doca_argp_set_dpdk_program(remember_dpdk);
	ASSERT_EQ(start({"-a", "0000:03:00.0", "-l", "0-3", "--", "-c", "9", "-l", "60"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(dpdk_seen, (std::vector<std::string>{"argp_test", "-a", "0000:03:00.0", "-l", "0-3"}));
	EXPECT_EQ(dpdk_argv_terminator_checked, 1);
	EXPECT_EQ(config_.count, 9);
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);

	// Without "--" everything is a program flag and DPDK gets the program name only.
	ASSERT_EQ(start({"-c", "2"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(dpdk_seen, (std::vector<std::string>{"argp_test"}));
	EXPECT_EQ(config_.count, 2);
}

TEST_F(ArgpCli, GrpcProgramsTakeAnAddress)
{
	const char *address = nullptr;
	EXPECT_EQ(start({"--grpc-address", "10.0.0.1:50051"}), DOCA_ERROR_NOT_SUPPORTED); // not a gRPC program
	EXPECT_EQ(doca_argp_get_grpc_addr(&address), DOCA_ERROR_NOT_FOUND);
	doca_argp_set_grpc_program();
	ASSERT_EQ(start({"-g", "10.0.0.1:50051"}), DOCA_SUCCESS) << errors_;
	ASSERT_EQ(doca_argp_get_grpc_addr(&address), DOCA_SUCCESS);
	EXPECT_STREQ(address, "10.0.0.1:50051");
	EXPECT_EQ(doca_argp_get_grpc_addr(nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ArgpCli, RegistrationNeedsNameDescriptionCallbackAndType)
{
	doca_argp_param *param = nullptr;
	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	doca_argp_param_set_description(param, "no name");
	doca_argp_param_set_callback(param, on_count);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	EXPECT_EQ(doca_argp_register_param(param), DOCA_ERROR_INITIALIZATION); // freed by the parser

	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	doca_argp_param_set_long_name(param, "no-description");
	doca_argp_param_set_callback(param, on_count);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	EXPECT_EQ(doca_argp_register_param(param), DOCA_ERROR_INITIALIZATION);

	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	doca_argp_param_set_long_name(param, "no-callback");
	doca_argp_param_set_description(param, "d");
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	EXPECT_EQ(doca_argp_register_param(param), DOCA_ERROR_INITIALIZATION);

	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	doca_argp_param_set_long_name(param, "no-type");
	doca_argp_param_set_description(param, "d");
	doca_argp_param_set_callback(param, on_count);
	EXPECT_EQ(doca_argp_register_param(param), DOCA_ERROR_INITIALIZATION);

	EXPECT_EQ(doca_argp_register_param(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_argp_param_create(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_argp_param_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	EXPECT_EQ(doca_argp_param_destroy(param), DOCA_SUCCESS);
}

TEST_F(ArgpCli, NamesMustBeUnique)
{
	ASSERT_EQ(register_flag({"c", "count", DOCA_ARGP_TYPE_INT, on_count}), DOCA_SUCCESS);
	EXPECT_EQ(register_flag({"c", "other", DOCA_ARGP_TYPE_INT, on_count}), DOCA_ERROR_ALREADY_EXIST);
	EXPECT_EQ(register_flag({"o", "count", DOCA_ARGP_TYPE_INT, on_count}), DOCA_ERROR_ALREADY_EXIST);
	// The built-in DOCA flags are reserved.
	EXPECT_EQ(register_flag({"j", "input", DOCA_ARGP_TYPE_STRING, on_name}), DOCA_ERROR_ALREADY_EXIST);
	EXPECT_EQ(register_flag({nullptr, "json", DOCA_ARGP_TYPE_STRING, on_name}), DOCA_ERROR_ALREADY_EXIST);
	EXPECT_EQ(register_flag({"h", nullptr, DOCA_ARGP_TYPE_BOOLEAN, on_verbose}), DOCA_ERROR_ALREADY_EXIST);
	EXPECT_EQ(register_flag({nullptr, "log-level", DOCA_ARGP_TYPE_INT, on_count}), DOCA_ERROR_ALREADY_EXIST);
}

TEST_F(ArgpCli, SessionLifecycleErrors)
{
	EXPECT_EQ(doca_argp_init("again", nullptr), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_argp_destroy(), DOCA_SUCCESS);
	EXPECT_EQ(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	char program[] = "argp_test";
	char *argv[] = {program, nullptr};
	EXPECT_EQ(doca_argp_start(1, argv), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_argp_register_validation_callback(validate_count_positive), DOCA_ERROR_BAD_STATE);
	doca_argp_param *param = nullptr;
	ASSERT_EQ(doca_argp_param_create(&param), DOCA_SUCCESS);
	EXPECT_EQ(doca_argp_register_param(param), DOCA_ERROR_BAD_STATE); // freed all the same
	EXPECT_EQ(doca_argp_init(nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_argp_init("argp_test", &config_), DOCA_SUCCESS);
	EXPECT_EQ(doca_argp_start(-1, argv), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_argp_start(1, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ArgpCli, UsageListsDocaAndProgramFlags)
{
	register_standard_flags();
	EXPECT_EQ(start({"--nope"}), DOCA_ERROR_NOT_SUPPORTED);
	for (const char *expected : {"Usage: argp_test [DOCA Flags] [Program Flags]", "DOCA Flags:", "-h, --help",
				     "-v, --version", "-l, --log-level", "--sdk-log-level", "-j, --json <path>",
				     "Program Flags:", "-n, --name <name>", "(may repeat)", "--object"})
		EXPECT_NE(errors_.find(expected), std::string::npos) << expected << "\n" << errors_;
}

// Help, version and doca_argp_usage end the process, as in DOCA; death tests run them in a
// child. stdout is pointed at stderr there, because gtest matches the child's stderr.
TEST_F(ArgpCli, HelpPrintsUsageAndExitsWithSuccess)
{
	register_standard_flags();
	EXPECT_EXIT(
	    {
		    dup2(2, 1);
		    start_uncaptured({"-c", "1", "--help"});
	    },
	    testing::ExitedWithCode(0), "Usage: argp_test \\[DOCA Flags\\] \\[Program Flags\\]");
	EXPECT_TRUE(config_.order.empty());
}

TEST_F(ArgpCli, VersionPrintsTheVersionAndExitsWithSuccess)
{
	EXPECT_EXIT(
	    {
		    dup2(2, 1);
		    start_uncaptured({"-v"});
	    },
	    testing::ExitedWithCode(0), "argp_test version 2\\.5\\.");
}

doca_error_t custom_version(void *param, void *config)
{
	std::fprintf(stderr, "custom version, param %s, config %s\n", param ? "set" : "null", config ? "set" : "null");
	return DOCA_SUCCESS;
}

TEST_F(ArgpCli, VersionCallbackReplacesTheBuiltInOutput)
{
	ASSERT_EQ(doca_argp_register_version_callback(custom_version), DOCA_SUCCESS);
	EXPECT_EXIT(start_uncaptured({"--version"}), testing::ExitedWithCode(0),
		    "custom version, param null, config set");
}

TEST_F(ArgpCli, UsageFunctionPrintsAndExitsWithFailure)
{
	register_standard_flags();
	EXPECT_EXIT(
	    {
		    dup2(2, 1);
		    doca_argp_usage();
	    },
	    testing::ExitedWithCode(1), "Program Flags:");
}

} // namespace
} // namespace softdpu::argp::test
