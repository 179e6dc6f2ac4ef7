// Process identity: what the export registry relies on to tell a live peer from a dead one.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/xproc/identity.hpp"

namespace {

using softdpu::xproc::process_is;
using softdpu::xproc::process_start_time;

TEST(XprocIdentity, LiveProcessMatchesItsStartTime)
{
	const auto self = static_cast<uint32_t>(getpid());
	const uint64_t start = process_start_time(self);
	ASSERT_NE(start, 0u);
	EXPECT_TRUE(process_is(self, start));
	EXPECT_FALSE(process_is(self, start + 1)) << "another start time is another process";
	EXPECT_FALSE(process_is(self, 0));
}

TEST(XprocIdentity, ExitedButUnreapedChildIsNotAlive)
{
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		pause(); // until killed
		_exit(0);
	}
	const uint64_t start = process_start_time(static_cast<uint32_t>(child));
	ASSERT_NE(start, 0u);
	EXPECT_TRUE(process_is(static_cast<uint32_t>(child), start));
	ASSERT_EQ(kill(child, SIGKILL), 0);
	// Not reaped yet: a zombie keeps its /proc entry, and must still count as dead.
	bool seen_dead = false;
	for (int i = 0; i < 500 && !seen_dead; ++i) {
		seen_dead = !process_is(static_cast<uint32_t>(child), start);
		if (!seen_dead)
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
	EXPECT_TRUE(seen_dead);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_FALSE(process_is(static_cast<uint32_t>(child), start));
}

} // namespace
