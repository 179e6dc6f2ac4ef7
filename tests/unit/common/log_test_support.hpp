// Shared helpers for the doca_log tests: a clean logger per test and a capturing file backend.
#pragma once

#include <doca_log.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/log_core.hpp"

namespace softdpu::log::test {

// Every test starts without backends and with DOCA's default limits.
class LogTest : public ::testing::Test {
protected:
	void SetUp() override { Logger::instance().reset_for_testing(); }
	void TearDown() override { Logger::instance().reset_for_testing(); }
};

// A tmpfile behind a FILE backend; lines() returns what was written so far.
class CapturedFile {
public:
	CapturedFile() : file_(std::tmpfile()) {}
	~CapturedFile()
	{
		if (file_)
			std::fclose(file_);
	}
	CapturedFile(const CapturedFile &) = delete;
	CapturedFile &operator=(const CapturedFile &) = delete;

	FILE *file() const { return file_; }

	std::string text() const
	{
		std::fflush(file_);
		long end = std::ftell(file_);
		std::string content(static_cast<size_t>(end), '\0');
		std::rewind(file_);
		size_t got = std::fread(content.data(), 1, content.size(), file_);
		content.resize(got);
		std::fseek(file_, 0, SEEK_END);
		return content;
	}

	std::vector<std::string> lines() const
	{
		std::vector<std::string> result;
		std::string all = text();
		size_t start = 0;
		while (start < all.size()) {
			size_t end = all.find('\n', start);
			if (end == std::string::npos)
				end = all.size();
			result.push_back(all.substr(start, end - start));
			start = end + 1;
		}
		return result;
	}

private:
	FILE *file_;
};

// One line of the documented format, split into its fields:
// [YYYY-MM-DD HH:MM:SS.uuuuuu][pid][LVL][source][file:line][function] message
// (std::regex is avoided: GCC 12's implementation trips -Wmaybe-uninitialized under ASan.)
struct ParsedLine {
	std::string time, pid, level, source, file, line, function, message;
};

inline std::optional<ParsedLine> parse_line(const std::string &text)
{
	std::vector<std::string> fields;
	size_t at = 0;
	for (int i = 0; i < 6; ++i) {
		if (at >= text.size() || text[at] != '[')
			return std::nullopt;
		// The source name may contain ':' but never ']'.
		size_t close = text.find(']', at);
		if (close == std::string::npos)
			return std::nullopt;
		fields.push_back(text.substr(at + 1, close - at - 1));
		at = close + 1;
	}
	if (at >= text.size() || text[at] != ' ')
		return std::nullopt;
	size_t colon = fields[4].rfind(':');
	if (colon == std::string::npos)
		return std::nullopt;
	ParsedLine parsed{fields[0],
			  fields[1],
			  fields[2],
			  fields[3],
			  fields[4].substr(0, colon),
			  fields[4].substr(colon + 1),
			  fields[5],
			  text.substr(at + 1)};
	return parsed;
}

inline bool all_digits(const std::string &text)
{
	if (text.empty())
		return false;
	for (char c : text)
		if (!std::isdigit(static_cast<unsigned char>(c)))
			return false;
	return true;
}

// "YYYY-MM-DD HH:MM:SS.uuuuuu"
inline bool is_timestamp(const std::string &text)
{
	const std::string shape = "dddd-dd-dd dd:dd:dd.dddddd";
	if (text.size() != shape.size())
		return false;
	for (size_t i = 0; i < shape.size(); ++i)
		if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(text[i])) : text[i] != shape[i])
			return false;
	return true;
}

} // namespace softdpu::log::test
