// Memory sources: LiME and QEMU ELF core headers, raw files, QMP's memory tree, and the errors
// for files that are not memory images.
#include "apsh/source/physical_memory.hpp"
#include "apsh/source/qmp.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace softdpu::apsh;
using namespace softdpu::apsh::source;

namespace {

template <typename T> void put(std::vector<uint8_t> &bytes, size_t at, T value)
{
	if (bytes.size() < at + sizeof(T))
		bytes.resize(at + sizeof(T));
	std::memcpy(bytes.data() + at, &value, sizeof(T));
}

void append_lime_range(std::vector<uint8_t> &image, uint64_t start, uint64_t end_inclusive, uint8_t fill)
{
	size_t at = image.size();
	put<uint32_t>(image, at, 0x4C694D45);
	put<uint32_t>(image, at + 4, 1);
	put<uint64_t>(image, at + 8, start);
	put<uint64_t>(image, at + 16, end_inclusive);
	put<uint64_t>(image, at + 24, 0);
	image.resize(image.size() + (end_inclusive - start + 1), fill);
}

// An ET_CORE with a QEMU note (CR3, CR4), a RAM PT_LOAD and a BIOS-ROM PT_LOAD.
std::vector<uint8_t> make_elf_core(uint64_t ram_bytes, uint64_t cr3, uint64_t cr4)
{
	std::vector<uint8_t> core(64, 0);
	core[0] = 0x7f, core[1] = 'E', core[2] = 'L', core[3] = 'F', core[4] = 2, core[5] = 1, core[6] = 1;
	put<uint16_t>(core, 16, 4);  // ET_CORE
	put<uint16_t>(core, 18, 62); // x86-64
	put<uint64_t>(core, 32, 64); // program headers right after the ELF header
	put<uint16_t>(core, 54, 56);
	put<uint16_t>(core, 56, 3);
	size_t notes_at = 64 + 3 * 56;
	// Note: namesz 5 ("QEMU\0"), descsz 432, type 0.
	std::vector<uint8_t> note;
	put<uint32_t>(note, 0, 5);
	put<uint32_t>(note, 4, 432);
	put<uint32_t>(note, 8, 0);
	note.resize(12 + 8 + 432, 0);
	std::memcpy(note.data() + 12, "QEMU", 5);
	put<uint64_t>(note, 20 + 392 + 3 * 8, cr3);
	put<uint64_t>(note, 20 + 392 + 4 * 8, cr4);
	size_t ram_at = (notes_at + note.size() + 4095) & ~size_t{4095};
	auto phdr = [&](int index, uint32_t type, uint64_t offset, uint64_t paddr, uint64_t size) {
		size_t at = 64 + static_cast<size_t>(index) * 56;
		put<uint32_t>(core, at, type);
		put<uint64_t>(core, at + 8, offset);
		put<uint64_t>(core, at + 24, paddr);
		put<uint64_t>(core, at + 32, size);
		put<uint64_t>(core, at + 40, size);
	};
	phdr(0, 4, notes_at, 0, note.size());
	phdr(1, 1, ram_at, 0, ram_bytes);
	phdr(2, 1, ram_at + ram_bytes, 0xfffc0000, 0x40000);
	core.resize(notes_at);
	core.insert(core.end(), note.begin(), note.end());
	core.resize(ram_at + ram_bytes + 0x40000, 0);
	for (uint64_t i = 0; i < ram_bytes; i += 4096)
		core[ram_at + i] = static_cast<uint8_t>(i >> 12);
	return core;
}

uint64_t load_phdr_offset(const std::vector<uint8_t> &core, int index)
{
	uint64_t offset;
	std::memcpy(&offset, core.data() + 64 + static_cast<size_t>(index) * 56 + 8, sizeof(offset));
	return offset;
}

class TempFile {
public:
	explicit TempFile(const std::vector<uint8_t> &bytes)
	{
		path_ = std::filesystem::temp_directory_path() /
			("reader_formats_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
		std::ofstream(path_, std::ios::binary)
		    .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
	}
	~TempFile() { std::filesystem::remove(path_); }
	std::string path() const { return path_.string(); }

private:
	std::filesystem::path path_;
	static inline int counter_ = 0;
};

TEST(ReaderFormats, LimeRangesWithInclusiveEnds)
{
	std::vector<uint8_t> image;
	append_lime_range(image, 0x1000, 0x1fff, 0xaa);
	append_lime_range(image, 0x100000, 0x102fff, 0xbb);
	ImageLayout layout;
	auto status = parse_lime(image, layout);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_EQ(layout.ranges.size(), 2u);
	EXPECT_EQ(layout.ranges[0].gpa_start, 0x1000u);
	EXPECT_EQ(layout.ranges[0].gpa_end, 0x2000u);
	EXPECT_EQ(layout.ranges[0].file_offset, 32u);
	EXPECT_EQ(layout.ranges[1].gpa_end, 0x103000u);
	EXPECT_EQ(layout.ranges[1].file_offset, 32u + 0x1000 + 32);

	std::unique_ptr<PhysicalMemory> memory;
	ASSERT_TRUE(PhysicalMemory::over_bytes(image, layout.ranges, memory).ok());
	EXPECT_EQ(memory->read_value<uint8_t>(0x1fff), 0xaa);
	EXPECT_EQ(memory->read_value<uint8_t>(0x100000), 0xbb);
	EXPECT_FALSE(memory->read_value<uint8_t>(0x2000).has_value());  // a hole between ranges
	EXPECT_FALSE(memory->read_value<uint32_t>(0x1ffe).has_value()); // straddles into the hole
}

TEST(ReaderFormats, LimeTruncatedOrCorrupt)
{
	std::vector<uint8_t> image;
	append_lime_range(image, 0, 0xfff, 1);
	append_lime_range(image, 0x2000, 0x2fff, 2);
	ImageLayout layout;
	auto truncated = parse_lime({image.data(), image.size() - 1}, layout);
	EXPECT_FALSE(truncated.ok());
	EXPECT_NE(truncated.reason.find("truncated"), std::string::npos);
	EXPECT_FALSE(parse_lime({image.data(), 4096 + 32 + 10}, layout).ok()); // header cut off
	std::vector<uint8_t> inverted = image;
	put<uint64_t>(inverted, 16, 0); // end before start? start 0, end 0: one byte, then garbage
	EXPECT_FALSE(parse_lime(inverted, layout).ok());
	std::vector<uint8_t> version = image;
	put<uint32_t>(version, 4, 2);
	EXPECT_EQ(parse_lime(version, layout).code, DOCA_ERROR_NOT_SUPPORTED);
}

TEST(ReaderFormats, ElfCoreSkipsFirmwareAndReadsCpuHints)
{
	auto core = make_elf_core(1 << 20, 0x7410000, 0x751ef0);
	ImageLayout layout;
	auto status = parse_elf_core(core, layout);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_EQ(layout.ranges.size(), 1u); // the BIOS ROM below 4 GiB is not RAM
	EXPECT_EQ(layout.ranges[0].gpa_start, 0u);
	EXPECT_EQ(layout.ranges[0].gpa_end, 1u << 20);
	EXPECT_EQ(layout.cpu.cr3, 0x7410000u);
	EXPECT_EQ(layout.cpu.cr4, 0x751ef0u);

	TempFile file(core);
	std::unique_ptr<PhysicalMemory> memory;
	status = PhysicalMemory::open({SourceKind::automatic, file.path(), "", {}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_STREQ(memory->kind_name(), "ELF core");
	EXPECT_EQ(memory->read_value<uint8_t>(5 * 4096), 5);
	EXPECT_FALSE(memory->read_value<uint8_t>(1 << 20).has_value());
}

TEST(ReaderFormats, ElfCoreMalformed)
{
	auto core = make_elf_core(64 << 10, 0, 0);
	ImageLayout layout;
	EXPECT_FALSE(parse_elf_core({core.data(), 40}, layout).ok());
	std::vector<uint8_t> not_core = core;
	put<uint16_t>(not_core, 16, 2); // ET_EXEC
	EXPECT_NE(parse_elf_core(not_core, layout).reason.find("ET_CORE"), std::string::npos);
	// Truncated: the RAM segment runs past the end of the file.
	auto status = parse_elf_core({core.data(), core.size() - 0x40000 - 100}, layout);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("truncated"), std::string::npos);
	std::vector<uint8_t> bad_headers = core;
	put<uint64_t>(bad_headers, 32, core.size() - 10);
	EXPECT_FALSE(parse_elf_core(bad_headers, layout).ok());
}

// QEMU's dump-guest-memory with paging writes one PT_LOAD per guest mapping: more than 65534
// segments (e_phnum = PN_XNUM, the count in section header 0), several of them for the same RAM.
TEST(ReaderFormats, ElfCoreWithExtendedSegmentCountAndRepeatedSegments)
{
	auto core = make_elf_core(64 << 10, 0x1000, 0x20);
	const uint64_t ram_at = load_phdr_offset(core, 1);
	// Two more program headers at the end of the file: the second and third pages again (as a
	// kernel text mapping would), and a range that touches the end of RAM.
	const size_t table_at = core.size();
	core.resize(table_at + 5 * 56, 0);
	std::memcpy(core.data() + table_at, core.data() + 64, 3 * 56);
	auto phdr = [&](int index, uint64_t offset, uint64_t paddr, uint64_t size) {
		size_t at = table_at + static_cast<size_t>(index) * 56;
		put<uint32_t>(core, at, 1);
		put<uint64_t>(core, at + 8, offset);
		put<uint64_t>(core, at + 24, paddr);
		put<uint64_t>(core, at + 32, size);
		put<uint64_t>(core, at + 40, size);
	};
	phdr(3, ram_at + 0x1000, 0x1000, 0x2000);
	phdr(4, ram_at + 0x8000, 0x8000, 0x8000);
	const size_t section_at = core.size();
	core.resize(section_at + 64, 0);
	put<uint32_t>(core, section_at + 44, 5); // sh_info: the real program header count
	put<uint64_t>(core, 32, table_at);       // e_phoff
	put<uint64_t>(core, 40, section_at);     // e_shoff
	put<uint16_t>(core, 58, 64);             // e_shentsize
	put<uint16_t>(core, 60, 0);              // e_shnum: 0, the count would be in sh_size
	put<uint16_t>(core, 56, 0xffff);         // e_phnum = PN_XNUM

	ImageLayout layout;
	auto status = parse_elf_core(core, layout);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_EQ(layout.ranges.size(), 1u); // the repeated pages fold into the RAM range
	EXPECT_EQ(layout.ranges[0].gpa_start, 0u);
	EXPECT_EQ(layout.ranges[0].gpa_end, 64u << 10);
	EXPECT_EQ(layout.ranges[0].file_offset, ram_at);
	EXPECT_EQ(layout.cpu.cr3, 0x1000u);

	// The same pages at another offset of the file: two different contents for one address.
	std::vector<uint8_t> conflicting = core;
	put<uint64_t>(conflicting, table_at + 3 * 56 + 8, ram_at + 0x3000);
	status = parse_elf_core(conflicting, layout);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("overlap"), std::string::npos) << status.reason;

	// PN_XNUM with no section header to hold the count.
	std::vector<uint8_t> no_section = core;
	put<uint64_t>(no_section, 40, 0);
	status = parse_elf_core(no_section, layout);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("section header 0"), std::string::npos) << status.reason;
	std::vector<uint8_t> section_outside = core;
	put<uint64_t>(section_outside, 40, core.size() - 8);
	EXPECT_EQ(parse_elf_core(section_outside, layout).code, DOCA_ERROR_INVALID_VALUE);
	// A count in sh_info larger than the file can hold.
	std::vector<uint8_t> too_many = core;
	put<uint32_t>(too_many, section_at + 44, 1u << 20);
	status = parse_elf_core(too_many, layout);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("truncated"), std::string::npos) << status.reason;
	// More than any guest has, whatever the file's size: refused before reading one.
	put<uint32_t>(too_many, section_at + 44, 0xffffffffu);
	status = parse_elf_core(too_many, layout);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("program headers (at most"), std::string::npos) << status.reason;
}

TEST(ReaderFormats, FilesThatAreNotMemoryImages)
{
	std::unique_ptr<PhysicalMemory> memory;
	auto missing = PhysicalMemory::open({SourceKind::automatic, "/nonexistent/ram.img", "", {}}, memory);
	EXPECT_EQ(missing.code, DOCA_ERROR_NOT_FOUND);
	EXPECT_NE(missing.reason.find("/nonexistent/ram.img"), std::string::npos);
	TempFile empty(std::vector<uint8_t>{});
	EXPECT_FALSE(PhysicalMemory::open({SourceKind::automatic, empty.path(), "", {}}, memory).ok());
	TempFile small(std::vector<uint8_t>(1000, 'x'));
	auto status = PhysicalMemory::open({SourceKind::automatic, small.path(), "", {}}, memory);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("not a memory image"), std::string::npos);
	// A raw file with ranges that claim more than the file holds.
	TempFile raw(std::vector<uint8_t>(2 << 20, 0));
	status = PhysicalMemory::open({SourceKind::raw, raw.path(), "", {{0, 4 << 20, 0}}}, memory);
	EXPECT_FALSE(status.ok());
	EXPECT_NE(status.reason.find("truncated"), std::string::npos);
	status = PhysicalMemory::open({SourceKind::raw, raw.path(), "", {{0, 1 << 20, 0}}}, memory);
	ASSERT_TRUE(status.ok()) << status.reason;
	EXPECT_FALSE(memory->read_value<uint8_t>(1 << 20).has_value()); // outside the DMA window
}

TEST(ReaderFormats, MtreeRamRanges)
{
	const char *text = "FlatView #0\n"
			   " AS \"I/O\", root: io\n"
			   " Root memory region: io\n"
			   "  0000000000000000-0000000000000007 (prio 0, i/o): dma-chan\n"
			   "\n"
			   "FlatView #1\n"
			   " AS \"memory\", root: system\n"
			   " AS \"cpu-memory-0\", root: system\n"
			   " Root memory region: system\n"
			   "  0000000000000000-00000000000bffff (prio 0, ram): ram0\n"
			   "  00000000000c0000-00000000000dffff (prio 1, rom): pc.rom\n"
			   "  00000000000e0000-00000000000fffff (prio 1, rom): ram0 @00000000000e0000\n"
			   "  0000000000100000-00000000bfffffff (prio 0, ram): ram0 @0000000000100000\n"
			   "  00000000fffc0000-00000000ffffffff (prio 0, rom): pc.bios\n"
			   "  0000000100000000-000000013fffffff (prio 0, ram): ram0 @00000000c0000000\n"
			   "\n"
			   "FlatView #2\n"
			   " AS \"other\", root: x\n"
			   "  0000000000000000-00000000ffffffff (prio 0, ram): bigger\n";
	std::vector<RamRange> ranges;
	auto status = parse_mtree_ram_ranges(text, ranges);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_EQ(ranges.size(), 3u);
	EXPECT_EQ(ranges[0].gpa_end, 0xc0000u);
	EXPECT_EQ(ranges[1].gpa_start, 0xe0000u);
	EXPECT_EQ(ranges[1].gpa_end, 0xc0000000u); // merged with the contiguous piece after it
	EXPECT_EQ(ranges[2].gpa_start, 0x100000000u);
	EXPECT_EQ(ranges[2].file_offset, 0xc0000000u);
	EXPECT_FALSE(parse_mtree_ram_ranges("garbage\n", ranges).ok());

	// Pieces that overlap (a node's backend over the main RAM, listed out of order): not a flat
	// view, refused by both parsers rather than read twice.
	const char *overlapping = "FlatView #0\n"
				  " AS \"memory\", root: system\n"
				  "  0000000000000000-000000003fffffff (prio 0, ram): ram0\n"
				  "  0000000080000000-00000000bfffffff (prio 0, ram): node1\n"
				  "  0000000020000000-000000002fffffff (prio 0, ram): node1 @0000000040000000\n";
	status = parse_mtree_ram_ranges(overlapping, ranges);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("0x20000000-0x2fffffff overlap"), std::string::npos) << status.reason;
	std::vector<RamBlockPiece> pieces;
	status = parse_mtree_ram_pieces(overlapping, {"node1"}, pieces);
	EXPECT_EQ(status.code, DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(status.reason.find("not a flat view"), std::string::npos) << status.reason;
}

TEST(ReaderFormats, MtreeFromARealQemu)
{
	// QEMU 7.2's `info mtree -f` for a 256 MiB pc guest (kept as a fuzz seed).
	std::ifstream in(std::string(SOFTDPU_SOURCE_DIR) + "/fuzz/corpus/apsh_mtree/qemu_real.txt");
	ASSERT_TRUE(in);
	std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	std::vector<RamRange> ranges;
	auto status = parse_mtree_ram_ranges(text, ranges);
	ASSERT_TRUE(status.ok()) << status.reason;
	ASSERT_EQ(ranges.size(), 1u); // RAM and its ROM aliases are one contiguous piece of ram0
	EXPECT_EQ(ranges[0].gpa_start, 0u);
	EXPECT_EQ(ranges[0].gpa_end, 0x10000000u);
	EXPECT_EQ(ranges[0].file_offset, 0u);
}

TEST(ReaderFormats, QmpSocketThatDoesNotExist)
{
	std::vector<RamRange> ranges;
	auto status = query_qmp_ram_ranges("/nonexistent/qmp.sock", ranges);
	EXPECT_EQ(status.code, DOCA_ERROR_NOT_CONNECTED);
}

} // namespace
