// The command line's output layer (tools/table_output.cpp) and process tree (tools/process_tree.cpp)
// on tables made here: every format carries the same cells (CSV read back with an RFC 4180 reader
// written here, JSON and JSON lines parsed), and the tree shows every process once under its parent,
// also for parent loops, duplicates and chains deeper than any stack.
#include "process_tree.hpp"
#include "table_output.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace softdpu::cli;
using Json = nlohmann::json;

// What a print function wrote, through a memory stream.
template <typename Print> std::string capture(Print print)
{
	char *buffer = nullptr;
	size_t size = 0;
	std::FILE *out = ::open_memstream(&buffer, &size);
	print(out);
	std::fclose(out);
	std::string text(buffer, size);
	std::free(buffer);
	return text;
}

// RFC 4180: records end in CRLF; a quoted field may hold commas, CR, LF and doubled quotes.
std::vector<std::vector<std::string>> read_csv(const std::string &text)
{
	std::vector<std::vector<std::string>> records;
	std::vector<std::string> record;
	std::string field;
	size_t i = 0;
	bool quoted = false;
	while (i < text.size()) {
		const char c = text[i];
		if (quoted) {
			if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
				field += '"';
				i += 2;
			} else if (c == '"') {
				quoted = false;
				++i;
			} else {
				field += c;
				++i;
			}
		} else if (c == '"' && field.empty()) {
			quoted = true;
			++i;
		} else if (c == ',') {
			record.push_back(std::move(field));
			field.clear();
			++i;
		} else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
			record.push_back(std::move(field));
			field.clear();
			records.push_back(std::move(record));
			record.clear();
			i += 2;
		} else {
			EXPECT_NE(c, '"') << "a quote inside an unquoted field at " << i;
			EXPECT_NE(c, '\n') << "a bare LF ends no record at " << i;
			field += c;
			++i;
		}
	}
	EXPECT_FALSE(quoted) << "unterminated quoted field";
	EXPECT_TRUE(record.empty() && field.empty()) << "the last record lacks its CRLF";
	return records;
}

Table sample_table()
{
	Table table{
	    {{"PID", "pid", true}, {"NAME", "name"}, {"CPU", "cpu", true, true}, {"OK", "ok"}, {"PATH", "path"}}, {}};
	table.add({1, "init", 1.5, true, "/bin/busybox"});
	table.add({22, "a,b", 0.125, false, ""});
	table.add({333, "say \"hi\"", 10.0, true, "line1\nline2"});
	table.add({4, "cr\rhere", 0.0, false, nullptr});
	table.add({5, " spaced ", 2.0, true, hex_cell(0xdeadbeef)});
	return table;
}

// A cell as CSV must carry it: strings as they are, other values as JSON writes them.
std::string csv_value(const OrderedJson &cell)
{
	if (cell.is_string())
		return cell.get<std::string>();
	if (cell.is_null())
		return "";
	return cell.dump();
}

TEST(OutputFormat, NamesAreTheFourFormats)
{
	EXPECT_EQ(parse_output_format("table"), OutputFormat::table);
	EXPECT_EQ(parse_output_format("json"), OutputFormat::json);
	EXPECT_EQ(parse_output_format("jsonl"), OutputFormat::jsonl);
	EXPECT_EQ(parse_output_format("csv"), OutputFormat::csv);
	for (const char *bad : {"", "JSON", "xml", "tsv", "json "})
		EXPECT_FALSE(parse_output_format(bad).has_value()) << bad;
	EXPECT_STREQ(output_format_names(), "table, json, jsonl, csv");
}

TEST(TableOutput, CsvReadsBackToTheCellsWithKeysAsHeader)
{
	const Table table = sample_table();
	const std::string text = capture([&](std::FILE *out) { print_table(table, OutputFormat::csv, out); });
	const auto records = read_csv(text);
	ASSERT_EQ(records.size(), table.rows.size() + 1) << text;
	ASSERT_EQ(records[0].size(), table.columns.size());
	for (size_t c = 0; c < table.columns.size(); ++c)
		EXPECT_EQ(records[0][c], table.columns[c].key);
	for (size_t r = 0; r < table.rows.size(); ++r) {
		ASSERT_EQ(records[r + 1].size(), table.columns.size()) << r;
		for (size_t c = 0; c < table.columns.size(); ++c)
			EXPECT_EQ(records[r + 1][c], csv_value(table.rows[r][c])) << r << "," << c;
	}
	// Quoted exactly where RFC 4180 needs it.
	EXPECT_EQ(csv_field("plain"), "plain");
	EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
	EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
	EXPECT_EQ(csv_field("x\ny"), "\"x\ny\"");
	EXPECT_EQ(csv_field(OrderedJson(nullptr)), "");
	EXPECT_EQ(csv_field(true), "true");
}

TEST(TableOutput, JsonAndJsonLinesCarryTheSameObjects)
{
	const Table table = sample_table();
	const Json array = Json::parse(capture([&](std::FILE *out) { print_table(table, OutputFormat::json, out); }));
	ASSERT_TRUE(array.is_array());
	ASSERT_EQ(array.size(), table.rows.size());
	std::istringstream lines(capture([&](std::FILE *out) { print_table(table, OutputFormat::jsonl, out); }));
	size_t r = 0;
	for (std::string line; std::getline(lines, line); ++r) {
		ASSERT_LT(r, table.rows.size());
		const Json object = Json::parse(line);
		EXPECT_EQ(object, array[r]);
		EXPECT_EQ(object.size(), table.columns.size());
		for (size_t c = 0; c < table.columns.size(); ++c)
			EXPECT_EQ(object.at(table.columns[c].key), Json::parse(table.rows[r][c].dump()))
			    << r << "," << c;
	}
	EXPECT_EQ(r, table.rows.size());
	// The keys keep the columns' order.
	const std::string first = capture([&](std::FILE *out) { print_table(table, OutputFormat::jsonl, out); });
	EXPECT_LT(first.find("\"pid\""), first.find("\"name\""));
	EXPECT_LT(first.find("\"ok\""), first.find("\"path\""));
}

TEST(TableOutput, TableAlignsAndShowsCellsForPeople)
{
	Table table{{{"PID", "pid", true}, {"NAME", "name"}, {"CPU", "cpu", true, true}, {"OK", "ok"}}, {}};
	table.add({1, "init", 1.5, true});
	table.add({4321, "", 0.125, false});
	const std::string text = capture([&](std::FILE *out) { print_table(table, OutputFormat::table, out); });
	EXPECT_EQ(text, " PID  NAME   CPU  OK\n"
			"   1  init  1.50  yes\n"
			"4321  -     0.12  no\n");
}

TEST(TableOutput, EmptyTablesInEveryFormat)
{
	const Table table{{{"PID", "pid", true}, {"NAME", "name"}}, {}};
	auto print = [&](OutputFormat format) {
		return capture([&](std::FILE *out) { print_table(table, format, out); });
	};
	EXPECT_EQ(print(OutputFormat::table), "PID  NAME\n");
	EXPECT_EQ(print(OutputFormat::json), "[]\n");
	EXPECT_EQ(print(OutputFormat::jsonl), "");
	EXPECT_EQ(print(OutputFormat::csv), "pid,name\r\n");
}

TEST(TableOutput, BytesThatAreNotUtf8DoNotStopJson)
{
	Table table{{{"VALUE", "value"}}, {}};
	table.add({std::string("ab\xff\xfe", 4)});
	for (OutputFormat format : {OutputFormat::json, OutputFormat::jsonl}) {
		const std::string text = capture([&](std::FILE *out) { print_table(table, format, out); });
		const Json parsed = Json::parse(text);
		const Json &object = parsed.is_array() ? parsed.at(0) : parsed;
		EXPECT_EQ(object.at("value"), "ab\xef\xbf\xbd\xef\xbf\xbd"); // U+FFFD twice
	}
	// CSV and the table keep the bytes.
	EXPECT_NE(capture([&](std::FILE *out) { print_table(table, OutputFormat::csv, out); }).find("ab\xff\xfe"),
		  std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Process tree

std::string tree_text(const std::vector<TreeProcess> &processes, const TreeOptions &options, OutputFormat format)
{
	return capture([&](std::FILE *out) { print_process_tree(processes, options, format, out); });
}

// A guest-like list: init with a shell and its children, kthreadd with kernel threads (one with a
// child of its own), listed out of pid order.
std::vector<TreeProcess> sample_processes()
{
	return {{90, 80, "sleep"},  {2, 0, "kthreadd"}, {1, 0, "init"},      {80, 1, "sh"},
		{81, 80, "cat"},    {3, 2, "rcu_gp"},   {4, 2, "kworker/0"}, {5, 4, "helper"},
		{70, 1, "syslogd"}, {91, 90, "deep"},   {6, 2, "ksoftirq"},  {100, 1, "a b,c"}};
}

struct Flat {
	uint32_t pid, ppid;
	size_t depth;
	std::string comm;
	uint64_t folded;
};

std::vector<Flat> flat_rows(const std::string &jsonl)
{
	std::vector<Flat> rows;
	std::istringstream in(jsonl);
	for (std::string line; std::getline(in, line);) {
		const Json row = Json::parse(line);
		rows.push_back(
		    {row.at("pid"), row.at("ppid"), row.at("depth"), row.at("comm"), row.at("folded_kernel_threads")});
	}
	return rows;
}

// Pre-order rows: each row's parent is the nearest earlier row one level up.
void expect_parents_by_depth(const std::vector<Flat> &rows)
{
	std::vector<uint32_t> path;
	for (const Flat &row : rows) {
		ASSERT_LE(row.depth, path.size()) << row.pid;
		path.resize(row.depth);
		if (row.depth > 0) {
			EXPECT_EQ(path.back(), row.ppid) << row.pid;
		}
		path.push_back(row.pid);
	}
}

// Nested JSON: every pid once, each child's ppid the parent's pid.
void walk_json(const Json &nodes, const Json *parent, std::map<uint32_t, uint32_t> &seen, uint64_t &folded)
{
	for (const Json &node : nodes) {
		const uint32_t pid = node.at("pid");
		EXPECT_TRUE(seen.emplace(pid, node.at("ppid").get<uint32_t>()).second) << "pid " << pid << " twice";
		if (parent != nullptr) {
			EXPECT_EQ(node.at("ppid"), parent->at("pid")) << pid;
		}
		folded += node.at("folded_kernel_threads").get<uint64_t>();
		walk_json(node.at("children"), &node, seen, folded);
	}
}

TEST(ProcessTree, KernelThreadsFoldedUnderKthreadd)
{
	const auto processes = sample_processes();
	const std::string text = tree_text(processes, {{}, true, true}, OutputFormat::table);
	EXPECT_EQ(text, "init(1)\n"
			"├─syslogd(70)\n"
			"├─sh(80)\n"
			"│ ├─cat(81)\n"
			"│ └─sleep(90)\n"
			"│   └─deep(91)\n"
			"└─a b,c(100)\n"
			"kthreadd(2)\n"
			"└─[4 kernel threads]\n");
	const std::string ascii = tree_text(processes, {{}, true, false}, OutputFormat::table);
	EXPECT_NE(ascii.find("|-sh(80)\n| |-cat(81)\n| `-sleep(90)\n|   `-deep(91)\n"), std::string::npos) << ascii;
	EXPECT_NE(ascii.find("kthreadd(2)\n`-[4 kernel threads]\n"), std::string::npos) << ascii;
}

TEST(ProcessTree, EveryFormatShowsEveryProcessOnceUnderItsParent)
{
	const auto processes = sample_processes();
	for (bool fold : {true, false}) {
		SCOPED_TRACE(fold ? "folded" : "kernel threads shown");
		const TreeOptions options{{}, fold, true};
		std::map<uint32_t, uint32_t> seen;
		uint64_t folded = 0;
		walk_json(Json::parse(tree_text(processes, options, OutputFormat::json)), nullptr, seen, folded);
		EXPECT_EQ(seen.size() + folded, processes.size());
		EXPECT_EQ(folded, fold ? 4u : 0u);
		for (const TreeProcess &process : processes) {
			const bool kernel = process.ppid == 2 || process.pid == 5;
			EXPECT_EQ(seen.count(process.pid), fold && kernel ? 0u : 1u) << process.pid;
		}
		// JSON lines and CSV: the same rows, flat, in the table's order.
		const auto rows = flat_rows(tree_text(processes, options, OutputFormat::jsonl));
		EXPECT_EQ(rows.size(), seen.size());
		expect_parents_by_depth(rows);
		const auto records = read_csv(tree_text(processes, options, OutputFormat::csv));
		ASSERT_EQ(records.size(), rows.size() + 1);
		EXPECT_EQ(records[0],
			  (std::vector<std::string>{"pid", "ppid", "depth", "comm", "folded_kernel_threads"}));
		for (size_t i = 0; i < rows.size(); ++i) {
			EXPECT_EQ(records[i + 1][0], std::to_string(rows[i].pid));
			EXPECT_EQ(records[i + 1][3], rows[i].comm);
		}
		// The table: one "comm(pid)" line per row, in the same order.
		std::istringstream table(tree_text(processes, options, OutputFormat::table));
		size_t i = 0;
		for (std::string line; std::getline(table, line);) {
			if (line.find("kernel threads]") != std::string::npos)
				continue;
			ASSERT_LT(i, rows.size());
			EXPECT_TRUE(line.ends_with(rows[i].comm + "(" + std::to_string(rows[i].pid) + ")")) << line;
			++i;
		}
		EXPECT_EQ(i, rows.size());
	}
}

TEST(ProcessTree, ChosenRootsShowTheirSubtreesOnly)
{
	const std::string text = tree_text(sample_processes(), {{90, 4}, false, true}, OutputFormat::table);
	EXPECT_EQ(text, "kworker/0(4)\n"
			"└─helper(5)\n"
			"sleep(90)\n"
			"└─deep(91)\n");
	// kthreadd chosen: folded still.
	EXPECT_EQ(tree_text(sample_processes(), {{2}, true, true}, OutputFormat::table),
		  "kthreadd(2)\n└─[4 kernel threads]\n");
}

TEST(ProcessTree, ParentLoopsAndDuplicatesShowEachProcessOnce)
{
	// 10 -> 11 -> 12 -> 10 is a loop with no root; 20 is its own parent; 30 is listed twice.
	const std::vector<TreeProcess> processes = {{10, 12, "a"},    {11, 10, "b"},    {12, 11, "c"}, {20, 20, "self"},
						    {30, 1, "twice"}, {30, 1, "twice"}, {1, 0, "init"}};
	std::map<uint32_t, uint32_t> seen;
	uint64_t folded = 0;
	const std::string json = tree_text(processes, {{}, true, true}, OutputFormat::json);
	for (const Json &root : Json::parse(json)) {
		std::map<uint32_t, uint32_t> one;
		walk_json(Json::array({root}), nullptr, one, folded);
		for (const auto &[pid, ppid] : one)
			EXPECT_TRUE(seen.emplace(pid, ppid).second) << pid;
	}
	EXPECT_EQ(seen, (std::map<uint32_t, uint32_t>{{1, 0}, {10, 12}, {11, 10}, {12, 11}, {20, 20}, {30, 1}}));
	const std::string table = tree_text(processes, {{}, true, true}, OutputFormat::table);
	EXPECT_EQ(table, "init(1)\n"
			 "└─twice(30)\n"
			 "self(20)\n"
			 "a(10)\n"
			 "└─b(11)\n"
			 "  └─c(12)\n");
}

TEST(ProcessTree, ChainDeeperThanAnyStack)
{
	// A hostile guest's parent links: 100,000 processes each the child of the one before.
	constexpr uint32_t kDepth = 100000;
	std::vector<TreeProcess> processes;
	constexpr uint32_t kFirst = 1000; // kthreadd's pid 2 would fold the chain
	for (uint32_t pid = kFirst; pid < kFirst + kDepth; ++pid)
		processes.push_back({pid, pid == kFirst ? 0 : pid - 1, "p"});
	const std::string json = tree_text(processes, {{}, true, true}, OutputFormat::json);
	// Balanced, and each level opens one "children" array (nlohmann parses without recursion).
	const Json tree = Json::parse(json);
	size_t depth = 0;
	for (const Json *node = &tree.at(0); node != nullptr; ++depth) {
		EXPECT_EQ(node->at("pid"), kFirst + depth);
		const Json &children = node->at("children");
		node = children.empty() ? nullptr : &children.at(0);
	}
	EXPECT_EQ(depth, kDepth);
	EXPECT_EQ(flat_rows(tree_text(processes, {{}, true, true}, OutputFormat::jsonl)).size(), kDepth);
	// The table: one line each, the drawing no wider than 64 levels, the depth said beyond.
	const std::string table = tree_text(processes, {{}, true, true}, OutputFormat::table);
	EXPECT_EQ(static_cast<size_t>(std::count(table.begin(), table.end(), '\n')), kDepth);
	EXPECT_LT(table.size(), size_t{kDepth} * 250);
	EXPECT_NE(table.find("└─[depth 99999] p(100999)\n"), std::string::npos);
	EXPECT_NE(table.find("\n" + std::string(2 * 63, ' ') + "└─[depth 65] p(1065)\n"), std::string::npos);
}

} // namespace
