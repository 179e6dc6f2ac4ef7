// YARA throughput through App Shield's window scan against libyara over the same bytes in a
// flat buffer (issue 5: ratio >= 0.8). Both use DOCA's built-in rules and libyara's fast mode and
// DOCA's default windows (4 KiB size, 4 KiB step) unless the arguments say otherwise.
//
// * BM_YaraFlatBaseline / BM_YaraWindowScan / BM_YaraWindowScanPages: 64 MiB of pseudo-random
//   bytes, the window scan reading them as from a guest (whole runs per call, as
//   LinuxSystem::read_user; or one page per call, as read_user_page).
// * BM_YaraRatio: the same two scans alternated inside every iteration, each timed by this
//   thread's CPU clock; counter "ratio" = median over the iterations of flat time / window time.
//   On a shared machine this is the figure to quote (both sides see the same load).
// * BM_YaraGuestRatio: the same on a guest snapshot (SOFTDPU_GUEST_SNAPSHOT, memory.raw): every
//   memory area of every user process, read through the page tables exactly as
//   doca_apsh_yara_get(DOCA_APSH_YARA_SCAN_VMA) does, against libyara over the present pages of
//   those areas gathered into one flat buffer beforehand. Skipped without a snapshot. The third
//   argument 1 reads page by page through read_user_page instead (the earlier implementation).
//
//   build/.../bench/bench_apsh_yara --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include "apsh/api/yara_scan.hpp"

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;

namespace {

constexpr size_t kBytes = 64u << 20;
constexpr uint64_t kBase = 0x10000000;

const std::vector<uint8_t> &memory()
{
	static const std::vector<uint8_t> bytes = [] {
		std::vector<uint8_t> data(kBytes);
		std::mt19937_64 random(42);
		for (size_t i = 0; i + 8 <= data.size(); i += 8) {
			const uint64_t value = random();
			std::memcpy(&data[i], &value, 8);
		}
		return data;
	}();
	return bytes;
}

double thread_cpu_seconds()
{
	timespec now{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double median(std::vector<double> values)
{
	if (values.empty())
		return 0;
	std::sort(values.begin(), values.end());
	const size_t mid = values.size() / 2;
	return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

WindowSettings window_of(const benchmark::State &state)
{
	return {static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1))};
}

bool flat_scan(const YaraRules &rules, std::span<const uint8_t> bytes)
{
	size_t matches = 0;
	const bool ok = scan_flat_baseline(rules, bytes, matches).ok();
	benchmark::DoNotOptimize(matches);
	return ok;
}

// The synthetic memory read as runs (one copy per call, as LinuxSystem::read_user).
bool window_scan(const std::shared_ptr<YaraRules> &rules, WindowSettings window)
{
	const auto &bytes = memory();
	WindowScanner scanner(rules, {}, window, 65536);
	Status status = scanner.scan_area_runs(kBase, kBase + kBytes, [&](uint64_t va, std::span<uint8_t> out) {
		const size_t n = std::min<size_t>(out.size(), kBase + kBytes - va);
		std::memcpy(out.data(), bytes.data() + (va - kBase), n);
		return n;
	});
	benchmark::DoNotOptimize(scanner.hits().size());
	return status.ok();
}

void BM_YaraFlatBaseline(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	for (auto _ : state)
		if (!flat_scan(*rules, memory()))
			state.SkipWithError("scan failed");
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

void BM_YaraWindowScan(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	memory();
	for (auto _ : state)
		if (!window_scan(rules, window_of(state)))
			state.SkipWithError("scan failed");
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

void BM_YaraWindowScanPages(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	const auto &bytes = memory();
	for (auto _ : state) {
		WindowScanner scanner(rules, {}, window_of(state), 65536);
		Status status =
		    scanner.scan_area(kBase, kBase + kBytes, [&](uint64_t va, std::span<uint8_t, 4096> out) {
			    std::memcpy(out.data(), bytes.data() + (va - kBase), 4096);
			    return true;
		    });
		if (!status.ok())
			state.SkipWithError("scan failed");
		benchmark::DoNotOptimize(scanner.hits().size());
	}
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

void BM_YaraRatio(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	memory();
	std::vector<double> ratios;
	for (auto _ : state) {
		const double t0 = thread_cpu_seconds();
		const bool flat_ok = flat_scan(*rules, memory());
		const double t1 = thread_cpu_seconds();
		const bool window_ok = window_scan(rules, window_of(state));
		const double t2 = thread_cpu_seconds();
		if (!flat_ok || !window_ok)
			state.SkipWithError("scan failed");
		ratios.push_back((t1 - t0) / (t2 - t1));
	}
	state.counters["ratio"] = median(ratios);
}

// The guest snapshot: its processes, their areas and the flat copy of their present pages.
struct Guest {
	std::unique_ptr<LinuxSystem> system;
	std::vector<std::pair<Process, std::vector<MemoryArea>>> processes;
	std::vector<uint8_t> flat;
	uint64_t area_bytes = 0; // present or not
	std::string error;

	Guest()
	{
		const char *dir = std::getenv("SOFTDPU_GUEST_SNAPSHOT");
		if (dir == nullptr || *dir == '\0') {
			error = "SOFTDPU_GUEST_SNAPSHOT is not set";
			return;
		}
		SourceSpec source;
		source.kind = SourceKind::raw;
		source.path = std::string(dir) + "/memory.raw";
		if (Status status = LinuxSystem::open(source, {}, {}, system); !status.ok()) {
			error = status.reason;
			return;
		}
		std::vector<Process> list;
		if (Status status = system->processes(list); !status.ok()) {
			error = status.reason;
			return;
		}
		std::vector<uint8_t> page(4096);
		for (const Process &process : list) {
			if (process.is_kernel_thread)
				continue;
			std::vector<MemoryArea> areas;
			if (!system->memory_areas(process, areas).ok())
				continue;
			for (const MemoryArea &area : areas)
				area_bytes += area.end - area.start;
			for (const MemoryArea &area : areas)
				for (uint64_t va = area.start & ~uint64_t{4095}; va < area.end; va += 4096)
					if (system->read_user_page(process, va,
								   std::span<uint8_t, 4096>(page.data(), 4096)))
						flat.insert(flat.end(), page.begin(), page.end());
			processes.emplace_back(process, std::move(areas));
		}
		if (flat.empty())
			error = "no present user pages in the snapshot";
	}
};

Guest &guest()
{
	static Guest instance;
	return instance;
}

void BM_YaraGuestRatio(benchmark::State &state)
{
	Guest &g = guest();
	if (!g.error.empty()) {
		state.SkipWithError(g.error.c_str());
		return;
	}
	auto rules = YaraRules::builtin();
	std::vector<double> ratios;
	std::vector<double> flat_times;
	std::vector<double> window_times;
	uint64_t scans = 0;
	uint64_t scanned = 0;
	for (auto _ : state) {
		scans = 0;
		scanned = 0;
		const double t0 = thread_cpu_seconds();
		const bool flat_ok = flat_scan(*rules, g.flat);
		const double t1 = thread_cpu_seconds();
		bool window_ok = true;
		for (const auto &[process, areas] : g.processes) {
			WindowScanner scanner(rules, {}, window_of(state), 65536);
			if (state.range(2) == 0) {
				window_ok =
				    window_ok && scan_process_areas(*g.system, process, areas, true, scanner).ok();
			} else {
				// Page by page through read_user_page (doca_apsh_yara_get before the run reader).
				for (const MemoryArea &area : areas)
					window_ok = window_ok &&
						    scanner
							.scan_area(area.start, area.end,
								   [&, &p = process](uint64_t va,
										     std::span<uint8_t, 4096> out) {
									   return g.system->read_user_page(p, va, out);
								   })
							.ok();
			}
			benchmark::DoNotOptimize(scanner.hits().size());
			scans += scanner.scans();
			scanned += scanner.scanned_bytes();
		}
		const double t2 = thread_cpu_seconds();
		if (!flat_ok || !window_ok)
			state.SkipWithError("scan failed");
		flat_times.push_back(t1 - t0);
		window_times.push_back(t2 - t1);
		ratios.push_back((t1 - t0) / (t2 - t1));
	}
	state.counters["ratio"] = median(ratios);
	state.counters["flat_ms"] = median(flat_times) * 1e3;
	state.counters["window_ms"] = median(window_times) * 1e3;
	state.counters["MiB"] = static_cast<double>(g.flat.size()) / (1 << 20);
	state.counters["area_MiB"] = static_cast<double>(g.area_bytes) / (1 << 20);
	state.counters["processes"] = static_cast<double>(g.processes.size());
	state.counters["scans"] = static_cast<double>(scans);
	state.counters["scanned_MiB"] = static_cast<double>(scanned) / (1 << 20);
}

} // namespace

BENCHMARK(BM_YaraFlatBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_YaraWindowScan)->Args({4096, 4096})->Args({8192, 4096})->Args({1024, 512})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_YaraWindowScanPages)->Args({4096, 4096})->Unit(benchmark::kMillisecond);
// Window size series for bench/plot.py: step = size (windows side by side), 1 KiB to 64 KiB, every
// size DOCA accepts (a multiple or a divisor of the page size). 4096/4096 is DOCA's default.
void window_series(benchmark::internal::Benchmark *b, std::vector<int64_t> extra)
{
	for (int64_t size = 1024; size <= 65536; size *= 2) {
		std::vector<int64_t> args{size, size};
		args.insert(args.end(), extra.begin(), extra.end());
		b->Args(args);
	}
}

BENCHMARK(BM_YaraRatio)
    ->Apply([](benchmark::internal::Benchmark *b) { window_series(b, {}); })
    ->Args({8192, 4096})
    ->Args({1024, 512})
    ->Unit(benchmark::kMillisecond);
// Third argument: 0 = runs through read_user (what doca_apsh_yara_get does), 1 = page by page.
BENCHMARK(BM_YaraGuestRatio)
    ->Apply([](benchmark::internal::Benchmark *b) { window_series(b, {0}); })
    ->Args({4096, 4096, 1})
    ->Args({1024, 512, 0})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
