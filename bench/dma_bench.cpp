// DMA and progress-engine benchmarks, each next to a baseline measured in the same run:
//   small tasks:  64-byte memcpy tasks per second (submit + progress + completion callback)
//   large copies: 1 MiB DMA throughput as a ratio to plain memcpy of the same buffers
//   overlap:      how much compute the submitting thread gets done while 1 MiB copies run
//   wake-up:      task completion -> event-driven waiter back from epoll, next to a raw eventfd
#include <benchmark/benchmark.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "support/dma_fixture.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
	return std::chrono::duration<double>(Clock::now() - start).count();
}

// ------------------------------------------------------------------ small tasks

struct Pipeline {
	doca_dma *dma = nullptr;
	int64_t to_submit = 0;
	int64_t completed = 0;
};

void resubmit_cb(doca_dma_task_memcpy *task, union doca_data data, union doca_data)
{
	auto *p = static_cast<Pipeline *>(data.ptr);
	++p->completed;
	doca_buf_reset_data_len(doca_dma_task_memcpy_get_dst(task));
	if (p->to_submit > 0) {
		--p->to_submit;
		doca_task_submit(doca_dma_task_memcpy_as_task(task));
	}
}

void error_cb(doca_dma_task_memcpy *, union doca_data, union doca_data)
{
	std::abort(); // a benchmark task must never fail
}

// Keeps `depth` 64-byte tasks in flight, resubmitting each from its completion callback.
void BM_DmaSmallTasks(benchmark::State &state)
{
	const int depth = static_cast<int>(state.range(0));
	const size_t size = static_cast<size_t>(state.range(1));
	softdpu_test::DmaSetup setup(4 << 20, 4096);
	setup.make_dma(resubmit_cb, error_cb, depth);
	doca_ctx_start(setup.ctx());
	Pipeline pipeline{setup.dma};
	union doca_data data;
	data.ptr = &pipeline;
	std::vector<doca_dma_task_memcpy *> tasks(depth);
	for (int i = 0; i < depth; ++i) {
		doca_buf *src = setup.buf(i * 2 * size, size, size);
		doca_buf *dst = setup.buf(i * 2 * size + size, size, 0);
		doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &tasks[i]);
	}
	constexpr int64_t kBatch = 1 << 16;
	for (auto _ : state) {
		pipeline.completed = 0;
		pipeline.to_submit = kBatch - depth;
		for (auto *task : tasks)
			doca_task_submit(doca_dma_task_memcpy_as_task(task));
		while (pipeline.completed < kBatch)
			doca_pe_progress(setup.pe);
	}
	state.SetItemsProcessed(state.iterations() * kBatch);
	for (auto *task : tasks) {
		doca_buf *src = const_cast<doca_buf *>(doca_dma_task_memcpy_get_src(task));
		doca_buf *dst = doca_dma_task_memcpy_get_dst(task);
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
	}
}
BENCHMARK(BM_DmaSmallTasks)->Args({64, 64})->Args({256, 64})->Args({64, 4096})->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------ large copies

struct LargeCopies;

// Which pipeline slot a task is; its completion frees the slot.
struct Slot {
	LargeCopies *owner;
	int index;
};

void count_cb(doca_dma_task_memcpy *task, union doca_data data, union doca_data);

struct LargeCopies {
	static constexpr size_t kSize = 1 << 20;
	static constexpr int kDepth = 4;

	LargeCopies() : setup(2 * kDepth * kSize, 64)
	{
		setup.make_dma(count_cb, error_cb, kDepth);
		doca_ctx_start(setup.ctx());
		for (int i = 0; i < kDepth; ++i) {
			slots[i] = Slot{this, i};
			union doca_data data;
			data.ptr = &slots[i];
			std::memset(setup.arena.data() + 2 * i * kSize, i + 1, kSize);
			doca_buf *src = setup.buf(2 * i * kSize, kSize, kSize);
			doca_buf *dst = setup.buf((2 * i + 1) * kSize, kSize, 0);
			bufs.push_back(src);
			bufs.push_back(dst);
			doca_dma_task_memcpy *task = nullptr;
			doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &task);
			tasks.push_back(task);
		}
	}
	~LargeCopies()
	{
		for (auto *task : tasks)
			doca_task_free(doca_dma_task_memcpy_as_task(task));
		for (auto *buf : bufs)
			doca_buf_dec_refcount(buf, nullptr);
	}

	// Copies `count` MiB with kDepth tasks in flight; `between_polls` runs between progress calls.
	template <class Work> void copy(int64_t count, Work between_polls)
	{
		completed = 0;
		int64_t submitted = 0;
		while (completed < count) {
			for (int i = 0; i < kDepth && submitted < count; ++i) {
				if (!busy[i]) {
					busy[i] = true;
					++submitted;
					doca_task_submit(doca_dma_task_memcpy_as_task(tasks[i]));
				}
			}
			between_polls();
			doca_pe_progress(setup.pe);
		}
	}

	softdpu_test::DmaSetup setup;
	int64_t completed = 0;
	Slot slots[kDepth];
	bool busy[kDepth] = {};
	std::vector<doca_dma_task_memcpy *> tasks;
	std::vector<doca_buf *> bufs;
};

void count_cb(doca_dma_task_memcpy *task, union doca_data data, union doca_data)
{
	auto *slot = static_cast<Slot *>(data.ptr);
	++slot->owner->completed;
	slot->owner->busy[slot->index] = false;
	doca_buf_reset_data_len(doca_dma_task_memcpy_get_dst(task));
}

// One run measures memcpy and DMA over the same buffers, alternating, and reports the ratio.
void BM_Dma1MiBVsMemcpy(benchmark::State &state)
{
	LargeCopies bench;
	constexpr int64_t kCopies = 64;
	double dma_seconds = 0, memcpy_seconds = 0;
	for (auto _ : state) {
		auto start = Clock::now();
		for (int64_t i = 0; i < kCopies; ++i) {
			const int slot = static_cast<int>(i % LargeCopies::kDepth);
			std::memcpy(bench.setup.arena.data() + (2 * slot + 1) * LargeCopies::kSize,
				    bench.setup.arena.data() + 2 * slot * LargeCopies::kSize, LargeCopies::kSize);
			benchmark::ClobberMemory();
		}
		memcpy_seconds += seconds_since(start);
		start = Clock::now();
		bench.copy(kCopies, [] {});
		dma_seconds += seconds_since(start);
	}
	const double bytes = static_cast<double>(state.iterations() * kCopies * LargeCopies::kSize);
	state.counters["dma_GBps"] = bytes / dma_seconds / 1e9;
	state.counters["memcpy_GBps"] = bytes / memcpy_seconds / 1e9;
	state.counters["dma_over_memcpy"] = memcpy_seconds / dma_seconds;
}
BENCHMARK(BM_Dma1MiBVsMemcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

// A unit of application work between polls.
uint64_t compute_unit(uint64_t x)
{
	for (int i = 0; i < 2000; ++i)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

// Compute done between polls while copying, as a fraction of what the thread does without DMA.
void BM_Dma1MiBOverlapWithCompute(benchmark::State &state)
{
	LargeCopies bench;
	constexpr int64_t kCopies = 64;
	double fraction_sum = 0;
	double dma_seconds = 0;
	uint64_t sink = 1;
	for (auto _ : state) {
		int64_t units = 0;
		auto start = Clock::now();
		bench.copy(kCopies, [&] {
			sink = compute_unit(sink);
			++units;
		});
		const double elapsed = seconds_since(start);
		dma_seconds += elapsed;
		// The same thread, computing only, for the same time.
		int64_t alone = 0;
		start = Clock::now();
		while (seconds_since(start) < elapsed) {
			sink = compute_unit(sink);
			++alone;
		}
		fraction_sum += static_cast<double>(units) / static_cast<double>(alone);
	}
	benchmark::DoNotOptimize(sink);
	state.counters["app_thread_free_fraction"] = fraction_sum / static_cast<double>(state.iterations());
	state.counters["dma_GBps"] =
	    static_cast<double>(state.iterations() * kCopies * LargeCopies::kSize) / dma_seconds / 1e9;
}
BENCHMARK(BM_Dma1MiBOverlapWithCompute)->Unit(benchmark::kMillisecond)->UseRealTime();

// ------------------------------------------------------------------ wake-up latency

void wake_cb(doca_dma_task_memcpy *task, union doca_data data, union doca_data)
{
	++*static_cast<int64_t *>(data.ptr);
	doca_buf_reset_data_len(doca_dma_task_memcpy_get_dst(task));
}

// Completion-notification latency: a 64-byte task, forced onto an engine thread, is submitted
// to an armed PE; the clock stops when the waiter returns from epoll_wait on the PE's handle. The
// copy itself takes nanoseconds, so this is the cost of getting a completion to a sleeping
// waiter: engine pick-up, completion hand-off, eventfd signal, scheduler wake-up.
void BM_PeWakeupLatency(benchmark::State &state)
{
	setenv("SOFTDPU_DMA_INLINE_MAX", "0", 1); // read when the DMA context is created
	softdpu_test::DmaSetup setup(4096, 16);
	setup.make_dma(wake_cb, error_cb, 1);
	unsetenv("SOFTDPU_DMA_INLINE_MAX");
	doca_ctx_start(setup.ctx());
	int64_t completed = 0;
	union doca_data data;
	data.ptr = &completed;
	doca_buf *src = setup.buf(0, 64, 64);
	doca_buf *dst = setup.buf(2048, 64, 0);
	doca_dma_task_memcpy *task = nullptr;
	doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, data, &task);
	doca_notification_handle_t fd;
	doca_pe_get_notification_handle(setup.pe, &fd);
	int epoll = epoll_create1(EPOLL_CLOEXEC);
	epoll_event ev{};
	ev.events = EPOLLIN;
	epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
	double total_ns = 0;
	for (auto _ : state) {
		doca_pe_request_notification(setup.pe);
		const auto submitted = Clock::now();
		doca_task_submit(doca_dma_task_memcpy_as_task(task));
		epoll_event out;
		while (epoll_wait(epoll, &out, 1, 1000) != 1) {
		}
		total_ns += std::chrono::duration<double, std::nano>(Clock::now() - submitted).count();
		doca_pe_clear_notification(setup.pe, 0);
		const int64_t target = completed + 1;
		while (completed < target)
			doca_pe_progress(setup.pe);
		// Let the engine thread fall asleep, as it would between sparse events.
		std::this_thread::sleep_for(std::chrono::microseconds(300));
	}
	state.counters["wakeup_us"] = total_ns / static_cast<double>(state.iterations()) / 1e3;
	close(epoll);
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}
BENCHMARK(BM_PeWakeupLatency)->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(1000);

// Baseline: one thread writes an eventfd, the other returns from epoll_wait on it (the least any
// cross-thread notification through an fd costs).
void BM_RawEventfdWakeupLatency(benchmark::State &state)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int epoll = epoll_create1(EPOLL_CLOEXEC);
	epoll_event ev{};
	ev.events = EPOLLIN;
	epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
	double total_ns = 0;
	for (auto _ : state) {
		std::atomic<int64_t> sent_ns{0};
		std::thread writer([&] {
			std::this_thread::sleep_for(std::chrono::microseconds(50));
			sent_ns = Clock::now().time_since_epoch().count();
			const uint64_t one = 1;
			benchmark::DoNotOptimize(write(fd, &one, sizeof(one)));
		});
		epoll_event out;
		while (epoll_wait(epoll, &out, 1, 1000) != 1) {
		}
		const int64_t woke_ns = Clock::now().time_since_epoch().count();
		writer.join();
		total_ns += static_cast<double>(woke_ns - sent_ns.load());
		uint64_t value;
		benchmark::DoNotOptimize(read(fd, &value, sizeof(value)));
	}
	state.counters["wakeup_us"] = total_ns / static_cast<double>(state.iterations()) / 1e3;
	close(epoll);
	close(fd);
}
BENCHMARK(BM_RawEventfdWakeupLatency)->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(1000);

} // namespace

BENCHMARK_MAIN();
