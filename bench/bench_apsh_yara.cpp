// YARA throughput through App Shield's window scan against libyara over the same bytes in a
// flat buffer (issue 5: ratio >= 0.8). Both use DOCA's built-in rules and libyara's fast mode;
// the window scan reads its bytes page by page through a PageReader (as from a guest) and uses
// DOCA's default 4 KiB windows and steps. "ratio" = flat time / window time.
#include "apsh/api/yara_scan.hpp"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

using namespace softdpu::apsh::api;

namespace {

constexpr size_t kBytes = 64u << 20;

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

void BM_YaraFlatBaseline(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	const auto &bytes = memory();
	for (auto _ : state) {
		size_t matches = 0;
		if (!scan_flat_baseline(*rules, bytes, matches).ok())
			state.SkipWithError("scan failed");
		benchmark::DoNotOptimize(matches);
	}
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

void BM_YaraWindowScan(benchmark::State &state)
{
	auto rules = YaraRules::builtin();
	const auto &bytes = memory();
	const WindowSettings window{static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1))};
	for (auto _ : state) {
		WindowScanner scanner(rules, {}, window, 65536);
		softdpu::apsh::Status status =
		    scanner.scan_area(0x10000000, 0x10000000 + kBytes, [&](uint64_t va, std::span<uint8_t, 4096> out) {
			    std::memcpy(out.data(), bytes.data() + (va - 0x10000000), 4096);
			    return true;
		    });
		if (!status.ok())
			state.SkipWithError("scan failed");
		benchmark::DoNotOptimize(scanner.hits().size());
	}
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

} // namespace

BENCHMARK(BM_YaraFlatBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_YaraWindowScan)->Args({4096, 4096})->Args({8192, 4096})->Args({1024, 512})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
