// common/env.hpp: unset and empty variables read alike; malformed or out-of-range numbers give
// nothing, so callers keep their defaults.
#include "common/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace softdpu::common;

namespace {

constexpr const char *kName = "SOFTDPU_TEST_ENV_HELPER";

class Env : public ::testing::Test {
protected:
	void TearDown() override { unsetenv(kName); }
	static void set(const char *value) { ASSERT_EQ(setenv(kName, value, 1), 0); }
};

TEST_F(Env, UnsetAndEmptyAreNothing)
{
	unsetenv(kName);
	EXPECT_FALSE(env_value(kName));
	EXPECT_FALSE(env_unsigned(kName, 0, UINT64_MAX));
	set("");
	EXPECT_FALSE(env_value(kName));
	EXPECT_FALSE(env_unsigned(kName, 0, UINT64_MAX));
}

TEST_F(Env, ValueIsTheTextAsSet)
{
	set(" host ");
	ASSERT_TRUE(env_value(kName));
	EXPECT_EQ(*env_value(kName), " host ");
}

TEST_F(Env, UnsignedInRange)
{
	set("64");
	EXPECT_EQ(env_unsigned(kName, 1, 64), 64u);
	set("0x40");
	EXPECT_EQ(env_unsigned(kName, 1, 64), 64u);
	set("1");
	EXPECT_EQ(env_unsigned(kName, 1, 64), 1u);
	set("18446744073709551615");
	EXPECT_EQ(env_unsigned(kName, 0, UINT64_MAX), UINT64_MAX);
}

TEST_F(Env, UnsignedOutOfRangeOrMalformedIsNothing)
{
	for (const char *text : {"0", "65", "-1", "4 ", " 4", "4k", "1e9", "0x", "18446744073709551616"}) {
		set(text);
		EXPECT_FALSE(env_unsigned(kName, 1, 64)) << '"' << text << '"';
	}
}

} // namespace
