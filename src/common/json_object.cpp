// Reading untrusted JSON: see json_object.hpp.
#include "common/json_object.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

namespace softdpu::json {

namespace {

constexpr size_t kMaxPlainKeyLength = 63;

bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Sees the document as the parser reads it and refuses a key repeated in one object, which
// nlohmann would otherwise resolve silently (the last one wins). Keeps the path of where the
// parser is, for the message.
class DuplicateKeyCheck {
public:
	bool operator()(int, Json::parse_event_t event, Json &parsed)
	{
		switch (event) {
		case Json::parse_event_t::object_start:
		case Json::parse_event_t::array_start:
			frames_.push_back({event == Json::parse_event_t::object_start, {}, {}, 0});
			break;
		case Json::parse_event_t::key: {
			Frame &frame = frames_.back();
			frame.key = parsed.get<std::string>();
			if (!frame.keys.insert(frame.key).second)
				fail(path(), "duplicate key");
			break;
		}
		case Json::parse_event_t::object_end:
		case Json::parse_event_t::array_end:
			frames_.pop_back();
			[[fallthrough]];
		case Json::parse_event_t::value:
			if (!frames_.empty() && !frames_.back().object)
				++frames_.back().index; // an array element is complete
			break;
		}
		return true;
	}

private:
	struct Frame {
		bool object;
		std::set<std::string> keys; // objects: the keys seen so far
		std::string key;            // objects: the member being read
		size_t index;               // arrays: the element being read
	};

	std::string path() const
	{
		std::string out = "$";
		for (const Frame &frame : frames_)
			out += frame.object ? member_segment(frame.key) : element_segment(frame.index);
		return out;
	}

	std::vector<Frame> frames_;
};

// " at line L, column C: <nlohmann's reason>", printable and bounded: the reason quotes the text
// last read, which may be anything.
std::string syntax_error_detail(std::string_view text, const Json::parse_error &error)
{
	// nlohmann's byte is 1-based: the position of the last character read.
	const size_t at = std::min<size_t>(error.byte > 0 ? error.byte - 1 : 0, text.size());
	const std::string_view before = text.substr(0, at);
	const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
	const size_t line_start = before.rfind('\n');
	const size_t column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
	std::string_view reason = error.what();
	// Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ".
	if (size_t start = reason.find("syntax error"); start != std::string_view::npos)
		reason = reason.substr(start);
	return " at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
	       printable(reason, 160);
}

std::string type_mismatch(const char *expected, const Json &value)
{
	return std::string("expected ") + expected + ", got " + value.type_name();
}

} // namespace

void fail(const std::string &path, const std::string &reason)
{
	throw Error(path, reason);
}

std::string printable(std::string_view text, size_t limit, std::string_view also)
{
	std::string out;
	for (unsigned char c : text.substr(0, limit)) {
		if (c >= 0x20 && c < 0x7f && also.find(static_cast<char>(c)) == std::string_view::npos) {
			out += static_cast<char>(c);
		} else {
			char escaped[8];
			std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
			out += escaped;
		}
	}
	if (text.size() > limit)
		out += "...";
	return out;
}

std::string enclose(char open, std::string_view inner, char close)
{
	std::string out;
	out.reserve(inner.size() + 2);
	out += open;
	out += inner;
	out += close;
	return out;
}

std::string shown(std::string_view text)
{
	return enclose('"', printable(text, 80, "\"\\"), '"');
}

std::string member_segment(std::string_view key)
{
	if (!key.empty() && key.size() <= kMaxPlainKeyLength && std::all_of(key.begin(), key.end(), is_key_char)) {
		std::string segment(1, '.');
		segment += key;
		return segment;
	}
	return enclose('[', shown(key), ']');
}

std::string element_segment(size_t index)
{
	return enclose('[', std::to_string(index), ']');
}

Json parse(std::string_view text, const ParseOptions &options)
{
	if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
		throw SyntaxError(": the document is empty");
	if (nesting_depth(text) > options.max_depth)
		fail("$", "document nested deeper than " + std::to_string(options.max_depth) + " levels");
	try {
		if (options.reject_duplicate_keys)
			return Json::parse(text.begin(), text.end(), DuplicateKeyCheck());
		return Json::parse(text.begin(), text.end());
	} catch (const Json::parse_error &error) {
		throw SyntaxError(syntax_error_detail(text, error));
	}
}

// NOLINTNEXTLINE(bugprone-exception-escape): get_ref is called only for the type just checked, so it cannot throw
void dismantle(Json &value) noexcept
{
	if (value.is_array()) {
		auto &array = value.get_ref<Json::array_t &>();
		for (Json &element : array)
			dismantle(element);
		array.clear();
	} else if (value.is_object()) {
		auto &object = value.get_ref<Json::object_t &>();
		for (auto &member : object)
			dismantle(member.second);
		object.clear();
	}
}

ObjectReader::ObjectReader(const Json &value, std::string path, const std::set<std::string_view> &known)
    : value_(value), path_(std::move(path))
{
	if (!value_.is_object())
		fail(path_, type_mismatch("an object", value_));
	for (const auto &[key, member] : value_.items()) {
		(void)member;
		if (!known.contains(key))
			fail(member_path(key), "unknown key");
	}
}

std::optional<std::string> ObjectReader::string(const char *key, bool required) const
{
	if (!has(key)) {
		if (required)
			fail(member_path(key), "missing required key");
		return std::nullopt;
	}
	const Json &value = member(key);
	if (!value.is_string())
		fail(member_path(key), type_mismatch("a string", value));
	return value.get<std::string>();
}

std::optional<bool> ObjectReader::boolean(const char *key) const
{
	if (!has(key))
		return std::nullopt;
	const Json &value = member(key);
	if (!value.is_boolean())
		fail(member_path(key), type_mismatch("true or false", value));
	return value.get<bool>();
}

std::optional<uint64_t> ObjectReader::unsigned_integer(const char *key, uint64_t min, uint64_t max,
						       const char *why) const
{
	if (!has(key))
		return std::nullopt;
	const Json &value = member(key);
	if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
		if (value.is_number_integer())
			fail(member_path(key), "expected a non-negative integer, got " + value.dump());
		fail(member_path(key), type_mismatch("an integer", value));
	}
	const auto number = value.get<uint64_t>();
	if (number < min || number > max)
		fail(member_path(key), "value " + std::to_string(number) + " out of range [" + std::to_string(min) +
					   ", " + std::to_string(max) + "]" +
					   (why != nullptr ? std::string(" (") + why + ")" : std::string()));
	return number;
}

const Json *ObjectReader::array(const char *key, bool required) const
{
	if (!has(key)) {
		if (required)
			fail(member_path(key), "missing required key");
		return nullptr;
	}
	const Json &value = member(key);
	if (!value.is_array())
		fail(member_path(key), type_mismatch("an array", value));
	return &value;
}

} // namespace softdpu::json
