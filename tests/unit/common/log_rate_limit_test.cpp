// DOCA_LOG_RATE_LIMIT (softdpu extension): quota per window and call site, suppression report.
#include <doca_log.h>
#include <softdpu/log.h>

#include <gtest/gtest.h>

#include <string>

#include "log_test_support.hpp"

DOCA_LOG_REGISTER(RATE_LIMIT_TEST);

namespace softdpu::log::test {
namespace {

uint64_t fake_now_ns = 0;
uint64_t fake_clock() noexcept
{
	return fake_now_ns;
}
constexpr uint64_t kSecond = 1'000'000'000;

class LogRateLimit : public LogTest {
protected:
	void SetUp() override
	{
		LogTest::SetUp();
		fake_now_ns = 1000 * kSecond;
		Logger::instance().rate_limiter().set_clock(&fake_clock);
		ASSERT_EQ(doca_log_backend_create_with_file(capture_.file(), &backend_), DOCA_SUCCESS);
	}

	// One call site, so every call shares one bucket.
	void log_from_one_site(int i) { DOCA_LOG_RATE_LIMIT_WARN("message %d", i); }

	size_t count(const std::string &needle) const
	{
		size_t found = 0;
		for (const auto &line : capture_.lines())
			found += line.find(needle) != std::string::npos;
		return found;
	}

	CapturedFile capture_;
	doca_log_backend *backend_ = nullptr;
};

TEST_F(LogRateLimit, DefaultsAreTenPerSecond)
{
	EXPECT_EQ(doca_log_get_quantity(), 10);
	EXPECT_EQ(doca_log_get_bucket_time(), 1);
	doca_log_set_quantity(3);
	doca_log_set_bucket_time(5);
	EXPECT_EQ(doca_log_get_quantity(), 3);
	EXPECT_EQ(doca_log_get_bucket_time(), 5);
}

TEST_F(LogRateLimit, QuotaPerWindowThenSuppressedCountIsReported)
{
	doca_log_set_quantity(3);
	doca_log_set_bucket_time(2);
	for (int i = 0; i < 10; ++i)
		log_from_one_site(i);
	EXPECT_EQ(count("message"), 3u);
	EXPECT_EQ(count("suppressed"), 0u);

	fake_now_ns += 1 * kSecond; // same window
	log_from_one_site(10);
	EXPECT_EQ(count("message"), 3u);

	fake_now_ns += 1 * kSecond; // the window has passed
	log_from_one_site(11);
	auto lines = capture_.lines();
	ASSERT_EQ(lines.size(), 5u);
	EXPECT_TRUE(lines[3].ends_with("] 8 similar messages suppressed by the rate limit")) << lines[3];
	EXPECT_NE(lines[3].find("[WARN][RATE_LIMIT_TEST]"), std::string::npos);
	EXPECT_TRUE(lines[4].ends_with("] message 11")) << lines[4];
	for (int i = 0; i < 3; ++i)
		EXPECT_TRUE(lines[i].ends_with("] message " + std::to_string(i))) << lines[i];
}

TEST_F(LogRateLimit, EachCallSiteHasItsOwnBucket)
{
	doca_log_set_quantity(1);
	for (int i = 0; i < 3; ++i) {
		DOCA_LOG_RATE_LIMIT_ERR("site A %d", i);
		DOCA_LOG_RATE_LIMIT_INFO("site B %d", i);
	}
	EXPECT_EQ(count("site A"), 1u);
	EXPECT_EQ(count("site B"), 1u);
}

TEST_F(LogRateLimit, FilteredRecordsDoNotUseTheQuota)
{
	doca_log_set_quantity(2);
	int bucket = -1;
	ASSERT_EQ(doca_log_rate_bucket_register(log_source, &bucket), DOCA_SUCCESS);
	for (int i = 0; i < 5; ++i)
		EXPECT_EQ(doca_log_rate_limit(DOCA_LOG_LEVEL_DEBUG, log_source, __FILE__, __LINE__, __func__, bucket,
					      "debug %d", i),
			  DOCA_SUCCESS);
	for (int i = 0; i < 5; ++i)
		doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, bucket, "error %d",
				    i);
	EXPECT_EQ(count("debug"), 0u);
	EXPECT_EQ(count("error"), 2u);
}

TEST_F(LogRateLimit, ZeroQuantityDropsAllAndZeroWindowDisablesTheLimit)
{
	doca_log_set_quantity(0);
	for (int i = 0; i < 4; ++i)
		log_from_one_site(i);
	EXPECT_EQ(count("message"), 0u);

	doca_log_set_quantity(1);
	doca_log_set_bucket_time(0);
	for (int i = 0; i < 4; ++i)
		log_from_one_site(i);
	EXPECT_EQ(count("message"), 4u);
}

TEST_F(LogRateLimit, InvalidArgumentsAreRejected)
{
	int bucket = -1;
	EXPECT_EQ(doca_log_rate_bucket_register(log_source, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_rate_bucket_register(-1, &bucket), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_rate_bucket_register(1 << 30, &bucket), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(bucket, -1);
	ASSERT_EQ(doca_log_rate_bucket_register(log_source, &bucket), DOCA_SUCCESS);
	EXPECT_EQ(doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source, "f", 1, "g", -1, "x"),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_rate_limit(DOCA_LOG_LEVEL_ERROR, log_source, "f", 1, "g", bucket + 1, "x"),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_log_rate_limit(5, log_source, "f", 1, "g", bucket, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(capture_.text(), "");
}

TEST_F(LogRateLimit, BucketsRunOutWithFull)
{
	RateLimiter &limiter = Logger::instance().rate_limiter();
	const int registered_before = limiter.registered_count();
	int bucket = -1;
	for (int i = registered_before; i < RateLimiter::kMaxBuckets; ++i)
		ASSERT_EQ(doca_log_rate_bucket_register(log_source, &bucket), DOCA_SUCCESS);
	EXPECT_EQ(bucket, RateLimiter::kMaxBuckets - 1);
	EXPECT_EQ(doca_log_rate_bucket_register(log_source, &bucket), DOCA_ERROR_FULL);
	EXPECT_EQ(bucket, RateLimiter::kMaxBuckets - 1);
	limiter.forget_buckets_after(registered_before); // the other tests' call sites need buckets
}

} // namespace
} // namespace softdpu::log::test
