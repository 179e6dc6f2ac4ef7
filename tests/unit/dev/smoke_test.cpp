#include "core/dev/dev.hpp"

#include <gtest/gtest.h>

TEST(DevSmoke, DefaultTopologyLoads)
{
	auto result = softdpu::device::Topology::builtin_default(softdpu::device::Side::dpu);
	ASSERT_TRUE(result.topology) << result.error;
	EXPECT_EQ(result.topology->local_functions().size(), 4u);
}
