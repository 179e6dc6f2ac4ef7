// The mlx5dv functions softdpu's device does not offer: the documented failure (null with errno
// EOPNOTSUPP, or EOPNOTSUPP returned), no crash.
#include "mlx5_fixture.hpp"

#include <dlfcn.h>

#include <array>
#include <cerrno>
#include <cstdio>

using mlx5_test::Mlx5Test;

namespace {

template <typename T> void expect_null_eopnotsupp(T *result, const char *what)
{
	EXPECT_EQ(result, nullptr) << what;
	EXPECT_EQ(errno, EOPNOTSUPP) << what;
	errno = 0;
}

TEST_F(Mlx5Test, ObjectsTheDeviceDoesNotMakeAreRefused)
{
	errno = 0;
	expect_null_eopnotsupp(mlx5dv_devx_alloc_msi_vector(context_), "devx_alloc_msi_vector");
	mlx5dv_mkey_init_attr mkey{};
	ibv_pd *pd = ibv_alloc_pd(context_);
	ASSERT_NE(pd, nullptr);
	mkey.pd = pd;
	mkey.max_entries = 1;
	expect_null_eopnotsupp(mlx5dv_create_mkey(&mkey), "create_mkey");
	mlx5dv_dek_init_attr dek{};
	dek.pd = pd;
	expect_null_eopnotsupp(mlx5dv_dek_create(context_, &dek), "dek_create");
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	expect_null_eopnotsupp(mlx5dv_dr_domain_create(context_, MLX5DV_DR_DOMAIN_TYPE_NIC_RX), "dr_domain_create");
	expect_null_eopnotsupp(mlx5dv_dr_action_create_drop(), "dr_action_create_drop");
	expect_null_eopnotsupp(mlx5dv_alloc_var(context_, 0), "alloc_var");
	expect_null_eopnotsupp(mlx5dv_pp_alloc(context_, 0, nullptr, 0), "pp_alloc");
	mlx5dv_crypto_login_attr_ex login_ex{};
	expect_null_eopnotsupp(mlx5dv_crypto_login_create(context_, &login_ex), "crypto_login_create");
	ibv_wq_init_attr wq{};
	expect_null_eopnotsupp(mlx5dv_create_wq(context_, &wq, nullptr), "create_wq");
	mlx5dv_vfio_context_attr vfio{};
	expect_null_eopnotsupp(mlx5dv_get_vfio_device_list(&vfio), "get_vfio_device_list");
}

TEST_F(Mlx5Test, OperationsTheDeviceDoesNotOfferReturnEopnotsupp)
{
	mlx5dv_crypto_login_attr login{};
	EXPECT_EQ(mlx5dv_crypto_login(context_, &login), EOPNOTSUPP);
	mlx5dv_crypto_login_state state{};
	EXPECT_EQ(mlx5dv_crypto_login_query_state(context_, &state), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_crypto_logout(context_), EOPNOTSUPP);
	mlx5dv_clock_info clock{};
	EXPECT_EQ(mlx5dv_get_clock_info(context_, &clock), EOPNOTSUPP);
	mlx5dv_port port{};
	EXPECT_EQ(mlx5dv_query_port(context_, 1, &port), EOPNOTSUPP);
	uint32_t qpn = 0;
	EXPECT_EQ(mlx5dv_reserved_qpn_alloc(context_, &qpn), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_set_context_attr(context_, MLX5DV_CTX_ATTR_BUF_ALLOCATORS, nullptr), EOPNOTSUPP);
	errno = 0;
	EXPECT_EQ(mlx5dv_vfio_get_events_fd(context_), -1);
	EXPECT_EQ(errno, EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_dump_dr_domain(stderr, nullptr), -EOPNOTSUPP);
	// Objects that can never exist: their destroy and free functions neither crash nor succeed.
	EXPECT_EQ(mlx5dv_destroy_mkey(nullptr), EOPNOTSUPP);
	EXPECT_EQ(mlx5dv_dek_destroy(nullptr), EOPNOTSUPP);
}

TEST_F(Mlx5Test, AForeignContextIsRefused)
{
	ibv_device foreign_device{};
	ibv_context foreign{};
	foreign.device = &foreign_device;
	mlx5dv_context attrs{};
	EXPECT_EQ(mlx5dv_query_device(&foreign, &attrs), EOPNOTSUPP);
	std::array<uint8_t, 16> in{};
	std::array<uint8_t, 16> out{};
	EXPECT_EQ(mlx5dv_devx_general_cmd(&foreign, in.data(), in.size(), out.data(), out.size()), EOPNOTSUPP);
	ibv_qp_init_attr_ex qp{};
	errno = 0;
	EXPECT_EQ(mlx5dv_create_qp(&foreign, &qp, nullptr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
}

} // namespace
