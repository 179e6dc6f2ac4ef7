// The PRM mailbox encoding (mlx5 firmware commands, as DevX passes them): a mailbox is a sequence of
// 32-bit big-endian words, and a field is named by its bit offset (0 is the top bit of the first
// word) and its width. A field of at most 32 bits never crosses a word; 64-bit fields are whole
// big-endian words at a multiple of 64 bits. These are the rules of rdma-core's DEVX_SET/DEVX_GET
// and the kernel's MLX5_SET/MLX5_GET (notes: devx-software-device.md §2).
//
// The field table below is softdpu's own: offsets and widths from the structure layouts of
// rdma-core 44's providers/mlx5/mlx5_ifc.h and Linux's include/linux/mlx5/mlx5_ifc.h (interface
// data; no upstream code is copied). Only the fields softdpu reads or writes are listed.
#pragma once

#include <endian.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace softdpu::mlx5::prm {

struct Field {
	uint32_t offset; // in bits from the start of the mailbox (or of the enclosing structure)
	uint32_t width;  // 1 to 32, or 64 for a whole big-endian 64-bit word

	// The same field inside a structure that starts `bits` into the mailbox.
	constexpr Field at(uint32_t bits) const noexcept { return {offset + bits, width}; }
	constexpr uint32_t end_byte() const noexcept { return (offset + width + 7) / 8; }
};

namespace detail {
constexpr bool fits_one_word(Field field) noexcept
{
	return field.width >= 1 && field.width <= 32 && (field.offset % 32) + field.width <= 32;
}
} // namespace detail

// Reads a field of at most 32 bits. The caller has checked that the mailbox holds it.
inline uint32_t get(const void *mailbox, Field field) noexcept
{
	uint32_t word = 0;
	std::memcpy(&word, static_cast<const uint8_t *>(mailbox) + size_t{field.offset / 32} * 4, sizeof(word));
	const uint32_t shift = 32 - field.width - (field.offset % 32);
	const uint64_t mask = (uint64_t{1} << field.width) - 1;
	return static_cast<uint32_t>((be32toh(word) >> shift) & mask);
}

// Writes a field of at most 32 bits (the value is masked to the width).
inline void set(void *mailbox, Field field, uint32_t value) noexcept
{
	uint8_t *at = static_cast<uint8_t *>(mailbox) + size_t{field.offset / 32} * 4;
	uint32_t word = 0;
	std::memcpy(&word, at, sizeof(word));
	const uint32_t shift = 32 - field.width - (field.offset % 32);
	const uint64_t mask = (uint64_t{1} << field.width) - 1;
	const uint64_t host = (be32toh(word) & ~(mask << shift)) | ((value & mask) << shift);
	word = htobe32(static_cast<uint32_t>(host));
	std::memcpy(at, &word, sizeof(word));
}

inline uint64_t get64(const void *mailbox, Field field) noexcept
{
	uint64_t word = 0;
	std::memcpy(&word, static_cast<const uint8_t *>(mailbox) + field.offset / 8, sizeof(word));
	return be64toh(word);
}

inline void set64(void *mailbox, Field field, uint64_t value) noexcept
{
	const uint64_t word = htobe64(value);
	std::memcpy(static_cast<uint8_t *>(mailbox) + field.offset / 8, &word, sizeof(word));
}

// ---- Command header (every inbox and outbox) ----

constexpr size_t kInboxHeaderBytes = 16;
constexpr size_t kOutboxHeaderBytes = 16;

namespace inbox {
constexpr Field opcode{0x00, 16};
constexpr Field uid{0x10, 16};
constexpr Field vhca_tunnel_id{0x20, 16};
constexpr Field op_mod{0x30, 16};
} // namespace inbox

namespace outbox {
constexpr Field status{0x00, 8};
constexpr Field syndrome{0x20, 32};
} // namespace outbox

// ---- Opcodes and statuses ----

enum Opcode : uint16_t {
	kQueryHcaCap = 0x100,
};

enum Status : uint8_t {
	kStatusOk = 0x00,
	kStatusBadOp = 0x02,
	kStatusBadParam = 0x03,
};

// ---- QUERY_HCA_CAP ----

namespace query_hca_cap_in {
constexpr size_t kBytes = 16;
constexpr Field other_function{0x40, 1};
constexpr Field function_id{0x50, 16};
} // namespace query_hca_cap_in

namespace query_hca_cap_out {
constexpr uint32_t kCapabilityBit = 0x80; // the 4096-byte capability union follows the header
constexpr size_t kCapabilityBytes = 4096;
constexpr size_t kBytes = kOutboxHeaderBytes + kCapabilityBytes;
} // namespace query_hca_cap_out

// op_mod = (capability type << 1) | mode; mode 0 asks for the maximum, 1 for the current values.
enum CapType : uint16_t {
	kCapGeneral = 0x0,
	kCapRoce = 0x4,
};

// General device capabilities (cmd_hca_cap), bit offsets within the capability.
namespace cmd_hca_cap {
constexpr Field vhca_id{0x30, 16};
constexpr Field log_max_srq_sz{0x80, 8};
constexpr Field log_max_qp_sz{0x88, 8};
constexpr Field log_max_qp{0x9b, 5};
constexpr Field log_max_srq{0xab, 5};
constexpr Field log_max_cq_sz{0xc8, 8};
constexpr Field log_max_cq{0xdb, 5};
constexpr Field log_max_mkey{0xea, 6};
constexpr Field log_max_ra_req_dc{0x12a, 6};
constexpr Field log_max_ra_res_dc{0x13a, 6};
constexpr Field log_max_ra_req_qp{0x14a, 6};
constexpr Field log_max_ra_res_qp{0x15a, 6};
constexpr Field gid_table_size{0x170, 16};
constexpr Field pkey_table_size{0x190, 16};
constexpr Field port_type{0x1b6, 2};
constexpr Field num_ports{0x1b8, 8};
constexpr Field log_max_msg{0x1c3, 5};
constexpr Field cqe_version{0x1fc, 4};
constexpr Field dct{0x21a, 1};
constexpr Field roce{0x21d, 1};
constexpr Field atomic{0x21e, 1};
constexpr Field xrc{0x23c, 1};
constexpr Field ud{0x23d, 1};
constexpr Field uc{0x23e, 1};
constexpr Field rc{0x23f, 1};
constexpr Field log_pg_sz{0x258, 8};
constexpr Field log_max_pd{0x32b, 5};
constexpr Field log_max_atomic_size_qp{0x580, 8};

constexpr uint32_t kPortTypeEthernet = 1;
} // namespace cmd_hca_cap

// RoCE capabilities (roce_cap), bit offsets within the capability.
namespace roce_cap {
constexpr Field l3_type{0x8c, 4};
constexpr Field roce_version{0x98, 8};
constexpr Field r_roce_dest_udp_port{0xb0, 16};
constexpr Field r_roce_max_src_udp_port{0xc0, 16};
constexpr Field r_roce_min_src_udp_port{0xd0, 16};
constexpr Field roce_address_table_size{0xf0, 16};

constexpr uint32_t kL3TypeIpv4 = 1u << 1; // MLX5_ROCE_L3_TYPE_IPV4_CAP
constexpr uint32_t kL3TypeIpv6 = 1u << 2; // MLX5_ROCE_L3_TYPE_IPV6_CAP
constexpr uint32_t kVersion1 = 1u << 0;   // MLX5_ROCE_VERSION_1_CAP
constexpr uint32_t kVersion2 = 1u << 2;   // MLX5_ROCE_VERSION_2_CAP
} // namespace roce_cap

static_assert(detail::fits_one_word(inbox::opcode) && detail::fits_one_word(inbox::op_mod));
static_assert(detail::fits_one_word(outbox::status) && detail::fits_one_word(outbox::syndrome));
static_assert(detail::fits_one_word(cmd_hca_cap::log_max_ra_req_dc) && detail::fits_one_word(cmd_hca_cap::log_max_msg));
static_assert(detail::fits_one_word(cmd_hca_cap::log_max_atomic_size_qp) && detail::fits_one_word(cmd_hca_cap::rc));
static_assert(detail::fits_one_word(roce_cap::roce_address_table_size) && detail::fits_one_word(roce_cap::l3_type));
static_assert(query_hca_cap_out::kBytes == 4112);

} // namespace softdpu::mlx5::prm
