// softdpu/topology.h: the emulated topology's details behind doca_dev.h, as the softdpu command
// line reads them (values from the built-in topology, docs/topology.md), and every error return.
#include "device/topology.hpp"

#include <doca_dev.h>
#include <softdpu/topology.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

using softdpu::device::Side;
using softdpu::device::Topology;
namespace device_testing = softdpu::device::testing;

namespace {

class TopologyExtApi : public ::testing::Test {
protected:
	void use(Side side)
	{
		auto result = Topology::builtin_default(side);
		ASSERT_TRUE(result.topology) << result.error;
		scoped_ = std::make_unique<device_testing::ScopedTopology>(result.topology);
		ASSERT_EQ(doca_devinfo_create_list(&list_, &count_), DOCA_SUCCESS);
	}
	void TearDown() override
	{
		if (list_ != nullptr) {
			EXPECT_EQ(doca_devinfo_destroy_list(list_), DOCA_SUCCESS);
		}
	}
	// The listed device whose topology name is `name`.
	doca_devinfo *named(const std::string &name)
	{
		for (uint32_t i = 0; i < count_; ++i)
			if (str(list_[i], SOFTDPU_DEVINFO_NAME) == name)
				return list_[i];
		ADD_FAILURE() << "no device " << name;
		return nullptr;
	}
	static std::string str(const doca_devinfo *devinfo, softdpu_devinfo_attr attr)
	{
		char value[256] = {};
		EXPECT_EQ(softdpu_devinfo_get_str(devinfo, attr, value, sizeof(value)), DOCA_SUCCESS) << attr;
		return value;
	}
	static std::string rep_str(const doca_devinfo_rep *rep, softdpu_devinfo_rep_attr attr)
	{
		char value[256] = {};
		EXPECT_EQ(softdpu_devinfo_rep_get_str(rep, attr, value, sizeof(value)), DOCA_SUCCESS) << attr;
		return value;
	}

	std::unique_ptr<device_testing::ScopedTopology> scoped_;
	doca_devinfo **list_ = nullptr;
	uint32_t count_ = 0;
};

} // namespace

TEST_F(TopologyExtApi, HostFunctionNamesItsDpuManagerAndRepresentor)
{
	use(Side::host);
	doca_devinfo *vf = named("pf0vf1");
	ASSERT_NE(vf, nullptr);
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_FUNC_TYPE), "vf");
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_PARENT), "pf0");
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_LINK_LAYER), "ethernet");
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_DPU_MANAGER), "p0");
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_DPU_MANAGER_PCI), "0000:03:00.0");
	EXPECT_EQ(str(vf, SOFTDPU_DEVINFO_DPU_REPRESENTOR), "hpf0vf1");
	EXPECT_FALSE(str(vf, SOFTDPU_DEVINFO_VUID).empty());
	doca_devinfo *pf = named("pf0");
	ASSERT_NE(pf, nullptr);
	EXPECT_EQ(str(pf, SOFTDPU_DEVINFO_FUNC_TYPE), "pf");
	EXPECT_EQ(str(pf, SOFTDPU_DEVINFO_PARENT), "");
	uint8_t available = 0;
	EXPECT_EQ(softdpu_devinfo_get_is_available(pf, &available), DOCA_SUCCESS);
	EXPECT_EQ(available, 1);
	uint32_t max_devices = 0;
	EXPECT_EQ(softdpu_devinfo_get_mmap_max_num_devices(pf, &max_devices), DOCA_SUCCESS);
	EXPECT_GT(max_devices, 0u);
	const char *source = nullptr;
	const char *side = nullptr;
	ASSERT_EQ(softdpu_topology_get_current(&source, &side), DOCA_SUCCESS);
	EXPECT_STREQ(side, "host");
	EXPECT_NE(std::strstr(source, "built-in"), nullptr) << source;
}

TEST_F(TopologyExtApi, DpuRepresentorsHaveNamesAndWhatTheyRepresent)
{
	use(Side::dpu);
	doca_devinfo *p0 = named("p0");
	ASSERT_NE(p0, nullptr);
	EXPECT_EQ(str(p0, SOFTDPU_DEVINFO_DPU_MANAGER), ""); // host side only
	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_dev_open(p0, &dev), DOCA_SUCCESS);
	doca_devinfo_rep **reps = nullptr;
	uint32_t count = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &count), DOCA_SUCCESS);
	bool found = false;
	for (uint32_t i = 0; i < count; ++i) {
		if (rep_str(reps[i], SOFTDPU_DEVINFO_REP_NAME) != "hpf0vf0")
			continue;
		found = true;
		EXPECT_EQ(rep_str(reps[i], SOFTDPU_DEVINFO_REP_IFACE), "pf0vf0");
		EXPECT_EQ(rep_str(reps[i], SOFTDPU_DEVINFO_REP_EMULATION), "");
		EXPECT_EQ(rep_str(reps[i], SOFTDPU_DEVINFO_REP_REPRESENTS), "pf0vf0");
		EXPECT_EQ(rep_str(reps[i], SOFTDPU_DEVINFO_REP_MEMORY), "");
		char small[3] = {};
		EXPECT_EQ(softdpu_devinfo_rep_get_str(reps[i], SOFTDPU_DEVINFO_REP_NAME, small, sizeof(small)),
			  DOCA_ERROR_INVALID_VALUE);
		EXPECT_EQ(softdpu_devinfo_rep_get_str(reps[i], static_cast<softdpu_devinfo_rep_attr>(99), small,
						      sizeof(small)),
			  DOCA_ERROR_INVALID_VALUE);
	}
	EXPECT_TRUE(found);
	EXPECT_EQ(softdpu_devinfo_rep_get_str(nullptr, SOFTDPU_DEVINFO_REP_NAME, nullptr, 0), DOCA_ERROR_INVALID_VALUE);
	doca_devinfo_rep_destroy_list(reps);
	doca_dev_close(dev);
}

TEST_F(TopologyExtApi, GettersRefuseNullUnknownAttributesAndSmallBuffers)
{
	use(Side::dpu);
	doca_devinfo *p0 = named("p0");
	ASSERT_NE(p0, nullptr);
	char value[2] = {};
	EXPECT_EQ(softdpu_devinfo_get_str(p0, SOFTDPU_DEVINFO_NAME, value, sizeof(value)), DOCA_ERROR_INVALID_VALUE);
	char three[3] = {};
	EXPECT_EQ(softdpu_devinfo_get_str(p0, SOFTDPU_DEVINFO_NAME, three, sizeof(three)), DOCA_SUCCESS);
	EXPECT_STREQ(three, "p0");
	EXPECT_EQ(softdpu_devinfo_get_str(p0, static_cast<softdpu_devinfo_attr>(99), three, sizeof(three)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_devinfo_get_str(nullptr, SOFTDPU_DEVINFO_NAME, three, sizeof(three)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_devinfo_get_str(p0, SOFTDPU_DEVINFO_NAME, nullptr, 3), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_devinfo_get_is_available(p0, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_devinfo_get_mmap_max_num_devices(nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_topology_get_current(nullptr, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST(TopologyExtApiProcess, CurrentTopologyErrorCarriesTheReason)
{
	device_testing::ScopedTopologyError failing("bad.json: $.dpu: broken");
	const char *source = nullptr;
	const char *side = "unchanged";
	EXPECT_EQ(softdpu_topology_get_current(&source, &side), DOCA_ERROR_NOT_FOUND);
	EXPECT_EQ(side, nullptr);
	ASSERT_NE(source, nullptr);
	EXPECT_STREQ(source, "bad.json: $.dpu: broken");
}

TEST(TopologyExtApiFiles, CheckFileCountsOrSaysWhy)
{
	const std::string dir = std::string(SOFTDPU_SOURCE_DIR) + "/tests/data/topology/";
	softdpu_topology_counts counts{};
	char error[256] = "stale";
	ASSERT_EQ(softdpu_topology_check_file((dir + "rich.json").c_str(), &counts, error, sizeof(error)),
		  DOCA_SUCCESS);
	EXPECT_STREQ(error, "");
	auto rich = Topology::load_file(dir + "rich.json", Side::dpu);
	ASSERT_TRUE(rich.topology);
	uint32_t host = 0, dpu = 0;
	for (const auto &function : rich.topology->all_functions())
		++(function->side == Side::host ? host : dpu);
	EXPECT_EQ(counts.host_functions, host);
	EXPECT_EQ(counts.dpu_functions, dpu);
	EXPECT_EQ(counts.representors, rich.topology->representors().size());

	EXPECT_EQ(softdpu_topology_check_file((dir + "truncated.json").c_str(), &counts, error, sizeof(error)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(std::strstr(error, "truncated.json: $: invalid JSON"), nullptr) << error;
	char tiny[8] = {};
	EXPECT_EQ(softdpu_topology_check_file((dir + "truncated.json").c_str(), &counts, tiny, sizeof(tiny)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(std::strlen(tiny), sizeof(tiny) - 1); // truncated, NUL-terminated
	EXPECT_EQ(softdpu_topology_check_file((dir + "missing.json").c_str(), &counts, nullptr, 0),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_topology_check_file(nullptr, &counts, error, sizeof(error)), DOCA_ERROR_INVALID_VALUE);
}

TEST(TopologyExtApiFiles, DefaultTextIsTheBuiltInTopology)
{
	const char *text = softdpu_topology_get_default_text();
	ASSERT_NE(text, nullptr);
	EXPECT_EQ(std::string(text), std::string(Topology::builtin_default_text()));
	EXPECT_TRUE(Topology::parse(text, "t", Side::dpu).topology);
}

TEST(TopologyExtApiFiles, MemorySourceCheckUsesTheOneVocabulary)
{
	char path[64] = {};
	char error[256] = {};
	EXPECT_EQ(softdpu_memory_source_check("qemu:/dev/shm/vm,qmp=/run/q", path, sizeof(path), error, sizeof(error)),
		  DOCA_SUCCESS);
	EXPECT_STREQ(path, "/dev/shm/vm");
	EXPECT_EQ(softdpu_memory_source_check("guest.raw", path, sizeof(path), error, sizeof(error)), DOCA_SUCCESS);
	EXPECT_STREQ(path, "guest.raw");
	EXPECT_EQ(softdpu_memory_source_check("vmware:/x", path, sizeof(path), error, sizeof(error)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(std::strstr(error, "unknown memory kind \"vmware\""), nullptr) << error;
	char short_path[4] = {};
	EXPECT_EQ(softdpu_memory_source_check("raw:/long/path", short_path, sizeof(short_path), nullptr, 0),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(softdpu_memory_source_check(nullptr, nullptr, 0, error, sizeof(error)), DOCA_ERROR_INVALID_VALUE);
	// A running QEMU: no file, so an empty path.
	std::strcpy(path, "stale");
	EXPECT_EQ(softdpu_memory_source_check("pid:4321,qmp=/run/q", path, sizeof(path), error, sizeof(error)),
		  DOCA_SUCCESS);
	EXPECT_STREQ(path, "");
	EXPECT_EQ(softdpu_memory_source_check("libvirt:web01", path, sizeof(path), error, sizeof(error)), DOCA_SUCCESS);
	EXPECT_EQ(softdpu_memory_source_check("pid:x", path, sizeof(path), error, sizeof(error)),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_NE(std::strstr(error, "not a process ID"), nullptr) << error;
}
