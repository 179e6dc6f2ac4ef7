// Builders for the reader's unit tests: hand-made BTF blobs and physical memory with page tables.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace reader_test {

// Writes the binary BTF format: header, type section, string section.
class BtfBuilder {
public:
	struct MemberSpec {
		std::string name;
		uint32_t type;
		uint32_t bit_offset;
		uint32_t bitfield_bits = 0;
	};

	uint32_t add_int(const std::string &name, uint32_t bytes)
	{
		header(name, 1, 0, false, bytes);
		u32(bytes * 8);
		return next_id_++;
	}
	uint32_t add_ptr(uint32_t target)
	{
		header("", 2, 0, false, target);
		return next_id_++;
	}
	uint32_t add_array(uint32_t element, uint32_t index_type, uint32_t count)
	{
		header("", 3, 0, false, 0);
		u32(element);
		u32(index_type);
		u32(count);
		return next_id_++;
	}
	uint32_t add_typedef(const std::string &name, uint32_t target)
	{
		header(name, 8, 0, false, target);
		return next_id_++;
	}
	uint32_t add_const(uint32_t target)
	{
		header("", 10, 0, false, target);
		return next_id_++;
	}
	uint32_t add_struct(const std::string &name, uint32_t bytes, const std::vector<MemberSpec> &members,
			    bool is_union = false)
	{
		bool bitfields = false;
		for (const auto &member : members)
			bitfields = bitfields || member.bitfield_bits != 0;
		header(name, is_union ? 5 : 4, static_cast<uint32_t>(members.size()), bitfields, bytes);
		for (const auto &member : members) {
			u32(str(member.name));
			u32(member.type);
			u32(bitfields ? (member.bitfield_bits << 24) | member.bit_offset : member.bit_offset);
		}
		return next_id_++;
	}
	// A type id that will be assigned to the next added type (for forward references).
	uint32_t next_id() const { return next_id_; }

	std::vector<uint8_t> blob() const
	{
		std::vector<uint8_t> out(24);
		auto put32 = [&](size_t at, uint32_t value) { std::memcpy(out.data() + at, &value, 4); };
		out[0] = 0x9f;
		out[1] = 0xeb;
		out[2] = 1;
		put32(4, 24);
		put32(8, 0);
		put32(12, static_cast<uint32_t>(types_.size()));
		put32(16, static_cast<uint32_t>(types_.size()));
		put32(20, static_cast<uint32_t>(strings_.size()));
		out.insert(out.end(), types_.begin(), types_.end());
		out.insert(out.end(), strings_.begin(), strings_.end());
		return out;
	}

private:
	uint32_t str(const std::string &text)
	{
		if (text.empty())
			return 0;
		uint32_t at = static_cast<uint32_t>(strings_.size());
		strings_.insert(strings_.end(), text.begin(), text.end());
		strings_.push_back(0);
		return at;
	}
	void u32(uint32_t value)
	{
		uint8_t bytes[4];
		std::memcpy(bytes, &value, 4);
		types_.insert(types_.end(), bytes, bytes + 4);
	}
	void header(const std::string &name, uint32_t kind, uint32_t vlen, bool kind_flag, uint32_t size_or_type)
	{
		u32(str(name));
		u32((kind_flag ? 1u << 31 : 0) | (kind << 24) | vlen);
		u32(size_or_type);
	}

	std::vector<uint8_t> types_;
	std::vector<uint8_t> strings_ = {0};
	uint32_t next_id_ = 1;
};

// Guest-physical memory in a buffer with a page-table builder (4 or 5 levels).
class PagedMemory {
public:
	static constexpr uint64_t present_writable = 0x3, large = 0x80;

	PagedMemory(size_t bytes, int levels) : bytes_(bytes, 0), levels_(levels) { top_ = allocate_table(); }

	std::vector<uint8_t> &bytes() { return bytes_; }
	uint64_t top() const { return top_; }
	// A zeroed, page-aligned physical page from the top of the buffer downwards.
	uint64_t allocate_table()
	{
		next_free_ -= 4096;
		return next_free_;
	}
	// Maps va → pa with a page of 4 KiB (level 1), 2 MiB (level 2) or 1 GiB (level 3).
	void map(uint64_t va, uint64_t pa, int leaf_level = 1)
	{
		uint64_t table = top_;
		for (int level = levels_; level > leaf_level; level--) {
			uint64_t slot = table + index(va, level) * 8;
			uint64_t entry = load(slot);
			if (!(entry & 1)) {
				entry = allocate_table() | present_writable;
				store(slot, entry);
			}
			table = entry & 0x000ffffffffff000ull;
		}
		store(table + index(va, leaf_level) * 8, pa | present_writable | (leaf_level > 1 ? large : 0));
	}
	uint64_t load(uint64_t pa) const
	{
		uint64_t value;
		std::memcpy(&value, bytes_.data() + pa, 8);
		return value;
	}
	void store(uint64_t pa, uint64_t value) { std::memcpy(bytes_.data() + pa, &value, 8); }

private:
	static uint64_t index(uint64_t va, int level) { return (va >> (12 + 9 * (level - 1))) & 0x1ff; }

	std::vector<uint8_t> bytes_;
	int levels_;
	uint64_t next_free_ = bytes_.size();
	uint64_t top_ = 0;
};

} // namespace reader_test
