// Each backend kind, the line format, and argument checking of every function.
#include <doca_log.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "common/sdk_log.hpp"
#include "log_test_support.hpp"

DOCA_LOG_REGISTER(LOG_BACKEND::TEST);

namespace softdpu::log::test {
namespace {

using LogBackend = LogTest;

TEST_F(LogBackend, FileRecordFollowsTheDocumentedLineFormat)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	int line = __LINE__ + 1;
	DOCA_LOG_ERR("value %d of %s", 42, "answers");

	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), 1u);
	auto parsed = parse_line(lines[0]);
	ASSERT_TRUE(parsed) << lines[0];
	EXPECT_TRUE(is_timestamp(parsed->time)) << parsed->time;
	EXPECT_EQ(parsed->pid, std::to_string(getpid()));
	EXPECT_EQ(parsed->level, "ERR");
	EXPECT_EQ(parsed->source, "LOG_BACKEND::TEST");
	EXPECT_EQ(parsed->file, "log_backend_test.cpp");
	EXPECT_EQ(parsed->line, std::to_string(line));
	EXPECT_EQ(parsed->function, "TestBody");
	EXPECT_EQ(parsed->message, "value 42 of answers");
}

TEST_F(LogBackend, LevelTagsNameEachLevel)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	const std::pair<uint32_t, const char *> expected[] = {{20, "[CRIT]"}, {30, "[ERR]"}, {40, "[WARN]"},
							      {50, "[INFO]"}, {60, "[DBG]"}, {70, "[TRC]"}};
	for (auto [level, tag] : expected)
		doca_log(level, log_source, __FILE__, __LINE__, __func__, "x");
	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), std::size(expected));
	for (size_t i = 0; i < lines.size(); ++i)
		EXPECT_NE(lines[i].find(expected[i].second), std::string::npos) << lines[i];
}

TEST_F(LogBackend, LongMessagesAreWrittenWhole)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	std::string payload(10000, 'q');
	DOCA_LOG_INFO("<%s>", payload.c_str());
	auto lines = capture.lines();
	ASSERT_EQ(lines.size(), 1u);
	EXPECT_NE(lines[0].find("<" + payload + ">"), std::string::npos);
}

TEST_F(LogBackend, FdBackendWritesToAPipe)
{
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_fd(fds[1], &backend), DOCA_SUCCESS);
	DOCA_LOG_INFO("through the pipe %d", 1);
	DOCA_LOG_DBG("filtered out");
	close(fds[1]);
	std::string got;
	char chunk[256];
	ssize_t n;
	while ((n = read(fds[0], chunk, sizeof(chunk))) > 0)
		got.append(chunk, static_cast<size_t>(n));
	close(fds[0]);
	EXPECT_NE(got.find("[INFO][LOG_BACKEND::TEST]"), std::string::npos) << got;
	EXPECT_NE(got.find("through the pipe 1\n"), std::string::npos) << got;
	EXPECT_EQ(got.find("filtered out"), std::string::npos);
}

std::vector<std::string> flushed_records;
char *flushed_buffer_address = nullptr;
void remember_flush(char *buffer)
{
	flushed_buffer_address = buffer;
	flushed_records.emplace_back(buffer);
}

TEST_F(LogBackend, BufferBackendWritesAtTheStartAndCallsTheHandler)
{
	flushed_records.clear();
	char buffer[4096];
	std::memset(buffer, 'x', sizeof(buffer));
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_buffer(buffer, sizeof(buffer), remember_flush, &backend), DOCA_SUCCESS);
	DOCA_LOG_WARN("first");
	DOCA_LOG_WARN("second, a little longer");
	ASSERT_EQ(flushed_records.size(), 2u);
	EXPECT_EQ(flushed_buffer_address, buffer);
	EXPECT_NE(flushed_records[0].find("[WARN][LOG_BACKEND::TEST]"), std::string::npos);
	EXPECT_TRUE(flushed_records[0].ends_with("] first\n")) << flushed_records[0];
	EXPECT_TRUE(flushed_records[1].ends_with("] second, a little longer\n")) << flushed_records[1];
	EXPECT_EQ(std::string(buffer), flushed_records[1]);
}

TEST_F(LogBackend, BufferBackendNeverWritesMoreThanCapacity)
{
	flushed_records.clear();
	char buffer[32];
	std::memset(buffer, '#', sizeof(buffer));
	constexpr size_t kCapacity = 16;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_buffer(buffer, kCapacity, remember_flush, &backend), DOCA_SUCCESS);
	DOCA_LOG_ERR("a record much longer than sixteen characters");
	ASSERT_EQ(flushed_records.size(), 1u);
	EXPECT_EQ(flushed_records[0].size(), kCapacity - 1);
	EXPECT_EQ(flushed_records[0], "[" + flushed_records[0].substr(1)); // starts at the record's beginning
	for (size_t i = kCapacity; i < sizeof(buffer); ++i)
		EXPECT_EQ(buffer[i], '#') << i;
}

TEST_F(LogBackend, SyslogBackendsCanBeCreatedAndUsed)
{
	doca_log_backend *application = nullptr;
	doca_log_backend *sdk = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_syslog("softdpu-unit-log", &application), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_with_syslog_sdk("softdpu-unit-log-sdk", &sdk), DOCA_SUCCESS);
	EXPECT_NE(application, nullptr);
	EXPECT_NE(sdk, nullptr);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit(application, DOCA_LOG_LEVEL_CRIT), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	// The record goes to the system log, which a test cannot read portably; it must not fail.
	EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_INFO, log_source, __FILE__, __LINE__, __func__, "softdpu unit test"),
		  DOCA_SUCCESS);
}

TEST_F(LogBackend, FdAndBufferSdkBackendsReceiveSdkRecords)
{
	flushed_records.clear();
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	char buffer[512];
	doca_log_backend *fd_backend = nullptr;
	doca_log_backend *buffer_backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_fd_sdk(fds[1], &fd_backend), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_with_buffer_sdk(buffer, sizeof(buffer), remember_flush, &buffer_backend),
		  DOCA_SUCCESS);
	priv_doca_sdk_log(DOCA_LOG_LEVEL_ERROR, "/x/src/dma/dma.cpp", 7, "submit", "sdk %s", "record");
	DOCA_LOG_ERR("application record");
	close(fds[1]);
	char got[1024] = {};
	ssize_t n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	ASSERT_GT(n, 0);
	EXPECT_NE(std::strstr(got, "[ERR][softdpu::dma][dma.cpp:7][submit] sdk record\n"), nullptr) << got;
	ASSERT_EQ(flushed_records.size(), 1u);
	EXPECT_NE(flushed_records[0].find("sdk record"), std::string::npos);
}

TEST_F(LogBackend, CreationRejectsInvalidArguments)
{
	doca_log_backend *backend = nullptr;
	char buffer[16];
	EXPECT_EQ(doca_log_backend_create_with_file(nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_file(stderr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_fd(-1, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_fd(2, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer(nullptr, 16, remember_flush, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer(buffer, 0, remember_flush, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer(buffer, 16, nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer(buffer, 16, remember_flush, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_syslog(nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_syslog("name", nullptr), DOCA_ERROR_INVALID_VALUE);

	EXPECT_EQ(doca_log_backend_create_with_file_sdk(nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_file_sdk(stderr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_fd_sdk(-5, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_fd_sdk(2, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer_sdk(nullptr, 16, remember_flush, &backend),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer_sdk(buffer, 0, remember_flush, &backend),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer_sdk(buffer, 16, nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_buffer_sdk(buffer, 16, remember_flush, nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_syslog_sdk(nullptr, &backend), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_create_with_syslog_sdk("name", nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(backend, nullptr);
}

TEST_F(LogBackend, LimitSettersRejectInvalidArguments)
{
	CapturedFile capture;
	doca_log_backend *application = nullptr;
	doca_log_backend *sdk = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &application), DOCA_SUCCESS);
	ASSERT_EQ(doca_log_backend_create_with_file_sdk(capture.file(), &sdk), DOCA_SUCCESS);

	for (uint32_t bad : {0u, 9u, 71u, 1000u}) {
		EXPECT_EQ(doca_log_backend_set_level_lower_limit(application, bad), DOCA_ERROR_INVALID_VALUE) << bad;
		EXPECT_EQ(doca_log_backend_set_level_upper_limit(application, bad), DOCA_ERROR_INVALID_VALUE) << bad;
		EXPECT_EQ(doca_log_backend_set_sdk_level(sdk, bad), DOCA_ERROR_INVALID_VALUE) << bad;
		EXPECT_EQ(doca_log_level_set_global_lower_limit(bad), DOCA_ERROR_INVALID_VALUE) << bad;
		EXPECT_EQ(doca_log_level_set_global_upper_limit(bad), DOCA_ERROR_INVALID_VALUE) << bad;
		EXPECT_EQ(doca_log_level_set_global_sdk_limit(bad), DOCA_ERROR_INVALID_VALUE) << bad;
	}
	EXPECT_EQ(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
	EXPECT_EQ(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_CRIT);
	EXPECT_EQ(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);

	EXPECT_EQ(doca_log_backend_set_level_lower_limit(nullptr, 50), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit(nullptr, 20), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_lower_limit_strict(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit_strict(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_sdk_level(nullptr, 50), DOCA_ERROR_INVALID_VALUE);

	// Application limits belong to application backends, the SDK level to SDK backends.
	EXPECT_EQ(doca_log_backend_set_level_lower_limit(sdk, 50), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit(sdk, 20), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_lower_limit_strict(sdk), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_level_upper_limit_strict(sdk), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_sdk_level(application, 50), DOCA_ERROR_INVALID_VALUE);

	// A pointer the library never handed out.
	int not_a_backend = 0;
	auto *forged = reinterpret_cast<doca_log_backend *>(&not_a_backend);
	EXPECT_EQ(doca_log_backend_set_level_lower_limit(forged, 50), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_backend_set_sdk_level(forged, 50), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(LogBackend, DocaLogRejectsInvalidLevelAndFormat)
{
	CapturedFile capture;
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_file(capture.file(), &backend), DOCA_SUCCESS);
	EXPECT_EQ(doca_log(9, log_source, __FILE__, __LINE__, __func__, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log(71, log_source, __FILE__, __LINE__, __func__, "x"), DOCA_ERROR_INVALID_VALUE);
	const char *no_format = nullptr;
	// A NULL format is what this checks.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
	EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, no_format),
		  DOCA_ERROR_INVALID_VALUE);
#pragma GCC diagnostic pop
	EXPECT_EQ(capture.text(), "");
	// Missing call-site details are not an error.
	EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, nullptr, 0, nullptr, "anonymous"), DOCA_SUCCESS);
	EXPECT_NE(capture.text().find("[?:0][?] anonymous"), std::string::npos) << capture.text();
}

std::string nested_result;
void log_from_flush(char *)
{
	// Logging from inside a backend is refused instead of deadlocking.
	nested_result =
	    doca_error_get_name(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, "nested"));
}

TEST_F(LogBackend, LoggingFromAFlushHandlerIsRefused)
{
	char buffer[256];
	doca_log_backend *backend = nullptr;
	ASSERT_EQ(doca_log_backend_create_with_buffer(buffer, sizeof(buffer), log_from_flush, &backend), DOCA_SUCCESS);
	EXPECT_EQ(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, "outer"), DOCA_SUCCESS);
	EXPECT_EQ(nested_result, "DOCA_ERROR_IN_USE");
}

} // namespace
} // namespace softdpu::log::test
