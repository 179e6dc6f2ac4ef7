// Fuzz target: doca_dpdk_port_probe's devargs and representor parsers (src/dpdk_bridge/devargs.hpp)
// must accept or refuse any text with a reason, never crash, and what they accept must hold:
// representor= values recorded as written, each representor once, within the bounds, and every
// representor read back the same from its own spelling.
#include "dpdk_bridge/devargs.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

using softdpu::dpdk_bridge::kMaxRepresentors;
using softdpu::dpdk_bridge::parse_devargs;
using softdpu::dpdk_bridge::parse_representor;
using softdpu::dpdk_bridge::RepresentorKind;
using softdpu::dpdk_bridge::RepresentorSelector;

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

// A spelling that parse_representor reads back as exactly this selector.
std::string source_of(const RepresentorSelector &selector)
{
	if (selector.kind != RepresentorKind::host_pf)
		return selector.spelling();
	return selector.pf ? "pf" + std::to_string(*selector.pf) : std::string("vf65535");
}

void check_representor(std::string_view value)
{
	const auto list = parse_representor(value);
	require(list.error.empty() != list.selectors.empty());
	require(list.selectors.size() <= kMaxRepresentors);
	for (size_t i = 0; i < list.selectors.size(); ++i) {
		const RepresentorSelector &selector = list.selectors[i];
		require(std::count(list.selectors.begin(), list.selectors.end(), selector) == 1);
		require(selector.kind != RepresentorKind::host_pf || selector.number == 0);
		const auto again = parse_representor(source_of(selector));
		require(again.error.empty() && again.selectors.size() == 1 && again.selectors[0] == selector);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const std::string_view text(reinterpret_cast<const char *>(data), size);
	const auto parsed = parse_devargs(text);
	if (!parsed.error.empty()) {
		require(parsed.representors.empty() || !parsed.items.empty());
	} else {
		require(text.empty() == parsed.items.empty());
		size_t representors = 0;
		for (const auto &[key, value] : parsed.items) {
			require(!key.empty() && key.find(',') == std::string::npos);
			if (key == "representor")
				require(parsed.representors.at(representors++) == value);
		}
		require(representors == parsed.representors.size());
	}
	for (const std::string &value : parsed.representors)
		check_representor(value);
	// The representor parser alone, on the whole input too.
	check_representor(text);
	return 0;
}
