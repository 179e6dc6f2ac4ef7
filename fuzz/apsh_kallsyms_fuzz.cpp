// Fuzz target: the kallsyms decoder over arbitrary tables. Input: u32 symbol count, then 512
// bytes of token index, a u16 token-table length and the token table, the rest split evenly
// between names and offsets.
#include "apsh/kernel/kallsyms.hpp"

#include <cstdint>
#include <cstring>

using softdpu::apsh::kernel::Kallsyms;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4 + 512 + 2)
		return 0;
	uint32_t count;
	std::memcpy(&count, data, 4);
	count %= 4096;
	std::span<const uint8_t> token_index(data + 4, 512);
	uint16_t token_bytes;
	std::memcpy(&token_bytes, data + 516, 2);
	size_t rest = size - 518;
	token_bytes = static_cast<uint16_t>(std::min<size_t>(token_bytes, rest));
	std::span<const uint8_t> token_table(data + 518, token_bytes);
	std::span<const uint8_t> remaining(data + 518 + token_bytes, rest - token_bytes);
	auto names = remaining.subspan(0, remaining.size() / 2);
	auto offsets = remaining.subspan(remaining.size() / 2);
	Kallsyms symbols;
	auto status =
	    Kallsyms::decode_tables(names, token_table, token_index, offsets, 0xffffffff81000000ull, count, symbols);
	if (status.ok() && symbols.size() > count)
		__builtin_trap();
	(void)symbols.find("init_task");
	return 0;
}
