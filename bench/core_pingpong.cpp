// Core-to-core round trip: one cache line bounced between a thread on CPU 0 and one on CPU 1.
//
// On a shared VM this moves with where the host puts the two vCPUs (about 65-110 ns when they
// share a last-level cache, 400-700 ns when they do not), and every figure that moves data
// between two cores (a DMA engine thread, the two sides of a memif ring) moves with it. The
// benchmark scripts print it next to their own figures so that runs can be told apart.
//
//     bench_core_pingpong [seconds]      prints the mean round trip in ns (default 0.2 s)
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

alignas(64) std::atomic<long> ball{0};
constexpr long kStop = -1;

bool pin_to_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// CPU 1: answers every odd value with the next even one.
void responder()
{
	pin_to_cpu(1);
	for (long expected = 1;; expected += 2) {
		long seen;
		while ((seen = ball.load(std::memory_order_acquire)) != expected)
			if (seen == kStop)
				return;
		ball.store(expected + 1, std::memory_order_release);
	}
}

} // namespace

int main(int argc, char **argv)
{
	const double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
	if (seconds <= 0) {
		std::fprintf(stderr, "usage: %s [seconds > 0]\n", argv[0]);
		return 2;
	}
	if (std::thread::hardware_concurrency() < 2) {
		std::fprintf(stderr, "%s: needs two CPUs\n", argv[0]);
		return 1;
	}
	std::thread other(responder);
	if (!pin_to_cpu(0)) {
		std::fprintf(stderr, "%s: cannot run on CPU 0\n", argv[0]);
		ball.store(kStop);
		other.join();
		return 1;
	}
	using Clock = std::chrono::steady_clock;
	const auto start = Clock::now();
	const auto until = start + std::chrono::duration<double>(seconds);
	long value = 0;
	long round_trips = 0;
	while (Clock::now() < until) {
		for (int i = 0; i < 1000; ++i) {
			ball.store(value + 1, std::memory_order_release);
			value += 2;
			while (ball.load(std::memory_order_acquire) != value) {
			}
		}
		round_trips += 1000;
	}
	const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
	ball.store(kStop, std::memory_order_release);
	other.join();
	std::printf("%.0f\n", elapsed / static_cast<double>(round_trips) * 1e9);
	return 0;
}
