#include "apsh/kernel/btf.hpp"

#include "common/bytes.hpp"

namespace softdpu::apsh::kernel {

namespace {

constexpr uint16_t btf_magic = 0xeb9f;
constexpr size_t header_size = 24;
constexpr size_t raw_type_size = 12;
constexpr uint32_t max_types = 4u << 20;
constexpr int max_anonymous_depth = 16;

using common::load_le;

uint32_t kind_of(uint32_t info)
{
	return (info >> 24) & 0x1f;
}
uint32_t vlen_of(uint32_t info)
{
	return info & 0xffff;
}
bool kind_flag_of(uint32_t info)
{
	return info >> 31;
}

// Bytes that follow the 12-byte common header for each kind; false for an unknown kind.
bool trailing_bytes(uint32_t info, uint64_t &bytes)
{
	uint64_t vlen = vlen_of(info);
	switch (kind_of(info)) {
	case Btf::kind_int:
	case Btf::kind_var:
	case Btf::kind_decl_tag:
		bytes = 4;
		return true;
	case Btf::kind_array:
		bytes = 12;
		return true;
	case Btf::kind_struct:
	case Btf::kind_union:
	case Btf::kind_datasec:
	case Btf::kind_enum64:
		bytes = 12 * vlen;
		return true;
	case Btf::kind_enum:
	case Btf::kind_func_proto:
		bytes = 8 * vlen;
		return true;
	case Btf::kind_ptr:
	case Btf::kind_fwd:
	case Btf::kind_typedef:
	case Btf::kind_volatile:
	case Btf::kind_const:
	case Btf::kind_restrict:
	case Btf::kind_func:
	case Btf::kind_float:
	case Btf::kind_type_tag:
		bytes = 0;
		return true;
	default:
		return false;
	}
}

Status bad(const std::string &what)
{
	return Status{DOCA_ERROR_INVALID_VALUE, "BTF is malformed: " + what};
}

} // namespace

Status Btf::parse(std::span<const uint8_t> blob, Btf &out)
{
	out = Btf{};
	if (blob.size() < header_size)
		return bad("shorter than its header");
	if (load_le<uint16_t>(blob.data()) != btf_magic)
		return bad("bad magic (not BTF, or big-endian)");
	if (blob[2] != 1)
		return bad("unsupported version " + std::to_string(blob[2]));
	uint32_t header_len = load_le<uint32_t>(blob.data() + 4);
	uint32_t type_off = load_le<uint32_t>(blob.data() + 8), type_len = load_le<uint32_t>(blob.data() + 12);
	uint32_t str_off = load_le<uint32_t>(blob.data() + 16), str_len = load_le<uint32_t>(blob.data() + 20);
	uint64_t size = blob.size();
	if (header_len < header_size || header_len > size)
		return bad("header length");
	uint64_t types_start = uint64_t{header_len} + type_off, strings_start = uint64_t{header_len} + str_off;
	if (types_start > size || type_len > size - types_start || strings_start > size ||
	    str_len > size - strings_start)
		return bad("sections lie outside the blob");
	if (str_len == 0 || blob[strings_start + str_len - 1] != 0)
		return bad("string section is not NUL-terminated");

	out.blob_.assign(blob.begin(), blob.end());
	out.types_start_ = types_start;
	out.types_end_ = types_start + type_len;
	out.strings_start_ = strings_start;
	out.strings_end_ = strings_start + str_len;

	uint64_t pos = out.types_start_;
	out.type_offsets_.reserve(type_len / 16);
	while (pos < out.types_end_) {
		if (out.types_end_ - pos < raw_type_size)
			return bad("type " + std::to_string(out.type_offsets_.size() + 1) + " is truncated");
		if (out.type_offsets_.size() >= max_types)
			return bad("too many types");
		uint32_t info = load_le<uint32_t>(out.blob_.data() + pos + 4);
		uint64_t extra;
		if (!trailing_bytes(info, extra))
			return bad("type " + std::to_string(out.type_offsets_.size() + 1) + " has unknown kind " +
				   std::to_string(kind_of(info)));
		if (extra > out.types_end_ - pos - raw_type_size)
			return bad("type " + std::to_string(out.type_offsets_.size() + 1) + " runs past the section");
		out.type_offsets_.push_back(static_cast<uint32_t>(pos));
		uint32_t kind = kind_of(info);
		if (kind == kind_struct || kind == kind_union) {
			std::string_view type_name = out.string_at(load_le<uint32_t>(out.blob_.data() + pos));
			if (!type_name.empty()) {
				uint32_t id = static_cast<uint32_t>(out.type_offsets_.size());
				auto [it, inserted] = out.structs_.try_emplace(type_name, id);
				// Keep the definition with members over an empty one.
				if (!inserted && vlen_of(load_le<uint32_t>(out.raw(it->second) + 4)) == 0 &&
				    vlen_of(info) > 0)
					it->second = id;
			}
		}
		pos += raw_type_size + extra;
	}
	return Status::success();
}

const uint8_t *Btf::raw(uint32_t type) const
{
	if (type == 0 || type > type_offsets_.size())
		return nullptr;
	return blob_.data() + type_offsets_[type - 1];
}

std::string_view Btf::string_at(uint32_t offset) const
{
	if (offset >= strings_end_ - strings_start_)
		return {};
	const char *text = reinterpret_cast<const char *>(blob_.data() + strings_start_ + offset);
	return std::string_view(text); // terminated: the section ends in NUL
}

std::string_view Btf::name(uint32_t type) const
{
	const uint8_t *t = raw(type);
	return t ? string_at(load_le<uint32_t>(t)) : std::string_view{};
}

Btf::Kind Btf::kind(uint32_t type) const
{
	const uint8_t *t = raw(type);
	return t ? static_cast<Kind>(kind_of(load_le<uint32_t>(t + 4))) : kind_unknown;
}

uint32_t Btf::resolve(uint32_t type) const
{
	for (int hops = 0; hops < 32; hops++) {
		const uint8_t *t = raw(type);
		if (!t)
			return 0;
		uint32_t kind = kind_of(load_le<uint32_t>(t + 4));
		if (kind != kind_typedef && kind != kind_const && kind != kind_volatile && kind != kind_restrict &&
		    kind != kind_type_tag)
			return type;
		type = load_le<uint32_t>(t + 8);
	}
	return 0; // a qualifier cycle: malformed
}

std::optional<std::pair<uint32_t, uint32_t>> Btf::array_info(uint32_t type) const
{
	type = resolve(type);
	if (kind(type) != kind_array)
		return std::nullopt;
	const uint8_t *array = raw(type) + raw_type_size;
	return std::pair{load_le<uint32_t>(array), load_le<uint32_t>(array + 8)};
}

std::optional<uint64_t> Btf::size_of(uint32_t type) const
{
	uint64_t multiplier = 1;
	for (int hops = 0; hops < 32; hops++) {
		type = resolve(type);
		const uint8_t *t = raw(type);
		if (!t)
			return std::nullopt;
		uint32_t info = load_le<uint32_t>(t + 4);
		switch (kind_of(info)) {
		case kind_int:
		case kind_struct:
		case kind_union:
		case kind_enum:
		case kind_enum64:
		case kind_float:
		case kind_datasec:
			return multiplier * load_le<uint32_t>(t + 8);
		case kind_ptr:
			return multiplier * 8;
		case kind_array: {
			auto info_pair = array_info(type);
			multiplier *= info_pair->second;
			if (multiplier > (1ull << 40))
				return std::nullopt;
			type = info_pair->first;
			continue;
		}
		default:
			return std::nullopt;
		}
	}
	return std::nullopt;
}

std::optional<uint32_t> Btf::find_struct(std::string_view struct_name) const
{
	auto it = structs_.find(struct_name);
	if (it == structs_.end())
		return std::nullopt;
	return it->second;
}

std::optional<uint64_t> Btf::struct_size(std::string_view struct_name) const
{
	auto id = find_struct(struct_name);
	return id ? size_of(*id) : std::nullopt;
}

std::optional<Btf::Member> Btf::find_member(uint32_t struct_id, std::string_view wanted, uint64_t base_bits,
					    int depth) const
{
	if (depth > max_anonymous_depth)
		return std::nullopt;
	struct_id = resolve(struct_id);
	const uint8_t *t = raw(struct_id);
	if (!t)
		return std::nullopt;
	uint32_t info = load_le<uint32_t>(t + 4);
	if (kind_of(info) != kind_struct && kind_of(info) != kind_union)
		return std::nullopt;
	const uint8_t *members = t + raw_type_size;
	uint32_t count = vlen_of(info);
	bool has_bitfield_sizes = kind_flag_of(info);
	// Named members first, so that an anonymous member never shadows a direct hit.
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *m = members + size_t{i} * 12;
		if (string_at(load_le<uint32_t>(m)) != wanted)
			continue;
		uint32_t offset = load_le<uint32_t>(m + 8);
		Member found;
		found.type = load_le<uint32_t>(m + 4);
		found.bit_offset = base_bits + (has_bitfield_sizes ? (offset & 0xffffff) : offset);
		found.bitfield_bits = has_bitfield_sizes ? offset >> 24 : 0;
		return found;
	}
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *m = members + size_t{i} * 12;
		if (load_le<uint32_t>(m) != 0 && !string_at(load_le<uint32_t>(m)).empty())
			continue;
		uint32_t offset = load_le<uint32_t>(m + 8);
		uint64_t bits = base_bits + (has_bitfield_sizes ? (offset & 0xffffff) : offset);
		if (auto found = find_member(load_le<uint32_t>(m + 4), wanted, bits, depth + 1))
			return found;
	}
	return std::nullopt;
}

std::optional<Btf::Member> Btf::member(uint32_t struct_id, std::string_view path) const
{
	Member current;
	current.type = struct_id;
	for (int parts = 0; parts < 8; parts++) {
		size_t dot = path.find('.');
		std::string_view part = path.substr(0, dot);
		auto found = find_member(current.type, part, current.bit_offset, 0);
		if (!found)
			return std::nullopt;
		current = *found;
		if (dot == std::string_view::npos)
			return current;
		path.remove_prefix(dot + 1);
	}
	return std::nullopt;
}

std::optional<Btf::Member> Btf::member(std::string_view struct_name, std::string_view path) const
{
	auto id = find_struct(struct_name);
	return id ? member(*id, path) : std::nullopt;
}

} // namespace softdpu::apsh::kernel
