// App Shield's Linux reader on the big test guest (tests/guest/boot --big N: N more processes of
// apsh_crowd with 5 threads each, 2 GiB, 200 MiB of page cache). introspection_test.cpp checks
// every process against the ground truth on any guest; these check that the guest is as big as
// asked, that the reader finds all of it, and that the per-process work grows linearly: the sweep
// of all processes against the sweep of a tenth of them, as a ratio of CPU times measured in this
// one process (no absolute times). They skip on guests booted without --big (no BIG_PROCS in
// guest.env).
#include "apsh/introspection.hpp"
#include "ground_truth.hpp"
#include "guest_run_dir.hpp"

#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace softdpu::apsh;
using softdpu::guest::GroundTruth;

double thread_cpu_seconds()
{
	timespec ts{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class BigGuest : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		const char *snapshot = std::getenv("SOFTDPU_GUEST_SNAPSHOT");
		if (snapshot == nullptr)
			return;
		const std::string big_procs = softdpu::guest::GuestRunDir(snapshot).value("BIG_PROCS");
		if (big_procs.empty())
			return;
		big_procs_ = std::stoul(big_procs);
		truth_ = new GroundTruth(GroundTruth::load(std::string(snapshot) + "/ground-truth.txt"));
		SourceSpec spec{SourceKind::raw, std::string(snapshot) + "/memory.raw", "", {}};
		open_status_ = LinuxSystem::open(spec, KernelHints{}, Limits{}, system_);
	}
	static void TearDownTestSuite()
	{
		delete truth_;
		truth_ = nullptr;
		system_.reset();
	}
	void SetUp() override
	{
		if (truth_ == nullptr)
			GTEST_SKIP()
			    << "not a big guest (SOFTDPU_GUEST_SNAPSHOT unset or no BIG_PROCS in its guest.env)";
		ASSERT_TRUE(open_status_.ok()) << open_status_.reason;
		ASSERT_TRUE(system_->processes(processes_).ok());
	}

	// CPU seconds of threads, memory areas and libraries of `procs` (best of `runs`), and how many
	// memory areas they had.
	static double sweep_seconds(const std::vector<Process> &procs, int runs, size_t &areas_found)
	{
		double best = 1e9;
		for (int run = 0; run < runs; ++run) {
			areas_found = 0;
			const double start = thread_cpu_seconds();
			for (const Process &p : procs) {
				std::vector<Thread> threads;
				std::vector<MemoryArea> areas;
				std::vector<Library> libs;
				EXPECT_TRUE(system_->threads(p, threads).ok());
				EXPECT_TRUE(system_->memory_areas(p, areas).ok());
				EXPECT_TRUE(system_->libraries(p, libs).ok());
				areas_found += areas.size();
			}
			best = std::min(best, thread_cpu_seconds() - start);
		}
		return best;
	}

	static inline size_t big_procs_ = 0;
	static inline GroundTruth *truth_ = nullptr;
	static inline std::unique_ptr<LinuxSystem> system_;
	static inline Status open_status_;
	std::vector<Process> processes_;
};

TEST_F(BigGuest, HasTheProcessesThreadsAndPageCacheAsked)
{
	size_t crowd = 0;
	for (const auto *gt : truth_->stable_processes())
		crowd += gt->comm.starts_with("crowd_") ? 1 : 0;
	EXPECT_EQ(crowd, big_procs_) << "apsh_crowd processes in the ground truth";
	EXPECT_GE(truth_->stable_processes().size(), big_procs_);
	if (big_procs_ >= 1000) { // issue 23's big guest: at least 5,000 threads
		EXPECT_GE(truth_->threads.size(), 5000u);
	}
	// /init prints MemTotal, Cached and Shmem (kB) once the crowd and the page cache are there.
	const char *snapshot = std::getenv("SOFTDPU_GUEST_SNAPSHOT");
	std::ifstream console(std::string(snapshot) + "/console.log");
	std::string line, meminfo;
	while (std::getline(console, line))
		if (line.find("Cached:") != std::string::npos)
			meminfo = line;
	ASSERT_FALSE(meminfo.empty()) << "no meminfo line on the console";
	const size_t at = meminfo.find("Cached:");
	const unsigned long cached_kib = std::strtoul(meminfo.c_str() + at + 7, nullptr, 10);
	EXPECT_GE(cached_kib, 200ul * 1024) << meminfo;
}

TEST_F(BigGuest, ReaderFindsEveryProcessAndThread)
{
	std::map<uint32_t, const Process *> by_pid;
	for (const auto &p : processes_)
		by_pid[p.pid] = &p;
	size_t threads_want = 0, threads_got = 0;
	for (const auto *gt : truth_->stable_processes()) {
		auto it = by_pid.find(gt->pid);
		if (it == by_pid.end()) {
			EXPECT_TRUE(gt->comm.starts_with("kworker/")) << "pid " << gt->pid << " missing";
			continue;
		}
		std::vector<Thread> threads;
		ASSERT_TRUE(system_->threads(*it->second, threads).ok());
		threads_got += threads.size();
		threads_want += truth_->threads_of(gt->pid).size();
	}
	EXPECT_EQ(threads_got, threads_want);
	EXPECT_GE(threads_got, big_procs_ * 5) << "apsh_crowd runs 5 threads per process";
}

// The sweep of every user process against the sweep of a tenth of them: about 10 when linear;
// quadratic work (a walk per process over all processes, say) gives about 100. The bound leaves
// room for a loaded machine; both sides take the best of three runs in this thread's CPU time.
TEST_F(BigGuest, SweepGrowsLinearlyWithProcesses)
{
	std::vector<Process> users;
	for (const auto &p : processes_)
		if (!p.is_kernel_thread)
			users.push_back(p);
	ASSERT_GE(users.size(), 100u);
	std::vector<Process> tenth(users.begin(), users.begin() + static_cast<std::ptrdiff_t>(users.size() / 10));
	size_t areas_all = 0, areas_tenth = 0;
	sweep_seconds(users, 1, areas_all); // warm: the reader's caches hold the same either way
	const double all = sweep_seconds(users, 3, areas_all);
	const double part = sweep_seconds(tenth, 3, areas_tenth);
	ASSERT_GT(part, 0.0);
	const double expected = static_cast<double>(areas_all) / static_cast<double>(areas_tenth);
	const double ratio = all / part;
	RecordProperty("sweep_ratio", std::to_string(ratio));
	EXPECT_LT(ratio, expected * 2.5) << "all " << users.size() << " processes: " << all
					 << " s CPU, a tenth: " << part << " s CPU (memory areas " << areas_all << " / "
					 << areas_tenth << ")";
}

} // namespace
