// The devargs parsers of doca_dpdk_port_probe (src/dpdk_bridge/devargs.hpp), directly: DPDK's
// representor syntax as DOCA and mlx5 programs write it, and every refusal.
#include "dpdk_bridge/devargs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using softdpu::dpdk_bridge::kMaxListValues;
using softdpu::dpdk_bridge::kMaxRepresentors;
using softdpu::dpdk_bridge::parse_devargs;
using softdpu::dpdk_bridge::parse_representor;
using softdpu::dpdk_bridge::RepresentorKind;
using softdpu::dpdk_bridge::RepresentorSelector;

namespace {

// The selectors of a value, spelled ("pf0vf1", "vf2", "hpf"), or "error: ..." when refused.
std::vector<std::string> spelled(const char *value)
{
	const auto list = parse_representor(value);
	if (!list.error.empty()) {
		EXPECT_TRUE(list.selectors.empty()) << value;
		return {"error: " + list.error};
	}
	std::vector<std::string> out;
	for (const RepresentorSelector &selector : list.selectors)
		out.push_back(selector.spelling());
	return out;
}

using Spellings = std::vector<std::string>;

TEST(DpdkBridgeDevargs, ItemsAreSplitAtCommasOutsideBrackets)
{
	const auto parsed = parse_devargs("dv_flow_en=2,representor=vf[0,2-3],x,representor=[pf0vf0,pf0sf[0-1]]");
	ASSERT_EQ(parsed.error, "");
	ASSERT_EQ(parsed.items.size(), 4u);
	EXPECT_EQ(parsed.items[0].first, "dv_flow_en");
	EXPECT_EQ(parsed.items[0].second, "2");
	EXPECT_EQ(parsed.items[1].second, "vf[0,2-3]");
	EXPECT_EQ(parsed.items[2].first, "x");
	EXPECT_EQ(parsed.items[2].second, "");
	EXPECT_EQ(parsed.representors, (std::vector<std::string>{"vf[0,2-3]", "[pf0vf0,pf0sf[0-1]]"}));
	EXPECT_TRUE(parse_devargs("").items.empty());
	EXPECT_EQ(parse_devargs("").error, "");
}

TEST(DpdkBridgeDevargs, MalformedDevargsAreRefusedWithTheReason)
{
	EXPECT_EQ(parse_devargs("a=1,,b=2").error, "an empty item");
	EXPECT_EQ(parse_devargs("a=1,").error, "an empty item");
	EXPECT_EQ(parse_devargs(",a=1").error, "an empty item");
	EXPECT_EQ(parse_devargs("=1").error, "an item without a key (\"=1\")");
	EXPECT_EQ(parse_devargs("a b=1").error, "a malformed key (\"a b\")");
	EXPECT_EQ(parse_devargs("representor=vf[0,1").error, "an unclosed '['");
	EXPECT_EQ(parse_devargs("representor=vf0],a=1").error, "a ']' without its '['");
	EXPECT_NE(parse_devargs("0000:03:00.0,dv_flow_en=2").error.find("a PCI address (\"0000:03:00.0\")"),
		  std::string::npos);
	EXPECT_NE(parse_devargs("dv_flow_en=2,03:00.1").error.find("a PCI address"), std::string::npos);
	EXPECT_TRUE(parse_devargs("a=1,,b=2").representors.empty());
}

TEST(DpdkBridgeDevargs, RepresentorSyntaxOfDpdkAndMlx5)
{
	// One representor, with and without its PF.
	EXPECT_EQ(spelled("pf0vf0"), (Spellings{"pf0vf0"}));
	EXPECT_EQ(spelled("vf0"), (Spellings{"vf0"}));
	EXPECT_EQ(spelled("sf0"), (Spellings{"sf0"}));
	EXPECT_EQ(spelled("pf1sf3"), (Spellings{"pf1sf3"}));
	// DPDK's legacy form: bare numbers are VFs.
	EXPECT_EQ(spelled("2"), (Spellings{"vf2"}));
	EXPECT_EQ(spelled("[0-2]"), (Spellings{"vf0", "vf1", "vf2"}));
	// Lists and ranges, on either part; each representor once, in the order written.
	EXPECT_EQ(spelled("vf[0-1]"), (Spellings{"vf0", "vf1"}));
	EXPECT_EQ(spelled("vf[3,0-1,3]"), (Spellings{"vf3", "vf0", "vf1"}));
	EXPECT_EQ(spelled("vf0-1"), (Spellings{"vf0", "vf1"}));
	EXPECT_EQ(spelled("pf[0-1]vf0"), (Spellings{"pf0vf0", "pf1vf0"}));
	EXPECT_EQ(spelled("pf0sf[0-1]"), (Spellings{"pf0sf0", "pf0sf1"}));
	EXPECT_EQ(spelled("pf[0,1]vf[0-1]"), (Spellings{"pf0vf0", "pf0vf1", "pf1vf0", "pf1vf1"}));
	// The host PF's representor: a bare pf<N> (DPDK's PF representor), or VF number 65535 (-1), as
	// mlx5 names pf<N>hpf.
	EXPECT_EQ(spelled("pf0"), (Spellings{"pf0hpf"}));
	EXPECT_EQ(spelled("pf[0-1]"), (Spellings{"pf0hpf", "pf1hpf"}));
	EXPECT_EQ(spelled("vf65535"), (Spellings{"hpf"}));
	EXPECT_EQ(spelled("pf1vf65535"), (Spellings{"pf1hpf"}));
	EXPECT_EQ(spelled("sf65535"), (Spellings{"hpf"}));
	EXPECT_EQ(spelled("pf1vf[0,-1]"), (Spellings{"pf1vf0", "pf1hpf"}));
	EXPECT_EQ(spelled("vf-1"), (Spellings{"hpf"}));
	// A list of representors (DPDK 24.03's form), inner lists included.
	EXPECT_EQ(spelled("[pf0vf0,pf0vf1]"), (Spellings{"pf0vf0", "pf0vf1"}));
	EXPECT_EQ(spelled("[pf0,vf1,pf0sf[0-1],pf0vf1]"), (Spellings{"pf0hpf", "vf1", "pf0sf0", "pf0sf1", "pf0vf1"}));

	const auto list = parse_representor("pf1vf2");
	ASSERT_EQ(list.selectors.size(), 1u);
	EXPECT_EQ(list.selectors[0].pf, 1);
	EXPECT_EQ(list.selectors[0].kind, RepresentorKind::vf);
	EXPECT_EQ(list.selectors[0].number, 2);
	const auto bare = parse_representor("sf7");
	ASSERT_EQ(bare.selectors.size(), 1u);
	EXPECT_FALSE(bare.selectors[0].pf.has_value());
	EXPECT_EQ(bare.selectors[0].kind, RepresentorKind::sf);
}

TEST(DpdkBridgeDevargs, MalformedRepresentorsAreRefusedWithTheReason)
{
	EXPECT_EQ(spelled(""), (Spellings{"error: an empty value"}));
	EXPECT_EQ(spelled("pf0xf1"), (Spellings{"error: \"pf<N>\" followed by \"xf1\", not by \"vf\" or \"sf\""}));
	EXPECT_EQ(spelled("vf"), (Spellings{"error: a number is missing at the end"}));
	EXPECT_EQ(spelled("pf"), (Spellings{"error: a number is missing at the end"}));
	EXPECT_EQ(spelled("vfx"), (Spellings{"error: a number expected at \"x\""}));
	EXPECT_EQ(spelled("hpf0"), (Spellings{"error: a number expected at \"hpf0\""}));
	EXPECT_EQ(spelled("vf0x"), (Spellings{"error: unexpected \"x\""}));
	EXPECT_EQ(spelled("vf[0,1"), (Spellings{"error: an unclosed '['"}));
	EXPECT_EQ(spelled("vf[0;1]"), (Spellings{"error: unexpected \";1]\" in a number list"}));
	EXPECT_EQ(spelled("vf[3-1]"), (Spellings{"error: a reversed range (3-1)"}));
	EXPECT_EQ(spelled("vf65536"), (Spellings{"error: a number above 65535"}));
	EXPECT_EQ(spelled("vf-2"), (Spellings{"error: a number expected at \"-2\""}));
	EXPECT_EQ(spelled("vf-10"), (Spellings{"error: a negative number other than -1"}));
	EXPECT_EQ(spelled("c1pf0vf0"),
		  (Spellings{"error: a controller (\"c<N>\"): softdpu emulates one host, with no multi-host "
			     "controllers"}));
	EXPECT_EQ(spelled("[pf0vf0,pf0xf1]"),
		  (Spellings{"error: \"pf0xf1\": \"pf<N>\" followed by \"xf1\", not by \"vf\" or \"sf\""}));
	EXPECT_EQ(spelled("[pf0vf0,]"), (Spellings{"error: an empty representor in the list"}));
	EXPECT_EQ(spelled("[pf0vf0"), (Spellings{"error: a list of representors that does not end with ']'"}));
	EXPECT_EQ(spelled("[pf0vf0]]"), (Spellings{"error: a ']' without its '['"}));
	// Lists are bounded as DPDK bounds them, and so is what one value names.
	EXPECT_EQ(spelled(("vf[0-" + std::to_string(kMaxListValues - 1) + "]").c_str()).size(), kMaxListValues);
	EXPECT_EQ(spelled(("vf[0-" + std::to_string(kMaxListValues) + "]").c_str()),
		  (Spellings{"error: more than " + std::to_string(kMaxListValues) + " numbers in one list"}));
	EXPECT_EQ(spelled("pf[0-31]vf[0-31]"),
		  (Spellings{"error: more than " + std::to_string(kMaxRepresentors) + " representors"}));
}

} // namespace
