// Fuzz target: the QEMU process source's parsers. The first byte picks the parser for the rest:
// /proc/PID/maps text, a QEMU command line (NUL-separated), or HMP `info ramblock`. Accepted maps
// have non-empty mappings; an accepted command line gives an x86 layout (when it is a PC) whose
// ranges are non-empty, ordered, and add up to the RAM size, and RAM-block pieces (NUMA memdevs,
// pc-dimms) that lie inside their blocks and never overlap.
#include "apsh/source/qemu_process.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

using namespace softdpu::apsh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
	switch (data[0] % 3) {
	case 0: {
		std::vector<source::ProcMapping> maps;
		if (!source::parse_proc_maps(text, maps).ok())
			return 0;
		for (const source::ProcMapping &mapping : maps)
			if (mapping.end <= mapping.start)
				__builtin_trap();
		uint64_t address = 0;
		if (!maps.empty() && source::find_ram_mapping(maps, maps[0].end - maps[0].start, address).ok() &&
		    address == 0 && maps[0].start != 0)
			__builtin_trap();
		break;
	}
	case 1: {
		source::QemuCommandLine command_line;
		if (!source::parse_qemu_cmdline(text, command_line).ok())
			return 0;
		std::vector<RamRange> ranges;
		if (!source::x86_pc_ram_layout(command_line, ranges).ok())
			return 0;
		uint64_t total = 0, previous_end = 0;
		for (const RamRange &range : ranges) {
			if (range.gpa_end <= range.gpa_start || range.gpa_start < previous_end)
				__builtin_trap();
			total += range.gpa_end - range.gpa_start;
			previous_end = range.gpa_end;
		}
		if (total != command_line.ram_bytes)
			__builtin_trap();
		// The same RAM as pieces of RAM blocks (NUMA memdevs, pc-dimms): each inside its block,
		// no two overlapping.
		std::vector<source::RamBlockPiece> pieces;
		std::vector<std::pair<std::string, uint64_t>> blocks;
		if (!source::x86_pc_ram_blocks(command_line, pieces, blocks).ok())
			return 0;
		for (size_t i = 0; i < pieces.size(); i++) {
			const source::RamBlockPiece &piece = pieces[i];
			auto block = std::find_if(blocks.begin(), blocks.end(),
						  [&](const auto &b) { return b.first == piece.block; });
			if (piece.gpa_end <= piece.gpa_start || block == blocks.end() || piece.offset > block->second ||
			    piece.gpa_end - piece.gpa_start > block->second - piece.offset)
				__builtin_trap();
			for (size_t j = 0; j < i; j++)
				if (piece.gpa_start < pieces[j].gpa_end && pieces[j].gpa_start < piece.gpa_end)
					__builtin_trap();
		}
		break;
	}
	default: {
		std::vector<source::RamBlockInfo> blocks;
		(void)source::parse_ramblock_table(text, blocks);
		break;
	}
	}
	return 0;
}
