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
		EXPECT_STRNE(descr, "Unrecognized error code") << code;
		names.insert(name);
	}
	EXPECT_EQ(names.size(), 28u);
}

// The descriptions DOCA 2.5.0108's own library returns, which applications print and users grep.
TEST(DocaError, DescriptionsAreDocasOwn)
{
	const char *const expected[] = {
	    "Success",
	    "Unknown error",
	    "Operation not permitted",
	    "Resource already in use",
	    "Operation not supported",
	    "Resource temporarily unavailable, try again",
	    "Invalid input",
	    "Memory allocation failure",
	    "Resource initialization failure",
	    "Timer expired waiting for resource",
	    "Shut down in process or completed",
	    "Connection reset by peer",
	    "Connection aborted",
	    "Connection in progress",
	    "Not Connected",
	    "Unable to acquire required lock",
	    "Requested Resource Not Found",
	    "Input/Output Operation Failed",
	    "Bad State",
	    "Unsupported version",
	    "Operating system call failure",
	    "DOCA Driver call failure",
	    "An unexpected scenario was detected",
	    "Resource already exist",
	    "No more space in resource",
	    "No entry is available in resource",
	    "Operation is in progress",
	    "Requested operation too big to be contained",
	};
	static_assert(sizeof(expected) / sizeof(expected[0]) == DOCA_ERROR_TOO_BIG + 1);
	for (int code = DOCA_SUCCESS; code <= DOCA_ERROR_TOO_BIG; ++code)
		EXPECT_STREQ(doca_error_get_descr(static_cast<doca_error_t>(code)), expected[code]) << code;
}

TEST(DocaError, UnknownCodesAreReported)
{
	EXPECT_STREQ(doca_error_get_name(static_cast<doca_error_t>(28)), "Unrecognized error code");
	EXPECT_STREQ(doca_error_get_descr(static_cast<doca_error_t>(-1)), "Unrecognized error code");
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
