// App Shield queries against a fake guest: snapshots, info getters, documented errors, limits,
// Windows-only functions and snapshot lifetimes.
#include "api_fixture.hpp"

#include <string>

using namespace apsh_test;

TEST_F(ApshApi, ProcessesAndTheirAttributes)
{
	start();
	doca_apsh_process *app = process(42);
	ASSERT_NE(app, nullptr);
	EXPECT_EQ(process_count_, 2);
	EXPECT_STREQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_COMM), "marker_app");
	EXPECT_EQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_PPID), 1u);
	EXPECT_EQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_CPU_TIME), 2500u * 1000u) << "picoseconds";
	EXPECT_EQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_LINUX_UID), 1000u);
	EXPECT_EQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_LINUX_GID), 100u);
	EXPECT_EQ(doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_LINUX_STATE), 0u);
	EXPECT_EQ(__doca_apsh_process_info_get(app, DOCA_APSH_PROCESS_WINDOWS_OFFSET), nullptr);
	EXPECT_EQ(__doca_apsh_process_info_get(nullptr, DOCA_APSH_PROCESS_PID), nullptr);
}

TEST_F(ApshApi, QueriesBeforeStart)
{
	doca_apsh_process **processes = nullptr;
	doca_apsh_module **modules = nullptr;
	doca_apsh_netscan **connections = nullptr;
	int n = 0;
	EXPECT_EQ(doca_apsh_processes_get(system_, &processes, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_modules_get(system_, &modules, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_netscan_get(system_, &connections, &n), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_apsh_processes_get(nullptr, &processes, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_modules_get(nullptr, &modules, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_netscan_get(nullptr, &connections, &n), DOCA_ERROR_INVALID_VALUE);
	start();
	EXPECT_EQ(doca_apsh_processes_get(system_, nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_processes_get(system_, &processes, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ApshApi, ThreadsLibsVadsModulesEnvars)
{
	start();
	doca_apsh_process *app = process(42);
	ASSERT_NE(app, nullptr);

	doca_apsh_thread **threads = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_threads_get(app, &threads, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2);
	EXPECT_EQ(doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_TID), 43u);
	EXPECT_EQ(doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_PID), 42u);
	EXPECT_EQ(doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_STATE), 1u);
	EXPECT_STREQ(doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_LINUX_THREAD_NAME), "worker");
	EXPECT_STREQ(doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_LINUX_PROC_NAME), "marker_app");
	EXPECT_EQ(__doca_apsh_thread_info_get(threads[1], DOCA_APSH_THREAD_WINDOWS_OFFSET), nullptr);
	doca_apsh_threads_free(threads);

	doca_apsh_lib **libs = nullptr;
	ASSERT_EQ(doca_apsh_libs_get(app, &libs, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(doca_apsh_lib_info_get(libs[0], DOCA_APSH_LIB_LIBRARY_PATH), "/lib/libc.so.6");
	EXPECT_EQ(doca_apsh_lib_info_get(libs[0], DOCA_APSH_LIB_LOAD_ADRESS), 0x7f0000000000u);
	EXPECT_EQ(doca_apsh_lib_info_get(libs[0], DOCA_APSH_LIB_LINUX_LOAD_ADRESS), 0x7f0000000000u);
	EXPECT_EQ(doca_apsh_lib_info_get(libs[0], DOCA_APSH_LIB_PID), 42u);
	doca_apsh_libs_free(libs);

	doca_apsh_vad **vads = nullptr;
	ASSERT_EQ(doca_apsh_vads_get(app, &vads, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 3);
	EXPECT_STREQ(doca_apsh_vad_info_get(vads[0], DOCA_APSH_VMA_PROTECTION), "r-x");
	EXPECT_STREQ(doca_apsh_vad_info_get(vads[2], DOCA_APSH_VMA_PROTECTION), "rwx");
	EXPECT_STREQ(doca_apsh_vad_info_get(vads[0], DOCA_APSH_VMA_FILE_PATH), "/bin/marker_app");
	EXPECT_STREQ(doca_apsh_vad_info_get(vads[0], DOCA_APSH_VMA_PROCESS_NAME), "marker_app");
	EXPECT_EQ(doca_apsh_vad_info_get(vads[1], DOCA_APSH_VMA_VM_START), 0x600000u);
	EXPECT_EQ(doca_apsh_vad_info_get(vads[1], DOCA_APSH_VMA_VM_END), 0x603000u);
	EXPECT_EQ(doca_apsh_vad_info_get(vads[1], DOCA_APSH_VMA_OFFSET), 0u);
	EXPECT_EQ(doca_apsh_vad_info_get(vads[1], DOCA_APSH_VMA_PID), 42u);
	doca_apsh_vads_free(vads);

	doca_apsh_envar **envars = nullptr;
	ASSERT_EQ(doca_apsh_envars_get(app, &envars, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2);
	EXPECT_STREQ(doca_apsh_envar_info_get(envars[0], DOCA_APSH_ENVARS_VARIABLE), "MARKER");
	EXPECT_STREQ(doca_apsh_envar_info_get(envars[0], DOCA_APSH_ENVARS_VALUE), "yes");
	EXPECT_EQ(doca_apsh_envar_info_get(envars[0], DOCA_APSH_ENVARS_PID), 42u);
	doca_apsh_envars_free(envars);

	doca_apsh_module **modules = nullptr;
	ASSERT_EQ(doca_apsh_modules_get(system_, &modules, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(doca_apsh_module_info_get(modules[0], DOCA_APSH_MODULES_NAME), "marker_mod");
	EXPECT_EQ(doca_apsh_module_info_get(modules[0], DOCA_APSH_MODULES_SIZE), 16384u);
	EXPECT_EQ(doca_apsh_module_info_get(modules[0], DOCA_APSH_MODULES_OFFSET), 0xffffffffc0000000u);
	doca_apsh_module_free(modules);
}

TEST_F(ApshApi, EmptyPerProcessResultsAreNull)
{
	start();
	doca_apsh_process *init = process(1);
	ASSERT_NE(init, nullptr);
	doca_apsh_thread **threads = reinterpret_cast<doca_apsh_thread **>(0x1);
	int n = -1;
	ASSERT_EQ(doca_apsh_threads_get(init, &threads, &n), DOCA_SUCCESS);
	EXPECT_EQ(threads, nullptr);
	EXPECT_EQ(n, 0);
	doca_apsh_threads_free(threads); // NULL is fine
}

TEST_F(ApshApi, NetscanInjectionsParameters)
{
	start();
	doca_apsh_netscan **connections = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_netscan_get(system_, &connections, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 2);
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_PROTOCOL), "TCPv4");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_STATE), "ESTABLISHED");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_LOCAL_ADDR), "10.0.2.15");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_REMOTE_ADDR), "10.0.2.2");
	EXPECT_EQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_LOCAL_PORT), 4242);
	EXPECT_EQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_REMOTE_PORT), 80);
	EXPECT_EQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_PID), 42u);
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_COMM), "marker_app");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[0], DOCA_APSH_NETSCAN_TIME), "");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[1], DOCA_APSH_NETSCAN_PROTOCOL), "UDPv6");
	EXPECT_STREQ(doca_apsh_netscan_info_get(connections[1], DOCA_APSH_NETSCAN_STATE), "UNCONNECTED");
	doca_apsh_netscan_free(connections);

	doca_apsh_process *app = process(42);
	doca_apsh_injection_detect **injections = nullptr;
	ASSERT_EQ(doca_apsh_injection_detect_get(app, &injections, &n), DOCA_SUCCESS);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(doca_apsh_injection_detect_info_get(injections[0], DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION),
		     "rwx");
	EXPECT_EQ(doca_apsh_injection_detect_info_get(injections[0], DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START),
		  0x700000u);
	EXPECT_EQ(doca_apsh_injection_detect_info_get(injections[0], DOCA_APSH_INJECTION_DETECT_VAD_END), 0x701000u);
	EXPECT_STREQ(doca_apsh_injection_detect_info_get(injections[0], DOCA_APSH_INJECTION_DETECT_VAD_TAG), "");
	doca_apsh_injection_detect_free(injections);

	doca_apsh_process_parameters *parameters = nullptr;
	ASSERT_EQ(doca_apsh_process_parameters_get(app, &parameters), DOCA_SUCCESS);
	EXPECT_STREQ(doca_apsh_process_parameters_info_get(parameters, DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE),
		     "marker_app --flag");
	EXPECT_STREQ(doca_apsh_process_parameters_info_get(parameters, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH),
		     "/bin/marker_app");
	EXPECT_EQ(doca_apsh_process_parameters_info_get(parameters, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR),
		  0x400000u);
	doca_apsh_process_parameters_free(parameters);
	EXPECT_EQ(doca_apsh_process_parameters_get(nullptr, &parameters), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_process_parameters_get(app, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(ApshApi, WindowsOnlyFunctionsAreNotSupported)
{
	start();
	doca_apsh_process *app = process(42);
	int n = 0;
	doca_apsh_privilege **privileges = nullptr;
	doca_apsh_handle **handles = nullptr;
	doca_apsh_ldrmodule **ldrmodules = nullptr;
	doca_apsh_sid **sids = nullptr;
	EXPECT_EQ(doca_apsh_privileges_get(app, &privileges, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_handles_get(app, &handles, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_ldrmodules_get(app, &ldrmodules, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_sids_get(app, &sids, &n), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_apsh_privileges_get(nullptr, &privileges, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_handles_get(app, nullptr, &n), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_ldrmodules_get(app, &ldrmodules, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_apsh_sids_get(nullptr, &sids, &n), DOCA_ERROR_INVALID_VALUE);
	doca_apsh_privileges_free(nullptr);
	doca_apsh_handles_free(nullptr);
	doca_apsh_ldrmodules_free(nullptr);
	doca_apsh_sids_free(nullptr);
}

TEST_F(ApshApi, ReaderFailuresMapToDocumentedCodes)
{
	start();
	doca_apsh_process *app = process(42);
	int n = 0;
	guest_->fail = {DOCA_ERROR_IO_FAILED, "torn list"};
	doca_apsh_thread **threads = nullptr;
	EXPECT_EQ(doca_apsh_threads_get(app, &threads, &n), DOCA_ERROR_INITIALIZATION);
	doca_apsh_process **processes = nullptr;
	EXPECT_EQ(doca_apsh_processes_get(system_, &processes, &n), DOCA_ERROR_INITIALIZATION);
	guest_->fail = {DOCA_ERROR_NOT_FOUND, "process 42 exited"};
	doca_apsh_vad **vads = nullptr;
	EXPECT_EQ(doca_apsh_vads_get(app, &vads, &n), DOCA_ERROR_NOT_FOUND);
	doca_apsh_injection_detect **injections = nullptr;
	EXPECT_EQ(doca_apsh_injection_detect_get(app, &injections, &n), DOCA_ERROR_NOT_FOUND);
	doca_apsh_lib **libs = nullptr;
	EXPECT_EQ(doca_apsh_libs_get(app, &libs, &n), DOCA_ERROR_INITIALIZATION) << "libs_get documents no NOT_FOUND";
	guest_->fail = {DOCA_ERROR_BAD_STATE, "arguments paged out"};
	doca_apsh_process_parameters *parameters = nullptr;
	EXPECT_EQ(doca_apsh_process_parameters_get(app, &parameters), DOCA_ERROR_BAD_STATE);
	guest_->fail = {DOCA_ERROR_NO_MEMORY, "out of memory"};
	doca_apsh_envar **envars = nullptr;
	EXPECT_EQ(doca_apsh_envars_get(app, &envars, &n), DOCA_ERROR_NO_MEMORY);
	doca_apsh_module **modules = nullptr;
	EXPECT_EQ(doca_apsh_modules_get(system_, &modules, &n), DOCA_ERROR_NO_MEMORY);
	doca_apsh_netscan **connections = nullptr;
	EXPECT_EQ(doca_apsh_netscan_get(system_, &connections, &n), DOCA_ERROR_NO_MEMORY);
}

TEST_F(ApshApi, AllocationFailuresAreNoMemory)
{
	start();
	doca_apsh_process *app = process(42);
	int n = 0;
	using softdpu::apsh::api::testing::fail_next_allocations;
	fail_next_allocations(1);
	doca_apsh_process **processes = nullptr;
	EXPECT_EQ(doca_apsh_processes_get(system_, &processes, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_thread **threads = nullptr;
	EXPECT_EQ(doca_apsh_threads_get(app, &threads, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_lib **libs = nullptr;
	EXPECT_EQ(doca_apsh_libs_get(app, &libs, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_vad **vads = nullptr;
	EXPECT_EQ(doca_apsh_vads_get(app, &vads, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_module **modules = nullptr;
	EXPECT_EQ(doca_apsh_modules_get(system_, &modules, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_envar **envars = nullptr;
	EXPECT_EQ(doca_apsh_envars_get(app, &envars, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_netscan **connections = nullptr;
	EXPECT_EQ(doca_apsh_netscan_get(system_, &connections, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_injection_detect **injections = nullptr;
	EXPECT_EQ(doca_apsh_injection_detect_get(app, &injections, &n), DOCA_ERROR_NO_MEMORY);
	fail_next_allocations(1);
	doca_apsh_process_parameters *parameters = nullptr;
	EXPECT_EQ(doca_apsh_process_parameters_get(app, &parameters), DOCA_ERROR_NO_MEMORY);
}

// No C++ exception crosses extern "C": a reader that throws std::bad_alloc makes every query
// return DOCA_ERROR_NO_MEMORY (any other exception DOCA_ERROR_INITIALIZATION), hands out nothing,
// leaves no snapshot behind (TearDown counts them; the ASan build checks the memory), and the system
// answers the next query.
TEST_F(ApshApi, ExceptionsInAQueryDoNotCrossTheCApi)
{
	start();
	doca_apsh_process *app = process(42);
	ASSERT_NE(app, nullptr);
	const size_t live = softdpu::apsh::api::testing::live_snapshots();
	for (const bool bad_alloc : {true, false}) {
		SCOPED_TRACE(bad_alloc ? "std::bad_alloc" : "std::runtime_error");
		guest_->throw_bad_alloc = bad_alloc;
		const doca_error_t expected = bad_alloc ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INITIALIZATION;
		int n = -1;
		guest_->throw_in = "processes";
		doca_apsh_process **processes = nullptr;
		EXPECT_EQ(doca_apsh_processes_get(system_, &processes, &n), expected);
		EXPECT_EQ(processes, nullptr);
		guest_->throw_in = "modules";
		doca_apsh_module **modules = nullptr;
		EXPECT_EQ(doca_apsh_modules_get(system_, &modules, &n), expected);
		EXPECT_EQ(modules, nullptr);
		guest_->throw_in = "connections";
		doca_apsh_netscan **connections = nullptr;
		EXPECT_EQ(doca_apsh_netscan_get(system_, &connections, &n), expected);
		EXPECT_EQ(connections, nullptr);
		guest_->throw_in = "threads";
		doca_apsh_thread **threads = nullptr;
		EXPECT_EQ(doca_apsh_threads_get(app, &threads, &n), expected);
		EXPECT_EQ(threads, nullptr);
		guest_->throw_in = "libraries";
		doca_apsh_lib **libs = nullptr;
		EXPECT_EQ(doca_apsh_libs_get(app, &libs, &n), expected);
		EXPECT_EQ(libs, nullptr);
		guest_->throw_in = "memory_areas";
		doca_apsh_vad **vads = nullptr;
		EXPECT_EQ(doca_apsh_vads_get(app, &vads, &n), expected);
		EXPECT_EQ(vads, nullptr);
		guest_->throw_in = "envars";
		doca_apsh_envar **envars = nullptr;
		EXPECT_EQ(doca_apsh_envars_get(app, &envars, &n), expected);
		EXPECT_EQ(envars, nullptr);
		guest_->throw_in = "injections";
		doca_apsh_injection_detect **injections = nullptr;
		EXPECT_EQ(doca_apsh_injection_detect_get(app, &injections, &n), expected);
		EXPECT_EQ(injections, nullptr);
		guest_->throw_in = "parameters";
		doca_apsh_process_parameters *parameters = nullptr;
		EXPECT_EQ(doca_apsh_process_parameters_get(app, &parameters), expected);
		EXPECT_EQ(parameters, nullptr);
		EXPECT_EQ(n, -1) << "a failed query reports no size";
		EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live);
	}
	guest_->throw_in.clear();
	doca_apsh_module **modules = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_modules_get(system_, &modules, &n), DOCA_SUCCESS);
	EXPECT_EQ(n, 1);
	doca_apsh_module_free(modules);
	doca_apsh_process_parameters *parameters = nullptr;
	ASSERT_EQ(doca_apsh_process_parameters_get(app, &parameters), DOCA_SUCCESS);
	EXPECT_STREQ(doca_apsh_process_parameters_info_get(parameters, DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE),
		     "marker_app --flag");
	doca_apsh_process_parameters_free(parameters);
	EXPECT_EQ(softdpu::apsh::api::testing::live_snapshots(), live);
}

TEST_F(ApshApi, SnapshotsOutliveTheirSystemAndContext)
{
	start();
	doca_apsh_process *app = process(42);
	doca_apsh_vad **vads = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_vads_get(app, &vads, &n), DOCA_SUCCESS);
	doca_apsh_system_destroy(system_);
	system_ = nullptr;
	doca_apsh_destroy(ctx_);
	ctx_ = nullptr;
	// Strings and the process stay valid until freed; the process can still be queried.
	EXPECT_STREQ(doca_apsh_vad_info_get(vads[0], DOCA_APSH_VMA_FILE_PATH), "/bin/marker_app");
	doca_apsh_thread **threads = nullptr;
	EXPECT_EQ(doca_apsh_threads_get(app, &threads, &n), DOCA_SUCCESS);
	doca_apsh_threads_free(threads);
	doca_apsh_vads_free(vads);
}

TEST_F(ApshApi, ForeignAndDoubleFreesAreIgnored)
{
	start();
	doca_apsh_process **processes = nullptr;
	int n = 0;
	ASSERT_EQ(doca_apsh_processes_get(system_, &processes, &n), DOCA_SUCCESS);
	doca_apsh_process *fake[2] = {nullptr, nullptr};
	doca_apsh_processes_free(fake);
	doca_apsh_processes_free(processes);
	doca_apsh_processes_free(processes);
}
