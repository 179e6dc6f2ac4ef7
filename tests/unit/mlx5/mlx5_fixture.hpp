// Test support for softdpu's libmlx5.so.1, used through its C API as programs use it: the devices
// of the default topology (host side), a context opened with mlx5dv_open_device, and a PRM field
// reader written independently of src/mlx5/devx/prm.hpp.
#pragma once

#include <gtest/gtest.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlx5_test {

// Reads `width` bits at bit `offset` of a PRM mailbox: bit 0 is the most significant bit of byte 0
// (big-endian 32-bit words), one bit at a time.
inline uint64_t prm_bits(const void *mailbox, size_t offset, size_t width)
{
	const auto *bytes = static_cast<const uint8_t *>(mailbox);
	uint64_t value = 0;
	for (size_t bit = offset; bit < offset + width; ++bit)
		value = (value << 1) | ((bytes[bit / 8] >> (7 - bit % 8)) & 1u);
	return value;
}

inline void prm_set_bits(void *mailbox, size_t offset, size_t width, uint64_t value)
{
	auto *bytes = static_cast<uint8_t *>(mailbox);
	for (size_t i = 0; i < width; ++i) {
		const size_t bit = offset + i;
		const auto mask = static_cast<uint8_t>(1u << (7 - bit % 8));
		if (((value >> (width - 1 - i)) & 1u) != 0)
			bytes[bit / 8] |= mask;
		else
			bytes[bit / 8] &= static_cast<uint8_t>(~mask);
	}
}

inline uint32_t log2_floor(uint64_t value)
{
	uint32_t log = 0;
	while ((value >> log) > 1)
		++log;
	return log;
}

// A verbs RC QP connected to `peer_qpn` on `context` (GID index 0 of `peer`'s context), in RTS.
inline void connect_rc(ibv_context *peer, ibv_qp *qp, uint32_t peer_qpn)
{
	ibv_gid gid{};
	ASSERT_EQ(ibv_query_gid(peer, 1, 0, &gid), 0);
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags =
	    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	ASSERT_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	attr = {};
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = peer_qpn;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = gid;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	ASSERT_EQ(ibv_modify_qp(qp, &attr,
				IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		  0);
	attr = {};
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	ASSERT_EQ(ibv_modify_qp(qp, &attr,
				IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				    IBV_QP_MAX_QP_RD_ATOMIC),
		  0);
}

class Mlx5Test : public ::testing::Test {
protected:
	void SetUp() override
	{
		int count = 0;
		list_ = ibv_get_device_list(&count);
		ASSERT_NE(list_, nullptr) << "no device list: errno " << errno;
		ASSERT_GT(count, 0);
		devices_.assign(list_, list_ + count);
		mlx5dv_context_attr attr{};
		attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
		context_ = mlx5dv_open_device(devices_[0], &attr);
		ASSERT_NE(context_, nullptr) << "errno " << errno;
	}

	void TearDown() override
	{
		if (context_ != nullptr) {
			EXPECT_EQ(ibv_close_device(context_), 0);
		}
		if (list_ != nullptr)
			ibv_free_device_list(list_);
	}

	ibv_device **list_ = nullptr;
	std::vector<ibv_device *> devices_;
	ibv_context *context_ = nullptr;
};

} // namespace mlx5_test
