// Which records reach which backend: backend limits, global limits, strict limits, SDK levels.
#include <doca_log.h>

#include <gtest/gtest.h>

#include <string>

#include "common/sdk_log.hpp"
#include "log_test_support.hpp"

DOCA_LOG_REGISTER(LOG_FILTER_TEST);

namespace softdpu::log::test {
namespace {

constexpr uint32_t kLevels[] = {DOCA_LOG_LEVEL_CRIT, DOCA_LOG_LEVEL_ERROR, DOCA_LOG_LEVEL_WARNING,
				DOCA_LOG_LEVEL_INFO, DOCA_LOG_LEVEL_DEBUG, DOCA_LOG_LEVEL_TRACE};

// Logs one record per level; each message names its level so the output can be checked.
void log_every_level()
{
	for (uint32_t level : kLevels)
		ASSERT_EQ(doca_log(level, log_source, __FILE__, __LINE__, __func__, "level=%u", level), DOCA_SUCCESS);
}

bool shows(const CapturedFile &capture, uint32_t level)
{
	return capture.text().find("level=" + std::to_string(level) + "\n") != std::string::npos;
}

using LogFilter = LogTest;

TEST_F(LogFilter, DefaultsAreInfoAndCrit)
{
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
	EXPECT_EQ(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_CRIT);
	EXPECT_EQ(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);

	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	log_every_level();
	for (uint32_t level : kLevels)
		EXPECT_EQ(shows(capture, level), level <= DOCA_LOG_LEVEL_INFO) << level;
}

TEST_F(LogFilter, BackendLimitsSelectTheClosedRangeBetweenUpperAndLower)
{
	for (uint32_t lower = 10; lower <= 70; lower += 10) {
		for (uint32_t upper = 10; upper <= 70; upper += 10) {
			Logger::instance().reset_for_testing();
			CapturedFile capture;
			doca_log_backend *backend = nullptr;
			ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
			ASSERT_EQ(doca_log_backend_set_level_lower_limit(backend, lower), DOCA_SUCCESS);
			ASSERT_EQ(doca_log_backend_set_level_upper_limit(backend, upper), DOCA_SUCCESS);
			log_every_level();
			for (uint32_t level : kLevels)
				EXPECT_EQ(shows(capture, level), upper <= level && level <= lower)
				    << "lower " << lower << " upper " << upper << " level " << level;
		}
	}
}

TEST_F(LogFilter, GlobalLimitsMoveExistingAndNewBackends)
{
	CapturedFile before;
	doca_log_backend *first = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(before.file(), &first), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);
	EXPECT_EQ(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_ERROR);

	CapturedFile after;
	doca_log_backend *second = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(after.file(), &second), DOCA_SUCCESS);
	log_every_level();
	for (const CapturedFile *capture : {&before, &after}) {
		EXPECT_FALSE(shows(*capture, DOCA_LOG_LEVEL_CRIT));
		EXPECT_TRUE(shows(*capture, DOCA_LOG_LEVEL_ERROR));
		EXPECT_TRUE(shows(*capture, DOCA_LOG_LEVEL_DEBUG));
		EXPECT_FALSE(shows(*capture, DOCA_LOG_LEVEL_TRACE));
	}
}

TEST_F(LogFilter, StrictLimitsIgnoreGlobalAndDirectChanges)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit_strict(backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_upper_limit(backend, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_upper_limit_strict(backend), DOCA_SUCCESS);

	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit(backend, DOCA_LOG_LEVEL_CRIT), DOCA_ERROR_NOT_PERMITTED);

	log_every_level();
	EXPECT_FALSE(shows(capture, DOCA_LOG_LEVEL_CRIT));
	EXPECT_TRUE(shows(capture, DOCA_LOG_LEVEL_ERROR));
	EXPECT_TRUE(shows(capture, DOCA_LOG_LEVEL_WARNING));
	EXPECT_FALSE(shows(capture, DOCA_LOG_LEVEL_INFO));
}

TEST_F(LogFilter, StrictLowerLimitLeavesUpperLimitFollowingGlobal)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit_strict(backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	log_every_level();
	EXPECT_FALSE(shows(capture, DOCA_LOG_LEVEL_ERROR));
	EXPECT_TRUE(shows(capture, DOCA_LOG_LEVEL_WARNING));
	EXPECT_TRUE(shows(capture, DOCA_LOG_LEVEL_INFO));
	EXPECT_FALSE(shows(capture, DOCA_LOG_LEVEL_DEBUG));
}

TEST_F(LogFilter, DisableLevelSilencesEverything)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	log_every_level();
	EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_DISABLE, log_source, __FILE__, __LINE__, __func__, "disabled"), DOCA_SUCCESS);
	EXPECT_EQ(capture.text(), "");
}

TEST_F(LogFilter, ApplicationAndSdkRecordsGoToTheirOwnBackends)
{
	CapturedFile application;
	CapturedFile sdk;
	doca_log_backend *app_backend = nullptr;
	doca_log_backend *sdk_backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(application.file(), &app_backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_with_file_sdk(sdk.file(), &sdk_backend), DOCA_SUCCESS);

	DOCA_LOG_WARN("from the program");
	SDK_LOG_WARN("from the library");
	EXPECT_NE(application.text().find("from the program"), std::string::npos);
	EXPECT_EQ(application.text().find("from the library"), std::string::npos);
	EXPECT_NE(sdk.text().find("from the library"), std::string::npos);
	EXPECT_EQ(sdk.text().find("from the program"), std::string::npos);
	// SDK records are named after the softdpu module that wrote them; a test file is outside src/.
	EXPECT_NE(sdk.text().find("[softdpu]"), std::string::npos);
}

TEST_F(LogFilter, SdkBackendShowsLevelsUpToItsSdkLevel)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file_sdk(capture.file(), &backend), DOCA_SUCCESS);
	// What every DOCA sample does: SDK records of WARNING and more severe.
	ASSERT_EQ(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
	for (uint32_t level : kLevels) {
		EXPECT_EQ(priv_doca_sdk_log_enabled(level), level <= DOCA_LOG_LEVEL_WARNING) << level;
		priv_doca_sdk_log(level, __FILE__, __LINE__, __func__, "level=%u", level);
	}
	for (uint32_t level : kLevels)
		EXPECT_EQ(shows(capture, level), level <= DOCA_LOG_LEVEL_WARNING) << level;
}

TEST_F(LogFilter, GlobalSdkLimitMovesSdkBackendsOnly)
{
	CapturedFile sdk;
	CapturedFile application;
	doca_log_backend *sdk_backend = nullptr;
	doca_log_backend *app_backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file_sdk(sdk.file(), &sdk_backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_with_file(application.file(), &app_backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_DEBUG);
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);

	SDK_LOG_DBG("sdk debug");
	DOCA_LOG_DBG("program debug");
	EXPECT_NE(sdk.text().find("sdk debug"), std::string::npos);
	EXPECT_EQ(application.text().find("program debug"), std::string::npos);
}

TEST_F(LogFilter, WithoutSdkBackendOnlyErrorsReachStderr)
{
	EXPECT_TRUE(priv_doca_sdk_log_enabled(DOCA_LOG_LEVEL_CRIT));
	EXPECT_TRUE(priv_doca_sdk_log_enabled(DOCA_LOG_LEVEL_ERROR));
	EXPECT_FALSE(priv_doca_sdk_log_enabled(DOCA_LOG_LEVEL_WARNING));

	testing::internal::CaptureStderr();
	SDK_LOG_ERR("library failure %d", 7);
	SDK_LOG_WARN("library warning");
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("library failure 7"), std::string::npos);
	EXPECT_EQ(err.find("library warning"), std::string::npos);

	// A program that turns SDK logging off silences the fallback too.
	ASSERT_EQ(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	EXPECT_FALSE(priv_doca_sdk_log_enabled(DOCA_LOG_LEVEL_CRIT));
}

TEST_F(LogFilter, StandardBackendSplitsStdoutAndStderr)
{
	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_standard(), DOCA_SUCCESS);
	testing::internal::CaptureStdout();
	testing::internal::CaptureStderr();
	for (uint32_t level : kLevels)
		doca_log(level, log_source, __FILE__, __LINE__, __func__, "level=%u", level);
	std::string out = testing::internal::GetCapturedStdout();
	std::string err = testing::internal::GetCapturedStderr();
	for (uint32_t level : kLevels) {
		std::string marker = "level=" + std::to_string(level) + "\n";
		bool on_stdout = out.find(marker) != std::string::npos;
		bool on_stderr = err.find(marker) != std::string::npos;
		EXPECT_EQ(on_stdout, level >= DOCA_LOG_LEVEL_INFO && level <= DOCA_LOG_LEVEL_DEBUG) << level;
		EXPECT_EQ(on_stderr, level <= DOCA_LOG_LEVEL_WARNING) << level;
	}
}

TEST_F(LogFilter, StandardStderrFollowsALowerGlobalLimit)
{
	ASSERT_EQ(doca_log_backend_create_standard(), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	testing::internal::CaptureStdout();
	testing::internal::CaptureStderr();
	for (uint32_t level : kLevels)
		doca_log(level, log_source, __FILE__, __LINE__, __func__, "level=%u", level);
	std::string out = testing::internal::GetCapturedStdout();
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_EQ(out, "");
	EXPECT_NE(err.find("level=30\n"), std::string::npos);
	EXPECT_EQ(err.find("level=40\n"), std::string::npos);
}

} // namespace
} // namespace softdpu::log::test
