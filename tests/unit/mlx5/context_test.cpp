// mlx5dv_is_supported, mlx5dv_open_device and mlx5dv_query_device on softdpu's devices.
#include "mlx5_fixture.hpp"

#include <cerrno>
#include <cstring>

using mlx5_test::Mlx5Test;

TEST_F(Mlx5Test, EveryDeviceIsSupported)
{
	for (ibv_device *device : devices_)
		EXPECT_TRUE(mlx5dv_is_supported(device)) << ibv_get_device_name(device);
}

TEST_F(Mlx5Test, ForeignOrNullDeviceIsNotSupported)
{
	ibv_device foreign{};
	std::memcpy(foreign.name, "mlx5_0", 7);
	EXPECT_FALSE(mlx5dv_is_supported(&foreign));
	EXPECT_FALSE(mlx5dv_is_supported(nullptr));
}

TEST_F(Mlx5Test, OpenWithDevxGivesAContextOfThatDevice)
{
	EXPECT_EQ(context_->device, devices_[0]);
	ibv_device_attr attr{};
	ASSERT_EQ(ibv_query_device(context_, &attr), 0);
	EXPECT_EQ(attr.vendor_id, 0x02c9u);
	// The context works for verbs like any other.
	ibv_pd *pd = ibv_alloc_pd(context_);
	ASSERT_NE(pd, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

TEST_F(Mlx5Test, OpenWithoutAttributesOrFlags)
{
	ibv_context *plain = mlx5dv_open_device(devices_[0], nullptr);
	ASSERT_NE(plain, nullptr) << "errno " << errno;
	EXPECT_EQ(ibv_close_device(plain), 0);
	mlx5dv_context_attr attr{};
	ibv_context *no_flags = mlx5dv_open_device(devices_.back(), &attr);
	ASSERT_NE(no_flags, nullptr) << "errno " << errno;
	EXPECT_EQ(no_flags->device, devices_.back());
	EXPECT_EQ(ibv_close_device(no_flags), 0);
}

TEST_F(Mlx5Test, OpenRefusesBadArguments)
{
	mlx5dv_context_attr attr{};
	attr.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(mlx5dv_open_device(devices_[0], &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	attr = {};
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX | (1u << 5);
	errno = 0;
	EXPECT_EQ(mlx5dv_open_device(devices_[0], &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	errno = 0;
	EXPECT_EQ(mlx5dv_open_device(nullptr, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	ibv_device foreign{};
	errno = 0;
	EXPECT_EQ(mlx5dv_open_device(&foreign, nullptr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(Mlx5Test, ManyContextsOpenAndCloseCleanly)
{
	// Each context's libmlx5 state is released with it (ASan/LSan builds check the release).
	for (int i = 0; i < 64; ++i) {
		mlx5dv_context_attr attr{};
		attr.flags = (i % 2 == 0) ? MLX5DV_CONTEXT_FLAGS_DEVX : 0;
		ibv_context *context = mlx5dv_open_device(devices_[static_cast<size_t>(i) % devices_.size()], &attr);
		ASSERT_NE(context, nullptr) << "errno " << errno;
		ASSERT_EQ(ibv_close_device(context), 0);
	}
}

TEST_F(Mlx5Test, QueryDeviceAnswersEveryCapabilityAsked)
{
	mlx5dv_context attrs;
	std::memset(&attrs, 0xa5, sizeof(attrs));
	attrs.comp_mask = ~0ull;
	ASSERT_EQ(mlx5dv_query_device(context_, &attrs), 0);
	EXPECT_EQ(attrs.version, 0);
	EXPECT_EQ(attrs.flags, uint64_t{MLX5DV_CONTEXT_FLAGS_CQE_V1});
	// Answered: the capabilities a software device reports as absent (all zero). Left out, as
	// rdma-core leaves them out where the device has none: the clock and LAG ones.
	const uint64_t answered = MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_SWP |
				  MLX5DV_CONTEXT_MASK_STRIDING_RQ | MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS |
				  MLX5DV_CONTEXT_MASK_DYN_BFREGS | MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS |
				  MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD |
				  MLX5DV_CONTEXT_MASK_DCI_STREAMS | MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH |
				  MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD;
	EXPECT_EQ(attrs.comp_mask, answered);
	EXPECT_EQ(attrs.cqe_comp_caps.max_num, 0u);
	EXPECT_EQ(attrs.cqe_comp_caps.supported_format, 0u);
	EXPECT_EQ(attrs.sw_parsing_caps.sw_parsing_offloads, 0u);
	EXPECT_EQ(attrs.striding_rq_caps.supported_qpts, 0u);
	EXPECT_EQ(attrs.tunnel_offloads_caps, 0u);
	EXPECT_EQ(attrs.max_dynamic_bfregs, 0u);
	EXPECT_EQ(attrs.flow_action_flags, 0u);
	EXPECT_EQ(attrs.dc_odp_caps, 0u);
	EXPECT_EQ(attrs.sig_caps.block_prot, 0u);
	EXPECT_EQ(attrs.dci_streams_caps.max_log_num_concurent, 0);
	EXPECT_EQ(attrs.max_wr_memcpy_length, 0u);
	EXPECT_EQ(attrs.crypto_caps.flags, 0u);
}

TEST_F(Mlx5Test, QueryDeviceWritesNothingNotAsked)
{
	// A caller built against an older mlx5dv.h has a shorter struct: fields it did not ask for
	// must stay untouched.
	mlx5dv_context attrs;
	std::memset(&attrs, 0xa5, sizeof(attrs));
	attrs.comp_mask = 0;
	ASSERT_EQ(mlx5dv_query_device(context_, &attrs), 0);
	EXPECT_EQ(attrs.comp_mask, 0u);
	EXPECT_EQ(attrs.flags, uint64_t{MLX5DV_CONTEXT_FLAGS_CQE_V1});
	mlx5dv_context untouched;
	std::memset(&untouched, 0xa5, sizeof(untouched));
	EXPECT_EQ(std::memcmp(&attrs.cqe_comp_caps, &untouched.cqe_comp_caps,
			      sizeof(attrs) - offsetof(mlx5dv_context, cqe_comp_caps)),
		  0);
}

TEST_F(Mlx5Test, QueryDeviceOnAPlainContextAndBadArguments)
{
	ibv_context *plain = ibv_open_device(devices_[0]);
	ASSERT_NE(plain, nullptr);
	mlx5dv_context attrs{};
	EXPECT_EQ(mlx5dv_query_device(plain, &attrs), 0);
	EXPECT_EQ(ibv_close_device(plain), 0);
	EXPECT_EQ(mlx5dv_query_device(nullptr, &attrs), EINVAL);
	EXPECT_EQ(mlx5dv_query_device(context_, nullptr), EINVAL);
}
