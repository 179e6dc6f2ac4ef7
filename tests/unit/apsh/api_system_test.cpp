// App Shield context and system: creation, mandatory setters, sys_config attributes and their
// documented errors, start and the memory source of the representor.
#include "api_fixture.hpp"

#include "apsh/api/objects.hpp"

using namespace apsh_test;

TEST_F(ApshApi, ContextNeedsADmaDevice)
{
	doca_apsh_ctx *ctx = doca_apsh_create();
	ASSERT_NE(ctx, nullptr);
	EXPECT_EQ(doca_apsh_start(ctx), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_dma_dev_set(nullptr, dev_), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_dma_dev_set(ctx, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_dma_dev_set(ctx, dev_), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_start(ctx), DOCA_SUCCESS);
	doca_apsh_destroy(ctx);
	doca_apsh_destroy(nullptr);
	EXPECT_EQ(doca_apsh_system_create(nullptr), nullptr);
	doca_apsh_system_destroy(nullptr);
}

TEST_F(ApshApi, DeviceStaysInUseWhileTheContextHoldsIt)
{
	// The context is a user of p0: closing the device would leave it dangling.
	EXPECT_EQ(doca_dev_rep_close(rep_), DOCA_ERROR_IN_USE);
	doca_apsh_system_destroy(system_);
	system_ = nullptr;
	EXPECT_EQ(doca_dev_rep_close(rep_), DOCA_SUCCESS);
	rep_ = nullptr;
}

TEST_F(ApshApi, StartsWithOnlyTheDevice)
{
	// Beyond DOCA: no symbol map and no memory regions means zero-config.
	start();
	EXPECT_EQ(opens_, 1);
	EXPECT_EQ(last_source_.kind, SourceKind::raw);
	EXPECT_EQ(last_source_.path, "/fake/guest.img");
	EXPECT_TRUE(last_source_.ranges.empty());
	EXPECT_TRUE(last_hints_.symbols.empty());
	EXPECT_FALSE(last_hints_.kpgd.has_value());
	EXPECT_EQ(doca_apsh_system_start(system_), DOCA_ERROR_INVALID_VALUE) << "already started";
}

TEST_F(ApshApi, StartErrors)
{
	EXPECT_EQ(doca_apsh_system_start(nullptr), DOCA_ERROR_INVALID_VALUE);

	doca_apsh_system *no_dev = doca_apsh_system_create(ctx_);
	EXPECT_EQ(doca_apsh_system_start(no_dev), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_system_destroy(no_dev);

	doca_apsh_ctx *unstarted = doca_apsh_create();
	doca_apsh_system *orphan = doca_apsh_system_create(unstarted);
	ASSERT_EQ(doca_apsh_sys_dev_set(orphan, rep_), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_system_start(orphan), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_system_destroy(orphan);
	doca_apsh_destroy(unstarted);

	open_status_ = {DOCA_ERROR_INVALID_VALUE, "guest.img: not a memory image"};
	EXPECT_EQ(doca_apsh_system_start(system_), DOCA_ERROR_INITIALIZATION);
	open_status_ = {};
	EXPECT_EQ(doca_apsh_system_start(system_), DOCA_SUCCESS);
}

TEST_F(ApshApi, MemorySourceFromTheTopology)
{
	ScopedEnv no_override("SOFTDPU_APSH_MEMORY", nullptr);
	EXPECT_EQ(doca_apsh_system_start(system_), DOCA_ERROR_INITIALIZATION) << "hpf0 has no memory in the built-in";
	EXPECT_EQ(opens_, 0);
	{
		// An unknown kind (a bare word is a path of kind auto: one vocabulary with --memory).
		ScopedEnv bad("SOFTDPU_APSH_MEMORY", "vmware:/x");
		EXPECT_EQ(doca_apsh_system_start(system_), DOCA_ERROR_INITIALIZATION);
	}
	{
		// The short kind name, as `softdpu apsh --memory` takes it (one parser).
		ScopedEnv shm("SOFTDPU_APSH_MEMORY", "qemu:/dev/shm/g,qmp=/run/g.qmp");
		ASSERT_EQ(doca_apsh_system_start(system_), DOCA_SUCCESS);
		EXPECT_EQ(last_source_.kind, SourceKind::qemu_shared_ram);
		EXPECT_EQ(last_source_.path, "/dev/shm/g");
		EXPECT_EQ(last_source_.qmp_socket, "/run/g.qmp");
	}
}

TEST(ApshApiTopology, RepresentorMemoryFromTopologyFile)
{
	ScopedEnv no_override("SOFTDPU_APSH_MEMORY", nullptr);
	auto parsed = softdpu::device::Topology::parse(R"({
  "host": { "functions": [ { "name": "pf0", "type": "pf", "pci": "0b:00.0", "ibdev": "mlx5_0", "vuid": "H0" } ] },
  "dpu": { "functions": [ { "name": "p0", "type": "pf", "pci": "03:00.0", "ibdev": "mlx5_0", "vuid": "D0" } ],
    "representors": [ { "name": "hpf0", "manager": "p0", "function": "pf0",
                        "memory": { "kind": "elf_core", "path": "/images/g.core" } } ] } })",
						       "t", softdpu::device::Side::dpu);
	ASSERT_TRUE(parsed.topology) << parsed.error;
	softdpu::device::testing::ScopedTopology scoped(parsed.topology);
	doca_devinfo **list = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	doca_dev *dev = nullptr;
	ASSERT_EQ(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	doca_devinfo_rep **reps = nullptr;
	uint32_t rn = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &rn), DOCA_SUCCESS);
	doca_dev_rep *rep = nullptr;
	ASSERT_EQ(doca_dev_rep_open(reps[0], &rep), DOCA_SUCCESS);
	SourceSpec source;
	ASSERT_TRUE(softdpu::apsh::api::memory_source_of(*rep, source).ok());
	EXPECT_EQ(source.kind, SourceKind::elf_core);
	EXPECT_EQ(source.path, "/images/g.core");
	EXPECT_EQ(doca_dev_rep_close(rep), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
}

TEST_F(ApshApi, RepresentorMustComeFromTheDmaDevice)
{
	// p1 (mlx5_1) manages other representors than the context's p0.
	doca_dev *p1 = nullptr;
	for (uint32_t i = 0; i < count_; ++i) {
		char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
		ASSERT_EQ(doca_devinfo_get_ibdev_name(list_[i], ibdev, sizeof(ibdev)), DOCA_SUCCESS);
		if (std::strcmp(ibdev, "mlx5_1") == 0) {
			ASSERT_EQ(doca_dev_open(list_[i], &p1), DOCA_SUCCESS);
		}
	}
	ASSERT_NE(p1, nullptr);
	doca_devinfo_rep **reps = nullptr;
	uint32_t n = 0;
	ASSERT_EQ(doca_devinfo_rep_create_list(p1, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n), DOCA_SUCCESS);
	doca_dev_rep *other = nullptr;
	ASSERT_EQ(doca_dev_rep_open(reps[0], &other), DOCA_SUCCESS);
	ASSERT_EQ(doca_apsh_sys_dev_set(system_, other), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_system_start(system_), DOCA_ERROR_INVALID_VALUE);
	ASSERT_EQ(doca_apsh_sys_dev_set(system_, rep_), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_rep_close(other), DOCA_SUCCESS);
	EXPECT_EQ(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p1), DOCA_SUCCESS);
	start();
}

TEST_F(ApshApi, OsType)
{
	EXPECT_EQ(doca_apsh_sys_os_type_set(nullptr, DOCA_APSH_SYSTEM_LINUX), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_os_type_set(system_, DOCA_APSH_SYSTEM_WINDOWS), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_sys_os_type_set(system_, static_cast<doca_apsh_system_os>(7)), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_OS_TYPE, DOCA_APSH_SYSTEM_WINDOWS), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_OS_TYPE, DOCA_APSH_SYSTEM_LINUX), DOCA_SUCCESS);
	start();
	EXPECT_EQ(doca_apsh_sys_os_type_set(system_, DOCA_APSH_SYSTEM_LINUX), DOCA_ERROR_BAD_STATE);
}

TEST_F(ApshApi, ScanWindowRules)
{
	EXPECT_EQ(doca_apsh_sys_set_scan_window_size(nullptr, 4096), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_set_scan_window_step(nullptr, 4096), DOCA_ERROR_INVALID_VALUE);
	for (uint32_t good : {1u, 512u, 2048u, 4096u, 8192u, 65536u})
		EXPECT_EQ(doca_apsh_sys_set_scan_window_size(system_, good), DOCA_SUCCESS) << good;
	for (uint32_t bad : {0u, 3u, 1000u, 6000u, 4097u})
		EXPECT_EQ(doca_apsh_sys_set_scan_window_size(system_, bad), DOCA_ERROR_INVALID_VALUE) << bad;
	ASSERT_EQ(doca_apsh_sys_set_scan_window_size(system_, 8192), DOCA_SUCCESS);
	for (uint32_t good : {8192u, 4096u, 1024u, 1u})
		EXPECT_EQ(doca_apsh_sys_set_scan_window_step(system_, good), DOCA_SUCCESS) << good;
	for (uint32_t bad : {0u, 3000u, 16384u})
		EXPECT_EQ(doca_apsh_sys_set_scan_window_step(system_, bad), DOCA_ERROR_INVALID_VALUE) << bad;
	// A size the current step does not divide resets the step to the size.
	ASSERT_EQ(doca_apsh_sys_set_scan_window_step(system_, 8192), DOCA_SUCCESS);
	ASSERT_EQ(doca_apsh_sys_set_scan_window_size(system_, 2048), DOCA_SUCCESS);
	EXPECT_EQ(system_->system->settings().window.step, 2048u);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_SCAN_WIN_SIZE, 4096), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_SCAN_WIN_STEP, 1024), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_SCAN_WIN_STEP, 3), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_SCAN_WIN_SIZE, 100), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(system_->system->settings().window.size, 4096u);
	EXPECT_EQ(system_->system->settings().window.step, 1024u);
}

TEST_F(ApshApi, LimitsReachTheReader)
{
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_PROCESS_LIMIT, 10), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_THREADS_LIMIT, 11), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_VADS_LIMIT, 12), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_MODULES_LIMIT, 13), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_LIBS_LIMIT, 14), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_STRING_LIMIT, 15), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_HASHTEST_LIMIT, 16), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_LDRMODULES_LIMIT, 17), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_WINDOWS_ENVARS_LIMIT, 18), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_HANDLES_LIMIT, 19), DOCA_SUCCESS);
	for (auto attr :
	     {DOCA_APSH_PROCESS_LIMIT, DOCA_APSH_THREADS_LIMIT, DOCA_APSH_STRING_LIMIT, DOCA_APSH_HANDLES_LIMIT}) {
		EXPECT_EQ(doca_apsh_sys_config(system_, attr, 0), DOCA_ERROR_INVALID_VALUE);
		EXPECT_EQ(doca_apsh_sys_config(system_, attr, -5), DOCA_ERROR_INVALID_VALUE);
	}
	EXPECT_EQ(doca_apsh_sys_config(system_, static_cast<doca_apsh_system_config_attr>(99), 1),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(nullptr, DOCA_APSH_PROCESS_LIMIT, 1), DOCA_ERROR_INVALID_VALUE);
	start();
	EXPECT_EQ(last_limits_.processes, 10u);
	EXPECT_EQ(last_limits_.threads, 11u);
	EXPECT_EQ(last_limits_.vads, 12u);
	EXPECT_EQ(last_limits_.modules, 13u);
	EXPECT_EQ(last_limits_.libs, 14u);
	EXPECT_EQ(last_limits_.string_bytes, 15u);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_PROCESS_LIMIT, 5), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_SCAN_WIN_SIZE, 4096), DOCA_ERROR_BAD_STATE);
}

TEST_F(ApshApi, ProcessLimitTruncates)
{
	ASSERT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_PROCESS_LIMIT, 1), DOCA_SUCCESS);
	start();
	doca_apsh_process **processes = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_processes_get(system_, &processes, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 1);
	doca_apsh_processes_free(processes);
}

TEST_F(ApshApi, ConfigFilesThroughTheSetters)
{
	TempFile symbols(R"({"format": "softdpu-symbol-map", "slid": false,
	  "symbols": {"init_task": "0xffffffff82a0c940", "_stext": 18446744071578845184}})");
	TempFile regions(R"({"allowed_regions": {"0": {"start": 4096, "length": 647167},
	                                          "1": {"start": 1048576, "length": 267386879}}})");
	TempFile kpgd("10a2c000\nffffffff82a0c940\n", ".conf");
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, symbols.path()), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_mem_region_set(system_, regions.path()), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_kpgd_file_set(system_, kpgd.path()), DOCA_SUCCESS);
	start();
	EXPECT_FALSE(last_hints_.symbols_are_slid);
	EXPECT_EQ(last_hints_.symbols.at("init_task"), 0xffffffff82a0c940ull);
	EXPECT_EQ(last_hints_.symbols.at("_stext"), 0xffffffff81000000ull);
	ASSERT_TRUE(last_hints_.kpgd.has_value());
	EXPECT_EQ(*last_hints_.kpgd, 0x10a2c000ull);
	ASSERT_EQ(last_source_.ranges.size(), 2u);
	EXPECT_EQ(last_source_.ranges[0].gpa_start, 0x1000u);
	EXPECT_EQ(last_source_.ranges[0].gpa_end, 0x9f000u) << "the iomem one-byte-short length is rounded up";
	EXPECT_EQ(last_source_.ranges[1].gpa_end, 0x10000000u);
	EXPECT_EQ(last_source_.ranges[1].file_offset, 0x100000u);

	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, symbols.path()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_sys_mem_region_set(system_, regions.path()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_sys_kpgd_file_set(system_, kpgd.path()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_sys_dev_set(system_, rep_), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_OS_SYMBOL_MAP, symbols.path()), DOCA_ERROR_BAD_STATE);
}

TEST_F(ApshApi, SetterArgumentErrors)
{
	TempFile broken("{\"symbols\": {\"init_task\": \"0xzz\"}}");
	TempFile not_json("this is not json");
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(nullptr, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, "/nonexistent/symbols.json"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, broken.path()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_os_symbol_map_set(system_, ""), DOCA_SUCCESS) << "empty path: zero-config";
	EXPECT_EQ(doca_apsh_sys_mem_region_set(nullptr, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_mem_region_set(system_, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_mem_region_set(system_, not_json.path()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_mem_region_set(system_, ""), DOCA_SUCCESS);
	EXPECT_EQ(doca_apsh_sys_kpgd_file_set(nullptr, "x"), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_kpgd_file_set(system_, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_kpgd_file_set(system_, not_json.path()), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_dev_set(nullptr, rep_), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_dev_set(system_, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_MEM_REGION, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_KPGD_FILE, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_VHCA_ID, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sys_config(system_, DOCA_APSH_VHCA_ID, rep_), DOCA_SUCCESS);
	// A failed setter leaves the previous configuration in place.
	start();
	EXPECT_TRUE(last_hints_.symbols.empty());
}
