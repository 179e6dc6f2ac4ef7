// Process identity: what the export registry relies on to tell a live peer from a dead one.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "core/xproc/identity.hpp"

namespace {

using softdpu::xproc::Liveness;
using softdpu::xproc::process_is;
using softdpu::xproc::process_liveness;
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

// The main thread leaves (as with pthread_exit) while another thread goes on: /proc shows the leader
// as a zombie, but the process still runs (and could be inside an access).
TEST(XprocIdentity, ZombieLeaderWithLiveThreadsIsAlive)
{
	int to_leader[2], to_worker[2];
	ASSERT_EQ(pipe(to_leader), 0);
	ASSERT_EQ(pipe(to_worker), 0);
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		pthread_t worker;
		pthread_create(
		    &worker, nullptr,
		    [](void *fd) -> void * {
			    char c;
			    (void)!read(*static_cast<int *>(fd), &c, 1); // until told
			    _exit(0);
		    },
		    &to_worker[0]);
		char c;
		(void)!read(to_leader[0], &c, 1); // until the parent has the start time
		syscall(SYS_exit, 0);             // this thread only (pthread_exit would unwind through gtest)
	}
	const auto pid = static_cast<uint32_t>(child);
	const uint64_t start = process_start_time(pid); // the leader waits: it is alive now
	ASSERT_NE(start, 0u);
	ASSERT_EQ(write(to_leader[1], "x", 1), 1);
	// Wait for the leader to become a zombie: process_start_time reports 0 for it.
	bool leader_gone = false;
	for (int i = 0; i < 5000 && !leader_gone; ++i) {
		leader_gone = process_start_time(pid) == 0;
		if (!leader_gone)
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
	ASSERT_TRUE(leader_gone);
	EXPECT_EQ(process_liveness(pid, start), Liveness::alive);
	ASSERT_EQ(write(to_worker[1], "x", 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_EQ(process_liveness(pid, start), Liveness::gone);
	for (int fd : {to_leader[0], to_leader[1], to_worker[0], to_worker[1]})
		close(fd);
}

// With no file descriptor left /proc cannot tell: unknown, never "gone".
TEST(XprocIdentity, NoDescriptorLeftIsUnknownNotGone)
{
	const auto self = static_cast<uint32_t>(getpid());
	const uint64_t start = process_start_time(self);
	struct rlimit saved;
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
	std::vector<int> fds;
	struct rlimit low = saved;
	low.rlim_cur = 64;
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (int fd; (fd = dup(0)) >= 0;)
		fds.push_back(fd);
	const Liveness seen = process_liveness(self, start);
	for (int fd : fds)
		close(fd);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
	EXPECT_EQ(seen, Liveness::unknown);
	EXPECT_EQ(process_liveness(self, start), Liveness::alive);
	EXPECT_EQ(process_liveness(self, start + 1), Liveness::gone);
}

} // namespace
