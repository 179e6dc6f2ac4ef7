// "softdpu apsh" and softdpu-apsh-config on the test guest's snapshot, compared with the guest's
// own ground truth (tests/guest). The snapshot directory comes from SOFTDPU_GUEST_SNAPSHOT (set by
// ctest through the guest_l4 fixture); without it every test skips.
#include "ground_truth.hpp"
#include "guest_run_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <elf.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json; // keys in the order the CLI wrote them
using softdpu::guest::GroundTruth;
using softdpu::guest::GuestRunDir;

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

// A query's output in one format; fails the test (and returns "") when the CLI failed.
std::string apsh_output(std::vector<std::string> args, const std::string &format)
{
	args.insert(args.end(), {"--output", format});
	const Result result = apsh(args);
	EXPECT_EQ(result.status, 0) << format << ": " << result.err;
	EXPECT_EQ(result.err, "") << format;
	return result.status == 0 ? result.out : "";
}

std::vector<std::string> lines_of(const std::string &text)
{
	std::vector<std::string> lines;
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);)
		lines.push_back(line);
	return lines;
}

// RFC 4180: records end in CRLF; a quoted field may hold commas, CR, LF and doubled quotes.
std::vector<std::vector<std::string>> read_csv(const std::string &text)
{
	std::vector<std::vector<std::string>> records;
	std::vector<std::string> record;
	std::string field;
	bool quoted = false;
	for (size_t i = 0; i < text.size(); ++i) {
		const char c = text[i];
		if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
			field += '"';
			++i;
		} else if (c == '"' && (quoted || field.empty())) {
			quoted = !quoted;
		} else if (!quoted && c == ',') {
			record.push_back(std::move(field));
			field.clear();
		} else if (!quoted && c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
			record.push_back(std::move(field));
			field.clear();
			records.push_back(std::move(record));
			record.clear();
			++i;
		} else {
			field += c;
		}
	}
	EXPECT_TRUE(!quoted && record.empty() && field.empty()) << "CSV does not end with a complete record";
	return records;
}

// A JSON value as the table shows it (docs/apsh-cli.md): "" as "-", booleans as yes/no, CPU
// seconds with two decimals, numbers as they are.
std::string as_table_cell(const std::string &key, const OrderedJson &value)
{
	if (key == "cpu_seconds") {
		char text[32];
		std::snprintf(text, sizeof(text), "%.2f", value.get<double>());
		return text;
	}
	if (value.is_string())
		return value.get<std::string>().empty() ? "-" : value.get<std::string>();
	if (value.is_boolean())
		return value.get<bool>() ? "yes" : "no";
	return value.dump();
}

// A JSON value as CSV carries it: strings as they are, the rest as JSON writes it.
std::string as_csv_cell(const OrderedJson &value)
{
	return value.is_string() ? value.get<std::string>() : value.dump();
}

// A table row cut into `columns` cells at runs of spaces; the last cell keeps the rest of the line
// (the queries compared here have spaces, if anywhere, only in their last column).
std::vector<std::string> table_cells(const std::string &line, size_t columns)
{
	std::vector<std::string> cells;
	size_t at = line.find_first_not_of(' ');
	while (at != std::string::npos && cells.size() + 1 < columns) {
		const size_t end = line.find(' ', at);
		cells.push_back(line.substr(at, end - at));
		at = end == std::string::npos ? end : line.find_first_not_of(' ', end);
	}
	if (at != std::string::npos)
		cells.push_back(line.substr(at));
	return cells;
}

// One query in every format: JSON (and --json, the same bytes), JSON lines, CSV and the table
// carry the same rows with the same columns in the same order. Returns the JSON rows.
OrderedJson expect_formats_agree(const std::vector<std::string> &args)
{
	const std::string json_text = apsh_output(args, "json");
	{
		std::vector<std::string> alias = args;
		alias.push_back("--json");
		EXPECT_EQ(apsh(alias).out, json_text);
	}
	const OrderedJson rows = OrderedJson::parse(json_text.empty() ? "[]" : json_text);
	EXPECT_FALSE(rows.empty()) << "no rows to compare";
	if (rows.empty())
		return rows;
	std::vector<std::string> keys;
	for (const auto &[key, value] : rows[0].items())
		keys.push_back(key);

	const std::vector<std::string> jsonl = lines_of(apsh_output(args, "jsonl"));
	EXPECT_EQ(jsonl.size(), rows.size());
	for (size_t i = 0; i < std::min(jsonl.size(), rows.size()); ++i)
		EXPECT_EQ(OrderedJson::parse(jsonl[i]), rows[i]) << i;

	const auto records = read_csv(apsh_output(args, "csv"));
	EXPECT_EQ(records.size(), rows.size() + 1);
	if (!records.empty()) {
		EXPECT_EQ(records[0], keys);
	}
	for (size_t i = 0; i + 1 < records.size() && i < rows.size(); ++i) {
		std::vector<std::string> expected;
		for (const std::string &key : keys)
			expected.push_back(as_csv_cell(rows[i].at(key)));
		EXPECT_EQ(records[i + 1], expected) << "CSV row " << i;
	}

	const std::vector<std::string> table = lines_of(apsh_output(args, "table"));
	EXPECT_EQ(table.size(), rows.size() + 1);
	if (!table.empty()) {
		EXPECT_TRUE(table[0].starts_with("PID") || table[0].starts_with("ADDRESS")) << table[0];
	}
	for (size_t i = 0; i + 1 < table.size() && i < rows.size(); ++i) {
		std::vector<std::string> expected;
		for (const std::string &key : keys)
			expected.push_back(as_table_cell(key, rows[i].at(key)));
		EXPECT_EQ(table_cells(table[i + 1], keys.size()), expected)
		    << "table row " << i << ": " << table[i + 1];
	}
	return rows;
}

// The initramfs tree the guest booted from (guest.env's INITRAMFS_ROOT); "" when it names none.
std::string initramfs_root(const fs::path &snapshot)
{
	return GuestRunDir(snapshot).value("INITRAMFS_ROOT");
}

// The CLI picks its device and memory source from these; only --memory may choose in these tests.
void use_cli_environment()
{
	::setenv("SOFTDPU_SIDE", "dpu", 1);
	::unsetenv("SOFTDPU_TOPOLOGY");
	::unsetenv("SOFTDPU_APSH_MEMORY");
}

// A suite over a running test guest (tests/guest fixture start-vm) whose run dir (ground-truth.txt,
// qemu.pid, guest.env) the variable RunEnv names; ctest's fixture Fixture sets it. Without it the
// suite's tests skip.
template <const char *RunEnv, const char *Fixture> class RunningGuestTest : public ::testing::Test {
protected:
	// Reads the guest's ground truth into truth_ and gives its run dir; nothing when RunEnv names
	// no running guest.
	static std::optional<GuestRunDir> load_guest()
	{
		use_cli_environment();
		const char *dir = std::getenv(RunEnv);
		if (dir == nullptr || !fs::exists(fs::path(dir) / "qemu.pid"))
			return std::nullopt;
		run_dir_ = dir;
		truth_ = std::make_unique<GroundTruth>(GroundTruth::load((run_dir_ / "ground-truth.txt").string()));
		return GuestRunDir(run_dir_);
	}
	static void TearDownTestSuite() { truth_.reset(); }

	void SetUp() override
	{
		if (!truth_)
			GTEST_SKIP() << RunEnv << " names no running guest (ctest's " << Fixture << " fixture sets it)";
		check_guest();
	}
	// What the suite needs of its guest (assertions).
	virtual void check_guest() {}

	static inline fs::path run_dir_;
	static inline std::unique_ptr<GroundTruth> truth_;
};

class ApshCliGuest : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		use_cli_environment();
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

	// The hash map of the guest's files: softdpu-exec-hash-build-map over the initramfs tree `root`
	// (bin, lib, lib64), into a temporary file named after `name`.
	static fs::path hash_guest_files(const std::string &root, const std::string &name)
	{
		const fs::path map = fs::temp_directory_path() / (name + "." + std::to_string(::getpid()) + ".json");
		const Result built = run(SOFTDPU_EXEC_HASH_TOOL, {"-o", map.string(), "--root", root, root + "/bin",
								  root + "/lib", root + "/lib64"});
		EXPECT_EQ(built.status, 0) << built.err;
		return map;
	}

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
	const std::string root = initramfs_root(snapshot_);
	if (root.empty() || !fs::exists(root + "/bin"))
		GTEST_SKIP() << "guest.env names no initramfs tree";
	const fs::path map = hash_guest_files(root, "apsh_cli_hash");
	ASSERT_FALSE(HasFailure());
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const Json areas =
	    apsh_json({"attest", "--memory", raw(), "--hash-map", map.string(), "--pid", std::to_string(target->pid)});
	fs::remove(map);
	std::set<std::string> attested;
	for (const Json &row : areas) {
		EXPECT_EQ(row.at("pid"), target->pid);
		if (!row.at("hash_data_present").get<bool>()) {
			// Anonymous memory and [vdso]: nothing to compare with.
			EXPECT_EQ(row.at("verdict"), "not-checked") << row.dump();
			EXPECT_EQ(row.at("reason"), row.at("path") == "" ? "anonymous memory, no file to compare with"
									 : "not in the hash map")
			    << row.dump();
			continue;
		}
		attested.insert(row.at("path").get<std::string>());
		// An unmodified guest: every present page of a file we hashed matches.
		EXPECT_GT(row.at("pages_present").get<int>(), 0) << row.dump();
		EXPECT_EQ(row.at("matching_hashes"), row.at("pages_present")) << row.dump();
		EXPECT_EQ(row.at("verdict"), "ok") << row.dump();
		const int present = row.at("pages_present");
		EXPECT_EQ(row.at("reason"), present == 1 ? std::string("the 1 page in memory matches")
							 : "all " + std::to_string(present) + " pages in memory match")
		    << row.dump();
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

TEST_F(ApshCliGuest, EveryFormatCarriesTheTablesRows)
{
	const std::string target = std::to_string(pid_of("apsh_target"));
	const OrderedJson ps = expect_formats_agree({"ps", "--memory", raw()});
	EXPECT_GT(ps.size(), 10u);
	EXPECT_FALSE(expect_formats_agree({"modules", "--memory", raw()}).empty());
	EXPECT_FALSE(expect_formats_agree({"netscan", "--memory", raw()}).empty());
	EXPECT_EQ(expect_formats_agree({"threads", "--memory", raw(), "--pid", target}).size(),
		  truth_->threads_of(std::stoul(target)).size());
	// Empty strings ("-" in the table) and addresses.
	EXPECT_FALSE(expect_formats_agree({"vads", "--memory", raw(), "--pid", target}).empty());
}

TEST_F(ApshCliGuest, AttestVerdictInEveryFormat)
{
	const std::string root = initramfs_root(snapshot_);
	if (root.empty() || !fs::exists(root + "/bin"))
		GTEST_SKIP() << "guest.env names no initramfs tree";
	const fs::path map = hash_guest_files(root, "apsh_cli_verdict");
	ASSERT_FALSE(HasFailure());
	const OrderedJson rows = expect_formats_agree(
	    {"attest", "--memory", raw(), "--hash-map", map.string(), "--pid", std::to_string(pid_of("apsh_target"))});
	fs::remove(map);
	std::set<std::string> verdicts;
	for (const OrderedJson &row : rows) {
		verdicts.insert(row.at("verdict").get<std::string>());
		EXPECT_FALSE(row.at("reason").get<std::string>().empty()) << row.dump();
	}
	EXPECT_EQ(verdicts, (std::set<std::string>{"ok", "not-checked"}));
}

// The executable's code pages changed in the hash map's copy of the file: its area is "modified".
TEST_F(ApshCliGuest, AttestOfAChangedFileSaysModified)
{
	const std::string root = initramfs_root(snapshot_);
	if (root.empty() || !fs::exists(root + "/bin/apsh_target"))
		GTEST_SKIP() << "guest.env names no initramfs tree";
	std::string bytes = slurp(root + "/bin/apsh_target");
	ASSERT_GE(bytes.size(), sizeof(Elf64_Ehdr));
	Elf64_Ehdr header;
	std::memcpy(&header, bytes.data(), sizeof(header));
	size_t changed = 0;
	for (unsigned i = 0; i < header.e_phnum; ++i) {
		Elf64_Phdr segment;
		const size_t at = header.e_phoff + size_t{i} * header.e_phentsize;
		ASSERT_LE(at + sizeof(segment), bytes.size());
		std::memcpy(&segment, bytes.data() + at, sizeof(segment));
		if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X))
			continue;
		// One byte in every page of the code (past the ELF header when the segment starts at 0).
		for (uint64_t offset = segment.p_offset + 64; offset < segment.p_offset + segment.p_filesz;
		     offset += 4096, ++changed)
			bytes[offset] = static_cast<char>(bytes[offset] ^ 0xff);
	}
	ASSERT_GT(changed, 0u) << "no executable segment in apsh_target";
	const fs::path copy = fs::temp_directory_path() / ("apsh_cli_changed." + std::to_string(::getpid()));
	fs::create_directories(copy / "bin");
	std::ofstream(copy / "bin/apsh_target", std::ios::binary) << bytes;
	const fs::path map = copy / "hash.json";
	const Result built = run(SOFTDPU_EXEC_HASH_TOOL,
				 {"-o", map.string(), "--root", copy.string(), (copy / "bin/apsh_target").string()});
	ASSERT_EQ(built.status, 0) << built.err;
	const OrderedJson rows = expect_formats_agree(
	    {"attest", "--memory", raw(), "--hash-map", map.string(), "--pid", std::to_string(pid_of("apsh_target"))});
	fs::remove_all(copy);
	bool modified = false;
	for (const OrderedJson &row : rows) {
		if (row.at("path") == "/bin/apsh_target") {
			modified = true;
			EXPECT_EQ(row.at("verdict"), "modified") << row.dump();
			const int present = row.at("pages_present");
			const int matching = row.at("matching_hashes");
			EXPECT_LT(matching, present) << row.dump();
			EXPECT_EQ(row.at("reason"), std::to_string(present - matching) + " of " +
							std::to_string(present) + (present == 1 ? " page" : " pages") +
							" in memory differ from the hash map")
			    << row.dump();
		} else if (row.at("path") != "") {
			// libc and the loader are not in this map.
			EXPECT_EQ(row.at("verdict"), "not-checked") << row.dump();
			EXPECT_EQ(row.at("reason"), "not in the hash map") << row.dump();
		}
	}
	EXPECT_TRUE(modified);
}

// pstree: every process of ps once, under its parent; kthreadd's descendants folded into a count.
TEST_F(ApshCliGuest, WatchOfAnImageRefreshesAndReportsNoChange)
{
	// An image does not change: the watch reads it like a running guest, and after its baseline
	// every refresh finds nothing new, on every image kind and with every kind of event on.
	const std::string root = initramfs_root(snapshot_);
	if (root.empty() || !fs::exists(root + "/bin"))
		GTEST_SKIP() << "guest.env names no initramfs tree";
	const fs::path map = hash_guest_files(root, "apsh_cli_watch_map");
	ASSERT_FALSE(HasFailure());
	const fs::path rules = fs::temp_directory_path() / ("apsh_cli_watch." + std::to_string(::getpid()) + ".yar");
	std::ofstream(rules) << "rule rwx_marker { strings: $m = \"APSH_RWX_MARKER_9b7c3e41\" condition: $m }\n";
	for (const std::string kind : {"raw", "elf", "lime"}) {
		SCOPED_TRACE(kind);
		const std::string file = kind == "raw" ? "memory.raw" : kind == "elf" ? "memory.elf" : "memory.lime";
		const Result result = apsh({"watch", "--memory", kind + ":" + (snapshot_ / file).string(), "--events",
					    "all", "--hash-map", map.string(), "--rules", rules.string(), "--monotonic",
					    "--interval", "100", "--count", "3", "--heartbeat"});
		EXPECT_EQ(result.status, 0) << result.err;
		const std::vector<std::string> lines = lines_of(result.out);
		ASSERT_EQ(lines.size(), 5u) << result.out;
		const Json started = Json::parse(lines.front());
		EXPECT_EQ(started.at("type"), "watch-started");
		EXPECT_EQ(started.at("events"),
			  Json::parse(R"(["process","module","socket","attest","yara","injection"])"));
		for (size_t i = 1; i <= 3; ++i) {
			const Json beat = Json::parse(lines[i]);
			EXPECT_EQ(beat.at("type"), "refresh") << lines[i];
			EXPECT_EQ(beat.at("refresh"), i);
		}
		const Json stopped = Json::parse(lines.back());
		EXPECT_EQ(stopped.at("type"), "watch-stopped");
		EXPECT_EQ(stopped.at("reason"), "count");
	}
	fs::remove(map);
	fs::remove(rules);
}

TEST_F(ApshCliGuest, PstreeIsPsAsATree)
{
	std::map<uint32_t, uint32_t> ps; // pid -> ppid
	for (const Json &row : apsh_json({"ps", "--memory", raw()}))
		ps[row.at("pid")] = row.at("ppid");
	ASSERT_GT(ps.size(), 10u);
	// kthreadd's descendants, from ps.
	std::set<uint32_t> kernel{2};
	for (bool grew = true; grew;) {
		grew = false;
		for (const auto &[pid, ppid] : ps)
			if (kernel.count(ppid) && kernel.insert(pid).second)
				grew = true;
	}
	kernel.erase(2);
	ASSERT_GT(kernel.size(), 5u);

	for (bool shown : {false, true}) {
		SCOPED_TRACE(shown ? "--kernel-threads" : "folded");
		std::vector<std::string> args = {"pstree", "--memory", raw()};
		if (shown)
			args.push_back("--kernel-threads");
		// JSON: nested, each node once with ps's ppid, under the node of that pid.
		const Json tree = Json::parse(apsh_output(args, "json"));
		std::map<uint32_t, uint32_t> seen;
		uint64_t folded = 0;
		std::vector<std::pair<const Json *, const Json *>> stack; // node, parent
		for (auto it = tree.rbegin(); it != tree.rend(); ++it)
			stack.emplace_back(&*it, nullptr);
		std::vector<uint32_t> preorder;
		while (!stack.empty()) {
			const auto [node, parent] = stack.back();
			stack.pop_back();
			const uint32_t pid = node->at("pid");
			preorder.push_back(pid);
			EXPECT_TRUE(seen.emplace(pid, node->at("ppid").get<uint32_t>()).second)
			    << "pid " << pid << " twice";
			ASSERT_TRUE(ps.count(pid)) << pid;
			EXPECT_EQ(node->at("ppid"), ps[pid]) << pid;
			if (parent != nullptr) {
				EXPECT_EQ(parent->at("pid"), ps[pid]) << pid;
			} else {
				EXPECT_FALSE(ps.count(ps[pid])) << "root " << pid << " has its parent in the list";
			}
			folded += node->at("folded_kernel_threads").get<uint64_t>();
			const Json &children = node->at("children");
			for (auto it = children.rbegin(); it != children.rend(); ++it)
				stack.emplace_back(&*it, node);
		}
		EXPECT_EQ(folded, shown ? 0u : kernel.size());
		for (const auto &[pid, ppid] : ps)
			EXPECT_EQ(seen.count(pid), shown || !kernel.count(pid) ? 1u : 0u) << pid;

		// JSON lines and CSV: the same processes, flat, in the same order, with their depth.
		std::vector<uint32_t> flat;
		std::vector<uint32_t> path;
		for (const std::string &line : lines_of(apsh_output(args, "jsonl"))) {
			const Json row = Json::parse(line);
			const size_t depth = row.at("depth");
			ASSERT_LE(depth, path.size());
			path.resize(depth);
			if (depth > 0) {
				EXPECT_EQ(row.at("ppid"), path.back());
			}
			path.push_back(row.at("pid"));
			flat.push_back(row.at("pid"));
		}
		EXPECT_EQ(flat, preorder);
		const auto records = read_csv(apsh_output(args, "csv"));
		ASSERT_EQ(records.size(), preorder.size() + 1);
		EXPECT_EQ(records[0],
			  (std::vector<std::string>{"pid", "ppid", "depth", "comm", "folded_kernel_threads"}));
		for (size_t i = 0; i < preorder.size(); ++i)
			EXPECT_EQ(records[i + 1][0], std::to_string(preorder[i]));

		// The table: "comm(pid)" once per process in the same order, and the folded line.
		std::vector<uint32_t> drawn;
		std::string fold_line;
		for (const std::string &line : lines_of(apsh_output(args, "table"))) {
			const size_t open = line.rfind('(');
			if (line.ends_with(")") && open != std::string::npos &&
			    line.find_first_not_of("0123456789", open + 1) == line.size() - 1 && open + 2 < line.size())
				drawn.push_back(std::stoul(line.substr(open + 1)));
			else
				fold_line = line;
		}
		EXPECT_EQ(drawn, preorder);
		if (shown) {
			EXPECT_EQ(fold_line, "");
		} else {
			EXPECT_TRUE(fold_line.ends_with("[" + std::to_string(kernel.size()) + " kernel threads]"))
			    << fold_line;
		}
	}

	// --pid: that process's subtree.
	const uint32_t target = pid_of("apsh_target");
	const Result one = apsh({"pstree", "--memory", raw(), "--pid", std::to_string(target)});
	ASSERT_EQ(one.status, 0) << one.err;
	EXPECT_EQ(one.out, "apsh_target(" + std::to_string(target) + ")\n");
}

// A QMP client for the tests (the test does not link the library): commands and their replies,
// events skipped. Every wait is bounded by the socket's 30 s receive timeout.
class QmpClient {
public:
	explicit QmpClient(const std::string &path)
	{
		fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
		timeval timeout{30, 0};
		::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
		if (::connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
			ADD_FAILURE() << "cannot connect to " << path << ": " << std::strerror(errno);
			return;
		}
		next(); // greeting
		ok_ = command("qmp_capabilities").contains("return");
	}
	~QmpClient()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	bool ok() const { return ok_; }
	Json command(const std::string &name, const Json &arguments = nullptr)
	{
		Json request = {{"execute", name}};
		if (!arguments.is_null())
			request["arguments"] = arguments;
		const std::string line = request.dump() + "\n";
		if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
			return Json();
		for (;;) {
			Json reply = next();
			if (!reply.is_object() || !reply.contains("event"))
				return reply;
		}
	}
	std::string hmp(const std::string &command_line)
	{
		const Json reply = command("human-monitor-command", {{"command-line", command_line}});
		return reply.contains("return") && reply["return"].is_string() ? reply["return"].get<std::string>()
									       : "";
	}
	bool running()
	{
		const Json reply = command("query-status");
		return reply.contains("return") && reply["return"].value("running", false);
	}

private:
	Json next()
	{
		for (;;) {
			const size_t newline = buffer_.find('\n');
			if (newline != std::string::npos) {
				const std::string line = buffer_.substr(0, newline);
				buffer_.erase(0, newline + 1);
				return Json::parse(line, nullptr, false);
			}
			char chunk[65536];
			const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
			if (n <= 0)
				return Json();
			buffer_.append(chunk, static_cast<size_t>(n));
		}
	}
	int fd_ = -1;
	bool ok_ = false;
	std::string buffer_;
};

// The stable processes of the ground truth that a ps answer must hold (kernel workers come and go).
void expect_stable_processes(const GroundTruth &truth, const std::map<uint32_t, Json> &processes)
{
	size_t compared = 0;
	for (const auto *gt : truth.stable_processes()) {
		if (gt->comm.starts_with("kworker/"))
			continue;
		auto it = processes.find(gt->pid);
		ASSERT_NE(it, processes.end()) << "pid " << gt->pid << " (" << gt->comm << ") missing";
		EXPECT_EQ(it->second.at("comm"), gt->comm.substr(0, 15)) << gt->pid;
		EXPECT_EQ(it->second.at("ppid"), gt->ppid) << gt->pid;
		++compared;
	}
	EXPECT_GT(compared, 10u);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// A running guest with QEMU's default anonymous RAM (tests/guest fixture start-vm): no RAM file,
// App Shield reads it through the QEMU process (pid:, qemu-name:). SOFTDPU_GUEST_VM_RUN names its
// run dir (ground-truth.txt, qemu.pid, guest.env); without it these tests skip.

constexpr char kVmRun[] = "SOFTDPU_GUEST_VM_RUN";
constexpr char kVmFixture[] = "guest_vm";

class ApshCliVm : public RunningGuestTest<kVmRun, kVmFixture> {
protected:
	static void SetUpTestSuite()
	{
		if (const std::optional<GuestRunDir> run = load_guest()) {
			name_ = run->value("QEMU_NAME");
			qmp_ = run->value("QMP_SOCKET");
			ram_file_ = run->value("RAM_FILE");
			root_ = run->value("INITRAMFS_ROOT");
			pid_ = run->pid();
		}
	}

	void check_guest() override
	{
		ASSERT_TRUE(ram_file_.empty()) << "the guest must run on anonymous RAM, not " << ram_file_;
	}

	static inline std::string name_, qmp_, pid_, ram_file_, root_;
};

TEST_F(ApshCliVm, YaraAndAttestationThroughTheProcess)
{
	const auto *target = truth_->target("apsh_target");
	ASSERT_NE(target, nullptr);
	const std::string pid = std::to_string(target->pid);
	const fs::path rules = fs::temp_directory_path() / ("apsh_cli_vm_rules." + std::to_string(::getpid()) + ".yar");
	std::ofstream(rules) << "rule heap_marker { strings: $a = \"APSH_HEAP_MARKER_5e1f0d2c\" condition: $a }\n";
	std::set<uint32_t> matched;
	for (const Json &row :
	     apsh_json({"yara", "--memory", "pid:" + pid_, "--rules", rules.string(), "--monotonic", "--no-progress"}))
		matched.insert(row.at("pid").get<uint32_t>());
	fs::remove(rules);
	EXPECT_TRUE(matched.count(target->pid));

	ASSERT_FALSE(root_.empty());
	const fs::path map = fs::temp_directory_path() / ("apsh_cli_vm_map." + std::to_string(::getpid()) + ".json");
	const Result built =
	    run(SOFTDPU_EXEC_HASH_TOOL, {"--root", root_, root_ + "/bin/apsh_target", "-o", map.string()});
	ASSERT_EQ(built.status, 0) << built.err;
	bool text_matches = false;
	for (const Json &row : apsh_json({"attest", "--memory", "qemu-name:" + name_, "--hash-map", map.string(),
					  "--pid", pid, "--no-progress"}))
		if (row.at("path") == "/bin/apsh_target" && row.at("protection") == "r-x")
			text_matches = row.at("matching_hashes").get<uint64_t>() == row.at("pages").get<uint64_t>() &&
				       row.at("pages").get<uint64_t>() > 0;
	fs::remove(map);
	EXPECT_TRUE(text_matches);
}

TEST_F(ApshCliVm, EveryQueryThroughThePidAndTheNameMatchesGroundTruth)
{
	for (const std::string &memory : {"pid:" + pid_, "qemu-name:" + name_}) {
		SCOPED_TRACE(memory);
		const auto processes = by_pid(apsh_json({"ps", "--memory", memory}));
		size_t compared = 0;
		for (const auto *gt : truth_->stable_processes()) {
			if (gt->comm.starts_with("kworker/"))
				continue;
			auto it = processes.find(gt->pid);
			ASSERT_NE(it, processes.end()) << "pid " << gt->pid << " (" << gt->comm << ") missing";
			EXPECT_EQ(it->second.at("comm"), gt->comm.substr(0, 15)) << gt->pid;
			EXPECT_EQ(it->second.at("ppid"), gt->ppid) << gt->pid;
			EXPECT_EQ(it->second.at("uid"), gt->uid) << gt->pid;
			++compared;
		}
		EXPECT_GT(compared, 10u);

		bool dummy = false;
		for (const Json &row : apsh_json({"modules", "--memory", memory}))
			dummy = dummy || row.at("name") == "dummy";
		EXPECT_TRUE(dummy);

		const auto *target = truth_->target("apsh_target");
		ASSERT_NE(target, nullptr);
		const std::string pid = std::to_string(target->pid);
		std::map<uint32_t, std::string> threads;
		for (const Json &row : apsh_json({"threads", "--memory", memory, "--pid", pid}))
			threads[row.at("tid").get<uint32_t>()] = row.at("thread_name").get<std::string>();
		for (const auto &[tid, thread_name] : target->threads)
			EXPECT_EQ(threads[tid], thread_name.substr(0, 15)) << tid;

		EXPECT_EQ(apsh_json({"vads", "--memory", memory, "--pid", pid}).size(),
			  truth_->maps.at(target->pid).size());
		bool libc = false;
		for (const Json &row : apsh_json({"libs", "--memory", memory, "--pid", pid}))
			libc = libc || row.at("path").get<std::string>().find("libc.so") != std::string::npos;
		EXPECT_TRUE(libc);
		bool marker = false;
		for (const Json &row : apsh_json({"envars", "--memory", memory, "--pid", pid}))
			marker = marker || (row.at("variable") == "APSH_DYN_MARKER" &&
					    row.at("value") == "apsh_dyn_env_d00dfeed");
		EXPECT_TRUE(marker);
		std::set<std::pair<std::string, uint16_t>> listening;
		for (const Json &row : apsh_json({"netscan", "--memory", memory, "--pid", pid}))
			listening.emplace(row.at("protocol").get<std::string>(), row.at("local_port").get<uint16_t>());
		EXPECT_TRUE(listening.count({"TCPv4", 4444}));
		EXPECT_TRUE(listening.count({"UDPv4", 5353}));
		char rwx_start[24];
		std::snprintf(rwx_start, sizeof(rwx_start), "0x%llx",
			      static_cast<unsigned long long>(target->rwx.start));
		bool rwx = false;
		for (const Json &row : apsh_json({"injections", "--memory", memory, "--pid", pid}))
			rwx = rwx || row.at("start") == rwx_start;
		EXPECT_TRUE(rwx);
	}
}

TEST_F(ApshCliVm, QmpLayoutAndConsistentModeGiveTheSameProcesses)
{
	const auto plain = by_pid(apsh_json({"ps", "--memory", "pid:" + pid_}));
	const Result consistent = apsh({"ps", "--memory", "pid:" + pid_, "--qmp", qmp_, "--consistent", "--json"});
	ASSERT_EQ(consistent.status, 0) << consistent.err;
	EXPECT_NE(consistent.err.find("the guest was paused for"), std::string::npos) << consistent.err;
	const auto paused = by_pid(Json::parse(consistent.out));
	for (const auto *gt : truth_->stable_processes()) {
		if (gt->kernel_thread)
			continue;
		EXPECT_TRUE(plain.count(gt->pid)) << gt->pid;
		EXPECT_TRUE(paused.count(gt->pid)) << gt->pid;
	}
	// It resumed the guest: a second pause finds it running again (and says so).
	const Result again = apsh({"modules", "--memory", "qemu-name:" + name_ + ",qmp=" + qmp_, "--consistent"});
	ASSERT_EQ(again.status, 0) << again.err;
	EXPECT_NE(again.err.find("the guest was paused for"), std::string::npos) << again.err;
}

// The guest paused and resumed over QMP again and again while queries run: each query gives the
// guest's processes or fails with a clear error, never a crash or a hang; the guest runs after.
TEST_F(ApshCliVm, PausedAndResumedMidQueryGivesTheAnswerOrAClearError)
{
	std::atomic<bool> stop{false};
	std::atomic<int> toggles{0};
	std::thread toggler([&] {
		QmpClient qmp(qmp_);
		if (!qmp.ok())
			return;
		while (!stop) {
			qmp.command("stop");
			std::this_thread::sleep_for(std::chrono::milliseconds(15));
			qmp.command("cont");
			std::this_thread::sleep_for(std::chrono::milliseconds(15));
			toggles++;
		}
		qmp.command("cont");
	});
	int answered = 0, failed = 0;
	const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
	for (int i = 0; i < 6 || std::chrono::steady_clock::now() < until; i++) {
		const std::vector<std::string> query =
		    i % 2 == 0 ? std::vector<std::string>{"ps", "--memory", "pid:" + pid_, "--json"}
			       : std::vector<std::string>{"threads", "--memory", "qemu-name:" + name_, "--json"};
		const Result result = apsh(query);
		ASSERT_NE(result.status, -1) << "the CLI did not exit normally: " << result.err;
		if (result.status != 0) {
			EXPECT_EQ(result.status, 1) << result.err;
			EXPECT_NE(result.err, "");
			std::printf("query %d failed cleanly: %s", i, result.err.c_str());
			failed++;
			continue;
		}
		const Json rows = Json::parse(result.out);
		if (i % 2 == 0)
			expect_stable_processes(*truth_, by_pid(rows));
		else
			EXPECT_GT(rows.size(), truth_->stable_processes().size());
		answered++;
	}
	stop = true;
	toggler.join();
	EXPECT_GT(toggles.load(), 20);
	EXPECT_GT(answered, 0);
	std::printf("%d queries answered, %d failed cleanly, over %d pauses\n", answered, failed, toggles.load());
	QmpClient qmp(qmp_);
	EXPECT_TRUE(qmp.running());
}

// --consistent on a guest someone else paused: it reads, says so, and leaves the guest paused.
TEST_F(ApshCliVm, ConsistentLeavesAnAlreadyPausedGuestPaused)
{
	// QEMU serves one QMP client at a time: each client here is closed before the CLI asks.
	ASSERT_TRUE(QmpClient(qmp_).command("stop").contains("return"));
	const Result result = apsh({"ps", "--memory", "pid:" + pid_, "--qmp", qmp_, "--consistent", "--json"});
	const bool still_paused = !QmpClient(qmp_).running();
	QmpClient(qmp_).command("cont");
	ASSERT_EQ(result.status, 0) << result.err;
	EXPECT_NE(result.err.find("the guest was already paused; it stays paused"), std::string::npos) << result.err;
	EXPECT_EQ(result.err.find("the guest was paused for"), std::string::npos) << result.err;
	EXPECT_TRUE(still_paused);
	expect_stable_processes(*truth_, by_pid(Json::parse(result.out)));
	EXPECT_TRUE(QmpClient(qmp_).running());
}

// The how-to's image path: QMP dump-guest-memory of the running anonymous-RAM guest, an ELF core
// App Shield reads with --memory like the process itself.
TEST_F(ApshCliVm, DumpGuestMemoryElfReadsLikeTheProcess)
{
	const fs::path core = fs::temp_directory_path() / ("apsh_cli_vm_dump." + std::to_string(::getpid()) + ".elf");
	fs::remove(core);
	{
		QmpClient qmp(qmp_);
		ASSERT_TRUE(qmp.ok());
		const Json reply =
		    qmp.command("dump-guest-memory", {{"paging", false}, {"protocol", "file:" + core.string()}});
		ASSERT_TRUE(reply.contains("return")) << reply.dump();
		std::string status;
		for (int i = 0; i < 600 && status != "completed" && status != "failed"; i++) {
			const Json dump = qmp.command("query-dump");
			status = dump.contains("return") ? dump["return"].value("status", "") : "";
			if (status != "completed")
				std::this_thread::sleep_for(std::chrono::milliseconds(100));
		}
		ASSERT_EQ(status, "completed");
		EXPECT_TRUE(qmp.running());
	}
	const std::string header = slurp(core).substr(0, 4);
	EXPECT_EQ(header, "\x7f"
			  "ELF");
	const auto from_core = by_pid(apsh_json({"ps", "--memory", core.string()}));
	const auto from_process = by_pid(apsh_json({"ps", "--memory", "pid:" + pid_}));
	fs::remove(core);
	expect_stable_processes(*truth_, from_core);
	for (const auto *gt : truth_->stable_processes()) {
		if (!gt->comm.starts_with("kworker/")) {
			EXPECT_TRUE(from_process.count(gt->pid)) << gt->pid;
		}
	}
}

// ---------------------------------------------------------------------------------------------
// A guest bigger than the room below the PCI hole (tests/guest fixture start-vm --mem 4608: the
// pc machine maps 3 GiB below 4 GiB and 1.5 GiB above), on anonymous RAM. SOFTDPU_GUEST_VM_SPLIT_RUN
// names its run dir; without it these tests skip.

constexpr char kVmSplitRun[] = "SOFTDPU_GUEST_VM_SPLIT_RUN";
constexpr char kVmSplitFixture[] = "guest_vm_split";

class ApshCliVmSplit : public RunningGuestTest<kVmSplitRun, kVmSplitFixture> {
protected:
	static void SetUpTestSuite()
	{
		if (const std::optional<GuestRunDir> run = load_guest()) {
			qmp_ = run->value("QMP_SOCKET");
			if (const std::string mem = run->value("MEM_MIB"); !mem.empty())
				mem_mib_ = std::stoull(mem);
			pid_ = run->pid();
		}
	}

	void check_guest() override
	{
		ASSERT_GT(mem_mib_, 3584u) << "the guest must be big enough for pc to split its RAM";
	}

	static inline std::string qmp_, pid_;
	static inline uint64_t mem_mib_ = 0;
};

// QEMU maps the guest's RAM in two ranges, the kernel keeps its data above 4 GiB (the dummy
// module's pages are there), and App Shield reads both, with and without QMP.
TEST_F(ApshCliVmSplit, RamAboveAndBelow4GiBReadsLikeTheGroundTruth)
{
	// QEMU serves one QMP client at a time: each client here is closed before the CLI asks.
	const std::string mtree = QmpClient(qmp_).hmp("info mtree -f");
	EXPECT_NE(mtree.find("0000000100000000-"), std::string::npos) << "no RAM from 4 GiB:\n"
								      << mtree.substr(0, 2000);
	for (const std::string &memory : {"pid:" + pid_, "pid:" + pid_ + ",qmp=" + qmp_}) {
		SCOPED_TRACE(memory);
		expect_stable_processes(*truth_, by_pid(apsh_json({"ps", "--memory", memory})));
		std::string dummy_address;
		for (const Json &row : apsh_json({"modules", "--memory", memory}))
			if (row.at("name") == "dummy")
				dummy_address = row.at("address").get<std::string>();
		ASSERT_FALSE(dummy_address.empty()) << "no dummy module";
		// Where the guest's own page tables put it.
		const std::string translated = QmpClient(qmp_).hmp("gva2gpa " + dummy_address);
		const size_t at = translated.find("gpa: 0x");
		ASSERT_NE(at, std::string::npos) << translated;
		const uint64_t gpa = std::stoull(translated.substr(at + 7), nullptr, 16);
		EXPECT_GE(gpa, 4ull << 30) << translated;
	}
}

// SIGKILL of QEMU while a YARA scan of every process reads it: exit status 1 and an error that
// names the QEMU process, no crash, no hang.
TEST_F(ApshCliVmSplit, QemuKilledMidQueryIsAClearError)
{
	const fs::path rules =
	    fs::temp_directory_path() / ("apsh_cli_split_rules." + std::to_string(::getpid()) + ".yar");
	std::ofstream(rules) << "rule heap_marker { strings: $a = \"APSH_HEAP_MARKER_5e1f0d2c\" condition: $a }\n";
	// Scans back to back until one fails: the kill lands in one of them (or, at worst, just
	// before the next one opens the process).
	Result result;
	int finished = 0;
	const auto start = std::chrono::steady_clock::now();
	std::thread query([&] {
		while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
			result = apsh({"yara", "--memory", "pid:" + pid_, "--rules", rules.string(), "--no-progress"});
			if (result.status != 0)
				break;
			finished++;
		}
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(1500));
	const pid_t qemu = static_cast<pid_t>(std::stol(pid_));
	ASSERT_EQ(::kill(qemu, SIGKILL), 0);
	query.join();
	fs::remove(rules);
	EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
	ASSERT_NE(result.status, -1) << "the CLI did not exit normally: " << result.err;
	ASSERT_EQ(result.status, 1) << result.err;
	EXPECT_TRUE(result.err.find("QEMU process " + pid_) != std::string::npos ||
		    result.err.find("pid:" + pid_) != std::string::npos)
	    << result.err;
	EXPECT_TRUE(result.err.find("exited") != std::string::npos ||
		    result.err.find("no process") != std::string::npos)
	    << result.err;
	EXPECT_EQ(result.err.find("AddressSanitizer"), std::string::npos) << result.err;
	std::printf("%d scans finished before the kill; the error after it: %s\n", finished, result.err.c_str());
}
