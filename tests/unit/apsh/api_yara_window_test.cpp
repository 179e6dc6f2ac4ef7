// The YARA window scanner against a brute-force reference: every window scanned on its own with
// libyara, no prefilter, no chunking. Random bytes with planted strings, holes (pages that are
// not present), areas larger than the scanner's 1 MiB chunks, unaligned area ends, and DOCA's
// window settings from 256 bytes to 16 KiB. The prefilter (monotonic rules) must not lose a hit.
#include "apsh/api/yara_scan.hpp"

#include <gtest/gtest.h>
#include <yara.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace softdpu::apsh;
using namespace softdpu::apsh::api;

namespace {

struct Area {
	uint64_t start = 0;
	uint64_t end = 0;
	std::vector<uint8_t> bytes; // end - start rounded up to pages
	std::vector<bool> present;  // per page
};

using Hit = std::tuple<std::string, uint64_t, uint64_t>;

int collect(YR_SCAN_CONTEXT *, int message, void *data, void *user)
{
	if (message == CALLBACK_MSG_RULE_MATCHING)
		static_cast<std::vector<std::string> *>(user)->push_back(static_cast<YR_RULE *>(data)->identifier);
	return CALLBACK_CONTINUE;
}

// Each window on its own: starts at start + k * step on a present page, `size` bytes clipped at
// the first page that is not present and at the area's end.
std::set<Hit> reference(const YaraRules &rules, const Area &area, WindowSettings window)
{
	std::set<Hit> hits;
	for (uint64_t w = area.start; w < area.end; w += window.step) {
		const uint64_t offset = w - area.start;
		if (!area.present[offset / 4096])
			continue;
		uint64_t stop = std::min<uint64_t>(w + window.size, area.end);
		for (uint64_t page = offset / 4096 + 1; area.start + page * 4096 < stop; ++page)
			if (!area.present[page]) {
				stop = area.start + page * 4096;
				break;
			}
		std::vector<std::string> names;
		EXPECT_EQ(yr_rules_scan_mem(rules.rules(), area.bytes.data() + offset, stop - w, 0, collect, &names, 0),
			  ERROR_SUCCESS);
		for (const std::string &name : names)
			hits.insert({name, w, stop - w});
	}
	return hits;
}

std::set<Hit> scanned(const std::shared_ptr<YaraRules> &rules, const Area &area, WindowSettings window, bool runs)
{
	WindowScanner scanner(rules, {}, window, 1u << 20);
	EXPECT_TRUE(scanner.ok().ok());
	auto read_page = [&](uint64_t va, std::span<uint8_t, 4096> out) {
		const uint64_t page = (va - area.start) / 4096;
		if (va < area.start || page >= area.present.size() || !area.present[page])
			return false;
		std::memcpy(out.data(), area.bytes.data() + page * 4096, 4096);
		return true;
	};
	Status status;
	if (runs)
		status = scanner.scan_area_runs(area.start, area.end, [&](uint64_t va, std::span<uint8_t> out) {
			size_t done = 0;
			while (done + 4096 <= out.size() &&
			       read_page(va + done, std::span<uint8_t, 4096>(out.data() + done, 4096)))
				done += 4096;
			return done;
		});
	else
		status = scanner.scan_area(area.start, area.end, read_page);
	EXPECT_TRUE(status.ok()) << status.reason;
	EXPECT_FALSE(scanner.truncated());
	std::set<Hit> hits;
	for (const YaraHit &hit : scanner.hits())
		EXPECT_TRUE(hits.insert({hit.rule, hit.window_addr, hit.window_len}).second) << "duplicate hit";
	return hits;
}

Area random_area(std::mt19937_64 &random, uint64_t pages, uint64_t tail)
{
	Area area;
	area.start = 0x7f0000000000 + (random() % 64) * 4096;
	area.end = area.start + pages * 4096 - tail;
	area.bytes.resize(pages * 4096);
	for (auto &byte : area.bytes)
		byte = static_cast<uint8_t>(random() % 7 == 0 ? 0 : random());
	area.present.assign(pages, true);
	const char *strings[] = {"Hello World", "mimikatz", "ReflectiveLoader", "XYZXYZ"};
	// Planted strings, some across page and chunk boundaries.
	std::vector<uint64_t> spots = {4096 - 5, (1u << 20) - 3, (1u << 20) + 4096 - 7, 2 * (1u << 20) - 6};
	for (int i = 0; i < 40; ++i)
		spots.push_back(random() % (pages * 4096));
	for (size_t i = 0; i < spots.size(); ++i) {
		const char *text = strings[i % 4];
		if (spots[i] + std::strlen(text) <= area.end - area.start)
			std::memcpy(area.bytes.data() + spots[i], text, std::strlen(text));
	}
	// Holes: single pages and a longer run.
	for (int i = 0; i < 6; ++i)
		area.present[random() % pages] = false;
	const uint64_t hole = random() % pages;
	for (uint64_t p = hole; p < std::min(pages, hole + 20); ++p)
		area.present[p] = false;
	return area;
}

} // namespace

TEST(ApshYaraWindows, PrefilterAndChunksMatchBruteForce)
{
	constexpr const char *kRules = R"(
rule Hello { strings: $a = "Hello World" ascii wide condition: $a }
rule Many { strings: $a = "mimikatz" nocase $b = "ReflectiveLoader" $c = "XYZXYZ" condition: any of them }
)";
	std::shared_ptr<YaraRules> monotonic;
	std::shared_ptr<YaraRules> plain;
	ASSERT_TRUE(YaraRules::compile(kRules, "t", true, monotonic).ok());
	ASSERT_TRUE(YaraRules::compile(kRules, "t", false, plain).ok());
	std::mt19937_64 random(7);
	// 2.3 MiB areas: three scanner chunks.
	const Area big = random_area(random, 590, 0);
	const Area ragged = random_area(random, 300, 1000); // ends 1000 bytes before a page boundary
	const WindowSettings settings[] = {{4096, 4096}, {8192, 4096}, {16384, 8192},
					   {1024, 512},  {256, 256},   {4096, 1024}};
	for (const Area *area : {&big, &ragged}) {
		for (WindowSettings window : settings) {
			SCOPED_TRACE(testing::Message() << "window " << window.size << "/" << window.step << " area of "
							<< area->end - area->start << " bytes");
			const std::set<Hit> expected = reference(*plain, *area, window);
			EXPECT_GT(expected.size(), 10u);
			EXPECT_EQ(scanned(monotonic, *area, window, true), expected);
			EXPECT_EQ(scanned(monotonic, *area, window, false), expected);
			EXPECT_EQ(scanned(plain, *area, window, true), expected);
		}
	}
}

TEST(ApshYaraWindows, LoneStringsAtChunkEdges)
{
	// One string per area, so that nothing else in its chunk makes the whole-run prefilter pass:
	// a string at the end of a 1 MiB chunk belongs to windows that start in that chunk but end in
	// the next one.
	std::shared_ptr<YaraRules> monotonic;
	std::shared_ptr<YaraRules> plain;
	const char *rule = "rule X { strings: $x = \"XYZXYZ\" condition: $x }";
	ASSERT_TRUE(YaraRules::compile(rule, "t", true, monotonic).ok());
	ASSERT_TRUE(YaraRules::compile(rule, "t", false, plain).ok());
	constexpr uint64_t kMiB = 1u << 20;
	std::mt19937_64 random(11);
	const WindowSettings settings[] = {{4096, 4096}, {8192, 4096}, {16384, 8192}, {1024, 512}};
	for (uint64_t spot : {kMiB - 3, kMiB - 6, kMiB, kMiB + 4093, kMiB - 4096 - 2, 2 * kMiB - 1, 2 * kMiB + 4090}) {
		Area area;
		area.start = 0x7f0000000000;
		area.end = area.start + 640 * 4096;
		area.bytes.resize(640 * 4096);
		for (auto &byte : area.bytes)
			byte = static_cast<uint8_t>(random() % 200);
		for (auto &byte : area.bytes)
			if (byte == 'X')
				byte = 0; // no other "XYZXYZ" by chance
		std::memcpy(area.bytes.data() + spot, "XYZXYZ", 6);
		area.present.assign(640, true);
		size_t hits = 0;
		for (WindowSettings window : settings) {
			SCOPED_TRACE(testing::Message()
				     << "string at " << spot << ", window " << window.size << "/" << window.step);
			const std::set<Hit> expected = reference(*plain, area, window);
			hits += expected.size(); // none when the string straddles every window's edge
			EXPECT_EQ(scanned(monotonic, area, window, true), expected);
			EXPECT_EQ(scanned(monotonic, area, window, false), expected);
		}
		EXPECT_GT(hits, 0u) << "string at " << spot;
	}
}

TEST(ApshYaraWindows, EdgeAreas)
{
	std::shared_ptr<YaraRules> rules;
	ASSERT_TRUE(YaraRules::compile("rule X { strings: $x = \"XYZXYZ\" condition: $x }", "t", true, rules).ok());
	WindowScanner scanner(rules, {}, {4096, 4096}, 100);
	int calls = 0;
	auto reader = [&](uint64_t, std::span<uint8_t> out) {
		++calls;
		std::fill(out.begin(), out.end(), 'X');
		return out.size();
	};
	// Empty and inverted areas read nothing.
	EXPECT_TRUE(scanner.scan_area_runs(0x5000, 0x5000, reader).ok());
	EXPECT_TRUE(scanner.scan_area_runs(0x6000, 0x5000, reader).ok());
	EXPECT_EQ(calls, 0);
	// The top of the address space: no wrap-around, the loop ends.
	EXPECT_TRUE(scanner.scan_area_runs(~uint64_t{0} - 3 * 4096, ~uint64_t{0}, reader).ok());
	EXPECT_LE(calls, 3);
	// A reader that finds nothing: one call per page, no hits.
	int absent_calls = 0;
	EXPECT_TRUE(scanner
			.scan_area_runs(0x10000, 0x14000,
					[&](uint64_t, std::span<uint8_t>) {
						++absent_calls;
						return size_t{0};
					})
			.ok());
	EXPECT_EQ(absent_calls, 4);
	EXPECT_TRUE(scanner.hits().empty());
	// A reader that claims a partial page: that page counts as not present.
	WindowScanner partial(rules, {}, {4096, 4096}, 100);
	std::vector<uint64_t> asked;
	EXPECT_TRUE(partial
			.scan_area_runs(0x20000, 0x22000,
					[&](uint64_t va, std::span<uint8_t> out) {
						asked.push_back(va);
						std::memset(out.data(), 0, out.size());
						std::memcpy(out.data(), "XYZXYZ", 6);
						return va == 0x20000 ? size_t{4096 + 100} : size_t{0};
					})
			.ok());
	EXPECT_EQ(asked, (std::vector<uint64_t>{0x20000, 0x21000}));
	ASSERT_EQ(partial.hits().size(), 1u);
	EXPECT_EQ(partial.hits()[0].window_addr, 0x20000u);
	EXPECT_EQ(partial.hits()[0].window_len, 4096u);
}
