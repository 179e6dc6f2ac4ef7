// mlx5dv_devx_general_cmd: QUERY_HCA_CAP (general and RoCE capabilities) answered exactly to the
// PRM mailbox layout and consistent with verbs; the return conventions for failed commands
// (EREMOTEIO with status and syndrome) and for mailboxes the driver refuses (EINVAL).
#include "mlx5_fixture.hpp"

#include <array>
#include <cerrno>
#include <cstring>

using mlx5_test::log2_floor;
using mlx5_test::Mlx5Test;
using mlx5_test::prm_bits;
using mlx5_test::prm_set_bits;

namespace {

constexpr uint16_t kQueryHcaCap = 0x100;
constexpr size_t kOutBytes = 16 + 4096;
constexpr size_t kCap = 0x80; // the capability's bit offset in the outbox

// Bit offsets (within the capability) and widths, from the PRM's cmd_hca_cap and roce_cap.
struct F {
	size_t offset;
	size_t width;
};
constexpr F kVhcaId{0x30, 16}, kLogMaxSrqSz{0x80, 8}, kLogMaxQpSz{0x88, 8}, kLogMaxQp{0x9b, 5}, kLogMaxSrq{0xab, 5},
    kLogMaxCqSz{0xc8, 8}, kLogMaxCq{0xdb, 5}, kLogMaxMkey{0xea, 6}, kLogMaxRaReqDc{0x12a, 6}, kLogMaxRaReqQp{0x14a, 6},
    kLogMaxRaResQp{0x15a, 6}, kGidTableSize{0x170, 16}, kPkeyTableSize{0x190, 16}, kPortType{0x1b6, 2},
    kNumPorts{0x1b8, 8}, kLogMaxMsg{0x1c3, 5}, kCqeVersion{0x1fc, 4}, kDct{0x21a, 1}, kRoce{0x21d, 1},
    kAtomic{0x21e, 1}, kXrc{0x23c, 1}, kUd{0x23d, 1}, kUc{0x23e, 1}, kRc{0x23f, 1}, kLogPgSz{0x258, 8},
    kLogMaxPd{0x32b, 5};
constexpr F kL3Type{0x8c, 4}, kRoceVersion{0x98, 8}, kRoceDestUdpPort{0xb0, 16}, kRoceAddressTableSize{0xf0, 16};

uint64_t cap(const std::array<uint8_t, kOutBytes> &out, F field)
{
	return prm_bits(out.data(), kCap + field.offset, field.width);
}

std::array<uint8_t, 16> query_hca_cap_in(uint16_t op_mod)
{
	std::array<uint8_t, 16> in{};
	prm_set_bits(in.data(), 0x00, 16, kQueryHcaCap);
	prm_set_bits(in.data(), 0x30, 16, op_mod);
	return in;
}

uint8_t status_of(const void *out)
{
	return static_cast<uint8_t>(prm_bits(out, 0x00, 8));
}

uint32_t syndrome_of(const void *out)
{
	return static_cast<uint32_t>(prm_bits(out, 0x20, 32));
}

class DevxGeneralCmdTest : public Mlx5Test {
protected:
	int query(uint16_t op_mod, std::array<uint8_t, kOutBytes> *out, ibv_context *context = nullptr)
	{
		const auto in = query_hca_cap_in(op_mod);
		std::memset(out->data(), 0xee, out->size());
		return mlx5dv_devx_general_cmd(context != nullptr ? context : context_, in.data(), in.size(),
					       out->data(), out->size());
	}
};

TEST_F(DevxGeneralCmdTest, GeneralCapsAgreeWithVerbs)
{
	ibv_device_attr_ex device{};
	ASSERT_EQ(ibv_query_device_ex(context_, nullptr, &device), 0);
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(context_, 1, &port), 0);
	const ibv_device_attr &d = device.orig_attr;

	std::array<uint8_t, kOutBytes> out{};
	ASSERT_EQ(query(0x1 /* general, current */, &out), 0);
	EXPECT_EQ(status_of(out.data()), 0);
	EXPECT_EQ(syndrome_of(out.data()), 0u);
	EXPECT_EQ(cap(out, kVhcaId), static_cast<uint64_t>(ibv_get_device_index(devices_[0])));
	EXPECT_EQ(cap(out, kLogMaxQp), log2_floor(static_cast<uint64_t>(d.max_qp)));
	EXPECT_EQ(cap(out, kLogMaxQpSz), log2_floor(static_cast<uint64_t>(d.max_qp_wr)));
	EXPECT_EQ(cap(out, kLogMaxSrq), log2_floor(static_cast<uint64_t>(d.max_srq)));
	EXPECT_EQ(cap(out, kLogMaxSrqSz), log2_floor(static_cast<uint64_t>(d.max_srq_wr)));
	EXPECT_EQ(cap(out, kLogMaxCq), log2_floor(static_cast<uint64_t>(d.max_cq)));
	// max_cqe is 2^log_max_cq_sz - 1.
	EXPECT_EQ((uint64_t{1} << cap(out, kLogMaxCqSz)) - 1, static_cast<uint64_t>(d.max_cqe));
	EXPECT_EQ(cap(out, kLogMaxMkey), log2_floor(static_cast<uint64_t>(d.max_mr)));
	EXPECT_EQ(cap(out, kLogMaxPd), log2_floor(static_cast<uint64_t>(d.max_pd)));
	EXPECT_EQ(uint64_t{1} << cap(out, kLogMaxRaReqQp), static_cast<uint64_t>(d.max_qp_init_rd_atom));
	EXPECT_EQ(uint64_t{1} << cap(out, kLogMaxRaResQp), static_cast<uint64_t>(d.max_qp_rd_atom));
	EXPECT_EQ(cap(out, kLogMaxMsg), log2_floor(port.max_msg_sz));
	EXPECT_EQ(cap(out, kGidTableSize), static_cast<uint64_t>(port.gid_tbl_len));
	EXPECT_EQ(cap(out, kPkeyTableSize), port.pkey_tbl_len);
	EXPECT_EQ(cap(out, kNumPorts), d.phys_port_cnt);
	ASSERT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
	EXPECT_EQ(cap(out, kPortType), 1u); // Ethernet
	EXPECT_EQ(cap(out, kRoce), 1u);
	EXPECT_EQ(cap(out, kAtomic), d.atomic_cap != IBV_ATOMIC_NONE ? 1u : 0u);
	EXPECT_EQ(cap(out, kCqeVersion), 1u);
	EXPECT_EQ(cap(out, kRc), 1u);
	EXPECT_EQ(cap(out, kUd), 1u);
	EXPECT_EQ(cap(out, kUc), 0u);
	EXPECT_EQ(cap(out, kXrc), 0u);
	EXPECT_EQ(cap(out, kDct), 0u);
	EXPECT_EQ(cap(out, kLogMaxRaReqDc), 0u);
	EXPECT_EQ(cap(out, kLogPgSz), 12u);
	// Nothing past rdma-core's 256-byte cmd_hca_cap: the rest of the union is zero.
	for (size_t i = 16 + 256; i < out.size(); ++i)
		ASSERT_EQ(out[i], 0) << "byte " << i;
}

TEST_F(DevxGeneralCmdTest, MaximumAndCurrentAreTheSame)
{
	std::array<uint8_t, kOutBytes> current{};
	std::array<uint8_t, kOutBytes> maximum{};
	ASSERT_EQ(query(0x1, &current), 0);
	ASSERT_EQ(query(0x0, &maximum), 0);
	EXPECT_EQ(current, maximum);
}

TEST_F(DevxGeneralCmdTest, EachDeviceReportsItsOwnVhcaId)
{
	for (ibv_device *device : devices_) {
		ibv_context *context = ibv_open_device(device);
		ASSERT_NE(context, nullptr);
		std::array<uint8_t, kOutBytes> out{};
		EXPECT_EQ(query(0x1, &out, context), 0);
		EXPECT_EQ(cap(out, kVhcaId), static_cast<uint64_t>(ibv_get_device_index(device)));
		EXPECT_EQ(ibv_close_device(context), 0);
	}
}

TEST_F(DevxGeneralCmdTest, PerftestsShortOutboxGetsTheFirstBytes)
{
	// perftest sizes its outbox by its own 256-byte cmd_hca_cap: 272 bytes, not 4112.
	std::array<uint8_t, kOutBytes> full{};
	ASSERT_EQ(query(0x1, &full), 0);
	const auto in = query_hca_cap_in(0x1);
	std::array<uint8_t, 16 + 256> shortened{};
	ASSERT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), in.size(), shortened.data(), shortened.size()), 0);
	EXPECT_EQ(std::memcmp(shortened.data(), full.data(), shortened.size()), 0);
	EXPECT_EQ(prm_bits(shortened.data(), kCap + kLogMaxRaReqDc.offset, kLogMaxRaReqDc.width), 0u);
}

TEST_F(DevxGeneralCmdTest, RoceCaps)
{
	std::array<uint8_t, kOutBytes> out{};
	ASSERT_EQ(query((0x4 << 1) | 1, &out), 0);
	ibv_port_attr port{};
	ASSERT_EQ(ibv_query_port(context_, 1, &port), 0);
	EXPECT_EQ(cap(out, kRoceVersion), 0x5u); // RoCE v1 and v2
	EXPECT_EQ(cap(out, kL3Type), 0x6u);      // IPv4 and IPv6
	EXPECT_EQ(cap(out, kRoceDestUdpPort), 4791u);
	EXPECT_EQ(cap(out, kRoceAddressTableSize), static_cast<uint64_t>(port.gid_tbl_len));
}

TEST_F(DevxGeneralCmdTest, AContextWithoutDevxMayQueryCaps)
{
	// As the kernel lets every context send QUERY_HCA_CAP (perftest's DC path does so).
	ibv_context *plain = ibv_open_device(devices_[0]);
	ASSERT_NE(plain, nullptr);
	std::array<uint8_t, kOutBytes> out{};
	std::array<uint8_t, kOutBytes> devx{};
	EXPECT_EQ(query(0x1, &out, plain), 0);
	EXPECT_EQ(query(0x1, &devx), 0);
	EXPECT_EQ(out, devx);

	// Any other command needs DevX.
	std::array<uint8_t, 16> in{};
	prm_set_bits(in.data(), 0, 16, 0x800); // ALLOC_PD
	EXPECT_EQ(mlx5dv_devx_general_cmd(plain, in.data(), in.size(), out.data(), out.size()), EOPNOTSUPP);
	EXPECT_EQ(ibv_close_device(plain), 0);
}

TEST_F(DevxGeneralCmdTest, FailedCommandsGiveEremoteioWithStatusAndSyndrome)
{
	std::array<uint8_t, kOutBytes> out{};
	// A capability type the device does not have (ODP): bad operation.
	EXPECT_EQ(query((0x2 << 1) | 1, &out), EREMOTEIO);
	EXPECT_EQ(status_of(out.data()), 0x02);
	EXPECT_EQ(syndrome_of(out.data()), 0x5d000002u);
	for (size_t i = 16; i < out.size(); ++i)
		ASSERT_EQ(out[i], 0) << "byte " << i;

	// Another function's capabilities: bad parameter.
	auto in = query_hca_cap_in(0x1);
	prm_set_bits(in.data(), 0x40, 1, 1);  // other_function
	prm_set_bits(in.data(), 0x50, 16, 1); // function_id
	std::memset(out.data(), 0xee, out.size());
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), in.size(), out.data(), out.size()), EREMOTEIO);
	EXPECT_EQ(status_of(out.data()), 0x03);
	EXPECT_EQ(syndrome_of(out.data()), 0x5d000003u);

	// A general opcode the kernel passes on and the device does not implement (QUERY_ADAPTER).
	std::array<uint8_t, 64> unknown{};
	prm_set_bits(unknown.data(), 0, 16, 0x101);
	std::memset(out.data(), 0xee, out.size());
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, unknown.data(), unknown.size(), out.data(), 16), EREMOTEIO);
	EXPECT_EQ(status_of(out.data()), 0x02);
	EXPECT_EQ(syndrome_of(out.data()), 0x5d000001u);
	EXPECT_EQ(out[16], 0xee) << "wrote past outlen";

	// An opcode outside the kernel's general whitelist never reaches the device.
	prm_set_bits(unknown.data(), 0, 16, 0x7ff);
	std::memset(out.data(), 0xee, out.size());
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, unknown.data(), unknown.size(), out.data(), 16), EINVAL);
	EXPECT_EQ(out[0], 0xee) << "a refused mailbox was written";
}

TEST_F(DevxGeneralCmdTest, MailboxesTheDriverRefuses)
{
	const auto in = query_hca_cap_in(0x1);
	std::array<uint8_t, kOutBytes> out{};
	std::memset(out.data(), 0xee, out.size());
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), 15, out.data(), out.size()), EINVAL);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), in.size(), out.data(), 15), EINVAL);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), 0, out.data(), 0), EINVAL);
	EXPECT_EQ(out[0], 0xee) << "a refused mailbox was written";

	auto tunnelled = in;
	prm_set_bits(tunnelled.data(), 0x20, 16, 1); // vhca_tunnel_id
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, tunnelled.data(), tunnelled.size(), out.data(), out.size()),
		  EINVAL);

	EXPECT_EQ(mlx5dv_devx_general_cmd(nullptr, in.data(), in.size(), out.data(), out.size()), EINVAL);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, nullptr, in.size(), out.data(), out.size()), EINVAL);
	EXPECT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), in.size(), nullptr, out.size()), EINVAL);
}

TEST_F(DevxGeneralCmdTest, TheUidFieldIsTheDriversNotTheCallers)
{
	// The kernel overwrites the inbox's uid; a caller's value changes nothing.
	auto in = query_hca_cap_in(0x1);
	prm_set_bits(in.data(), 0x10, 16, 0x1234);
	std::array<uint8_t, kOutBytes> with_uid{};
	std::array<uint8_t, kOutBytes> without{};
	ASSERT_EQ(mlx5dv_devx_general_cmd(context_, in.data(), in.size(), with_uid.data(), with_uid.size()), 0);
	ASSERT_EQ(query(0x1, &without), 0);
	EXPECT_EQ(with_uid, without);
}

} // namespace
