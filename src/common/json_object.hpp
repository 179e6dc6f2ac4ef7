// Reading JSON files that anyone may have written (topology files, argp configuration, App Shield
// configuration): one parse with the same limits and messages everywhere, and a reader of object
// members that names the file's key and what was expected.
//
// Problems are thrown as json::Error: a JSON path ("$", "$.dpu.functions[1].pci") and the reason;
// callers prefix their source, e.g. "topology.json: $.host: expected an object, got array".
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace softdpu::json {

using Json = nlohmann::json;

// How deeply a JSON text nests, counted without parsing it: the deepest bracket level outside
// strings, 0 for a scalar. Parsers of untrusted JSON refuse deep documents up front, so neither
// nlohmann's recursive parser and destructor nor our own walkers ever recurse without bound.
inline size_t nesting_depth(std::string_view text) noexcept
{
	size_t depth = 0;
	size_t deepest = 0;
	bool in_string = false;
	bool escaped = false;
	for (char c : text) {
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > deepest)
				deepest = depth;
		} else if ((c == ']' || c == '}') && depth > 0) {
			--depth;
		}
	}
	return deepest;
}

// A problem in a document: what() is the reason, `path` where it is.
struct Error : std::runtime_error {
	Error(std::string path_, const std::string &reason) : std::runtime_error(reason), path(std::move(path_)) {}
	std::string path;
};

// The text is not JSON at all: what() is "invalid JSON" followed by `detail`, which is
// " at line L, column C: <the parser's reason>" or ": the document is empty".
struct SyntaxError : Error {
	explicit SyntaxError(const std::string &detail_) : Error("$", "invalid JSON" + detail_), detail(detail_) {}
	std::string detail;
};

[[noreturn]] void fail(const std::string &path, const std::string &reason);

// Keeps messages readable (and printable) whatever bytes the file holds: at most `limit` bytes of
// text, with bytes outside printable ASCII, and those in `also`, as \xNN; "..." when cut.
std::string printable(std::string_view text, size_t limit, std::string_view also = {});
// A value from the file in double quotes for a message: printable, at most 80 bytes.
std::string shown(std::string_view text);
// `inner` between two characters (built by appending: GCC 12 at -O3 misreports "literal" +
// std::string&& as an overlapping memcpy, -Wrestrict).
std::string enclose(char open, std::string_view inner, char close);
// The path segment of an object member: ".key" for plain keys (letters, digits, '_', at most 63
// bytes); anything else as ["key"], escaped and truncated like a value, so a path never carries
// raw bytes from the file into a log.
std::string member_segment(std::string_view key);
// The path segment of an array element: "[index]".
std::string element_segment(size_t index);

struct ParseOptions {
	size_t max_depth = 64;             // deeper documents are refused before parsing
	bool reject_duplicate_keys = true; // else the last of a repeated key wins (nlohmann's rule)
};

// Parses one JSON document. Throws SyntaxError for an empty or malformed text, Error at "$" for a
// document nested deeper than options.max_depth ("document nested deeper than N levels"), and Error
// at the key's path for a key repeated in one object ("duplicate key"); std::bad_alloc passes.
Json parse(std::string_view text, const ParseOptions &options = {});

// Empties a JSON value from its leaves up without allocating. nlohmann's destructor first gathers a
// container's children into a vector, which can fail when memory has run out, and a destructor
// that throws ends the process; an empty container is freed without allocating. The recursion is
// as deep as the document, which parse() bounds.
void dismantle(Json &value) noexcept; // NOLINT(bugprone-exception-escape): see json_object.cpp

// Dismantles a document however its scope is left, running out of memory included.
class DismantledOnExit {
public:
	explicit DismantledOnExit(Json &document) noexcept : document_(document) {}
	~DismantledOnExit() { dismantle(document_); } // NOLINT(bugprone-exception-escape): dismantle cannot throw
	DismantledOnExit(const DismantledOnExit &) = delete;
	DismantledOnExit &operator=(const DismantledOnExit &) = delete;

private:
	Json &document_;
};

// Reads the members of one JSON object at `path`, refusing a value that is not an object ("expected
// an object, got array") and keys not in `known` ("unknown key" at the key's path). Accessors
// throw Error at the member's path: "missing required key", "expected a string, got number", ...
class ObjectReader {
public:
	ObjectReader(const Json &value, std::string path, const std::set<std::string_view> &known);

	const std::string &path() const noexcept { return path_; }
	std::string member_path(std::string_view key) const { return path_ + member_segment(key); }
	bool has(const char *key) const { return value_.contains(key); }
	const Json &raw(const char *key) const { return value_.at(key); }

	std::optional<std::string> string(const char *key, bool required) const;
	std::optional<bool> boolean(const char *key) const;
	// A non-negative integer in [min, max]; `why`, when given, explains the range in the
	// out-of-range message.
	std::optional<uint64_t> unsigned_integer(const char *key, uint64_t min, uint64_t max,
						 const char *why = nullptr) const;
	// The member when it is an array; nullptr when it is absent and not required.
	const Json *array(const char *key, bool required) const;

private:
	const Json &member(const char *key) const { return value_.at(key); }

	const Json &value_;
	std::string path_;
};

} // namespace softdpu::json
