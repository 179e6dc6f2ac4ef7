#include <doca_error.h>
#include <doca_version.h>

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

TEST(DocaError, NamesMatchEnumerators)
{
	EXPECT_STREQ(doca_error_get_name(DOCA_SUCCESS), "DOCA_SUCCESS");
	EXPECT_STREQ(doca_error_get_name(DOCA_ERROR_IN_USE), "DOCA_ERROR_IN_USE");
	EXPECT_STREQ(doca_error_get_name(DOCA_ERROR_TOO_BIG), "DOCA_ERROR_TOO_BIG");
	EXPECT_EQ(DOCA_ERROR_TOO_BIG, 27);
	EXPECT_EQ(DOCA_ERROR_BAD_STATE, 18);
}

TEST(DocaError, EveryCodeHasDistinctNameAndDescription)
{
	std::set<std::string> names;
	for (int code = DOCA_SUCCESS; code <= DOCA_ERROR_TOO_BIG; ++code) {
		const char *name = doca_error_get_name(static_cast<doca_error_t>(code));
		const char *descr = doca_error_get_descr(static_cast<doca_error_t>(code));
		EXPECT_EQ(std::strncmp(name, "DOCA_", 5), 0) << code;
		EXPECT_STRNE(descr, "unrecognized error code") << code;
		names.insert(name);
	}
	EXPECT_EQ(names.size(), 28u);
}

TEST(DocaError, UnknownCodesAreReported)
{
	EXPECT_STREQ(doca_error_get_name(static_cast<doca_error_t>(28)), "unrecognized error code");
	EXPECT_STREQ(doca_error_get_descr(static_cast<doca_error_t>(-1)), "unrecognized error code");
	EXPECT_STREQ(doca_error_get_descr(DOCA_ERROR_NOT_PERMITTED), "Operation not permitted");
}

TEST(DocaError, PropagateKeepsTheFirstError)
{
	doca_error_t r = DOCA_SUCCESS;
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_AGAIN);
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(r, DOCA_ERROR_AGAIN);
	EXPECT_TRUE(DOCA_IS_ERROR(r));
}

TEST(DocaVersion, CompileTimeMatchesRuntime)
{
	EXPECT_STREQ(doca_version(), doca_version_runtime());
	EXPECT_TRUE(DOCA_VERSION_LTE_CURRENT(2, 5, 0));
	EXPECT_TRUE(DOCA_VERSION_EQ_CURRENT(DOCA_VER_MAJOR, DOCA_VER_MINOR, DOCA_VER_PATCH));
	EXPECT_EQ(DOCA_CURRENT_VERSION_NUM, (size_t)((2 << 24) | (5 << 16) | 108));
}
