// VMCOREINFO parsing and finding, and kallsyms decoding, on synthetic data.
#include "apsh/kernel/kallsyms.hpp"
#include "apsh/kernel/vmcoreinfo.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>

using namespace softdpu::apsh;
using namespace softdpu::apsh::kernel;

namespace {

const char *note_text = "OSRELEASE=6.1.0-56-amd64\n"
			"BUILD-ID=0123abcd\n"
			"PAGESIZE=4096\n"
			"SYMBOL(init_top_pgt)=ffffffffabc10000\n"
			"SYMBOL(kallsyms_names)=ffffffffab000000\n"
			"OFFSET(task_struct.pid)=2416\n"
			"SIZE(list_head)=16\n"
			"NUMBER(phys_base)=-629145600\n"
			"NUMBER(pgtable_l5_enabled)=1\n"
			"KERNELOFFSET=2ae00000\n"
			"CRASHTIME=1700000000\n";

TEST(ReaderVmcoreinfo, ParsesKeysAndNegativePhysBase)
{
	VmcoreInfo info;
	auto status = parse_vmcoreinfo(note_text, info);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(info.osrelease, "6.1.0-56-amd64");
	EXPECT_EQ(info.build_id, "0123abcd");
	EXPECT_EQ(info.kernel_offset, 0x2ae00000u);
	EXPECT_EQ(info.symbol("init_top_pgt"), 0xffffffffabc10000u);
	EXPECT_EQ(info.offsets.at("task_struct.pid"), 2416u);
	EXPECT_EQ(info.sizes.at("list_head"), 16u);
	EXPECT_EQ(info.five_level(), true);
	// -629145600 as a wrapping u64: adding it to an address subtracts 600 MiB.
	ASSERT_TRUE(info.phys_base());
	uint64_t va = 0xffffffffabc10000ull;
	EXPECT_EQ(va - 0xffffffff80000000ull + *info.phys_base(), 0x2bc10000ull - 629145600ull);
}

TEST(ReaderVmcoreinfo, RejectsTextWithoutRelease)
{
	VmcoreInfo info;
	EXPECT_FALSE(parse_vmcoreinfo("KERNELOFFSET=0\n", info).ok());
	EXPECT_FALSE(parse_vmcoreinfo("", info).ok());
	// Malformed values are skipped, not misread.
	ASSERT_TRUE(parse_vmcoreinfo("OSRELEASE=x\nKERNELOFFSET=zz\nNUMBER(phys_base)=--5\nSYMBOL()=1\n", info).ok());
	EXPECT_FALSE(info.kernel_offset.has_value());
	EXPECT_FALSE(info.phys_base().has_value());
}

class VmcoreinfoInRam : public ::testing::TestWithParam<uint64_t> {};

TEST_P(VmcoreinfoInRam, FoundAlignedOrNot)
{
	std::vector<uint8_t> ram(4 << 20, 0);
	// A decoy: the format string the kernel keeps in .rodata has no KERNELOFFSET line.
	std::memcpy(ram.data() + 0x100000, "OSRELEASE=%s\n", 14);
	uint64_t at = GetParam();
	std::memcpy(ram.data() + at, note_text, std::strlen(note_text));
	std::unique_ptr<source::PhysicalMemory> memory;
	ASSERT_TRUE(source::PhysicalMemory::over_bytes(ram, {{0, ram.size(), 0}}, memory).ok());
	VmcoreInfo info;
	uint64_t found = 0;
	auto status = find_vmcoreinfo(*memory, info, &found);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(found, at);
	EXPECT_EQ(info.kernel_offset, 0x2ae00000u);
}

// Page offset 24 (the ELF-note copy), offset 0 (the data page), and an odd spot (full scan); the
// search reads RAM in 1 MiB windows: a marker across a window boundary, a note starting a window,
// and one whose text runs into the next window.
INSTANTIATE_TEST_SUITE_P(Placement, VmcoreinfoInRam,
			 ::testing::Values(0x203018, 0x1ff000, 0x2ff123, 0xffffb, 0x100000, 0x1fff80));

TEST(ReaderVmcoreinfo, NoteAtAPageSpotWinsOverOneElsewhere)
{
	std::vector<uint8_t> ram(4 << 20, 0);
	std::memcpy(ram.data() + 0x100123, note_text, std::strlen(note_text));
	std::string aligned = note_text;
	aligned.replace(aligned.find("KERNELOFFSET=2ae00000"), 21, "KERNELOFFSET=1c000000");
	std::memcpy(ram.data() + 0x3ff018, aligned.data(), aligned.size());
	std::unique_ptr<source::PhysicalMemory> memory;
	ASSERT_TRUE(source::PhysicalMemory::over_bytes(ram, {{0, ram.size(), 0}}, memory).ok());
	VmcoreInfo info;
	uint64_t found = 0;
	ASSERT_TRUE(find_vmcoreinfo(*memory, info, &found).ok());
	EXPECT_EQ(found, 0x3ff018u);
	EXPECT_EQ(info.kernel_offset, 0x1c000000u);
	// Without it, the one elsewhere.
	std::memset(ram.data() + 0x3ff018, 0, aligned.size());
	ASSERT_TRUE(find_vmcoreinfo(*memory, info, &found).ok());
	EXPECT_EQ(found, 0x100123u);
	EXPECT_EQ(info.kernel_offset, 0x2ae00000u);
}

TEST(ReaderVmcoreinfo, NoteMissing)
{
	std::vector<uint8_t> ram(1 << 20, 0x5a);
	std::unique_ptr<source::PhysicalMemory> memory;
	ASSERT_TRUE(source::PhysicalMemory::over_bytes(ram, {{0, ram.size(), 0}}, memory).ok());
	VmcoreInfo info;
	EXPECT_EQ(find_vmcoreinfo(*memory, info).code, DOCA_ERROR_NOT_FOUND);
}

// Synthetic kallsyms tables: token i is the single character i for printable i, "zz" otherwise.
struct Tables {
	std::vector<uint8_t> names, token_table, token_index, offsets;
	uint64_t relative_base = 0xffffffff81000000ull;
	uint32_t count = 0;

	Tables() : token_index(512)
	{
		for (int i = 0; i < 256; i++) {
			uint16_t at = static_cast<uint16_t>(token_table.size());
			std::memcpy(token_index.data() + i * 2, &at, 2);
			if (i >= 0x21 && i < 0x7f)
				token_table.push_back(static_cast<uint8_t>(i));
			else
				token_table.insert(token_table.end(), {'z', 'z'});
			token_table.push_back(0);
		}
	}
	void add(const std::string &typed_name, uint64_t address)
	{
		size_t length = typed_name.size();
		if (length >= 0x80) {
			names.push_back(static_cast<uint8_t>(0x80 | (length & 0x7f)));
			names.push_back(static_cast<uint8_t>(length >> 7));
		} else {
			names.push_back(static_cast<uint8_t>(length));
		}
		names.insert(names.end(), typed_name.begin(), typed_name.end());
		add_offset(address);
	}
	// A name given as its table bytes (length, then token indexes).
	void add_encoded(const std::vector<uint8_t> &encoded, uint64_t address)
	{
		names.insert(names.end(), encoded.begin(), encoded.end());
		add_offset(address);
	}
	void add_offset(uint64_t address)
	{
		int32_t offset = static_cast<int32_t>(-static_cast<int64_t>(address - relative_base) - 1);
		uint8_t bytes[4];
		std::memcpy(bytes, &offset, 4);
		offsets.insert(offsets.end(), bytes, bytes + 4);
		count++;
	}
	Status decode(Kallsyms &out) const
	{
		return Kallsyms::decode_tables(names, token_table, token_index, offsets, relative_base, count, out);
	}
};

TEST(ReaderKallsyms, DecodesNamesAddressesAndBigSymbols)
{
	Tables tables;
	tables.add("Tstartup_64", 0xffffffff81000000ull);
	tables.add("tlocal_twin", 0xffffffff81000100ull);
	tables.add("Tlocal_twin", 0xffffffff81000200ull);
	tables.add("Dinit_task", 0xffffffff82a1aa40ull);
	std::string big = "T" + std::string(300, 'q');
	tables.add(big, 0xffffffff81234560ull);
	Kallsyms symbols;
	auto status = tables.decode(symbols);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(symbols.size(), 5u);
	EXPECT_EQ(symbols.find("startup_64"), 0xffffffff81000000ull);
	EXPECT_EQ(symbols.find("init_task"), 0xffffffff82a1aa40ull);
	EXPECT_EQ(symbols.find("local_twin"), 0xffffffff81000200ull); // the global one wins
	EXPECT_EQ(symbols.find(big.substr(1)), 0xffffffff81234560ull);
	EXPECT_FALSE(symbols.find("absent").has_value());
	symbols.add("init_task", 0x1234);
	EXPECT_EQ(symbols.find("init_task"), 0x1234u); // a caller's symbol overrides
}

// VmHWM of this process, in bytes, after resetting it (Linux 4.0 and later); 0 if it cannot be reset.
uint64_t reset_peak_rss()
{
	std::ofstream("/proc/self/clear_refs") << "5";
	std::ifstream in("/proc/self/status");
	for (std::string line; std::getline(in, line);)
		if (line.starts_with("VmHWM:"))
			return std::stoull(line.substr(6)) * 1024;
	return 0;
}
uint64_t peak_rss()
{
	std::ifstream in("/proc/self/status");
	for (std::string line; std::getline(in, line);)
		if (line.starts_with("VmHWM:"))
			return std::stoull(line.substr(6)) * 1024;
	return 0;
}

TEST(ReaderKallsyms, NamesLongerThanAnySymbolAreDroppedWithoutExpandingThem)
{
	// A crafted guest: token 0x80 is 65,000 bytes, and three names are 32,767 references to it
	// (2.1 GB expanded, for nothing: no symbol is longer than KSYM_NAME_LEN - 1 = 511).
	Tables tables;
	tables.token_table.insert(tables.token_table.end(), 0x400 - tables.token_table.size(), 0); // tokens stay
	const uint16_t big_at = static_cast<uint16_t>(tables.token_table.size());
	tables.token_table.insert(tables.token_table.end(), 65000, 'x');
	tables.token_table.push_back(0);
	std::memcpy(tables.token_index.data() + 0x80 * 2, &big_at, 2);
	tables.add("Tbefore", 0xffffffff81000000ull);
	std::vector<uint8_t> huge = {0xff, 0xff}; // length 32,767
	huge.insert(huge.end(), 32767, 0x80);
	for (int i = 0; i < 3; i++)
		tables.add_encoded(huge, 0xffffffff81000100ull);
	tables.add("T" + std::string(511, 'm'), 0xffffffff81000200ull); // the longest a symbol can be
	tables.add("T" + std::string(512, 'l'), 0xffffffff81000300ull); // one longer: not a symbol
	tables.add("Tafter", 0xffffffff81000400ull);
	const uint64_t peak_before = reset_peak_rss();
	const auto started = std::chrono::steady_clock::now();
	Kallsyms symbols;
	auto status = tables.decode(symbols);
	const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_EQ(symbols.size(), 3u);
	EXPECT_EQ(symbols.find("before"), 0xffffffff81000000ull);
	EXPECT_EQ(symbols.find(std::string(511, 'm')), 0xffffffff81000200ull);
	EXPECT_FALSE(symbols.find(std::string(512, 'l')).has_value());
	EXPECT_EQ(symbols.find("after"), 0xffffffff81000400ull);
	EXPECT_LT(seconds, 1.0);
	if (peak_before != 0) {
		EXPECT_LT(peak_rss(), peak_before + (16u << 20)) << "names were expanded in full";
	}
}

TEST(ReaderKallsyms, WholeTableExpansionIsBounded)
{
	// 150,000 names of one 500-byte token each: 75 MB of names from 300 KB of table, more than
	// any kernel has (the 6.1 kernel's 94,000 names take 2.3 MB).
	Tables tables;
	tables.token_table.insert(tables.token_table.end(), 0x400 - tables.token_table.size(), 0);
	const uint16_t long_at = static_cast<uint16_t>(tables.token_table.size());
	tables.token_table.push_back('T');
	tables.token_table.insert(tables.token_table.end(), 499, 'q');
	tables.token_table.push_back(0);
	std::memcpy(tables.token_index.data() + 0x80 * 2, &long_at, 2);
	for (int i = 0; i < 150000; i++)
		tables.add_encoded({1, 0x80}, 0xffffffff81000000ull);
	Kallsyms symbols;
	auto status = tables.decode(symbols);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("names expand to more than 67108864 bytes"), std::string::npos) << status.reason;
}

TEST(ReaderKallsyms, CorruptTablesFailWithReason)
{
	Tables tables;
	tables.add("Tone", 0xffffffff81000000ull);
	tables.add("Ttwo", 0xffffffff81000010ull);
	Kallsyms symbols;
	Tables short_names = tables;
	short_names.names.pop_back(); // the last name loses its last two tokens
	short_names.names.pop_back();
	auto status = short_names.decode(symbols);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("kallsyms"), std::string::npos);
	Tables too_many = tables;
	too_many.count = 3;
	EXPECT_FALSE(too_many.decode(symbols).ok());
	Tables bad_token = tables;
	bad_token.token_index[0] = 0xff, bad_token.token_index[1] = 0xff;
	EXPECT_FALSE(bad_token.decode(symbols).ok());
	Tables zero = tables;
	zero.count = 0;
	EXPECT_FALSE(zero.decode(symbols).ok());
}

} // namespace
