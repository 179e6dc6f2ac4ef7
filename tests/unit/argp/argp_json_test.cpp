// JSON configuration files: flat and sectioned layouts, arrays, precedence, every error path.
#include <doca_argp.h>
#include <doca_log.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "argp_test_support.hpp"

namespace softdpu::argp::test {
namespace {

using ArgpJson = ArgpTest;

TEST_F(ArgpJson, FlatFileSetsEveryType)
{
	register_standard_flags();
	std::string path = write_json(R"({
		"name": "from-json",
		"size": [1, 2, 3],
		"verbose": true,
		"count": 42,
		"object": {"nested": [1, "two"]},
		"log-level": 60
	})");
	ASSERT_EQ(start({"-j", path}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.name, "from-json");
	EXPECT_EQ(config_.sizes, (std::vector<int>{1, 2, 3}));
	EXPECT_TRUE(config_.verbose);
	EXPECT_EQ(config_.count, 42);
	EXPECT_EQ(config_.object, R"({"nested":[1,"two"]})");
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);
}

TEST_F(ArgpJson, SectionedFileAsDocaWritesIt)
{
	register_standard_flags();
	std::string path = write_json(R"({
		"doca_general_flags": {"log-level": 30, "sdk-log-level": 40},
		"doca_program_flags": {"name": "sectioned", "size": 9}
	})");
	ASSERT_EQ(start({"--json", path}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.name, "sectioned");
	EXPECT_EQ(config_.sizes, (std::vector<int>{9})); // a single value for a repeatable flag
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_ERROR);
	EXPECT_EQ(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_WARNING);
}

std::vector<std::string> dpdk_args;
doca_error_t remember_dpdk(int argc, char **argv)
{
	dpdk_args.assign(argv, argv + argc);
	return DOCA_SUCCESS;
}

TEST_F(ArgpJson, DpdkSectionIsForwardedAsFlags)
{
	dpdk_args.clear();
	register_standard_flags();
	doca_argp_set_dpdk_program(remember_dpdk);
	std::string path = write_json(R"({
		"doca_dpdk_flags": {"allow": ["03:00.0", "03:00.1"], "lcores": 4, "no-telemetry": true},
		"doca_program_flags": {"count": 1}
	})");
	ASSERT_EQ(start({"-j", path}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(dpdk_args, (std::vector<std::string>{"argp_test", "--allow", "03:00.0", "--allow", "03:00.1",
						       "--lcores", "4", "--no-telemetry"}));
}

TEST_F(ArgpJson, CommandLineOverridesTheFile)
{
	register_standard_flags();
	std::string path = write_json(R"({"name": "json", "count": 1, "size": [1, 2]})");
	ASSERT_EQ(start({"-c", "2", "-j", path, "-s", "7"}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.count, 2);
	EXPECT_EQ(config_.name, "json");
	EXPECT_EQ(config_.sizes, (std::vector<int>{7}));
}

TEST_F(ArgpJson, MandatoryFlagMayComeFromTheFile)
{
	ASSERT_EQ(register_flag({"c", "count", DOCA_ARGP_TYPE_INT, on_count, true}), DOCA_SUCCESS);
	std::string path = write_json(R"({"count": 11})");
	ASSERT_EQ(start({"-j", path}), DOCA_SUCCESS) << errors_;
	EXPECT_EQ(config_.count, 11);
}

TEST_F(ArgpJson, UnreadableOrMalformedFilesAreIoFailures)
{
	register_standard_flags();
	EXPECT_EQ(start({"-j", "/nonexistent/softdpu/config.json"}), DOCA_ERROR_IO_FAILED);
	EXPECT_NE(errors_.find("cannot open JSON file"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j", write_json(R"({"name": "unterminated)")}), DOCA_ERROR_IO_FAILED);
	EXPECT_NE(errors_.find("not valid JSON"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j", write_json("")}), DOCA_ERROR_IO_FAILED);
	EXPECT_EQ(start({"-j", write_json(std::string(200, '[') + std::string(200, ']'))}), DOCA_ERROR_IO_FAILED);
	EXPECT_NE(errors_.find("nests deeper than 64"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j"}), DOCA_ERROR_INVALID_VALUE); // no path
	EXPECT_TRUE(config_.order.empty());
}

TEST_F(ArgpJson, WrongValueTypesAreInvalidWithAClearMessage)
{
	register_standard_flags();
	struct Case {
		const char *json;
		const char *message;
	} cases[] = {
	    {R"({"count": "12"})", "JSON key \"count\" expects an integer in the range of int, got string"},
	    {R"({"count": 1.5})", "expects an integer"},
	    {R"({"count": 4294967296})", "expects an integer"},
	    {R"({"name": 3})", "JSON key \"name\" expects a string, got number"},
	    {R"({"verbose": "yes"})", "expects true or false, got string"},
	    {R"({"size": [1, "2"]})", "JSON key \"size\" expects an integer"},
	    {R"({"log-level": 75})", "expects a log level"},
	    {R"([1, 2])", "must hold an object, not array"},
	    {R"({"doca_program_flags": 5})", "section \"doca_program_flags\" must be an object"},
	    {R"({"doca_dpdk_flags": {"x": {}}})", "DPDK flag \"x\" must be"},
	};
	for (const auto &c : cases) {
		EXPECT_EQ(start({"-j", write_json(c.json)}), DOCA_ERROR_INVALID_VALUE) << c.json;
		EXPECT_NE(errors_.find(c.message), std::string::npos) << c.json << "\n" << errors_;
	}
	EXPECT_TRUE(config_.order.empty());
}

TEST_F(ArgpJson, UnknownKeysAndCommandLineOnlyFlagsAreNotSupported)
{
	register_standard_flags();
	ASSERT_EQ(register_flag({"k", "key-file", DOCA_ARGP_TYPE_STRING, on_name, false, false, true}), DOCA_SUCCESS);
	EXPECT_EQ(start({"-j", write_json(R"({"bogus": 1})")}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(errors_.find("unknown JSON key \"bogus\""), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j", write_json(R"({"key-file": "/secret"})")}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_NE(errors_.find("can only be given on the command line"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j", write_json(R"({"json": "other.json"})")}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(start({"-j", write_json(R"({"doca_other_flags": {}})")}), DOCA_ERROR_NOT_SUPPORTED);
	// Program flags belong in doca_program_flags, DOCA flags in doca_general_flags.
	EXPECT_EQ(start({"-j", write_json(R"({"doca_general_flags": {"count": 1}})")}), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(start({"-j", write_json(R"({"doca_program_flags": {"log-level": 60}})")}), DOCA_ERROR_NOT_SUPPORTED);
	// The command line still accepts the cli-only flag.
	EXPECT_EQ(start({"-k", "/secret"}), DOCA_SUCCESS);
	EXPECT_EQ(config_.name, "/secret");
}

TEST_F(ArgpJson, ListsOnlyForRepeatableFlagsAndOneFileOnly)
{
	register_standard_flags();
	EXPECT_EQ(start({"-j", write_json(R"({"count": [1, 2]})")}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("got array"), std::string::npos) << errors_;
	EXPECT_EQ(start({"-j", write_json("{}"), "--json", write_json("{}")}), DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(errors_.find("only one JSON file"), std::string::npos) << errors_;
}

TEST_F(ArgpJson, GrpcAddressFromTheFile)
{
	doca_argp_set_grpc_program();
	ASSERT_EQ(start({"-j", write_json(R"({"doca_general_flags": {"grpc-address": "127.0.0.1"}})")}), DOCA_SUCCESS)
	    << errors_;
	const char *address = nullptr;
	ASSERT_EQ(doca_argp_get_grpc_addr(&address), DOCA_SUCCESS);
	EXPECT_STREQ(address, "127.0.0.1");
}

} // namespace
} // namespace softdpu::argp::test
