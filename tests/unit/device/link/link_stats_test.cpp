// Link counters (src/device/link/link_stats, softdpu/link.h's softdpu_link_stats_*): the keeper's
// file under the run directory, its counters as another reader sees them, one keeper per end, a
// stale file of a keeper that died, and the errors.
#include "device/link/link_stats.hpp"
#include "device/topology.hpp"

#include "support/scoped_env.h"

#include <softdpu/link.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

namespace {

class LinkStatsTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		base_ = std::filesystem::temp_directory_path() / ("softdpu-linkstats-" + std::to_string(getpid()));
		std::filesystem::remove_all(base_);
		run_dir_.emplace("SOFTDPU_RUN_DIR", base_.c_str());
	}
	void TearDown() override
	{
		run_dir_.reset();
		std::filesystem::remove_all(base_);
	}
	std::filesystem::path stats_file(const char *link, const char *end) const
	{
		return base_ / "links" / (std::string(link) + "." + end + ".stats");
	}

	std::filesystem::path base_;
	std::optional<softdpu_test::ScopedEnv> run_dir_;
};

TEST_F(LinkStatsTest, KeeperCreatesUpdatesAndRemovesTheFile)
{
	softdpu_link_stats_file *file = nullptr;
	softdpu_link_stats *stats = nullptr;
	ASSERT_EQ(softdpu_link_stats_create("hpf0", 0, &file, &stats), DOCA_SUCCESS);
	ASSERT_NE(stats, nullptr);
	EXPECT_TRUE(std::filesystem::exists(stats_file("hpf0", "client")));
	EXPECT_FALSE(std::filesystem::exists(stats_file("hpf0", "server")));

	softdpu_link_stats read{};
	uint32_t pid = 0;
	ASSERT_EQ(softdpu_link_stats_read("hpf0", 0, &read, &pid), DOCA_SUCCESS);
	EXPECT_EQ(pid, uint32_t(getpid()));
	EXPECT_EQ(read.rx.packets + read.rx.bytes + read.rx.drops + read.tx.packets + read.tx.bytes + read.tx.drops,
		  0u);

	__atomic_store_n(&stats->rx.packets, 3, __ATOMIC_RELAXED);
	__atomic_store_n(&stats->rx.bytes, 294, __ATOMIC_RELAXED);
	__atomic_store_n(&stats->rx.drops, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&stats->tx.packets, 5, __ATOMIC_RELAXED);
	__atomic_store_n(&stats->tx.bytes, 9000, __ATOMIC_RELAXED);
	__atomic_store_n(&stats->tx.drops, 2, __ATOMIC_RELAXED);
	ASSERT_EQ(softdpu_link_stats_read("hpf0", 0, &read, nullptr), DOCA_SUCCESS);
	EXPECT_EQ(read.rx.packets, 3u);
	EXPECT_EQ(read.rx.bytes, 294u);
	EXPECT_EQ(read.rx.drops, 1u);
	EXPECT_EQ(read.tx.packets, 5u);
	EXPECT_EQ(read.tx.bytes, 9000u);
	EXPECT_EQ(read.tx.drops, 2u);
	// The other end of the same link has no keeper.
	EXPECT_EQ(softdpu_link_stats_read("hpf0", 1, &read, nullptr), DOCA_ERROR_NOT_FOUND);

	EXPECT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
	EXPECT_FALSE(std::filesystem::exists(stats_file("hpf0", "client")));
	EXPECT_EQ(softdpu_link_stats_read("hpf0", 0, &read, nullptr), DOCA_ERROR_NOT_FOUND);
}

TEST_F(LinkStatsTest, OneKeeperPerEnd)
{
	softdpu_link_stats_file *file = nullptr;
	softdpu_link_stats *stats = nullptr;
	ASSERT_EQ(softdpu_link_stats_create("p0", 0, &file, &stats), DOCA_SUCCESS);
	softdpu_link_stats_file *second = nullptr;
	softdpu_link_stats *second_stats = nullptr;
	EXPECT_EQ(softdpu_link_stats_create("p0", 0, &second, &second_stats), DOCA_ERROR_IN_USE);
	EXPECT_EQ(second, nullptr);
	// The server end is another end.
	ASSERT_EQ(softdpu_link_stats_create("p0", 1, &second, &second_stats), DOCA_SUCCESS);
	EXPECT_NE(second_stats, stats);
	EXPECT_EQ(softdpu_link_stats_destroy(second), DOCA_SUCCESS);
	EXPECT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
	// Free again once the keeper is gone.
	ASSERT_EQ(softdpu_link_stats_create("p0", 0, &file, &stats), DOCA_SUCCESS);
	EXPECT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
}

TEST_F(LinkStatsTest, CountersOfAnotherProcessAndTheStaleFileItLeaves)
{
	int ready[2];
	int go[2];
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe(go), 0);
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		// A keeper that counts, then dies without cleaning up (as a killed one would).
		softdpu_link_stats_file *file = nullptr;
		softdpu_link_stats *stats = nullptr;
		char byte = softdpu_link_stats_create("hpf1", 1, &file, &stats) == DOCA_SUCCESS ? 1 : 0;
		if (byte)
			__atomic_store_n(&stats->tx.packets, 42, __ATOMIC_RELAXED);
		(void)!write(ready[1], &byte, 1);
		(void)!read(go[0], &byte, 1);
		_exit(0);
	}
	char byte = 0;
	ASSERT_EQ(read(ready[0], &byte, 1), 1);
	ASSERT_EQ(byte, 1);
	softdpu_link_stats read_stats{};
	uint32_t pid = 0;
	EXPECT_EQ(softdpu_link_stats_read("hpf1", 1, &read_stats, &pid), DOCA_SUCCESS);
	EXPECT_EQ(pid, uint32_t(child));
	EXPECT_EQ(read_stats.tx.packets, 42u);
	softdpu_link_stats_file *file = nullptr;
	softdpu_link_stats *stats = nullptr;
	EXPECT_EQ(softdpu_link_stats_create("hpf1", 1, &file, &stats), DOCA_ERROR_IN_USE);

	ASSERT_EQ(write(go[1], &byte, 1), 1);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	for (int fd : {ready[0], ready[1], go[0], go[1]})
		close(fd);
	// The file is still there, but nobody keeps it: no counters; a new keeper takes it over, zeroed.
	EXPECT_TRUE(std::filesystem::exists(stats_file("hpf1", "server")));
	EXPECT_EQ(softdpu_link_stats_read("hpf1", 1, &read_stats, nullptr), DOCA_ERROR_NOT_FOUND);
	ASSERT_EQ(softdpu_link_stats_create("hpf1", 1, &file, &stats), DOCA_SUCCESS);
	ASSERT_EQ(softdpu_link_stats_read("hpf1", 1, &read_stats, &pid), DOCA_SUCCESS);
	EXPECT_EQ(pid, uint32_t(getpid()));
	EXPECT_EQ(read_stats.tx.packets, 0u);
	EXPECT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
}

// A reader that keeps reading while keepers die and new ones take their stale files over: it
// never dies of SIGBUS (a file shrunk under its mapping), and its reads never make a new keeper
// fail with DOCA_ERROR_IN_USE (a reader takes no lock).
TEST_F(LinkStatsTest, StaleTakeoversUnderAReader)
{
	softdpu_link_stats_file *file = nullptr;
	softdpu_link_stats *stats = nullptr;
	ASSERT_EQ(softdpu_link_stats_create("hpf0", 0, &file, &stats), DOCA_SUCCESS); // creates links/
	ASSERT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
	int stop[2];
	ASSERT_EQ(pipe(stop), 0);
	const pid_t reader = fork();
	ASSERT_GE(reader, 0);
	if (reader == 0) {
		close(stop[1]);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		char byte = 0;
		softdpu_link_stats read_stats{};
		uint32_t pid = 0;
		long reads = 0;
		while (read(stop[0], &byte, 1) < 0) { // EAGAIN until the writer closes (EOF: 0)
			if (softdpu_link_stats_read("hpf0", 0, &read_stats, &pid) == DOCA_SUCCESS && pid == 0)
				_exit(3);
			++reads;
		}
		_exit(reads > 0 ? 0 : 4);
	}
	close(stop[0]);
	int in_use = 0;
	for (int round = 0; round < 200; ++round) {
		const pid_t keeper = fork();
		ASSERT_GE(keeper, 0);
		if (keeper == 0) {
			// A keeper that dies without cleaning up: its file stays behind, stale.
			_exit(softdpu_link_stats_create("hpf0", 0, &file, &stats) == DOCA_SUCCESS ? 0 : 1);
		}
		int status = 0;
		ASSERT_EQ(waitpid(keeper, &status, 0), keeper);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
		const doca_error_t created = softdpu_link_stats_create("hpf0", 0, &file, &stats);
		in_use += created == DOCA_ERROR_IN_USE ? 1 : 0;
		ASSERT_TRUE(created == DOCA_SUCCESS || created == DOCA_ERROR_IN_USE) << doca_error_get_name(created);
		if (created == DOCA_SUCCESS) {
			__atomic_store_n(&stats->rx.packets, uint64_t(round + 1), __ATOMIC_RELAXED);
			ASSERT_EQ(softdpu_link_stats_destroy(file), DOCA_SUCCESS);
		}
	}
	close(stop[1]);
	int status = 0;
	ASSERT_EQ(waitpid(reader, &status, 0), reader);
	EXPECT_TRUE(WIFEXITED(status)) << "the reader died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	EXPECT_EQ(in_use, 0) << "takeovers refused as in use while only a reader was there";
}

TEST_F(LinkStatsTest, NotACountersFileIsNone)
{
	std::filesystem::create_directories(base_ / "links");
	const std::string path = stats_file("hpf0", "client");
	FILE *garbage = std::fopen(path.c_str(), "w");
	ASSERT_NE(garbage, nullptr);
	std::fputs("not a counters file", garbage);
	std::fclose(garbage);
	EXPECT_FALSE(softdpu::device::read_link_stats(path).has_value());
	softdpu_link_stats read{};
	EXPECT_EQ(softdpu_link_stats_read("hpf0", 0, &read, nullptr), DOCA_ERROR_NOT_FOUND);
}

TEST_F(LinkStatsTest, Errors)
{
	softdpu_link_stats_file *file = nullptr;
	softdpu_link_stats *stats = nullptr;
	softdpu_link_stats read{};
	EXPECT_EQ(softdpu_link_stats_create(nullptr, 0, &file, &stats), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_stats_create("hpf0", 0, nullptr, &stats), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_stats_create("hpf0", 0, &file, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_stats_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_stats_read(nullptr, 0, &read, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_link_stats_read("hpf0", 0, nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	// Names are link names: "pf0" is an end, not a link.
	EXPECT_EQ(softdpu_link_stats_create("pf0", 0, &file, &stats), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(softdpu_link_stats_read("bogus", 0, &read, nullptr), DOCA_ERROR_NOT_FOUND);
	// The socket directory cannot be made: a file where it should be.
	std::filesystem::create_directories(base_);
	FILE *blocker = std::fopen((base_ / "links").c_str(), "w");
	ASSERT_NE(blocker, nullptr);
	std::fclose(blocker);
	EXPECT_EQ(softdpu_link_stats_create("hpf0", 0, &file, &stats), DOCA_ERROR_OPERATING_SYSTEM);
	softdpu::device::testing::ScopedTopologyError broken("bad.json: $: broken");
	EXPECT_EQ(softdpu_link_stats_create("hpf0", 0, &file, &stats), DOCA_ERROR_INITIALIZATION);
	EXPECT_EQ(softdpu_link_stats_read("hpf0", 0, &read, nullptr), DOCA_ERROR_INITIALIZATION);
}

} // namespace
