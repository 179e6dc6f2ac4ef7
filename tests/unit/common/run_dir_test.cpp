// The run-time directory (common/run_dir.hpp): SOFTDPU_RUN_DIR, else XDG_RUNTIME_DIR/softdpu, else
// /tmp/softdpu-<euid>; and its creation (mode 0700, parents included, existing directories kept).
#include "common/run_dir.hpp"

#include "support/scoped_env.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

using softdpu::common::make_run_directory;
using softdpu::common::run_directory;

TEST(RunDir, SoftdpuRunDirFirstThenXdgThenTmp)
{
	softdpu_test::ScopedEnv xdg("XDG_RUNTIME_DIR", "/run/user/77");
	{
		softdpu_test::ScopedEnv run("SOFTDPU_RUN_DIR", "/srv/sdpu");
		EXPECT_EQ(run_directory(), "/srv/sdpu");
	}
	{
		softdpu_test::ScopedEnv run("SOFTDPU_RUN_DIR", ""); // empty is unset
		EXPECT_EQ(run_directory(), "/run/user/77/softdpu");
	}
	softdpu_test::ScopedEnv run("SOFTDPU_RUN_DIR", nullptr);
	softdpu_test::ScopedEnv no_xdg("XDG_RUNTIME_DIR", nullptr);
	EXPECT_EQ(run_directory(), "/tmp/softdpu-" + std::to_string(geteuid()));
}

TEST(RunDir, MakeCreatesParentsWithMode0700AndKeepsWhatExists)
{
	const std::filesystem::path base =
	    std::filesystem::temp_directory_path() / ("softdpu-rundir-" + std::to_string(getpid()));
	std::filesystem::remove_all(base);
	const std::string deep = (base / "a" / "b").string();
	ASSERT_EQ(make_run_directory(deep), 0);
	struct stat st {};
	ASSERT_EQ(stat(deep.c_str(), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(st.st_mode & 0777, 0700u);
	ASSERT_EQ(stat((base / "a").c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0700u);
	EXPECT_EQ(make_run_directory(deep + "/"), 0); // exists already; a trailing slash is fine

	const std::string file = (base / "file").string();
	FILE *f = std::fopen(file.c_str(), "w");
	ASSERT_NE(f, nullptr);
	std::fclose(f);
	EXPECT_EQ(make_run_directory(file), ENOTDIR);
	EXPECT_EQ(make_run_directory(file + "/sub"), ENOTDIR);
	EXPECT_EQ(make_run_directory(""), ENOENT);
	std::filesystem::remove_all(base);
}
