// A reader for the kernel's binary BTF (/sys/kernel/btf/vmlinux; in RAM from __start_BTF to
// __stop_BTF). It answers what the walkers need: struct sizes and member offsets, resolved
// through anonymous struct/union members, with bitfield positions and member types.
#pragma once

#include "apsh/introspection.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh::kernel {

class Btf {
public:
	enum Kind : uint8_t {
		kind_unknown = 0,
		kind_int = 1,
		kind_ptr = 2,
		kind_array = 3,
		kind_struct = 4,
		kind_union = 5,
		kind_enum = 6,
		kind_fwd = 7,
		kind_typedef = 8,
		kind_volatile = 9,
		kind_const = 10,
		kind_restrict = 11,
		kind_func = 12,
		kind_func_proto = 13,
		kind_var = 14,
		kind_datasec = 15,
		kind_float = 16,
		kind_decl_tag = 17,
		kind_type_tag = 18,
		kind_enum64 = 19,
	};

	struct Member {
		uint64_t bit_offset = 0;    // from the start of the outermost struct
		uint32_t bitfield_bits = 0; // 0: not a bitfield
		uint32_t type = 0;          // the member's type id (unresolved)
		uint64_t offset() const { return bit_offset / 8; }
	};

	Btf() = default;
	Btf(Btf &&) = default;
	Btf &operator=(Btf &&) = default;
	Btf(const Btf &) = delete; // the name index points into the blob
	Btf &operator=(const Btf &) = delete;

	// Copies and indexes the blob. Fails on a bad header or a type section that does not parse.
	static Status parse(std::span<const uint8_t> blob, Btf &out);

	// A named struct (or union), preferring a complete definition.
	std::optional<uint32_t> find_struct(std::string_view name) const;
	// Member by name, searching anonymous members recursively. Dotted paths ("mm_mt.ma_root")
	// descend into named members.
	std::optional<Member> member(uint32_t struct_id, std::string_view path) const;
	std::optional<Member> member(std::string_view struct_name, std::string_view path) const;
	// Size in bytes, through typedefs and qualifiers; arrays multiply out.
	std::optional<uint64_t> size_of(uint32_t type) const;
	std::optional<uint64_t> struct_size(std::string_view name) const;
	// Skips typedef/const/volatile/restrict/type_tag.
	uint32_t resolve(uint32_t type) const;
	Kind kind(uint32_t type) const;
	// For an array type: element type and count.
	std::optional<std::pair<uint32_t, uint32_t>> array_info(uint32_t type) const;
	std::string_view name(uint32_t type) const;
	size_t type_count() const { return type_offsets_.size(); }

private:
	// The 12-byte type header (name offset, info, size or type), or null for a bad id.
	const uint8_t *raw(uint32_t type) const;
	std::string_view string_at(uint32_t offset) const;
	std::optional<Member> find_member(uint32_t struct_id, std::string_view name, uint64_t base_bits,
					  int depth) const;

	std::vector<uint8_t> blob_;
	size_t types_start_ = 0, types_end_ = 0, strings_start_ = 0, strings_end_ = 0;
	std::vector<uint32_t> type_offsets_; // id 1 at index 0; byte offsets into blob_
	std::unordered_map<std::string_view, uint32_t> structs_;
};

} // namespace softdpu::apsh::kernel
