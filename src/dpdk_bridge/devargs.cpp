#include "dpdk_bridge/devargs.hpp"

#include <algorithm>

namespace softdpu::dpdk_bridge {

namespace {

bool is_key_char(char c) noexcept
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool is_hex(char c) noexcept
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_digit(char c) noexcept
{
	return c >= '0' && c <= '9';
}

// [domain:]bus:devid.func: hex digits, one or two colons, one dot before the last digit.
bool looks_like_pci_address(std::string_view item) noexcept
{
	size_t colons = 0;
	size_t dots = 0;
	for (const char c : item) {
		if (c == ':')
			++colons;
		else if (c == '.')
			++dots;
		else if (!is_hex(c))
			return false;
	}
	return (colons == 1 || colons == 2) && dots == 1;
}

// Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "\"" + string.
std::string quoted(std::string_view text)
{
	std::string result;
	result.reserve(text.size() + 2);
	result += '"';
	result += text;
	result += '"';
	return result;
}

// A reader of one representor value: numbers, ranges and lists as DPDK's
// rte_eth_devargs_process_list reads them.
class Reader {
public:
	explicit Reader(std::string_view text) : text_(text) {}

	bool at_end() const noexcept { return pos_ == text_.size(); }
	bool take(std::string_view prefix) noexcept
	{
		if (text_.substr(pos_).starts_with(prefix)) {
			pos_ += prefix.size();
			return true;
		}
		return false;
	}
	char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }
	std::string_view rest() const noexcept { return text_.substr(pos_); }

	// A number list: "N", "A-B", or "[item,item,...]" with items "N" or "A-B". "-1" alone stands
	// for 65535 (DPDK reads numbers with sscanf's %hu, mlx5's host PF index). Values once each, in
	// order, at most kMaxListValues.
	bool list(std::vector<uint16_t> &values, std::string &error)
	{
		const bool bracket = take("[");
		do {
			if (!range(values, error))
				return false;
		} while (bracket && take(","));
		if (bracket && !take("]")) {
			error = at_end() ? "an unclosed '['" : "unexpected " + quoted(rest()) + " in a number list";
			return false;
		}
		return true;
	}

private:
	bool number(uint16_t &value, std::string &error)
	{
		if (take("-1")) {
			if (is_digit(peek())) {
				error = "a negative number other than -1";
				return false;
			}
			value = UINT16_MAX;
			return true;
		}
		if (!is_digit(peek())) {
			error = at_end() ? "a number is missing at the end" : "a number expected at " + quoted(rest());
			return false;
		}
		uint32_t parsed = 0;
		while (is_digit(peek())) {
			parsed = parsed * 10 + static_cast<uint32_t>(peek() - '0');
			if (parsed > UINT16_MAX) {
				error = "a number above 65535";
				return false;
			}
			++pos_;
		}
		value = static_cast<uint16_t>(parsed);
		return true;
	}

	static bool enlist(std::vector<uint16_t> &values, uint16_t value, std::string &error)
	{
		if (std::find(values.begin(), values.end(), value) != values.end())
			return true;
		if (values.size() == kMaxListValues) {
			error = "more than " + std::to_string(kMaxListValues) + " numbers in one list";
			return false;
		}
		values.push_back(value);
		return true;
	}

	bool range(std::vector<uint16_t> &values, std::string &error)
	{
		const bool negative_one = text_.substr(pos_).starts_with("-1");
		uint16_t low = 0;
		if (!number(low, error))
			return false;
		if (negative_one || !take("-"))
			return enlist(values, low, error);
		uint16_t high = 0;
		if (!number(high, error))
			return false;
		if (low > high) {
			error = "a reversed range (" + std::to_string(low) + "-" + std::to_string(high) + ")";
			return false;
		}
		for (uint32_t value = low; value <= high; ++value) {
			if (!enlist(values, static_cast<uint16_t>(value), error))
				return false;
		}
		return true;
	}

	std::string_view text_;
	size_t pos_ = 0;
};

// One representor: [pf<list>](vf|sf)<list>, pf<list>, or a bare <list> (VFs, DPDK's legacy form).
bool parse_one(std::string_view text, std::vector<RepresentorSelector> &out, std::string &error)
{
	Reader reader(text);
	if (reader.peek() == 'c') {
		error = "a controller (\"c<N>\"): softdpu emulates one host, with no multi-host controllers";
		return false;
	}
	std::vector<uint16_t> pfs;
	const bool has_pf = reader.take("pf");
	if (has_pf && !reader.list(pfs, error))
		return false;
	RepresentorKind kind = RepresentorKind::vf;
	std::vector<uint16_t> numbers;
	if (has_pf && reader.at_end()) {
		kind = RepresentorKind::host_pf;
		numbers.push_back(0);
	} else {
		if (reader.take("sf"))
			kind = RepresentorKind::sf;
		else if (!reader.take("vf") && has_pf) {
			error = "\"pf<N>\" followed by " + quoted(reader.rest()) + ", not by \"vf\" or \"sf\"";
			return false;
		}
		if (!reader.list(numbers, error))
			return false;
	}
	if (!reader.at_end()) {
		error = "unexpected " + quoted(reader.rest());
		return false;
	}
	std::vector<std::optional<uint16_t>> pf_choices;
	if (pfs.empty())
		pf_choices.emplace_back();
	for (const uint16_t pf : pfs)
		pf_choices.emplace_back(pf);
	for (const std::optional<uint16_t> &pf : pf_choices) {
		for (const uint16_t number : numbers) {
			RepresentorSelector selector;
			selector.pf = pf;
			// mlx5 names the host PF's representor by VF (or SF) number 65535.
			selector.kind = number == UINT16_MAX ? RepresentorKind::host_pf : kind;
			selector.number = selector.kind == RepresentorKind::host_pf ? 0 : number;
			if (std::find(out.begin(), out.end(), selector) != out.end())
				continue;
			if (out.size() == kMaxRepresentors) {
				error = "more than " + std::to_string(kMaxRepresentors) + " representors";
				return false;
			}
			out.push_back(selector);
		}
	}
	return true;
}

} // namespace

std::string RepresentorSelector::spelling() const
{
	std::string text = pf ? "pf" + std::to_string(*pf) : std::string();
	switch (kind) {
	case RepresentorKind::host_pf:
		return text + "hpf";
	case RepresentorKind::vf:
		return text + "vf" + std::to_string(number);
	case RepresentorKind::sf:
		return text + "sf" + std::to_string(number);
	}
	return text;
}

Devargs parse_devargs(std::string_view text)
{
	Devargs result;
	if (text.empty())
		return result;
	size_t start = 0;
	int depth = 0;
	for (size_t at = 0; at <= text.size(); ++at) {
		if (at < text.size()) {
			if (text[at] == '[') {
				++depth;
			} else if (text[at] == ']') {
				if (depth == 0) {
					result.error = "a ']' without its '['";
					return result;
				}
				--depth;
			}
			if (text[at] != ',' || depth > 0)
				continue;
		} else if (depth > 0) {
			result.error = "an unclosed '['";
			return result;
		}
		const std::string_view item = text.substr(start, at - start);
		start = at + 1;
		if (item.empty()) {
			result.error = "an empty item";
			return result;
		}
		if (looks_like_pci_address(item)) {
			result.error = "a PCI address (" + quoted(item) +
				       "): the device is named by the doca_dev, the devargs must not name it";
			return result;
		}
		const size_t equal = item.find('=');
		const std::string_view key = item.substr(0, equal);
		const std::string_view value =
		    equal == std::string_view::npos ? std::string_view() : item.substr(equal + 1);
		if (key.empty()) {
			result.error = "an item without a key (" + quoted(item) + ")";
			return result;
		}
		if (!std::all_of(key.begin(), key.end(), is_key_char)) {
			result.error = "a malformed key (" + quoted(key) + ")";
			return result;
		}
		if (key == "representor")
			result.representors.emplace_back(value);
		result.items.emplace_back(std::string(key), std::string(value));
	}
	return result;
}

RepresentorList parse_representor(std::string_view value)
{
	RepresentorList result;
	std::string error;
	if (value.empty()) {
		error = "an empty value";
	} else if (value.front() == '[' && value.size() > 1 && !is_digit(value[1]) && value[1] != '-') {
		// A list of representors, "[pf0vf0,pf0sf[0-1],vf2]": commas outside inner brackets separate.
		if (value.back() != ']') {
			error = "a list of representors that does not end with ']'";
		} else {
			const std::string_view inner = value.substr(1, value.size() - 2);
			size_t start = 0;
			int depth = 0;
			for (size_t at = 0; at <= inner.size() && error.empty(); ++at) {
				if (at < inner.size()) {
					depth += inner[at] == '[' ? 1 : inner[at] == ']' ? -1 : 0;
					if (depth < 0)
						error = "a ']' without its '['";
					if (inner[at] != ',' || depth != 0)
						continue;
				}
				const std::string_view one = inner.substr(start, at - start);
				start = at + 1;
				if (one.empty())
					error = "an empty representor in the list";
				else if (!parse_one(one, result.selectors, error))
					error = quoted(one) + ": " + error;
			}
		}
	} else {
		(void)parse_one(value, result.selectors, error);
	}
	if (!error.empty()) {
		result.selectors.clear();
		result.error = std::move(error);
	}
	return result;
}

} // namespace softdpu::dpdk_bridge
