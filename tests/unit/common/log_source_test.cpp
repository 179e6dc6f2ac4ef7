// Source registration, the DOCA_LOG_* macros and DOCA_LOG_REGISTER before main.
#define DOCA_LOGGING_ALLOW_TRACE
#include <doca_log.h>

#include <gtest/gtest.h>

#include <string>

#include "log_test_support.hpp"

DOCA_LOG_REGISTER(PE_POLLING::SAMPLE);

namespace {
// Runs after DOCA_LOG_REGISTER's constructor (priority 101) and before main: the source must
// already be registered although no backend exists yet.
int source_seen_by_constructor = -1;
doca_error_t constructor_log_result = DOCA_ERROR_UNKNOWN;
__attribute__((constructor(102))) void log_before_main()
{
	source_seen_by_constructor = log_source;
	constructor_log_result =
	    doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, "before main, dropped");
}
} // namespace

namespace softdpu::log::test {
namespace {

using LogSource = LogTest;

TEST_F(LogSource, RegisterMacroRunsBeforeMain)
{
	EXPECT_GT(source_seen_by_constructor, 0);
	EXPECT_EQ(source_seen_by_constructor, log_source);
	EXPECT_EQ(constructor_log_result, DOCA_SUCCESS);
}

TEST_F(LogSource, MacrosLogUnderTheRegisteredNameAndLevel)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	DOCA_LOG_CRIT("c");
	DOCA_LOG_ERR("e %d", 1);
	DOCA_LOG_WARN("w");
	DOCA_LOG_INFO("i");
	DOCA_LOG_DBG("d");
	DOCA_LOG_TRC("t");
	DOCA_LOG(INFO, "plain %s", "macro");
	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), 7u);
	const char *expected[] = {"[CRIT][PE_POLLING::SAMPLE]", "[ERR][PE_POLLING::SAMPLE]",
				  "[WARN][PE_POLLING::SAMPLE]", "[INFO][PE_POLLING::SAMPLE]",
				  "[DBG][PE_POLLING::SAMPLE]",  "[TRC][PE_POLLING::SAMPLE]",
				  "[INFO][PE_POLLING::SAMPLE]"};
	for (size_t i = 0; i < lines.size(); ++i)
		EXPECT_NE(lines[i].find(expected[i]), std::string::npos) << lines[i];
	EXPECT_TRUE(lines[1].ends_with("] e 1"));
	EXPECT_TRUE(lines[6].ends_with("] plain macro"));
}

TEST_F(LogSource, RegisteredSourcesGetDistinctIdsAndKeepTheirNames)
{
	int first = -1;
	int second = -1;
	ASSERT_EQ(doca_log_register_source("GPU_DMABUF:SAMPLE", &first), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_register_source("GPU_DMABUF:SAMPLE", &second), DOCA_SUCCESS);
	EXPECT_NE(first, second);
	EXPECT_NE(first, log_source);

	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	doca_log(DOCA_LOG_LEVEL_INFO, first, "f.c", 1, "fn", "hello");
	EXPECT_NE(capture.text().find("[GPU_DMABUF:SAMPLE][f.c:1][fn] hello"), std::string::npos) << capture.text();
	EXPECT_EQ(doca_log_unregister_source(first), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_unregister_source(second), DOCA_SUCCESS);
}

TEST_F(LogSource, UnregisteredSourcesLogAsUnknownWithoutCrashing)
{
	int source = -1;
	ASSERT_EQ(doca_log_register_source("SHORT_LIVED", &source), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_unregister_source(source), DOCA_SUCCESS);

	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	for (int id : {source, 0, -3, 1 << 30})
		EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_ERROR, id, "f.c", 2, "fn", "orphan %d", id), DOCA_SUCCESS);
	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), 4u);
	for (const auto &line : lines)
		EXPECT_NE(line.find("[UNKNOWN][f.c:2][fn] orphan"), std::string::npos) << line;
}

TEST_F(LogSource, RegistrationRejectsInvalidArguments)
{
	int source = -1;
	EXPECT_EQ(doca_log_register_source(nullptr, &source), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_register_source("X", nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(source, -1);
}

TEST_F(LogSource, UnregisteringAnUnknownSourceIsInvalid)
{
	int source = -1;
	ASSERT_EQ(doca_log_register_source("TWICE", &source), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_unregister_source(source), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_unregister_source(source), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_unregister_source(-1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_unregister_source(0), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_unregister_source(1 << 30), DOCA_ERROR_INVALID_VALUE);
}

} // namespace
} // namespace softdpu::log::test
