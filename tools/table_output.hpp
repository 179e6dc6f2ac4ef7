// One output layer for the command line's listings (softdpu apsh's queries): a Table of typed
// cells (JSON values) printed as an aligned table, a JSON array, JSON lines or CSV. Every format
// has the same columns in the same order; the JSON formats and CSV name them by key, the table by
// header. docs/apsh-cli.md describes the formats.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::cli {

using OrderedJson = nlohmann::ordered_json; // keys in column order

enum class OutputFormat { table, json, jsonl, csv };

// "table", "json", "jsonl", "csv"; nullopt for anything else.
std::optional<OutputFormat> parse_output_format(std::string_view name);
// "table, json, jsonl, csv": the accepted names, for error messages and help.
const char *output_format_names();

struct Column {
	const char *header; // the table's
	const char *key;    // JSON, JSON lines and CSV
	bool right_aligned = false;
	bool two_decimals = false; // a number shown as "%.2f" in the table (the other formats keep it)
};

struct Table {
	std::vector<Column> columns;
	std::vector<std::vector<OrderedJson>> rows; // one cell per column

	void add(std::vector<OrderedJson> row) { rows.push_back(std::move(row)); }
	// Row `index` as one object, keyed by the columns' keys.
	OrderedJson object(size_t index) const;
};

// Cells: an address as "0x..." text, a C string or "" for a null one.
OrderedJson hex_cell(uint64_t value);
OrderedJson text_cell(const char *text);

// A cell as the table shows it: "" and null as "-", booleans as yes/no, two_decimals as "%.2f".
std::string table_text(const OrderedJson &cell, const Column &column);
// A cell as CSV writes it, quoted per RFC 4180 when it holds a comma, a quote, CR or LF.
std::string csv_field(const OrderedJson &cell);

// Table: header and rows with aligned columns. JSON: an array of objects (indented). JSON lines:
// one object per line. CSV: a header line of keys, then the rows, lines ending in CRLF.
void print_table(const Table &table, OutputFormat format, std::FILE *out = stdout);

} // namespace softdpu::cli
