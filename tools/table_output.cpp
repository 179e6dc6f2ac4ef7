// The listings' output formats (table_output.hpp).
#include "table_output.hpp"

#include <algorithm>
#include <cstring>

namespace softdpu::cli {

std::optional<OutputFormat> parse_output_format(std::string_view name)
{
	if (name == "table")
		return OutputFormat::table;
	if (name == "json")
		return OutputFormat::json;
	if (name == "jsonl")
		return OutputFormat::jsonl;
	if (name == "csv")
		return OutputFormat::csv;
	return std::nullopt;
}

const char *output_format_names()
{
	return "table, json, jsonl, csv";
}

OrderedJson Table::object(size_t index) const
{
	OrderedJson object = OrderedJson::object();
	for (size_t c = 0; c < columns.size(); ++c)
		object[columns[c].key] = rows[index][c];
	return object;
}

OrderedJson hex_cell(uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

OrderedJson text_cell(const char *text)
{
	return text != nullptr ? OrderedJson(text) : OrderedJson("");
}

std::string table_text(const OrderedJson &cell, const Column &column)
{
	if (column.two_decimals && cell.is_number()) {
		char text[32];
		std::snprintf(text, sizeof(text), "%.2f", cell.get<double>());
		return text;
	}
	if (cell.is_string())
		return cell.get<std::string>().empty() ? "-" : cell.get<std::string>();
	if (cell.is_boolean())
		return cell.get<bool>() ? "yes" : "no";
	if (cell.is_null())
		return "-";
	return cell.dump();
}

std::string csv_field(const OrderedJson &cell)
{
	std::string text;
	if (cell.is_string())
		text = cell.get<std::string>();
	else if (!cell.is_null())
		text = cell.dump(); // numbers and booleans as JSON writes them
	if (text.find_first_of(",\"\r\n") == std::string::npos)
		return text;
	std::string quoted = "\"";
	for (char c : text) {
		if (c == '"')
			quoted += '"';
		quoted += c;
	}
	quoted += '"';
	return quoted;
}

namespace {

// Guest memory holds any bytes: a string that is not UTF-8 gets U+FFFD in JSON instead of failing.
constexpr auto kReplaceBadUtf8 = OrderedJson::error_handler_t::replace;

void print_aligned(const Table &table, std::FILE *out)
{
	std::vector<std::vector<std::string>> cells;
	std::vector<size_t> widths;
	for (const Column &column : table.columns)
		widths.push_back(std::strlen(column.header));
	for (const auto &row : table.rows) {
		std::vector<std::string> line;
		for (size_t c = 0; c < row.size(); ++c) {
			line.push_back(table_text(row[c], table.columns[c]));
			widths[c] = std::max(widths[c], line.back().size());
		}
		cells.push_back(std::move(line));
	}
	auto print_line = [&](const std::vector<std::string> &line) {
		std::string text;
		for (size_t c = 0; c < line.size(); ++c) {
			const bool last = c + 1 == line.size();
			const size_t pad = widths[c] - line[c].size();
			if (table.columns[c].right_aligned)
				text.append(pad, ' ');
			text += line[c];
			if (!last && !table.columns[c].right_aligned)
				text.append(pad, ' ');
			if (!last)
				text += "  ";
		}
		std::fprintf(out, "%s\n", text.c_str());
	};
	std::vector<std::string> headers;
	for (const Column &column : table.columns)
		headers.emplace_back(column.header);
	print_line(headers);
	for (const auto &line : cells)
		print_line(line);
}

} // namespace

void print_table(const Table &table, OutputFormat format, std::FILE *out)
{
	switch (format) {
	case OutputFormat::table:
		print_aligned(table, out);
		return;
	case OutputFormat::json: {
		OrderedJson array = OrderedJson::array();
		for (size_t r = 0; r < table.rows.size(); ++r)
			array.push_back(table.object(r));
		std::fprintf(out, "%s\n", array.dump(2, ' ', false, kReplaceBadUtf8).c_str());
		return;
	}
	case OutputFormat::jsonl:
		for (size_t r = 0; r < table.rows.size(); ++r)
			std::fprintf(out, "%s\n", table.object(r).dump(-1, ' ', false, kReplaceBadUtf8).c_str());
		return;
	case OutputFormat::csv: {
		std::string line;
		for (const Column &column : table.columns) {
			if (!line.empty())
				line += ',';
			line += csv_field(OrderedJson(column.key));
		}
		std::fprintf(out, "%s\r\n", line.c_str());
		for (const auto &row : table.rows) {
			line.clear();
			for (size_t c = 0; c < row.size(); ++c) {
				if (c != 0)
					line += ',';
				line += csv_field(row[c]);
			}
			std::fprintf(out, "%s\r\n", line.c_str());
		}
		return;
	}
	}
}

} // namespace softdpu::cli
