// Shared helpers for the doca_argp tests: a program configuration with one flag of each kind,
// argv building, temporary JSON files.
#pragma once

#include <doca_argp.h>
#include <doca_log.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/log_core.hpp"

namespace softdpu::argp::test {

struct ProgramConfig {
	std::string name;
	std::vector<int> sizes;
	bool verbose = false;
	int count = -1;
	std::string object;
	std::vector<std::string> order; // flags in the order their callbacks ran
};

inline doca_error_t on_name(void *value, void *config)
{
	auto *cfg = static_cast<ProgramConfig *>(config);
	cfg->name = static_cast<const char *>(value);
	cfg->order.push_back("name");
	return DOCA_SUCCESS;
}
inline doca_error_t on_size(void *value, void *config)
{
	auto *cfg = static_cast<ProgramConfig *>(config);
	cfg->sizes.push_back(*static_cast<int *>(value));
	cfg->order.push_back("size");
	return DOCA_SUCCESS;
}
inline doca_error_t on_verbose(void *value, void *config)
{
	auto *cfg = static_cast<ProgramConfig *>(config);
	cfg->verbose = *static_cast<bool *>(value);
	cfg->order.push_back("verbose");
	return DOCA_SUCCESS;
}
inline doca_error_t on_count(void *value, void *config)
{
	auto *cfg = static_cast<ProgramConfig *>(config);
	cfg->count = *static_cast<int *>(value);
	cfg->order.push_back("count");
	return DOCA_SUCCESS;
}
inline doca_error_t on_object(void *value, void *config)
{
	auto *cfg = static_cast<ProgramConfig *>(config);
	cfg->object = static_cast<const char *>(value);
	cfg->order.push_back("object");
	return DOCA_SUCCESS;
}

struct FlagSpec {
	const char *short_name;
	const char *long_name;
	doca_argp_type type;
	doca_argp_param_cb_t callback;
	bool mandatory = false;
	bool multiplicity = false;
	bool cli_only = false;
	const char *arguments = nullptr;
};

inline doca_error_t register_flag(const FlagSpec &spec)
{
	doca_argp_param *param = nullptr;
	doca_error_t result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	if (spec.short_name)
		doca_argp_param_set_short_name(param, spec.short_name);
	if (spec.long_name)
		doca_argp_param_set_long_name(param, spec.long_name);
	if (spec.arguments)
		doca_argp_param_set_arguments(param, spec.arguments);
	doca_argp_param_set_description(param, "test flag");
	doca_argp_param_set_callback(param, spec.callback);
	doca_argp_param_set_type(param, spec.type);
	if (spec.mandatory)
		doca_argp_param_set_mandatory(param);
	if (spec.multiplicity)
		doca_argp_param_set_multiplicity(param);
	if (spec.cli_only)
		doca_argp_param_set_cli_only(param);
	return doca_argp_register_param(param);
}

class ArgpTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		softdpu::log::Logger::instance().reset_for_testing();
		ASSERT_EQ(doca_argp_init("argp_test", &config_), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		doca_argp_destroy();
		softdpu::log::Logger::instance().reset_for_testing();
		for (const auto &path : files_)
			std::filesystem::remove(path);
	}

	// -n/--name STRING, -s/--size INT (repeatable), -V/--verbose BOOLEAN, -c/--count INT,
	// --object JSON_OBJ.
	void register_standard_flags()
	{
		ASSERT_EQ(register_flag({"n", "name", DOCA_ARGP_TYPE_STRING, on_name, false, false, false, "<name>"}),
			  DOCA_SUCCESS);
		ASSERT_EQ(register_flag({"s", "size", DOCA_ARGP_TYPE_INT, on_size, false, true}), DOCA_SUCCESS);
		ASSERT_EQ(register_flag({"V", "verbose", DOCA_ARGP_TYPE_BOOLEAN, on_verbose}), DOCA_SUCCESS);
		ASSERT_EQ(register_flag({"c", "count", DOCA_ARGP_TYPE_INT, on_count}), DOCA_SUCCESS);
		ASSERT_EQ(register_flag({nullptr, "object", DOCA_ARGP_TYPE_JSON_OBJ, on_object}), DOCA_SUCCESS);
	}

	// Runs doca_argp_start on "argp_test" + args; the parser's stderr output lands in errors_.
	doca_error_t start(std::vector<std::string> args)
	{
		testing::internal::CaptureStderr();
		doca_error_t result = start_uncaptured(std::move(args));
		errors_ = testing::internal::GetCapturedStderr();
		return result;
	}

	// For death tests, whose child must write to the real stderr.
	static doca_error_t start_uncaptured(std::vector<std::string> args)
	{
		args.insert(args.begin(), "argp_test");
		std::vector<char *> argv;
		for (auto &arg : args)
			argv.push_back(arg.data());
		argv.push_back(nullptr);
		return doca_argp_start(static_cast<int>(args.size()), argv.data());
	}

	std::string write_json(const std::string &content)
	{
		auto path = std::filesystem::temp_directory_path() / ("softdpu_argp_test_" + std::to_string(getpid()) +
								      "_" + std::to_string(files_.size()) + ".json");
		std::ofstream(path) << content;
		files_.push_back(path);
		return path.string();
	}

	ProgramConfig config_;
	std::string errors_;
	std::vector<std::filesystem::path> files_;
};

} // namespace softdpu::argp::test
