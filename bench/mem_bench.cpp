// The memory subsystem's data path against malloc+free of one descriptor.
//
// Each benchmark reports ns per operation (Time) and "x_vs_malloc": how many times cheaper it is
// than malloc+free of sizeof(doca_buf) bytes, measured in the same process just before
// (baseline ns / our ns). Run with repetitions and read the medians; see docs/performance.md.
#include "core/mem/buf.hpp"
#include "mem_bench_floor.h"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_mmap.h>

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

// Thread CPU time in seconds: the machine these run on is shared, and CPU time is much less
// sensitive to other processes than wall time.
double thread_cpu_seconds()
{
	timespec now{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

constexpr size_t kDescriptorSize = sizeof(doca_buf);

// One malloc+free of a descriptor-sized block; the pointer escapes so neither call can be elided.
inline void malloc_free_once()
{
	void *p = std::malloc(kDescriptorSize);
	benchmark::DoNotOptimize(p);
	std::free(p);
	benchmark::ClobberMemory();
}

// Median over several timed runs of malloc_free_once, in seconds per operation.
double measure_malloc_baseline_seconds()
{
	constexpr int kRuns = 9;
	constexpr int kOpsPerRun = 2'000'000;
	std::array<double, kRuns> per_op{};
	for (int i = 0; i < 100'000; ++i) { // warm up the allocator's caches
		malloc_free_once();
	}
	for (double &seconds : per_op) {
		const double start = thread_cpu_seconds();
		for (int i = 0; i < kOpsPerRun; ++i) {
			malloc_free_once();
		}
		seconds = (thread_cpu_seconds() - start) / kOpsPerRun;
	}
	std::sort(per_op.begin(), per_op.end());
	return per_op[kRuns / 2];
}

double g_baseline_seconds = 0;

// Every call's status is OR-ed into a benchmark's `errors` (as a program checks what it calls): a
// failing call would make the figures those of an error path, so the benchmark then reports an error.
void check_calls(benchmark::State &state, int errors)
{
	if (errors != 0)
		state.SkipWithError("a call failed: the figures would not be those of the operation");
}

// Times the benchmark loop itself (the loop Google Benchmark times) in thread CPU time and reports
// baseline / ours as the counter x_vs_malloc.
class RatioTimer {
public:
	RatioTimer() : start_(thread_cpu_seconds()) {}
	void report(benchmark::State &state) const
	{
		const double ours = (thread_cpu_seconds() - start_) / static_cast<double>(state.iterations());
		state.counters["x_vs_malloc"] = g_baseline_seconds / ours;
	}

private:
	double start_;
};

struct Memory {
	explicit Memory(uint32_t buffers = 64)
	{
		if (doca_mmap_create(&mmap) != DOCA_SUCCESS ||
		    doca_mmap_set_memrange(mmap, bytes.data(), bytes.size()) || doca_mmap_start(mmap) != DOCA_SUCCESS ||
		    doca_buf_inventory_create(buffers, &inventory) != DOCA_SUCCESS ||
		    doca_buf_inventory_start(inventory) != DOCA_SUCCESS ||
		    doca_buf_pool_create(buffers, 64, mmap, &pool) != DOCA_SUCCESS ||
		    doca_buf_pool_start(pool) != DOCA_SUCCESS) {
			std::fprintf(stderr, "bench_mem: set-up failed\n");
			std::abort();
		}
	}
	~Memory()
	{
		doca_buf_pool_destroy(pool);
		doca_buf_inventory_destroy(inventory);
		doca_mmap_destroy(mmap);
	}
	std::vector<uint8_t> bytes = std::vector<uint8_t>(1 << 17);
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inventory = nullptr;
	doca_buf_pool *pool = nullptr;
};

void BM_MallocFree_Baseline(benchmark::State &state)
{
	RatioTimer timer;
	for (auto _ : state) {
		malloc_free_once();
	}
	timer.report(state);
}
BENCHMARK(BM_MallocFree_Baseline);

void BM_Inventory_GetByArgs_Release(benchmark::State &state)
{
	Memory memory;
	void *addr = memory.bytes.data() + 256;
	int errors = 0;
	RatioTimer timer;
	for (auto _ : state) {
		doca_buf *buf = nullptr;
		errors |= doca_buf_inventory_buf_get_by_args(memory.inventory, memory.mmap, addr, 1024, addr, 64, &buf);
		benchmark::DoNotOptimize(buf);
		errors |= doca_buf_dec_refcount(buf, nullptr);
	}
	timer.report(state);
	check_calls(state, errors);
}
BENCHMARK(BM_Inventory_GetByArgs_Release);

void BM_Pool_Alloc_Release(benchmark::State &state)
{
	Memory memory;
	int errors = 0;
	RatioTimer timer;
	for (auto _ : state) {
		doca_buf *buf = nullptr;
		errors |= doca_buf_pool_buf_alloc(memory.pool, &buf);
		benchmark::DoNotOptimize(buf);
		errors |= doca_buf_dec_refcount(buf, nullptr);
	}
	timer.report(state);
	check_calls(state, errors);
}
BENCHMARK(BM_Pool_Alloc_Release);

void BM_Chain_Unchain_TwoBuffers(benchmark::State &state)
{
	Memory memory;
	doca_buf *first = nullptr;
	doca_buf *second = nullptr;
	doca_buf_inventory_buf_get_by_addr(memory.inventory, memory.mmap, memory.bytes.data(), 64, &first);
	doca_buf_inventory_buf_get_by_addr(memory.inventory, memory.mmap, memory.bytes.data() + 64, 64, &second);
	int errors = 0;
	RatioTimer timer;
	for (auto _ : state) {
		errors |= doca_buf_chain_list(first, second);
		benchmark::ClobberMemory();
		errors |= doca_buf_unchain_list(first, second);
		benchmark::ClobberMemory();
	}
	timer.report(state);
	errors |= doca_buf_dec_refcount(first, nullptr);
	errors |= doca_buf_dec_refcount(second, nullptr);
	check_calls(state, errors);
}
BENCHMARK(BM_Chain_Unchain_TwoBuffers);

// With a queue's worth of buffers in flight (take `depth` buffers, then release them all), as an
// application keeping many tasks outstanding does: glibc's per-thread cache holds only 7 blocks of a
// size, so malloc+free takes its slower paths here. Both sides are measured in the same benchmark and
// reported per buffer; x_vs_malloc_in_flight = malloc+free / ours, for the same depth.
constexpr int kInFlightRounds = 20'000;

// Seconds per buffer (median of 5 runs) of `take` then `give` with `depth` buffers held. take
// returns null and give non-zero on failure; *errors collects both.
template <typename Take, typename Give>
double seconds_per_buffer_in_flight(int depth, Take take, Give give, int *errors)
{
	std::vector<void *> held(static_cast<size_t>(depth));
	std::array<double, 5> per_buffer{};
	for (double &seconds : per_buffer) {
		const double start = thread_cpu_seconds();
		for (int round = 0; round < kInFlightRounds; ++round) {
			for (void *&block : held) {
				block = take();
				// The input-only form: GCC may drop the store above with the in-out one.
				benchmark::DoNotOptimize(std::as_const(block));
			}
			for (void *block : held)
				*errors |= give(block);
			benchmark::ClobberMemory();
		}
		seconds = (thread_cpu_seconds() - start) / (static_cast<double>(kInFlightRounds) * depth);
		for (const void *block : held)
			*errors |= block == nullptr ? 1 : 0;
	}
	std::sort(per_buffer.begin(), per_buffer.end());
	return per_buffer[per_buffer.size() / 2];
}

template <typename Take, typename Give> void report_in_flight(benchmark::State &state, Take take, Give give)
{
	const int depth = static_cast<int>(state.range(0));
	int errors = 0;
	const auto malloc_take = [] { return std::malloc(kDescriptorSize); };
	const auto malloc_give = [](void *block) {
		std::free(block);
		return 0;
	};
	double malloc_seconds = seconds_per_buffer_in_flight(depth, malloc_take, malloc_give, &errors);
	std::vector<double> per_iteration;
	for (auto _ : state)
		per_iteration.push_back(seconds_per_buffer_in_flight(depth, take, give, &errors));
	std::sort(per_iteration.begin(), per_iteration.end());
	const double ours_seconds = per_iteration[per_iteration.size() / 2];
	state.counters["ns_per_buffer"] = ours_seconds * 1e9;
	state.counters["malloc_ns_per_buffer"] = malloc_seconds * 1e9;
	state.counters["x_vs_malloc_in_flight"] = malloc_seconds / ours_seconds;
	check_calls(state, errors);
}

// Takes a buffer from get(&buf): the buffer, or null if get failed.
template <typename Get> void *taken(Get get)
{
	doca_buf *buf = nullptr;
	return get(&buf) == DOCA_SUCCESS ? buf : nullptr;
}

int release(void *buf)
{
	return doca_buf_dec_refcount(static_cast<doca_buf *>(buf), nullptr);
}

void BM_InFlight_Inventory_GetByArgs_Release(benchmark::State &state)
{
	Memory memory(static_cast<uint32_t>(state.range(0)));
	void *addr = memory.bytes.data() + 256;
	report_in_flight(
	    state,
	    [&] {
		    return taken([&](doca_buf **buf) {
			    return doca_buf_inventory_buf_get_by_args(memory.inventory, memory.mmap, addr, 1024, addr,
								      64, buf);
		    });
	    },
	    release);
}
BENCHMARK(BM_InFlight_Inventory_GetByArgs_Release)->Arg(64)->Arg(1024)->Iterations(3);

void BM_InFlight_Pool_Alloc_Release(benchmark::State &state)
{
	Memory memory(static_cast<uint32_t>(state.range(0)));
	report_in_flight(
	    state, [&] { return taken([&](doca_buf **buf) { return doca_buf_pool_buf_alloc(memory.pool, buf); }); },
	    release);
}
BENCHMARK(BM_InFlight_Pool_Alloc_Release)->Arg(64)->Arg(1024)->Iterations(3);

// The floors with buffers in flight (see floor_get_release below).
template <int (*Get)(void *, void *, void *, size_t, void **), int (*Release)(void *, size_t *)>
void floor_in_flight(benchmark::State &state)
{
	Memory memory;
	void *addr = memory.bytes.data();
	mem_floor_init();
	report_in_flight(
	    state,
	    [&] {
		    void *buf = nullptr;
		    return Get(memory.inventory, memory.mmap, addr, 64, &buf) == 0 ? buf : nullptr;
	    },
	    [](void *buf) { return Release(buf, nullptr); });
}
BENCHMARK(floor_in_flight<mem_floor_get_nothing, mem_floor_release_nothing>)
    ->Name("BM_InFlight_Floor_TwoCallsDoingNothing")
    ->Arg(64)
    ->Arg(1024)
    ->Iterations(3);
BENCHMARK(floor_in_flight<mem_floor_get_pop, mem_floor_release_push>)
    ->Name("BM_InFlight_Floor_TwoCallsFreeListOnly")
    ->Arg(64)
    ->Arg(1024)
    ->Iterations(3);

// Floors: two calls into another translation unit with the signatures of a get and a release.
// Whatever an implementation does, a get+release through the C API costs at least this much; set
// against the malloc+free baseline they show how far below it any implementation can go. (Template
// arguments, so the calls stay direct calls, as an application's calls into the library are.)
template <int (*Get)(void *, void *, void *, size_t, void **), int (*Release)(void *, size_t *)>
void floor_get_release(benchmark::State &state)
{
	Memory memory;
	void *addr = memory.bytes.data();
	mem_floor_init();
	int errors = 0;
	RatioTimer timer;
	for (auto _ : state) {
		void *buf = nullptr;
		errors |= Get(memory.inventory, memory.mmap, addr, 64, &buf);
		benchmark::DoNotOptimize(buf);
		errors |= Release(buf, nullptr);
	}
	timer.report(state);
	check_calls(state, errors);
}
BENCHMARK(floor_get_release<mem_floor_get_nothing, mem_floor_release_nothing>)->Name("BM_Floor_TwoCallsDoingNothing");
BENCHMARK(floor_get_release<mem_floor_get_pop, mem_floor_release_push>)->Name("BM_Floor_TwoCallsFreeListOnly");

} // namespace

int main(int argc, char **argv)
{
	g_baseline_seconds = measure_malloc_baseline_seconds();
	std::printf("malloc+free baseline (%zu bytes, median of 9 runs, thread CPU time): %.2f ns\n", kDescriptorSize,
		    g_baseline_seconds * 1e9);
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
		return 1;
	}
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}
