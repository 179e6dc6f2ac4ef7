// How deeply a JSON text nests, counted without parsing it. Parsers of untrusted JSON (topology
// files, argp configuration) refuse deep documents up front, so neither nlohmann's recursive
// parser and destructor nor our own walkers ever recurse without bound.
#pragma once

#include <cstddef>
#include <string_view>

namespace softdpu::json {

// Deepest bracket level outside strings; 0 for a scalar.
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

} // namespace softdpu::json
