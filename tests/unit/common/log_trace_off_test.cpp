// Without DOCA_LOGGING_ALLOW_TRACE, DOCA_LOG_TRC compiles to nothing: its arguments are not even
// evaluated.
#include <doca_log.h>

#include <gtest/gtest.h>

#include "log_test_support.hpp"

DOCA_LOG_REGISTER(TRACE_OFF);

namespace softdpu::log::test {
namespace {

using LogTraceOff = LogTest;

int evaluated = 0;
int count_evaluation()
{
	return ++evaluated;
}

TEST_F(LogTraceOff, TraceMacroIsCompiledOut)
{
	evaluated = 0;
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	DOCA_LOG_TRC("trace %d", count_evaluation());
	DOCA_LOG_DBG("debug %d", count_evaluation());
	EXPECT_EQ(evaluated, 1);
	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), 1u);
	EXPECT_TRUE(lines[0].ends_with("] debug 1"));
}

} // namespace
} // namespace softdpu::log::test
