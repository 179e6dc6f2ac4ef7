// Fuzz target: what a QMP socket sends, as the QEMU process source parses it. The first byte picks
// the parser for the rest: one QMP message line (greeting, return, error, event), query-status's
// return value, query-memdev's return value, HMP `xp` words, or `info mtree -f` text with the memory backends
// named on its first line (space-separated). Accepted pieces are non-empty, name a wanted block,
// and never overlap one another.
#include "apsh/source/qmp.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace softdpu::apsh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
	switch (data[0] % 5) {
	case 0: {
		source::QmpMessage message;
		if (source::parse_qmp_message(text, message).ok() &&
		    message.kind == source::QmpMessage::Kind::failure && message.error_text.empty())
			__builtin_trap();
		break;
	}
	case 1: {
		bool running = false;
		(void)source::parse_qmp_run_state(text, running);
		break;
	}
	case 2: {
		std::vector<std::string> ids;
		(void)source::parse_qmp_memdev_ids(text, ids);
		break;
	}
	case 4: {
		std::vector<uint8_t> bytes;
		if (source::parse_hmp_xp_words(text, bytes).ok() && bytes.size() % 8 != 0)
			__builtin_trap();
		break;
	}
	default: {
		const size_t newline = text.find('\n');
		const std::string_view names = text.substr(0, newline);
		const std::string_view mtree =
		    newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
		std::vector<std::string> backends;
		for (size_t start = 0; start < names.size();) {
			const size_t end = std::min(names.find(' ', start), names.size());
			if (end > start)
				backends.emplace_back(names.substr(start, end - start));
			start = end + 1;
		}
		std::vector<source::RamBlockPiece> pieces;
		std::string main;
		if (!source::parse_mtree_ram_pieces(mtree, backends, pieces, &main).ok())
			return 0;
		for (const source::RamBlockPiece &piece : pieces) {
			if (piece.gpa_end <= piece.gpa_start)
				__builtin_trap();
			if (piece.block != main &&
			    std::find(backends.begin(), backends.end(), piece.block) == backends.end())
				__builtin_trap();
		}
		std::vector<std::pair<uint64_t, uint64_t>> spans;
		spans.reserve(pieces.size());
		for (const source::RamBlockPiece &piece : pieces)
			spans.emplace_back(piece.gpa_start, piece.gpa_end);
		std::sort(spans.begin(), spans.end());
		for (size_t i = 1; i < spans.size(); i++)
			if (spans[i].first < spans[i - 1].second)
				__builtin_trap();
		break;
	}
	}
	return 0;
}
