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
	kCreateMkey = 0x200,
	kQueryMkey = 0x201,
	kDestroyMkey = 0x202,
	kCreateCq = 0x400,
	kDestroyCq = 0x401,
	kQueryCq = 0x402,
	kModifyCq = 0x403,
	kCreateQp = 0x500,
	kDestroyQp = 0x501,
	kRst2InitQp = 0x502,
	kInit2RtrQp = 0x503,
	kRtr2RtsQp = 0x504,
	kRts2RtsQp = 0x505,
	kSqerr2RtsQp = 0x506,
	k2ErrQp = 0x507,
	k2RstQp = 0x50a,
	kQueryQp = 0x50b,
	kInit2InitQp = 0x50e,
	kQueryNicVportContext = 0x754,
	kQueryHcaVportContext = 0x762,
	kQueryHcaVportGid = 0x764,
	kAllocPd = 0x800,
	kDeallocPd = 0x801,
	kAllocUar = 0x802,
	kDeallocUar = 0x803,
	kAllocTransportDomain = 0x816,
	kDeallocTransportDomain = 0x817,
};

enum Status : uint8_t {
	kStatusOk = 0x00,
	kStatusBadOp = 0x02,
	kStatusBadParam = 0x03,
	kStatusBadRes = 0x05,
	kStatusResBusy = 0x06,
	kStatusLimits = 0x08,
	kStatusNoResources = 0x0f,
	kStatusBadQpState = 0x10,
};

// The id a create command returns and a destroy, query or modify names (alloc_pd_out.pd,
// create_mkey_out.mkey_index, create_cq_out.cqn, create_qp_out.qpn, dealloc_pd_in.pd, ...): 24 bits
// at 0x48 of the outbox or inbox.
constexpr Field object_id{0x48, 24};

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

// ---- Memory keys (create_mkey_in, query_mkey_out; mkc) ----

namespace create_mkey_in {
constexpr size_t kBytes = 272;
constexpr Field mkey_umem_valid{0x61, 1};
constexpr uint32_t kMkc = 0x80;
constexpr Field mkey_umem_id{0x320, 32};
constexpr Field mkey_umem_offset{0x340, 64};
} // namespace create_mkey_in

namespace query_mkey_out {
constexpr uint32_t kMkc = 0x80;
constexpr size_t kBytes = 304; // header, mkc, reserved, bsf0_klm0_pas_mtt0_1, bsf1_klm1_pas_mtt2_3
} // namespace query_mkey_out

// Within the mkc (64 bytes).
namespace mkc {
constexpr Field access_mode_4_2{0x03, 3};
constexpr Field umr_en{0x10, 1};
constexpr Field a{0x11, 1};
constexpr Field rw{0x12, 1};
constexpr Field rr{0x13, 1};
constexpr Field lw{0x14, 1};
constexpr Field lr{0x15, 1};
constexpr Field access_mode_1_0{0x16, 2};
constexpr Field qpn{0x20, 24};
constexpr Field mkey_7_0{0x38, 8};
constexpr Field length64{0x60, 1};
constexpr Field pd{0x68, 24};
constexpr Field start_addr{0x80, 64};
constexpr Field len{0xc0, 64};
constexpr Field translations_octword_size{0x1a0, 32};
constexpr Field log_page_size{0x1db, 5};
constexpr uint32_t kAccessModeMtt = 1;
} // namespace mkc

// ---- Completion queues (create_cq_in, query_cq_out, modify_cq_in; cqc) ----

namespace create_cq_in {
constexpr size_t kBytes = 272;
constexpr uint32_t kCqc = 0x80;
constexpr Field cq_umem_offset{0x280, 64};
constexpr Field cq_umem_id{0x2c0, 32};
constexpr Field cq_umem_valid{0x2e0, 1};
} // namespace create_cq_in

namespace query_cq_out {
constexpr uint32_t kCqc = 0x80;
constexpr size_t kBytes = 272;
} // namespace query_cq_out

namespace modify_cq_in {
constexpr size_t kBytes = 80; // through the cqc (what MODIFY_CQ reads)
constexpr Field field_select{0x60, 32};
constexpr uint32_t kCqc = 0x80;
constexpr uint32_t kSelectPeriod = 1u << 0; // MLX5_CQ_MODIFY_PERIOD
constexpr uint32_t kSelectCount = 1u << 1;  // MLX5_CQ_MODIFY_COUNT
} // namespace modify_cq_in

// Within the cqc (64 bytes).
namespace cqc {
constexpr Field status{0x00, 4};
constexpr Field dbr_umem_valid{0x06, 1};
constexpr Field cqe_sz{0x08, 3};
constexpr Field cqe_comp_en{0x11, 1};
constexpr Field dbr_umem_id{0x20, 32};
constexpr Field log_cq_size{0x63, 5};
constexpr Field uar_page{0x68, 24};
constexpr Field cq_period{0x84, 12};
constexpr Field cq_max_count{0x90, 16};
constexpr Field c_eqn{0xb8, 8};
constexpr Field log_page_size{0xc3, 5};
constexpr Field consumer_counter{0x148, 24};
constexpr Field producer_counter{0x168, 24};
constexpr Field dbr_addr{0x1c0, 64};
constexpr uint32_t kCqeSize64 = 0;
} // namespace cqc

// ---- Queue pairs (create_qp_in, the transitions, query_qp_out; qpc, ads) ----

namespace create_qp_in {
constexpr size_t kBytes = 272;
constexpr Field opt_param_mask{0x80, 32};
constexpr uint32_t kQpc = 0xc0;
constexpr Field wq_umem_offset{0x800, 64};
constexpr Field wq_umem_id{0x840, 32};
constexpr Field wq_umem_valid{0x860, 1};
} // namespace create_qp_in

// rst2init_qp_in, init2rtr_qp_in, rtr2rts_qp_in, rts2rts_qp_in (272 bytes: qpn, opt_param_mask,
// qpc); qp_2err_in and qp_2rst_in are the 16-byte header with the qpn.
namespace modify_qp_in {
constexpr size_t kBytes = 272;
constexpr size_t kShortBytes = 16;
constexpr Field opt_param_mask{0x80, 32};
constexpr uint32_t kQpc = 0xc0;
} // namespace modify_qp_in

// The bits of opt_param_mask (Linux's enum mlx5_qp_optpar).
namespace optpar {
constexpr uint32_t kAltAddrPath = 1u << 0;
constexpr uint32_t kRre = 1u << 1;
constexpr uint32_t kRae = 1u << 2;
constexpr uint32_t kRwe = 1u << 3;
constexpr uint32_t kPkeyIndex = 1u << 4;
constexpr uint32_t kRnrTimeout = 1u << 6;
constexpr uint32_t kPmState = 1u << 10;
constexpr uint32_t kPriPort = 1u << 16;
} // namespace optpar

namespace query_qp_out {
constexpr Field opt_param_mask{0x80, 32};
constexpr uint32_t kQpc = 0xc0;
constexpr size_t kBytes = 272;
} // namespace query_qp_out

// Within the qpc (232 bytes).
namespace qpc {
constexpr Field state{0x00, 4};
constexpr Field st{0x08, 8};
constexpr Field pm_state{0x13, 2};
constexpr Field pd{0x28, 24};
constexpr Field mtu{0x40, 3};
constexpr Field log_msg_max{0x43, 5};
constexpr Field log_rq_size{0x49, 4};
constexpr Field log_rq_stride{0x4d, 3};
constexpr Field no_sq{0x50, 1};
constexpr Field log_sq_size{0x51, 4};
constexpr Field uar_page{0x68, 24};
constexpr Field user_index{0x88, 24};
constexpr Field remote_qpn{0xa8, 24};
constexpr uint32_t kPrimaryAddressPath = 0xc0;
constexpr Field log_sra_max{0x388, 3};
constexpr Field retry_count{0x38d, 3};
constexpr Field rnr_retry{0x390, 3};
constexpr Field next_send_psn{0x3c8, 24};
constexpr Field cqn_snd{0x3e8, 24};
constexpr Field log_rra_max{0x488, 3};
constexpr Field rre{0x490, 1};
constexpr Field rwe{0x491, 1};
constexpr Field rae{0x492, 1};
constexpr Field min_rnr_nak{0x4a3, 5};
constexpr Field next_rcv_psn{0x4a8, 24};
constexpr Field cqn_rcv{0x4e8, 24};
constexpr Field dbr_addr{0x500, 64};
constexpr Field q_key{0x540, 32};
constexpr Field rq_type{0x565, 3};
constexpr Field srqn_rmpn_xrqn{0x568, 24};
constexpr Field dbr_umem_valid{0x683, 1};
constexpr Field dbr_umem_id{0x720, 32};

// state
constexpr uint32_t kPmMigrated = 0x3; // pm_state: MLX5_QP_PM_MIGRATED
constexpr uint32_t kStateRst = 0x0;
constexpr uint32_t kStateInit = 0x1;
constexpr uint32_t kStateRtr = 0x2;
constexpr uint32_t kStateRts = 0x3;
constexpr uint32_t kStateSqer = 0x4;
constexpr uint32_t kStateSqd = 0x5;
constexpr uint32_t kStateErr = 0x6;
// st
constexpr uint32_t kServiceRc = 0x0;
// rq_type
constexpr uint32_t kRqRegular = 0x0;
constexpr uint32_t kRqSrq = 0x1;
constexpr uint32_t kRqZeroSize = 0x3;
} // namespace qpc

// The address path (ads, 44 bytes), within it.
namespace ads {
constexpr Field pkey_index{0x10, 16};
constexpr Field grh{0x28, 1};
constexpr Field rlid{0x30, 16};
constexpr Field ack_timeout{0x40, 5};
constexpr Field src_addr_index{0x48, 8};
constexpr Field hop_limit{0x58, 8};
constexpr Field tclass{0x64, 8};
constexpr Field flow_label{0x6c, 20};
constexpr uint32_t kRgidRip = 0x80; // 16 bytes
constexpr Field sl{0x124, 4};
constexpr Field vhca_port_num{0x128, 8};
} // namespace ads

// ---- Vport queries ----

namespace query_nic_vport_context_in {
constexpr size_t kBytes = 16;
constexpr Field other_vport{0x40, 1};
} // namespace query_nic_vport_context_in

namespace query_nic_vport_context_out {
constexpr uint32_t kContext = 0x80;
constexpr size_t kBytes = 16 + 256;
} // namespace query_nic_vport_context_out

// Within nic_vport_context.
namespace nic_vport_context {
constexpr Field roce_en{0x1f, 1};
constexpr Field mtu{0x130, 16};
constexpr Field system_image_guid{0x140, 64};
constexpr Field port_guid{0x180, 64};
constexpr Field node_guid{0x1c0, 64};
constexpr uint32_t kPermanentAddress = 0x7a0; // mac_address_layout: 16 reserved bits, then 48
constexpr Field mac_47_32{0x7b0, 16};
constexpr Field mac_31_0{0x7c0, 32};
} // namespace nic_vport_context

namespace query_hca_vport_context_in {
constexpr size_t kBytes = 16;
constexpr Field other_vport{0x40, 1};
constexpr Field port_num{0x4c, 4};
} // namespace query_hca_vport_context_in

namespace query_hca_vport_context_out {
constexpr uint32_t kContext = 0x80;
constexpr size_t kBytes = 16 + 512;
} // namespace query_hca_vport_context_out

// Within hca_vport_context.
namespace hca_vport_context {
constexpr Field port_physical_state{0x110, 4};
constexpr Field port_state{0x118, 4};
constexpr Field vport_state{0x11c, 4};
constexpr Field system_image_guid{0x140, 64};
constexpr Field port_guid{0x180, 64};
constexpr Field node_guid{0x1c0, 64};
constexpr Field lid{0x300, 16};
} // namespace hca_vport_context

namespace query_hca_vport_gid_in {
constexpr size_t kBytes = 16;
constexpr Field other_vport{0x40, 1};
constexpr Field port_num{0x4c, 4};
constexpr Field gid_index{0x70, 16};
constexpr uint32_t kAllGids = 0xffff;
} // namespace query_hca_vport_gid_in

namespace query_hca_vport_gid_out {
constexpr Field gids_num{0x60, 16};
constexpr uint32_t kGids = 0x80; // 16 bytes each
} // namespace query_hca_vport_gid_out

static_assert(detail::fits_one_word(inbox::opcode) && detail::fits_one_word(inbox::op_mod));
static_assert(detail::fits_one_word(outbox::status) && detail::fits_one_word(outbox::syndrome));
static_assert(detail::fits_one_word(cmd_hca_cap::log_max_ra_req_dc) && detail::fits_one_word(cmd_hca_cap::log_max_msg));
static_assert(detail::fits_one_word(cmd_hca_cap::log_max_atomic_size_qp) && detail::fits_one_word(cmd_hca_cap::rc));
static_assert(detail::fits_one_word(roce_cap::roce_address_table_size) && detail::fits_one_word(roce_cap::l3_type));
static_assert(query_hca_cap_out::kBytes == 4112);
static_assert(detail::fits_one_word(object_id));
// Structure sizes: each structure's last field ends inside it.
static_assert(mkc::log_page_size.end_byte() <= 64 && cqc::dbr_addr.end_byte() == 64);
static_assert(qpc::dbr_umem_id.end_byte() <= 232 && ads::vhca_port_num.end_byte() <= 44);
static_assert(create_mkey_in::mkey_umem_offset.end_byte() <= create_mkey_in::kBytes);
static_assert(create_mkey_in::kMkc / 8 + 64 <= create_mkey_in::kBytes &&
	      query_mkey_out::kMkc / 8 + 64 <= query_mkey_out::kBytes);
static_assert(create_cq_in::cq_umem_valid.end_byte() <= create_cq_in::kBytes && create_cq_in::kCqc / 8 + 64 == 80);
static_assert(create_qp_in::wq_umem_valid.end_byte() <= create_qp_in::kBytes && create_qp_in::kQpc / 8 + 232 <= 256);
static_assert(query_qp_out::kQpc / 8 + 232 <= query_qp_out::kBytes);
static_assert(nic_vport_context::mac_31_0.end_byte() <= 256 && hca_vport_context::lid.end_byte() <= 512);
static_assert(detail::fits_one_word(qpc::next_send_psn) && detail::fits_one_word(qpc::cqn_rcv) &&
	      detail::fits_one_word(qpc::rq_type) && detail::fits_one_word(ads::flow_label) &&
	      detail::fits_one_word(ads::vhca_port_num) && detail::fits_one_word(cqc::c_eqn) &&
	      detail::fits_one_word(mkc::mkey_7_0) && detail::fits_one_word(nic_vport_context::mac_47_32));

} // namespace softdpu::mlx5::prm
