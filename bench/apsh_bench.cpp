// App Shield on the 256 MiB test guest, through the public DOCA API as an application uses it
// (issue 5 goals: zero-config system start + process list < 0.2 s, full sweep < 1 s, < 100 MiB
// peak RSS; issue 23: process list, full sweep, attestation and YARA of every process on the big
// guests of tests/guest/boot --big N, driven by bench/apsh_scale.py). The guest is a snapshot
// directory of tests/guest (memory.raw, memory.elf, memory.lime) named by SOFTDPU_GUEST_SNAPSHOT,
// and a running guest (QEMU's shared RAM file and QMP socket from the guest.env of the run dir
// named by SOFTDPU_GUEST_RUN_DIR); a source whose variable is unset is skipped.
//
//   SOFTDPU_GUEST_SNAPSHOT=build/guest-snapshots/g4 SOFTDPU_GUEST_RUN_DIR=build/guest-run/mine
//     build/.../bench/bench_apsh --benchmark_repetitions=10   (one command line)
//
// Counters: processes / threads / vads / libs found per iteration, peak_rss_MiB (VmHWM of this
// process so far: it includes the guest pages it touched through its mapping of the image) and
// rss_anon_MiB (what the process allocated itself, read at the end of the benchmark).
#include <doca_apsh.h>
#include <doca_apsh_attr.h>
#include <doca_dev.h>
#include <doca_log.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

const char *kSources[] = {"raw:memory.raw", "elf_core:memory.elf", "lime:memory.lime"};

// VmHWM and RssAnon of this process, in MiB.
double status_mib(const char *field)
{
	std::ifstream in("/proc/self/status");
	for (std::string line; std::getline(in, line);)
		if (line.starts_with(field))
			return std::strtod(line.c_str() + std::strlen(field), nullptr) / 1024.0;
	return 0;
}

// The DPU device and its first representor, opened once for the whole run.
struct Devices {
	doca_devinfo **list = nullptr;
	doca_dev *dev = nullptr;
	doca_devinfo_rep **reps = nullptr;
	doca_dev_rep *rep = nullptr;
	std::string error;

	Devices()
	{
		::setenv("SOFTDPU_SIDE", "dpu", 1);
		::unsetenv("SOFTDPU_TOPOLOGY");
		uint32_t count = 0;
		if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS) {
			error = "no devices";
			return;
		}
		for (uint32_t i = 0; i < count && dev == nullptr; ++i) {
			uint8_t net = 0;
			if (doca_devinfo_rep_cap_is_filter_net_supported(list[i], &net) == DOCA_SUCCESS && net)
				doca_dev_open(list[i], &dev);
		}
		uint32_t rep_count = 0;
		if (dev == nullptr ||
		    doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &rep_count) != DOCA_SUCCESS ||
		    rep_count == 0 || doca_dev_rep_open(reps[0], &rep) != DOCA_SUCCESS)
			error = "no DPU device with a representor";
	}
};

Devices &devices()
{
	static Devices instance;
	return instance;
}

// KEY=value lines of a guest.env file.
std::string env_file_value(const std::string &path, const std::string &key)
{
	std::ifstream in(path);
	for (std::string line; std::getline(in, line);)
		if (line.starts_with(key + "="))
			return line.substr(key.size() + 1);
	return {};
}

// Points SOFTDPU_APSH_MEMORY at one image of the snapshot (0-2) or at the live guest (3); false
// (and the reason) when absent.
bool select_source(benchmark::State &state, int index)
{
	if (index == 3) {
		const char *run_dir = std::getenv("SOFTDPU_GUEST_RUN_DIR");
		const std::string env = run_dir != nullptr ? std::string(run_dir) + "/guest.env" : "";
		const std::string ram = env.empty() ? "" : env_file_value(env, "RAM_FILE");
		const std::string qmp = env.empty() ? "" : env_file_value(env, "QMP_SOCKET");
		if (ram.empty() || qmp.empty()) {
			state.SkipWithError("set SOFTDPU_GUEST_RUN_DIR to the run dir of a running tests/guest guest");
			return false;
		}
		const std::string value = "qemu_shared_ram:" + ram + ",qmp=" + qmp;
		::setenv("SOFTDPU_APSH_MEMORY", value.c_str(), 1);
		state.SetLabel("live qemu_shared_ram");
		return devices().error.empty();
	}
	const char *dir = std::getenv("SOFTDPU_GUEST_SNAPSHOT");
	if (dir == nullptr) {
		state.SkipWithError("set SOFTDPU_GUEST_SNAPSHOT to a tests/guest snapshot directory");
		return false;
	}
	if (!devices().error.empty()) {
		state.SkipWithError(devices().error.c_str());
		return false;
	}
	const std::string spec = kSources[index];
	const size_t colon = spec.find(':');
	const std::string value = spec.substr(0, colon + 1) + dir + "/" + spec.substr(colon + 1);
	::setenv("SOFTDPU_APSH_MEMORY", value.c_str(), 1);
	state.SetLabel(spec.substr(0, colon));
	return true;
}

struct System {
	doca_apsh_ctx *ctx = nullptr;
	doca_apsh_system *system = nullptr;

	// The whole zero-config flow: context, DMA device, system, representor, start.
	doca_error_t start()
	{
		ctx = doca_apsh_create();
		if (ctx == nullptr)
			return DOCA_ERROR_NO_MEMORY;
		doca_error_t status = doca_apsh_dma_dev_set(ctx, devices().dev);
		if (status == DOCA_SUCCESS)
			status = doca_apsh_start(ctx);
		if (status != DOCA_SUCCESS)
			return status;
		system = doca_apsh_system_create(ctx);
		if (system == nullptr)
			return DOCA_ERROR_NO_MEMORY;
		status = doca_apsh_sys_os_type_set(system, DOCA_APSH_SYSTEM_LINUX);
		if (status == DOCA_SUCCESS)
			status = doca_apsh_sys_dev_set(system, devices().rep);
		if (status == DOCA_SUCCESS)
			status = doca_apsh_system_start(system);
		return status;
	}

	~System()
	{
		if (system != nullptr)
			doca_apsh_system_destroy(system);
		if (ctx != nullptr)
			doca_apsh_destroy(ctx);
	}
};

void report_memory(benchmark::State &state)
{
	state.counters["peak_rss_MiB"] = status_mib("VmHWM:");
	state.counters["rss_anon_MiB"] = status_mib("RssAnon:");
}

// The benchmark's source (its argument) selected and a system started on it; false (the benchmark
// skipped with the reason) when either fails.
bool start_on_source(benchmark::State &state, System &system)
{
	if (!select_source(state, static_cast<int>(state.range(0))))
		return false;
	if (doca_error_t status = system.start(); status != DOCA_SUCCESS) {
		state.SkipWithError(doca_error_get_descr(status));
		return false;
	}
	return true;
}

// Zero-config system start plus the full process list, from nothing (every iteration opens the
// image, finds the kernel, decodes kallsyms and BTF, walks the task list).
void BM_StartAndProcessList(benchmark::State &state)
{
	if (!select_source(state, static_cast<int>(state.range(0))))
		return;
	int processes = 0;
	for (auto _ : state) {
		System system;
		doca_error_t status = system.start();
		doca_apsh_process **list = nullptr;
		if (status == DOCA_SUCCESS)
			status = doca_apsh_processes_get(system.system, &list, &processes);
		if (status != DOCA_SUCCESS) {
			state.SkipWithError(doca_error_get_descr(status));
			return;
		}
		doca_apsh_processes_free(list);
	}
	state.counters["processes"] = processes;
	report_memory(state);
}

// A full sweep on a started system: the process list, then threads, memory areas and libraries
// of every process.
void BM_FullSweep(benchmark::State &state)
{
	System system;
	if (!start_on_source(state, system))
		return;
	int processes = 0;
	int64_t threads = 0, vads = 0, libs = 0;
	for (auto _ : state) {
		doca_apsh_process **list = nullptr;
		if (doca_apsh_processes_get(system.system, &list, &processes) != DOCA_SUCCESS) {
			state.SkipWithError("processes_get failed");
			return;
		}
		threads = vads = libs = 0;
		for (int i = 0; i < processes; ++i) {
			doca_apsh_thread **thread_list = nullptr;
			doca_apsh_vad **vad_list = nullptr;
			doca_apsh_lib **lib_list = nullptr;
			int n = 0;
			if (doca_apsh_threads_get(list[i], &thread_list, &n) == DOCA_SUCCESS) {
				threads += n;
				doca_apsh_threads_free(thread_list);
			}
			if (doca_apsh_vads_get(list[i], &vad_list, &n) == DOCA_SUCCESS) {
				vads += n;
				doca_apsh_vads_free(vad_list);
			}
			if (doca_apsh_libs_get(list[i], &lib_list, &n) == DOCA_SUCCESS) {
				libs += n;
				doca_apsh_libs_free(lib_list);
			}
		}
		doca_apsh_processes_free(list);
	}
	state.counters["processes"] = processes;
	state.counters["threads"] = static_cast<double>(threads);
	state.counters["vads"] = static_cast<double>(vads);
	state.counters["libs"] = static_cast<double>(libs);
	report_memory(state);
}

// The process list alone, on a started system.
void BM_ProcessList(benchmark::State &state)
{
	System system;
	if (!start_on_source(state, system))
		return;
	int processes = 0;
	for (auto _ : state) {
		doca_apsh_process **list = nullptr;
		if (doca_apsh_processes_get(system.system, &list, &processes) != DOCA_SUCCESS) {
			state.SkipWithError("processes_get failed");
			return;
		}
		doca_apsh_processes_free(list);
	}
	state.counters["processes"] = processes;
	report_memory(state);
}

// Attestation of every process on a started system (the process list, then
// doca_apsh_attestation_get of each against the hash map SOFTDPU_GUEST_HASH_MAP names: a
// softdpu-exec-hash-build-map of the guest's initramfs tree).
void BM_AttestAll(benchmark::State &state)
{
	const char *map = std::getenv("SOFTDPU_GUEST_HASH_MAP");
	if (map == nullptr) {
		state.SkipWithError("set SOFTDPU_GUEST_HASH_MAP to a softdpu-exec-hash-build-map output for the guest");
		return;
	}
	System system;
	if (!start_on_source(state, system))
		return;
	int processes = 0;
	int64_t areas = 0, matching = 0;
	for (auto _ : state) {
		doca_apsh_process **list = nullptr;
		if (doca_apsh_processes_get(system.system, &list, &processes) != DOCA_SUCCESS) {
			state.SkipWithError("processes_get failed");
			return;
		}
		areas = matching = 0;
		for (int i = 0; i < processes; ++i) {
			doca_apsh_attestation **attestation = nullptr;
			int n = 0;
			if (doca_apsh_attestation_get(list[i], map, &attestation, &n) != DOCA_SUCCESS)
				continue; // kernel threads have no memory areas
			areas += n;
			for (int a = 0; a < n; ++a)
				matching += static_cast<int64_t>(
				    doca_apsh_attst_info_get(attestation[a], DOCA_APSH_ATTESTATION_MATCHING_HASHES));
			doca_apsh_attestation_free(attestation);
		}
		doca_apsh_processes_free(list);
	}
	state.counters["processes"] = processes;
	state.counters["exec_areas"] = static_cast<double>(areas);
	state.counters["matching_pages"] = static_cast<double>(matching);
	report_memory(state);
}

// YARA (DOCA's three built-in rules, every memory area, default windows) over every process on a
// started system.
void BM_YaraAll(benchmark::State &state)
{
	System system;
	if (!start_on_source(state, system))
		return;
	doca_apsh_yara_rule rules[] = {DOCA_APSH_YARA_RULE_HELLO_WORLD, DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION,
				       DOCA_APSH_YARA_RULE_MIMIKATZ};
	int processes = 0;
	int64_t matches = 0;
	for (auto _ : state) {
		doca_apsh_process **list = nullptr;
		if (doca_apsh_processes_get(system.system, &list, &processes) != DOCA_SUCCESS) {
			state.SkipWithError("processes_get failed");
			return;
		}
		matches = 0;
		for (int i = 0; i < processes; ++i) {
			doca_apsh_yara **found = nullptr;
			int n = 0;
			if (doca_apsh_yara_get(list[i], rules, 3, DOCA_APSH_YARA_SCAN_VMA, &found, &n) != DOCA_SUCCESS)
				continue; // kernel threads have no memory areas
			matches += n;
			doca_apsh_yara_free(found);
		}
		doca_apsh_processes_free(list);
	}
	state.counters["processes"] = processes;
	state.counters["matches"] = static_cast<double>(matches);
	report_memory(state);
}

// Silence App Shield's SDK log (a failing start would otherwise print per iteration).
const bool quiet = [] {
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	return true;
}();

} // namespace

BENCHMARK(BM_StartAndProcessList)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FullSweep)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ProcessList)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AttestAll)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_YaraAll)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
