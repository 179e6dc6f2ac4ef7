// "softdpu apsh" and softdpu-apsh-config on the test guest's snapshot, compared with the guest's
// own ground truth (tests/guest). The snapshot directory comes from SOFTDPU_GUEST_SNAPSHOT (set by
// ctest through the guest_l4 fixture); without it every test skips.
#include "ground_truth.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using softdpu::guest::GroundTruth;

struct Result {
	int status = -1;
	std::string out;
	std::string err;
};

std::string quote(const std::string &arg)
{
	std::string quoted = "'";
	for (char c : arg) {
		if (c == '\'')
			quoted += "'\\''";
		else
			quoted += c;
	}
	return quoted + "'";
}

std::string slurp(const fs::path &path)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

Result run(const std::string &program, const std::vector<std::string> &args)
{
	static int counter = 0;
	const fs::path err_file = fs::temp_directory_path() /
				  ("apsh_cli_test." + std::to_string(::getpid()) + "." + std::to_string(counter++));
	std::string command = quote(program);
	for (const std::string &arg : args)
		command += " " + quote(arg);
	command += " 2>" + quote(err_file.string());
	Result result;
	FILE *pipe = ::popen(command.c_str(), "r");
	if (pipe == nullptr)
		return result;
	char buffer[65536];
	for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
		result.out.append(buffer, n);
	const int status = ::pclose(pipe);
	result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	result.err = slurp(err_file);
	fs::remove(err_file);
	return result;
}

Result apsh(std::vector<std::string> args)
{
	args.insert(args.begin(), "apsh");
	return run(SOFTDPU_CLI, args);
}

// A query's JSON output; fails the test (and returns an empty array) when the CLI failed.
Json apsh_json(std::vector<std::string> args)
{
	args.push_back("--json");
	const Result result = apsh(args);
	EXPECT_EQ(result.status, 0) << result.err;
	if (result.status != 0)
		return Json::array();
	try {
		return Json::parse(result.out);
	} catch (const std::exception &error) {
		ADD_FAILURE() << "not JSON: " << error.what() << "\n" << result.out.substr(0, 400);
		return Json::array();
	}
}

class ApshCliGuest : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		// The CLI picks its device and memory source from these; only --memory may choose here.
		::setenv("SOFTDPU_SIDE", "dpu", 1);
		::unsetenv("SOFTDPU_TOPOLOGY");
		::unsetenv("SOFTDPU_APSH_MEMORY");
		const char *dir = std::getenv("SOFTDPU_GUEST_SNAPSHOT");
		if (dir == nullptr || !fs::exists(fs::path(dir) / "memory.raw"))
			return;
		snapshot_ = dir;
		truth_ = std::make_unique<GroundTruth>(GroundTruth::load((snapshot_ / "ground-truth.txt").string()));
	}
	static void TearDownTestSuite() { truth_.reset(); }

	void SetUp() override
	{
		if (!truth_)
			GTEST_SKIP()
			    << "SOFTDPU_GUEST_SNAPSHOT names no guest snapshot (ctest's guest_l4 fixture sets it)";
	}

	static std::string raw() { return "raw:" + (snapshot_ / "memory.raw").string(); }

	static uint32_t pid_of(const std::string &comm)
	{
		for (const auto *process : truth_->stable_processes())
			if (process->comm == comm)
				return process->pid;
		ADD_FAILURE() << "no " << comm << " in the ground truth";
		return 0;
	}

	static inline fs::path snapshot_;
	static inline std::unique_ptr<GroundTruth> truth_;
};

// Processes by pid from the CLI's JSON.
std::map<uint32_t, Json> by_pid(const Json &rows)
{
	std::map<uint32_t, Json> out;
	for (const Json &row : rows)
		out[row.at("pid").get<uint32_t>()] = row;
	return out;
}

TEST_F(ApshCliGuest, PsMatchesGroundTruthOnEveryImageKind)
{
	for (const std::string kind : {"raw", "elf", "lime"}) {
		SCOPED_TRACE(kind);
		const std::string file = kind == "raw" ? "memory.raw" : kind == "elf" ? "memory.elf" : "memory.lime";
		const auto processes = by_pid(apsh_json({"ps", "--memory", kind + ":" + (snapshot_ / file).string()}));
		size_t compared = 0;
		for (const auto *gt : truth_->stable_processes()) {
			if (gt->comm.starts_with("kworker/"))
				continue; // kernel workers come and go, and procfs decorates their names
			auto it = processes.find(gt->pid);
			ASSERT_NE(it, processes.end()) << "pid " << gt->pid << " (" << gt->comm << ") missing";
			const Json &row = it->second;
			EXPECT_EQ(row.at("comm"), gt->comm.substr(0, 15)) << gt->pid;
			EXPECT_EQ(row.at("ppid"), gt->ppid) << gt->pid;
			EXPECT_EQ(row.at("uid"), gt->uid) << gt->pid;
			EXPECT_EQ(row.at("gid"), gt->gid) << gt->pid;
			// The guest printed its states a moment before the snapshot paused it; only our own
			// programs, asleep for good by then, are certain to be in the same state.
			if (gt->comm.starts_with("apsh_") || gt->comm == "sleep" || gt->comm == "nc") {
				EXPECT_EQ(row.at("state"), std::string(1, gt->state)) << gt->pid << " " << gt->comm;
			}
			++compared;
		}
		EXPECT_GT(compared, 10u);
	}
}

TEST_F(ApshCliGuest, TableIsAlignedAndPidFilterSelects)
{
	const uint32_t target = pid_of("apsh_target");
	const Result result = apsh({"ps", "--memory", raw(), "--pid", std::to_string(target)});
	ASSERT_EQ(result.status, 0) << result.err;
	std::vector<std::string> lines;
	std::istringstream in(result.out);
	for (std::string line; std::getline(in, line);)
		lines.push_back(line);
	ASSERT_EQ(lines.size(), 2u) << result.out;
	EXPECT_TRUE(lines[0].starts_with("PID")) << lines[0];
	EXPECT_NE(lines[1].find("apsh_target"), std::string::npos);
	// The COMM column starts at the same offset in the header and in the row.
	EXPECT_EQ(lines[0].find("COMM"), lines[1].find("apsh_target"));
}

TEST_F(ApshCliGuest, ThreadsOfTheTargetHaveTheirTidsAndNames)
{
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const Json threads = apsh_json({"threads", "--memory", raw(), "--pid", std::to_string(target->pid)});
	std::map<uint32_t, std::string> seen;
	for (const Json &row : threads) {
		EXPECT_EQ(row.at("pid"), target->pid);
		seen[row.at("tid").get<uint32_t>()] = row.at("thread_name").get<std::string>();
	}
	for (const auto &[tid, name] : target->threads) {
		ASSERT_TRUE(seen.count(tid)) << "tid " << tid;
		EXPECT_EQ(seen[tid], name.substr(0, 15));
	}
	EXPECT_EQ(seen.size(), truth_->threads_of(target->pid).size());
}

TEST_F(ApshCliGuest, ThreadsOfAllProcessesMatchGroundTruth)
{
	std::set<std::pair<uint32_t, uint32_t>> seen;
	for (const Json &row : apsh_json({"threads", "--memory", raw()}))
		seen.emplace(row.at("pid").get<uint32_t>(), row.at("tid").get<uint32_t>());
	for (const auto *gt : truth_->stable_processes()) {
		if (gt->kernel_thread)
			continue;
		for (const auto &thread : truth_->threads_of(gt->pid))
			EXPECT_TRUE(seen.count({thread.pid, thread.tid})) << thread.pid << "/" << thread.tid;
	}
}

TEST_F(ApshCliGuest, VadsLibsParamsEnvarsOfTheTarget)
{
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const std::string pid = std::to_string(target->pid);
	const Json vads = apsh_json({"vads", "--memory", raw(), "--pid", pid});
	ASSERT_TRUE(truth_->maps.count(target->pid));
	const auto &maps = truth_->maps.at(target->pid);
	std::set<std::string> starts;
	for (const Json &row : vads)
		starts.insert(row.at("start").get<std::string>());
	for (const auto &mapping : maps) {
		char start[24];
		std::snprintf(start, sizeof(start), "0x%llx", static_cast<unsigned long long>(mapping.start));
		EXPECT_TRUE(starts.count(start)) << mapping.path << " at " << start;
	}
	EXPECT_EQ(vads.size(), maps.size());

	bool libc = false;
	for (const Json &row : apsh_json({"libs", "--memory", raw(), "--pid", pid}))
		libc = libc || row.at("path").get<std::string>().find("libc.so") != std::string::npos;
	EXPECT_TRUE(libc);

	const Json params = apsh_json({"params", "--memory", raw(), "--pid", pid});
	ASSERT_EQ(params.size(), 1u);
	const auto *gt = truth_->process(target->pid);
	ASSERT_NE(gt, nullptr);
	std::string command_line;
	for (const std::string &arg : gt->argv)
		command_line += (command_line.empty() ? "" : " ") + arg;
	EXPECT_EQ(params[0].at("command_line"), command_line);
	EXPECT_EQ(params[0].at("image_path"), gt->exe);

	bool marker = false;
	for (const Json &row : apsh_json({"envars", "--memory", raw(), "--pid", pid}))
		marker =
		    marker || (row.at("variable") == "APSH_DYN_MARKER" && row.at("value") == "apsh_dyn_env_d00dfeed");
	EXPECT_TRUE(marker);
}

TEST_F(ApshCliGuest, ModulesNetscanInjections)
{
	bool dummy = false;
	for (const Json &row : apsh_json({"modules", "--memory", raw()})) {
		if (row.at("name") != "dummy")
			continue;
		dummy = true;
		for (const auto &module : truth_->modules) {
			if (module.name == "dummy") {
				EXPECT_EQ(row.at("size").get<uint64_t>(), module.size);
			}
		}
	}
	EXPECT_TRUE(dummy);

	const uint32_t target = pid_of("apsh_target");
	std::set<std::pair<std::string, uint16_t>> listening;
	for (const Json &row : apsh_json({"netscan", "--memory", raw(), "--pid", std::to_string(target)})) {
		EXPECT_EQ(row.at("pid"), target);
		listening.emplace(row.at("protocol").get<std::string>(), row.at("local_port").get<uint16_t>());
	}
	EXPECT_TRUE(listening.count({"TCPv4", 4444}));
	EXPECT_TRUE(listening.count({"UDPv4", 5353}));
	EXPECT_TRUE(listening.count({"TCPv6", 6666}));

	const auto *info = truth_->target("apsh_target");
	ASSERT_NE(info, nullptr);
	bool rwx = false;
	for (const Json &row : apsh_json({"injections", "--memory", raw(), "--pid", std::to_string(target)})) {
		char start[24];
		std::snprintf(start, sizeof(start), "0x%llx", static_cast<unsigned long long>(info->rwx.start));
		rwx = rwx || row.at("start") == start;
	}
	EXPECT_TRUE(rwx);
}

// The guest's init starts three containers (tests/guest/initramfs/init); the Docker-style one is
// checked against the guest's /proc: its processes are those in its cgroup, its namespaces those of
// its process that is pid 1 in its own pid namespace.
TEST_F(ApshCliGuest, ContainersListsTheGuestsContainers)
{
	const std::string docker = "/system.slice/docker-";
	std::string id;
	std::set<std::string> pids;
	const softdpu::guest::GtProcess *init = nullptr;
	for (const auto *process : truth_->stable_processes()) {
		if (!process->cgroup.starts_with(docker))
			continue;
		id = process->cgroup.substr(docker.size(), 64);
		pids.insert(std::to_string(process->pid));
		if (process->ns_pid == 1)
			init = process;
	}
	ASSERT_EQ(id.size(), 64u);
	ASSERT_NE(init, nullptr);
	const Json rows = apsh_json({"containers", "--memory", raw()});
	ASSERT_EQ(rows.size(), 3u) << rows.dump();
	bool found = false;
	for (const Json &row : rows) {
		if (row.at("id") != id)
			continue;
		found = true;
		EXPECT_EQ(row.at("runtime"), "docker");
		std::set<std::string> got;
		std::stringstream list(row.at("pids").get<std::string>());
		for (std::string pid; std::getline(list, pid, ',');)
			got.insert(pid);
		EXPECT_EQ(got, pids);
		EXPECT_EQ(row.at("pid_ns").get<uint32_t>(), init->ns.at("pid"));
		EXPECT_EQ(row.at("mnt_ns").get<uint32_t>(), init->ns.at("mnt"));
		EXPECT_EQ(row.at("net_ns").get<uint32_t>(), init->ns.at("net"));
		EXPECT_EQ(row.at("cgroup"), init->cgroup);
	}
	EXPECT_TRUE(found) << rows.dump();
	EXPECT_NE(apsh({"containers", "--memory", raw(), "--pid", "1"}).status, 0);
}

// A kernel whose BTF has no namespaces (the guest's own BTF with "nsproxy" renamed, handed in
// through a symbol map): containers is NOT_SUPPORTED and names what is missing; ps still works.
TEST_F(ApshCliGuest, KernelWithoutNamespacesInItsBtfIsNotSupported)
{
	const char *cache = std::getenv("SOFTDPU_GUEST_CACHE");
	const std::string kernel_dir = cache != nullptr ? std::string(cache) + "/kernel" : SOFTDPU_GUEST_KERNEL_DIR;
	if (!fs::exists(kernel_dir + "/vmlinuz"))
		GTEST_SKIP() << "no cached kernel in " << kernel_dir;
	const fs::path dir = fs::temp_directory_path() / ("apsh_cli_nons." + std::to_string(::getpid()));
	Result offline = run(SOFTDPU_APSH_CONFIG, {"--vmlinuz", kernel_dir + "/vmlinuz", "-o", dir.string()});
	ASSERT_EQ(offline.status, 0) << offline.err;
	std::string btf = slurp(dir / "vmlinux.btf");
	const std::string name("nsproxy\0", 8);
	size_t renamed = 0;
	for (size_t at = btf.find(name); at != std::string::npos; at = btf.find(name, at + 1), renamed++)
		btf[at + 6] = 'z';
	ASSERT_GT(renamed, 0u);
	std::ofstream(dir / "vmlinux.btf", std::ios::binary | std::ios::trunc) << btf;

	const std::string symbols = (dir / "symbols.json").string();
	const Result containers = apsh({"containers", "--memory", raw(), "--symbols", symbols});
	const Result ps = apsh({"ps", "--memory", raw(), "--symbols", symbols, "--json"});
	fs::remove_all(dir);
	EXPECT_NE(containers.status, 0);
	EXPECT_NE(containers.err.find("NOT_SUPPORTED"), std::string::npos) << containers.err;
	EXPECT_NE(containers.err.find("task_struct.nsproxy"), std::string::npos) << containers.err;
	ASSERT_EQ(ps.status, 0) << ps.err;
	EXPECT_EQ(Json::parse(ps.out).size(), apsh_json({"ps", "--memory", raw()}).size());
}

TEST_F(ApshCliGuest, YaraUserRuleFindsTheMarkerOnlyInTheTarget)
{
	const fs::path rules = fs::temp_directory_path() / ("apsh_cli_rules." + std::to_string(::getpid()) + ".yar");
	std::ofstream(rules) << "rule rwx_marker { strings: $m = \"APSH_RWX_MARKER_9b7c3e41\" condition: $m }\n";
	const Json matches = apsh_json({"yara", "--memory", raw(), "--rules", rules.string(), "--monotonic"});
	fs::remove(rules);
	const uint32_t target = pid_of("apsh_target");
	std::set<uint32_t> pids;
	for (const Json &row : matches) {
		EXPECT_EQ(row.at("rule"), "rwx_marker");
		pids.insert(row.at("pid").get<uint32_t>());
	}
	EXPECT_TRUE(pids.count(target));
}

TEST_F(ApshCliGuest, AttestationMatchesTheGuestFiles)
{
	// The guest's files, hashed by softdpu-exec-hash-build-map from the initramfs tree.
	std::string root;
	{
		std::ifstream env(snapshot_ / "guest.env");
		for (std::string line; std::getline(env, line);)
			if (line.starts_with("INITRAMFS_ROOT="))
				root = line.substr(15);
	}
	if (root.empty() || !fs::exists(root + "/bin"))
		GTEST_SKIP() << "guest.env names no initramfs tree";
	const fs::path map = fs::temp_directory_path() / ("apsh_cli_hash." + std::to_string(::getpid()) + ".json");
	const Result built = run(SOFTDPU_EXEC_HASH_TOOL,
				 {"-o", map.string(), "--root", root, root + "/bin", root + "/lib", root + "/lib64"});
	ASSERT_EQ(built.status, 0) << built.err;
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const Json areas =
	    apsh_json({"attest", "--memory", raw(), "--hash-map", map.string(), "--pid", std::to_string(target->pid)});
	fs::remove(map);
	std::set<std::string> attested;
	for (const Json &row : areas) {
		EXPECT_EQ(row.at("pid"), target->pid);
		if (!row.at("hash_data_present").get<bool>())
			continue;
		attested.insert(row.at("path").get<std::string>());
		// An unmodified guest: every present page of a file we hashed matches.
		EXPECT_GT(row.at("pages_present").get<int>(), 0) << row.dump();
		EXPECT_EQ(row.at("matching_hashes"), row.at("pages_present")) << row.dump();
	}
	EXPECT_TRUE(attested.count("/bin/apsh_target"));
	EXPECT_TRUE(attested.count("/lib/x86_64-linux-gnu/libc.so.6"));
}

TEST_F(ApshCliGuest, ConfigFilesFromLiveModeGiveTheZeroConfigResult)
{
	// A /proc and /sys as the guest showed them: its kallsyms anchors and iomem from the ground
	// truth, its BTF from the cached kernel through the offline mode.
	const fs::path root = fs::temp_directory_path() / ("apsh_cli_root." + std::to_string(::getpid()));
	const fs::path out = root / "out";
	fs::create_directories(root / "proc/sys/kernel");
	fs::create_directories(root / "sys/kernel/btf");
	{
		std::ofstream kallsyms(root / "proc/kallsyms");
		for (const auto &[name, address] : truth_->symbols) {
			char line[128];
			std::snprintf(line, sizeof(line), "%016llx D %s\n", static_cast<unsigned long long>(address),
				      name.c_str());
			kallsyms << line;
		}
	}
	const std::string text = slurp(snapshot_ / "ground-truth.txt");
	const size_t begin = text.find("@@BEGIN iomem\n");
	const size_t end = text.find("@@END iomem");
	ASSERT_NE(begin, std::string::npos);
	ASSERT_NE(end, std::string::npos);
	std::ofstream(root / "proc/iomem") << text.substr(begin + 14, end - begin - 14);
	std::ofstream(root / "proc/sys/kernel/osrelease") << truth_->kernel_release << "\n";

	const char *cache = std::getenv("SOFTDPU_GUEST_CACHE");
	const std::string kernel_dir = cache != nullptr ? std::string(cache) + "/kernel" : SOFTDPU_GUEST_KERNEL_DIR;
	if (!fs::exists(kernel_dir + "/vmlinuz")) {
		fs::remove_all(root);
		GTEST_SKIP() << "no cached kernel in " << kernel_dir;
	}
	Result offline =
	    run(SOFTDPU_APSH_CONFIG, {"--vmlinuz", kernel_dir + "/vmlinuz", "-o", (root / "offline").string()});
	ASSERT_EQ(offline.status, 0) << offline.err;
	fs::copy_file(root / "offline/vmlinux.btf", root / "sys/kernel/btf/vmlinux");

	Result live = run(SOFTDPU_APSH_CONFIG, {"--live", "--root", root.string(), "-o", out.string()});
	ASSERT_EQ(live.status, 0) << live.err;
	for (const char *file : {"symbols.json", "vmlinux.btf", "mem_regions.json", "kpgd_file.conf"})
		EXPECT_TRUE(fs::exists(out / file)) << file << "\n" << live.out;
	// kpgd = physical start of "Kernel code" + (init_top_pgt - _text)
	ASSERT_TRUE(truth_->kernel_code.has_value());
	const uint64_t kpgd = truth_->kernel_code->start + (*truth_->symbol("init_top_pgt") - *truth_->symbol("_text"));
	char expected[24];
	std::snprintf(expected, sizeof(expected), "0x%llx", static_cast<unsigned long long>(kpgd));
	EXPECT_TRUE(slurp(out / "kpgd_file.conf").starts_with(std::string(expected) + "\n"));

	const Result zero_config = apsh({"ps", "--memory", raw(), "--json"});
	const Result configured =
	    apsh({"ps", "--memory", raw(), "--json", "--symbols", (out / "symbols.json").string(), "--regions",
		  (out / "mem_regions.json").string(), "--kpgd", (out / "kpgd_file.conf").string()});
	const Result offline_configured =
	    apsh({"ps", "--memory", raw(), "--json", "--symbols", (root / "offline/symbols.json").string()});
	fs::remove_all(root);
	ASSERT_EQ(zero_config.status, 0) << zero_config.err;
	ASSERT_EQ(configured.status, 0) << configured.err;
	ASSERT_EQ(offline_configured.status, 0) << offline_configured.err;
	EXPECT_EQ(configured.out, zero_config.out);
	EXPECT_EQ(offline_configured.out, zero_config.out);
	EXPECT_GT(Json::parse(zero_config.out).size(), 10u);
}

// The kpgd the reader derived itself, from "--verbose" (system start's INFO line "..., kpgd 0x...,").
std::string derived_kpgd(const std::string &err)
{
	const size_t at = err.find(", kpgd 0x");
	if (at == std::string::npos)
		return "";
	const size_t start = at + 7;
	return err.substr(start, err.find_first_not_of("0123456789abcdefx", start) - start);
}

TEST_F(ApshCliGuest, ConfigFilesWrittenInsideTheGuestGiveTheZeroConfigResult)
{
	// The guest ran softdpu-apsh-config --live itself (initramfs built with --apsh-config) and
	// sent the files in its ground truth.
	if (truth_->apsh_config_files.empty() && truth_->apsh_config_log.empty())
		GTEST_SKIP() << "the guest's initramfs has no softdpu-apsh-config (tests/guest/boot --apsh-config)";
	const auto &files = truth_->apsh_config_files;
	for (const char *name : {"symbols.json", "mem_regions.json", "kpgd_file.conf"})
		ASSERT_TRUE(files.count(name)) << name << " missing; the tool said:\n" << truth_->apsh_config_log;
	const fs::path dir = fs::temp_directory_path() / ("apsh_cli_guest_config." + std::to_string(::getpid()));
	fs::create_directories(dir);
	for (const auto &[name, text] : files)
		std::ofstream(dir / name, std::ios::binary) << text;

	// vmlinux.btf is the kernel's .BTF section (/sys/kernel/btf/vmlinux reads it in place); the
	// guest sent only its size and SHA-256. Take the bytes from the snapshot at the physical
	// address the guest's own files give (Kernel code start + __start_BTF - _text) and check them.
	const Json symbols = Json::parse(files.at("symbols.json"));
	ASSERT_TRUE(truth_->apsh_config_btf.has_value()) << truth_->apsh_config_log;
	ASSERT_EQ(symbols.value("btf", ""), "vmlinux.btf");
	auto address = [&](const char *name) {
		return std::stoull(symbols.at("symbols").at(name).get<std::string>(), nullptr, 16);
	};
	ASSERT_TRUE(truth_->kernel_code.has_value());
	const uint64_t btf_phys = truth_->kernel_code->start + (address("__start_BTF") - address("_text"));
	const uint64_t btf_size = address("__stop_BTF") - address("__start_BTF");
	ASSERT_EQ(btf_size, truth_->apsh_config_btf->first);
	{
		std::ifstream image(snapshot_ / "memory.raw", std::ios::binary);
		std::vector<char> bytes(btf_size);
		image.seekg(static_cast<std::streamoff>(btf_phys));
		ASSERT_TRUE(image.read(bytes.data(), static_cast<std::streamsize>(bytes.size())));
		std::ofstream(dir / "vmlinux.btf", std::ios::binary)
		    .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
	}
	const Result sum = run("sha256sum", {(dir / "vmlinux.btf").string()});
	ASSERT_EQ(sum.status, 0) << sum.err;
	EXPECT_EQ(sum.out.substr(0, 64), truth_->apsh_config_btf->second);

	const Result zero_config = apsh({"ps", "--memory", raw(), "--json", "--verbose"});
	const Result configured =
	    apsh({"ps", "--memory", raw(), "--json", "--verbose", "--symbols", (dir / "symbols.json").string(),
		  "--regions", (dir / "mem_regions.json").string(), "--kpgd", (dir / "kpgd_file.conf").string()});
	fs::remove_all(dir);
	ASSERT_EQ(zero_config.status, 0) << zero_config.err;
	ASSERT_EQ(configured.status, 0) << configured.err;
	EXPECT_EQ(configured.out, zero_config.out);
	EXPECT_GT(Json::parse(zero_config.out).size(), 10u);
	// The guest's kpgd (line 1 of kpgd_file.conf) is the one the reader finds with no files.
	const std::string guest_kpgd = files.at("kpgd_file.conf").substr(0, files.at("kpgd_file.conf").find('\n'));
	EXPECT_EQ(derived_kpgd(zero_config.err), guest_kpgd) << zero_config.err;
	EXPECT_EQ(derived_kpgd(configured.err), guest_kpgd) << configured.err;
}

TEST_F(ApshCliGuest, SnapshotCutInHalfIsRefused)
{
	const fs::path dir = fs::temp_directory_path() / ("apsh_cli_cut." + std::to_string(::getpid()));
	fs::create_directories(dir);
	auto cut = [&](const std::string &name) {
		const fs::path from = snapshot_ / name;
		const fs::path to = dir / name;
		std::ifstream in(from, std::ios::binary);
		std::ofstream out(to, std::ios::binary);
		std::vector<char> buffer(1 << 20);
		for (uint64_t left = fs::file_size(from) / 2; left > 0;) {
			const size_t n = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
			in.read(buffer.data(), static_cast<std::streamsize>(n));
			out.write(buffer.data(), static_cast<std::streamsize>(n));
			left -= n;
		}
		return to.string();
	};
	auto refused = [](const Result &result, const std::string &why) {
		EXPECT_EQ(result.status, 1) << result.err;
		EXPECT_NE(result.err.find(why), std::string::npos) << result.err;
		EXPECT_TRUE(result.out.empty());
	};
	// ELF core and LiME headers say how much RAM follows.
	refused(apsh({"ps", "--memory", "elf:" + cut("memory.elf")}), "image is truncated");
	refused(apsh({"ps", "--memory", "lime:" + cut("memory.lime")}), "image is truncated");
	// A raw image has no header: with the guest's RAM ranges (mem_regions.json) the cut shows.
	const std::string raw_cut = "raw:" + cut("memory.raw");
	ASSERT_FALSE(truth_->system_ram.empty());
	{
		Json regions;
		for (size_t i = 0; i < truth_->system_ram.size(); ++i)
			regions["allowed_regions"][std::to_string(i)] = {
			    {"start", truth_->system_ram[i].start},
			    {"length", truth_->system_ram[i].end - truth_->system_ram[i].start}};
		std::ofstream(dir / "mem_regions.json") << regions.dump();
	}
	refused(apsh({"ps", "--memory", raw_cut, "--regions", (dir / "mem_regions.json").string()}),
		"image is truncated");
	// Zero-config on the cut raw image: system start compares the end of the source with the RAM
	// the kernel itself counts (max_pfn), or, when KASLR put the kernel in the missing half, finds
	// its page table unmapped; either way the error says the image may be truncated.
	refused(apsh({"ps", "--memory", raw_cut}), "truncated");
	fs::remove_all(dir);
}

TEST_F(ApshCliGuest, NotAMemoryImageFailsWithStatusOne)
{
	// The ground truth is a text file: the right size for nothing.
	const Result result = apsh({"ps", "--memory", "raw:" + (snapshot_ / "ground-truth.txt").string()});
	EXPECT_EQ(result.status, 1);
	EXPECT_NE(result.err.find("cannot read the guest"), std::string::npos) << result.err;
	EXPECT_TRUE(result.out.empty());
}

} // namespace
