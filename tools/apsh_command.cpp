// softdpu apsh <query> [options]: App Shield from the command line. Every query goes through the
// public DOCA API (doca_apsh.h) exactly as an application would: context with the DPU's DMA
// device, system bound to a representor, optional configuration files, system start, queries.
// The memory source comes from --memory (set as SOFTDPU_APSH_MEMORY for this process) or, when
// absent, from the environment or the topology. docs/apsh-cli.md describes the options.
#include "apsh_watch.hpp"
#include "commands.hpp"
#include "process_tree.hpp"
#include "table_output.hpp"

#include <doca_apsh.h>
#include <doca_apsh_attr.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <softdpu/apsh.h>
#include <softdpu/topology.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace softdpu::cli {

namespace {

constexpr const char *kQueryHelp =
    "queries:\n"
    "  ps          processes (pid, ppid, uid, gid, state, cpu time, comm)\n"
    "  pstree      the processes as a tree (kernel threads folded; --kernel-threads shows them)\n"
    "  threads     threads of every process\n"
    "  libs        loaded libraries\n"
    "  vads        memory areas\n"
    "  modules     kernel modules\n"
    "  envars      environment variables\n"
    "  netscan     TCP/UDP sockets (IPv4 and IPv6)\n"
    "  containers  processes grouped by container (the cgroup's container ID, else own namespaces)\n"
    "  params      command line and image path\n"
    "  injections  suspected code injections (anonymous executable or writable+executable areas)\n"
    "  attest      attestation of executable areas against a hash map (--hash-map), with a verdict\n"
    "  yara        YARA scan (DOCA's built-in rules, or --rules FILE)\n"
    "  watch       the changes, as JSON lines, every --interval MS: processes, modules, listening\n"
    "              sockets, injections; attestation failures (--hash-map), YARA matches (--rule/--rules)\n"
    "\n"
    "The memory source is --memory, else SOFTDPU_APSH_MEMORY (the same syntax), else the topology's\n"
    "representor memory. Without --symbols/--regions/--kpgd everything is derived from the memory.\n"
    "Every query prints a table, JSON, JSON lines or CSV (--output), with the same columns.\n"
    "Options go before or after the query; --opt=value and --opt value are the same. docs/apsh-cli.md.\n";

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
	std::string query;
	std::optional<std::string> memory; // as given: SOFTDPU_APSH_MEMORY's syntax
	std::string memory_path;           // the file it names
	std::string qmp;
	std::string symbols, regions, kpgd, rep_pci;
	std::vector<std::string> pid_texts;
	std::vector<uint32_t> pids;
	bool json = false; // --json: --output json
	std::optional<std::string> output_text;
	OutputFormat output = OutputFormat::table;
	bool kernel_threads = false;
	bool no_progress = false;
	bool progress = true;
	bool verbose = false;
	bool consistent = false;
	std::string consistent_source; // --consistent: the memory source whose QMP socket pauses the guest
	std::string hash_map;
	std::vector<std::string> rule_names;
	std::vector<doca_apsh_yara_rule> rules;
	std::string user_rules;
	bool monotonic = false;
	bool heap_only = false;
	std::optional<std::string> window_size_text, window_step_text;
	std::optional<uint32_t> window_size, window_step;
	// watch
	std::optional<std::string> interval_text, events_text, count_text, duration_text;
	bool heartbeat = false;
	WatchSettings watch;
};

const char *const kQueries[] = {"ps",      "pstree",     "threads", "libs",       "vads",   "modules", "envars",
				"netscan", "containers", "params",  "injections", "attest", "yara",    "watch"};

template <typename Integer> Integer parse_number(std::string_view option, std::string_view text)
{
	Integer value{};
	const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
	if (ec != std::errc() || end != text.data() + text.size() || text.empty())
		fail_usage(std::string(option) + ": expected a non-negative number, got \"" + std::string(text) + "\"");
	return value;
}

std::optional<doca_apsh_yara_rule> builtin_rule(std::string_view name)
{
	if (name == "Hello_World")
		return DOCA_APSH_YARA_RULE_HELLO_WORLD;
	if (name == "Reflective_Dll_Injection")
		return DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION;
	if (name == "Mimikatz")
		return DOCA_APSH_YARA_RULE_MIMIKATZ;
	return std::nullopt;
}

// Declares the options on the subcommand; CLI11 fills `options` while parsing.
void declare_options(CLI::App &apsh, Options &options)
{
	apsh.add_option("query", options.query, "what to list (see queries below)")->required();
	const char *source = "Memory source";
	apsh.add_option("--memory", options.memory,
			"KIND:PATH, KIND qemu (a running QEMU's shared RAM file), raw, elf (dump-guest-memory), "
			"lime or auto (detect); a bare PATH means auto; or a running QEMU: pid:PID, "
			"qemu-name:NAME, libvirt:DOMAIN")
	    ->group(source);
	apsh.add_option("--qmp", options.qmp,
			"QEMU's QMP socket, asked for the RAM layout (qemu, auto and the QEMU process kinds)")
	    ->group(source);
	apsh.add_option("--symbols", options.symbols, "symbol map (softdpu-apsh-config output or a Volatility 3 ISF)")
	    ->group(source);
	apsh.add_option("--regions", options.regions, "memory regions file")->group(source);
	apsh.add_option("--kpgd", options.kpgd, "kpgd file")->group(source);
	apsh.add_option("--rep", options.rep_pci,
			"PCI address of the representor to bind, with or without the domain (0000:03:00.0 or "
			"03:00.0; default: the first with a memory source)")
	    ->group(source);
	const char *output = "Output and selection";
	apsh.add_option("--output", options.output_text,
			"table (default), json (an array; pstree: nested), jsonl (an object a line) or csv "
			"(RFC 4180, a header of keys); the same columns in every format")
	    ->type_name("FORMAT")
	    ->group(output);
	apsh.add_flag("--json", options.json, "the same as --output json")->group(output);
	apsh.add_option("--pid", options.pid_texts, "only process N (repeatable)")
	    ->type_name("N")
	    ->allow_extra_args(false)
	    ->group(output);
	apsh.add_flag("--no-progress", options.no_progress,
		      "no progress bar (it is shown on stderr only when stderr is a terminal)")
	    ->group(output);
	apsh.add_flag("--consistent", options.consistent,
		      "pause the guest over QMP (stop/cont) for the query and report how long it was paused")
	    ->group(source);
	apsh.add_flag("--verbose", options.verbose, "also print the SDK's warnings and what system start found")
	    ->group(output);
	const char *query = "Query options";
	apsh.add_flag("--kernel-threads", options.kernel_threads,
		      "pstree: show kthreadd's children instead of one folded line with their count")
	    ->group(query);
	apsh.add_option("--hash-map", options.hash_map, "attest: the hash map (softdpu-exec-hash-build-map output)")
	    ->group(query);
	apsh.add_option("--rule", options.rule_names,
			"yara: Hello_World, Reflective_Dll_Injection or Mimikatz (repeatable; default all three)")
	    ->allow_extra_args(false)
	    ->group(query);
	apsh.add_option("--rules", options.user_rules, "yara: a file of user rules (beyond DOCA)")->group(query);
	apsh.add_flag("--monotonic", options.monotonic, "yara: the user rules only grow true with more bytes")
	    ->group(query);
	apsh.add_flag("--heap", options.heap_only, "yara: scan the heap only")->group(query);
	apsh.add_option("--window-size", options.window_size_text, "yara: scan window size in bytes")
	    ->type_name("N")
	    ->group(query);
	apsh.add_option("--window-step", options.window_step_text, "yara: scan window step in bytes")
	    ->type_name("N")
	    ->group(query);
	const char *watch = "watch";
	apsh.add_option("--interval", options.interval_text,
			"refresh every MS milliseconds (default 1000, at least 100)")
	    ->type_name("MS")
	    ->group(watch);
	apsh.add_option("--events", options.events_text,
			"comma-separated: process, module, socket, attest, yara, injection, all (default: process,"
			"module,socket,injection, plus attest with --hash-map and yara with --rule/--rules)")
	    ->type_name("LIST")
	    ->group(watch);
	apsh.add_option("--count", options.count_text, "stop after N refreshes")->type_name("N")->group(watch);
	apsh.add_option("--duration", options.duration_text, "stop after SECONDS (decimals allowed)")
	    ->type_name("SECONDS")
	    ->group(watch);
	apsh.add_flag("--heartbeat", options.heartbeat,
		      "a \"refresh\" line after every refresh (when it started and ended), changes or not")
	    ->group(watch);
}

// The options of watch (validate's part).
void validate_watch(Options &options)
{
	const bool watch_options = options.interval_text || options.events_text || options.count_text ||
				   options.duration_text || options.heartbeat;
	if (options.query != "watch") {
		if (watch_options)
			fail_usage("--interval, --events, --count, --duration and --heartbeat only go with watch");
		return;
	}
	if (options.output_text || options.json)
		fail_usage("watch prints JSON lines; --output and --json do not apply");
	if (!options.pids.empty())
		fail_usage("--pid does not apply to watch");
	if (options.consistent)
		fail_usage("--consistent does not apply to watch");
	WatchSettings &watch = options.watch;
	watch.heartbeat = options.heartbeat;
	if (options.interval_text) {
		watch.interval_ms = parse_number<uint32_t>("--interval", *options.interval_text);
		if (watch.interval_ms < 100)
			fail_usage("--interval: at least 100 (milliseconds)");
	}
	if (options.count_text)
		watch.count = parse_number<uint64_t>("--count", *options.count_text);
	if (options.duration_text) {
		char *end = nullptr;
		const double seconds = std::strtod(options.duration_text->c_str(), &end);
		if (options.duration_text->empty() || *end != '\0' || !(seconds >= 0) || seconds > 1e9)
			fail_usage("--duration: expected seconds, got \"" + *options.duration_text + "\"");
		watch.duration_ms = static_cast<uint64_t>(seconds * 1000);
	}
	const bool yara_rules = !options.rules.empty() || !options.user_rules.empty();
	if (options.events_text) {
		std::string why;
		auto kinds = parse_watch_kinds(*options.events_text, why);
		if (!kinds)
			fail_usage("--events: " + why);
		watch.kinds = *kinds;
	} else {
		if (!options.hash_map.empty())
			watch.kinds |= SOFTDPU_APSH_WATCH_KIND_ATTESTATION;
		if (yara_rules)
			watch.kinds |= SOFTDPU_APSH_WATCH_KIND_YARA;
	}
	if ((watch.kinds & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) && options.hash_map.empty())
		fail_usage("watching attest needs --hash-map FILE (written by softdpu-exec-hash-build-map)");
	if (!(watch.kinds & SOFTDPU_APSH_WATCH_KIND_ATTESTATION) && !options.hash_map.empty())
		fail_usage("--hash-map goes with the attest events");
	if (!(watch.kinds & SOFTDPU_APSH_WATCH_KIND_YARA) && (yara_rules || options.monotonic || options.heap_only))
		fail_usage("--rule, --rules, --monotonic and --heap go with the yara events");
	watch.hash_map = options.hash_map;
	watch.rules = options.rules;
	watch.user_rules = options.user_rules;
	watch.monotonic = options.monotonic;
	watch.heap_only = options.heap_only;
}

// Checks what CLI11 cannot: values, and which options go together. Usage errors throw.
void validate(Options &options)
{
	if (std::find(std::begin(kQueries), std::end(kQueries), options.query) == std::end(kQueries))
		fail_usage("unknown query \"" + options.query + "\"");
	options.progress = !options.no_progress;
	if (options.output_text) {
		const auto format = parse_output_format(*options.output_text);
		if (!format)
			fail_usage("--output: unknown format \"" + *options.output_text + "\" (" +
				   output_format_names() + ")");
		if (options.json && *format != OutputFormat::json)
			fail_usage("--json means --output json, not --output " + *options.output_text);
		options.output = *format;
	} else if (options.json) {
		options.output = OutputFormat::json;
	}
	for (const std::string &text : options.pid_texts)
		options.pids.push_back(parse_number<uint32_t>("--pid", text));
	if (options.window_size_text)
		options.window_size = parse_number<uint32_t>("--window-size", *options.window_size_text);
	if (options.window_step_text)
		options.window_step = parse_number<uint32_t>("--window-step", *options.window_step_text);
	for (const std::string &name : options.rule_names) {
		auto rule = builtin_rule(name);
		if (!rule)
			fail_usage("--rule: unknown rule \"" + name +
				   "\" (Hello_World, Reflective_Dll_Injection, Mimikatz)");
		options.rules.push_back(*rule);
	}
	if (!options.qmp.empty() && !options.memory)
		fail_usage("--qmp goes with --memory qemu:PATH");
	if (options.memory) {
		// One parser for --memory, SOFTDPU_APSH_MEMORY and the topology (softdpu/topology.h).
		char path[4096] = {};
		char error[512] = {};
		if (softdpu_memory_source_check(options.memory->c_str(), path, sizeof(path), error, sizeof(error)) !=
		    DOCA_SUCCESS)
			fail_usage(std::string("--memory: ") + error);
		options.memory_path = path;
		if (!options.qmp.empty()) {
			*options.memory += ",qmp=" + options.qmp;
			if (softdpu_memory_source_check(options.memory->c_str(), nullptr, 0, error, sizeof(error)) !=
			    DOCA_SUCCESS)
				fail_usage(std::string("--qmp: ") + error);
		}
	}
	if (const char *environment = std::getenv("SOFTDPU_APSH_MEMORY");
	    !options.memory && environment != nullptr && *environment != '\0') {
		char error[512] = {};
		if (softdpu_memory_source_check(environment, nullptr, 0, error, sizeof(error)) != DOCA_SUCCESS)
			fail_usage(std::string("SOFTDPU_APSH_MEMORY: ") + error);
	}
	if (options.consistent) {
		const char *environment = std::getenv("SOFTDPU_APSH_MEMORY");
		options.consistent_source = options.memory           ? *options.memory
					    : environment != nullptr ? environment
								     : "";
		if (options.consistent_source.find(",qmp=") == std::string::npos)
			fail_usage("--consistent pauses the guest over QMP: give --qmp SOCKET (or \",qmp=SOCKET\" in "
				   "--memory or SOFTDPU_APSH_MEMORY)");
	}
	validate_watch(options);
	if (options.query == "attest" && options.hash_map.empty())
		fail_usage("attest needs --hash-map FILE (written by softdpu-exec-hash-build-map)");
	if (options.query != "attest" && options.query != "watch" && !options.hash_map.empty())
		fail_usage("--hash-map only goes with attest and watch");
	const bool yara_options = !options.rules.empty() || !options.user_rules.empty() || options.monotonic ||
				  options.heap_only || options.window_size || options.window_step;
	if (options.query != "yara" && options.query != "watch" && yara_options)
		fail_usage("--rule, --rules, --monotonic, --heap and --window-* only go with yara and watch");
	if (!options.rules.empty() && !options.user_rules.empty())
		fail_usage("--rule and --rules cannot be combined");
	if (options.query != "pstree" && options.kernel_threads)
		fail_usage("--kernel-threads only goes with pstree");
	if ((options.query == "modules" || options.query == "containers") && !options.pids.empty())
		fail_usage("--pid does not apply to " + options.query);
}

// A file the user named must be readable before the SDK sees it, so the error names the option.
// Only regular files (and block devices for the memory image) are accepted: a FIFO would block.
// The SDK opens the file itself (without waiting on a FIFO either); this only words the error.
bool check_readable(const char *option, const std::string &path, bool block_device_ok = false)
{
	if (path.empty())
		return true;
	struct stat info {};
	std::string why;
	if (::stat(path.c_str(), &info) != 0 || ::access(path.c_str(), R_OK) != 0)
		why = std::strerror(errno);
	else if (S_ISDIR(info.st_mode))
		why = "is a directory";
	else if (!S_ISREG(info.st_mode) && !(block_device_ok && S_ISBLK(info.st_mode)))
		why = std::string(block_device_ok ? "not a regular file or block device (" : "not a regular file (") +
		      (S_ISFIFO(info.st_mode)   ? "a FIFO"
		       : S_ISCHR(info.st_mode)  ? "a character device"
		       : S_ISBLK(info.st_mode)  ? "a block device"
		       : S_ISSOCK(info.st_mode) ? "a socket"
						: "of an unusual type") +
		      ")";
	if (why.empty())
		return true;
	std::fprintf(stderr, "softdpu apsh: %s %s: %s\n", option, path.c_str(), why.c_str());
	return false;
}

// ---------------------------------------------------------------------------------------------
// Progress bar on stderr for scans over many processes; drawn only on a terminal.

class Progress {
public:
	Progress(bool enabled, size_t total) : enabled_(enabled && total > 1 && ::isatty(STDERR_FILENO)), total_(total)
	{
	}
	~Progress() { finish(); }

	void step(size_t done, uint32_t pid, const char *comm)
	{
		if (!enabled_)
			return;
		constexpr int kWidth = 30;
		const int filled = static_cast<int>(done * kWidth / total_);
		std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu pid %u %-16.16s", filled, "##############################",
			     kWidth - filled, "", done, total_, pid, comm != nullptr ? comm : "");
		std::fflush(stderr);
		drawn_ = true;
	}

	void finish()
	{
		if (drawn_)
			std::fprintf(stderr, "\r%*s\r", 80, "");
		drawn_ = false;
	}

private:
	bool enabled_;
	size_t total_;
	bool drawn_ = false;
};

// ---------------------------------------------------------------------------------------------
// The DOCA objects of one run, released in reverse order.

struct Session {
	doca_devinfo **devinfos = nullptr;
	uint32_t devinfo_count = 0;
	doca_dev *dev = nullptr;
	doca_devinfo_rep **reps = nullptr;
	uint32_t rep_count = 0;
	doca_dev_rep *rep = nullptr;
	doca_apsh_ctx *ctx = nullptr;
	doca_apsh_system *system = nullptr;
	doca_apsh_process **processes = nullptr;
	int process_count = 0;

	~Session()
	{
		if (processes != nullptr)
			doca_apsh_processes_free(processes);
		if (system != nullptr)
			doca_apsh_system_destroy(system);
		if (ctx != nullptr)
			doca_apsh_destroy(ctx);
		if (rep != nullptr)
			doca_dev_rep_close(rep);
		if (reps != nullptr)
			doca_devinfo_rep_destroy_list(reps);
		if (dev != nullptr)
			doca_dev_close(dev);
		if (devinfos != nullptr)
			doca_devinfo_destroy_list(devinfos);
	}
};

int fail(const std::string &message)
{
	std::fprintf(stderr, "softdpu apsh: %s\n", message.c_str());
	print_sdk_messages("  ");
	return 1;
}

std::string error_text(doca_error_t status)
{
	return std::string(doca_error_get_name(status)) + " (" + doca_error_get_descr(status) + ")";
}

// Opens the first local device that lists net representors (the DPU's eswitch manager) and the
// representor to watch: --rep, else the first one with a memory source when the topology gives
// one (or any, when the source comes from the environment).
int open_devices(const Options &options, Session &session)
{
	doca_error_t status = doca_devinfo_create_list(&session.devinfos, &session.devinfo_count);
	if (status != DOCA_SUCCESS)
		return fail("cannot list devices: " + error_text(status));
	for (uint32_t i = 0; i < session.devinfo_count && session.dev == nullptr; ++i) {
		uint8_t net = 0;
		if (doca_devinfo_rep_cap_is_filter_net_supported(session.devinfos[i], &net) != DOCA_SUCCESS || !net)
			continue;
		if (doca_dev_open(session.devinfos[i], &session.dev) != DOCA_SUCCESS)
			session.dev = nullptr;
	}
	if (session.dev == nullptr)
		return fail("no local device lists representors: App Shield runs on the DPU side "
			    "(SOFTDPU_SIDE=dpu, the default) of a topology with a DPU PF");
	status =
	    doca_devinfo_rep_create_list(session.dev, DOCA_DEVINFO_REP_FILTER_NET, &session.reps, &session.rep_count);
	if (status != DOCA_SUCCESS || session.rep_count == 0)
		return fail("the DPU device lists no representors" +
			    (status != DOCA_SUCCESS ? ": " + error_text(status) : std::string()));
	const bool source_from_environment = std::getenv("SOFTDPU_APSH_MEMORY") != nullptr;
	doca_devinfo_rep *chosen = nullptr;
	for (uint32_t i = 0; i < session.rep_count && chosen == nullptr; ++i) {
		if (!options.rep_pci.empty()) {
			// With or without the domain: doca_devinfo_rep_is_equal_pci_addr takes both.
			uint8_t equal = 0;
			const doca_error_t compared =
			    doca_devinfo_rep_is_equal_pci_addr(session.reps[i], options.rep_pci.c_str(), &equal);
			if (compared == DOCA_ERROR_INVALID_VALUE) {
				sdk_messages().clear(); // the SDK's record of the same
				fail_usage("--rep: malformed PCI address \"" + options.rep_pci +
					   "\" (expected 0000:03:00.0 or 03:00.0)");
			}
			if (compared == DOCA_SUCCESS && equal)
				chosen = session.reps[i];
		} else if (source_from_environment) {
			chosen = session.reps[i];
		} else {
			char memory[2] = {};
			// INVALID_VALUE (too small for the value) means the topology names a source.
			if (softdpu_devinfo_rep_get_str(session.reps[i], SOFTDPU_DEVINFO_REP_MEMORY, memory,
							sizeof(memory)) != DOCA_SUCCESS ||
			    memory[0] != '\0')
				chosen = session.reps[i];
		}
	}
	if (chosen == nullptr) {
		if (!options.rep_pci.empty())
			return fail("no representor with PCI address " + options.rep_pci);
		return fail("no memory source: give --memory KIND:PATH (or set SOFTDPU_APSH_MEMORY, or a "
			    "representor \"memory\" in the topology)");
	}
	status = doca_dev_rep_open(chosen, &session.rep);
	if (status != DOCA_SUCCESS)
		return fail("cannot open the representor: " + error_text(status));
	return 0;
}

int start_system(const Options &options, Session &session)
{
	session.ctx = doca_apsh_create();
	if (session.ctx == nullptr)
		return fail("doca_apsh_create failed");
	doca_error_t status = doca_apsh_dma_dev_set(session.ctx, session.dev);
	if (status == DOCA_SUCCESS)
		status = doca_apsh_start(session.ctx);
	if (status != DOCA_SUCCESS)
		return fail("cannot start the App Shield context: " + error_text(status));
	session.system = doca_apsh_system_create(session.ctx);
	if (session.system == nullptr)
		return fail("doca_apsh_system_create failed");
	status = doca_apsh_sys_os_type_set(session.system, DOCA_APSH_SYSTEM_LINUX);
	if (status != DOCA_SUCCESS)
		return fail("cannot set the OS type: " + error_text(status));
	struct FileSetting {
		const char *option;
		const std::string &path;
		doca_error_t (*set)(doca_apsh_system *, const char *);
	};
	const FileSetting files[] = {{"--symbols", options.symbols, doca_apsh_sys_os_symbol_map_set},
				     {"--regions", options.regions, doca_apsh_sys_mem_region_set},
				     {"--kpgd", options.kpgd, doca_apsh_sys_kpgd_file_set}};
	for (const FileSetting &file : files) {
		if (file.path.empty())
			continue;
		status = file.set(session.system, file.path.c_str());
		if (status != DOCA_SUCCESS)
			return fail(std::string(file.option) + " " + file.path +
				    ": not accepted: " + error_text(status));
	}
	if (options.window_size) {
		status = doca_apsh_sys_set_scan_window_size(session.system, *options.window_size);
		if (status != DOCA_SUCCESS)
			return fail("--window-size " + std::to_string(*options.window_size) +
				    ": invalid (a multiple or a divisor of 4096)");
	}
	if (options.window_step) {
		status = doca_apsh_sys_set_scan_window_step(session.system, *options.window_step);
		if (status != DOCA_SUCCESS)
			return fail("--window-step " + std::to_string(*options.window_step) +
				    ": invalid (must divide the window size)");
	}
	status = doca_apsh_sys_dev_set(session.system, session.rep);
	if (status != DOCA_SUCCESS)
		return fail("cannot bind the representor: " + error_text(status));
	status = doca_apsh_system_start(session.system);
	if (status != DOCA_SUCCESS)
		return fail("cannot read the guest: " + error_text(status));
	return 0;
}

// ---------------------------------------------------------------------------------------------
// Queries

char state_letter(uint64_t state)
{
	if (state == 0)
		return 'R';
	if (state == 0x402) // TASK_IDLE = TASK_UNINTERRUPTIBLE | TASK_NOLOAD
		return 'I';
	static const std::pair<uint64_t, char> bits[] = {{0x1, 'S'},  {0x2, 'D'},  {0x4, 'T'},  {0x8, 't'},
							 {0x10, 'X'}, {0x20, 'Z'}, {0x40, 'P'}, {0x80, 'X'}};
	for (const auto &[bit, letter] : bits)
		if (state & bit)
			return letter;
	return '?';
}

bool selected(const Options &options, uint32_t pid)
{
	return options.pids.empty() || std::find(options.pids.begin(), options.pids.end(), pid) != options.pids.end();
}

uint32_t pid_of(doca_apsh_process *process)
{
	return doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_PID);
}

const char *comm_of(doca_apsh_process *process)
{
	const char *comm = doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_COMM);
	return comm != nullptr ? comm : "";
}

// Runs one per-process query over the selected processes. A process that exited meanwhile
// (NOT_FOUND) or has no user memory (BAD_STATE, kernel threads) is skipped; other errors are
// reported and make the exit status 1, the rest of the output is still printed.
struct ProcessLoop {
	const Options &options;
	Session &session;
	bool show_progress = false;
	int errors = 0;

	void run(const char *what, const std::function<doca_error_t(doca_apsh_process *)> &query)
	{
		std::vector<doca_apsh_process *> chosen;
		for (int i = 0; i < session.process_count; ++i)
			if (selected(options, pid_of(session.processes[i])))
				chosen.push_back(session.processes[i]);
		std::sort(chosen.begin(), chosen.end(),
			  [](doca_apsh_process *a, doca_apsh_process *b) { return pid_of(a) < pid_of(b); });
		Progress progress(show_progress && options.progress, chosen.size());
		for (size_t i = 0; i < chosen.size(); ++i) {
			progress.step(i, pid_of(chosen[i]), comm_of(chosen[i]));
			const doca_error_t status = query(chosen[i]);
			if (status == DOCA_SUCCESS || status == DOCA_ERROR_NOT_FOUND || status == DOCA_ERROR_BAD_STATE)
				continue;
			progress.finish();
			std::fprintf(stderr, "softdpu apsh: %s of pid %u (%s): %s\n", what, pid_of(chosen[i]),
				     comm_of(chosen[i]), error_text(status).c_str());
			print_sdk_messages("  ");
			++errors;
		}
	}
};

// attest's verdict on one executable area: "ok" when every page of it in memory matches the hash
// map, "modified" when some page in memory does not (it differs from the file, or the map has no
// hash for it), "not-checked" when nothing could be compared; the reason says which and why.
// "modified" is the library's AreaAttestation::modified (the watch's attestation failure) read
// from the DOCA attributes.
struct AttestationVerdict {
	const char *verdict;
	std::string reason;
};

AttestationVerdict attestation_verdict(doca_apsh_attestation *area)
{
	const char *path = doca_apsh_attst_info_get(area, DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA);
	const int hashed = doca_apsh_attst_info_get(area, DOCA_APSH_ATTESTATION_PAGES_NUMBER);
	const int present = doca_apsh_attst_info_get(area, DOCA_APSH_ATTESTATION_PAGES_PRESENT);
	const int matching = doca_apsh_attst_info_get(area, DOCA_APSH_ATTESTATION_MATCHING_HASHES);
	if (path == nullptr || *path == '\0')
		return {"not-checked", "anonymous memory, no file to compare with"};
	if (!doca_apsh_attst_info_get(area, DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT))
		return {"not-checked", "not in the hash map"};
	if (hashed == 0)
		return {"not-checked", "the hash map has no page of this area"};
	if (present == 0)
		return {"not-checked", "no page of the area is in memory"};
	const std::string in_memory = std::to_string(present) + (present == 1 ? " page" : " pages") + " in memory";
	if (matching >= present)
		return {"ok", (present == 1 ? "the " : "all ") + in_memory + (present == 1 ? " matches" : " match")};
	return {"modified", std::to_string(present - matching) + " of " + in_memory + " differ from the hash map"};
}

Table processes_table(const Options &options, Session &session)
{
	Table table{{{"PID", "pid", true},
		     {"PPID", "ppid", true},
		     {"UID", "uid", true},
		     {"GID", "gid", true},
		     {"S", "state", false},
		     {"CPU(s)", "cpu_seconds", true, true},
		     {"COMM", "comm", false}},
		    {}};
	std::vector<doca_apsh_process *> sorted(session.processes, session.processes + session.process_count);
	std::sort(sorted.begin(), sorted.end(),
		  [](doca_apsh_process *a, doca_apsh_process *b) { return pid_of(a) < pid_of(b); });
	for (doca_apsh_process *process : sorted) {
		if (!selected(options, pid_of(process)))
			continue;
		const uint64_t picoseconds = doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_CPU_TIME);
		table.add(
		    {pid_of(process), doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_PPID),
		     doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_LINUX_UID),
		     doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_LINUX_GID),
		     std::string(1, state_letter(doca_apsh_process_info_get(process, DOCA_APSH_PROCESS_LINUX_STATE))),
		     static_cast<double>(picoseconds) / 1e12, comm_of(process)});
	}
	return table;
}

// Box-drawing characters for pstree where the locale is UTF-8 (LC_ALL, else LC_CTYPE, else LANG).
bool utf8_locale()
{
	for (const char *name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
		const char *value = std::getenv(name);
		if (value == nullptr || *value == '\0')
			continue;
		std::string text(value);
		std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
		return text.find("utf-8") != std::string::npos || text.find("utf8") != std::string::npos;
	}
	return false;
}

void print_pstree(const Options &options, Session &session)
{
	std::vector<TreeProcess> processes;
	processes.reserve(static_cast<size_t>(session.process_count));
	for (int i = 0; i < session.process_count; ++i)
		processes.push_back({pid_of(session.processes[i]),
				     doca_apsh_process_info_get(session.processes[i], DOCA_APSH_PROCESS_PPID),
				     comm_of(session.processes[i])});
	print_process_tree(processes, {options.pids, !options.kernel_threads, utf8_locale()}, options.output);
}

int run_query(const Options &options, Session &session)
{
	Table table;
	ProcessLoop loop{options, session};
	if (options.query == "pstree") {
		print_pstree(options, session);
		if (options.verbose)
			print_sdk_messages("");
		return 0;
	}
	if (options.query == "ps") {
		table = processes_table(options, session);
	} else if (options.query == "modules") {
		table.columns = {{"ADDRESS", "address"}, {"SIZE", "size", true}, {"NAME", "name"}};
		doca_apsh_module **modules = nullptr;
		int count = 0;
		const doca_error_t status = doca_apsh_modules_get(session.system, &modules, &count);
		if (status != DOCA_SUCCESS)
			return fail("modules: " + error_text(status));
		for (int i = 0; i < count; ++i)
			table.add({hex_cell(doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_OFFSET)),
				   doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_SIZE),
				   text_cell(doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_NAME))});
		doca_apsh_module_free(modules);
	} else if (options.query == "netscan") {
		table.columns = {{"PID", "pid", true},           {"COMM", "comm"},
				 {"PROTO", "protocol"},          {"LOCAL", "local_addr"},
				 {"LPORT", "local_port", true},  {"REMOTE", "remote_addr"},
				 {"RPORT", "remote_port", true}, {"STATE", "state"}};
		doca_apsh_netscan **connections = nullptr;
		int count = 0;
		const doca_error_t status = doca_apsh_netscan_get(session.system, &connections, &count);
		if (status != DOCA_SUCCESS)
			return fail("netscan: " + error_text(status));
		std::vector<doca_apsh_netscan *> rows(connections, connections + count);
		std::stable_sort(rows.begin(), rows.end(), [](doca_apsh_netscan *a, doca_apsh_netscan *b) {
			return doca_apsh_netscan_info_get(a, DOCA_APSH_NETSCAN_PID) <
			       doca_apsh_netscan_info_get(b, DOCA_APSH_NETSCAN_PID);
		});
		for (doca_apsh_netscan *c : rows) {
			const uint32_t pid = doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_PID);
			if (!selected(options, pid))
				continue;
			table.add({pid, text_cell(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_COMM)),
				   text_cell(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_PROTOCOL)),
				   text_cell(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_LOCAL_ADDR)),
				   doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_LOCAL_PORT),
				   text_cell(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_REMOTE_ADDR)),
				   doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_REMOTE_PORT),
				   text_cell(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_STATE))});
		}
		doca_apsh_netscan_free(connections);
	} else if (options.query == "containers") {
		table.columns = {{"ID", "id"},
				 {"RUNTIME", "runtime"},
				 {"PIDS", "pids"},
				 {"PID_NS", "pid_ns", true},
				 {"MNT_NS", "mnt_ns", true},
				 {"NET_NS", "net_ns", true},
				 {"CGROUP", "cgroup"}};
		doca_apsh_container **containers = nullptr;
		int count = 0;
		const doca_error_t status = doca_apsh_containers_get(session.system, &containers, &count);
		if (status != DOCA_SUCCESS)
			return fail("containers: " + error_text(status));
		for (int i = 0; i < count; ++i) {
			doca_apsh_container *c = containers[i];
			doca_apsh_process **processes = nullptr;
			int process_count = 0;
			std::string pids;
			if (doca_apsh_container_processes_get(c, &processes, &process_count) == DOCA_SUCCESS) {
				for (int j = 0; j < process_count; ++j)
					pids += (j ? "," : "") + std::to_string(pid_of(processes[j]));
				doca_apsh_processes_free(processes);
			}
			table.add({text_cell(doca_apsh_container_info_get(c, DOCA_APSH_CONTAINER_ID)),
				   text_cell(softdpu_apsh_container_info_get(c, SOFTDPU_APSH_CONTAINER_RUNTIME)), pids,
				   softdpu_apsh_container_info_get(c, SOFTDPU_APSH_CONTAINER_NS_PID),
				   softdpu_apsh_container_info_get(c, SOFTDPU_APSH_CONTAINER_NS_MNT),
				   softdpu_apsh_container_info_get(c, SOFTDPU_APSH_CONTAINER_NS_NET),
				   text_cell(softdpu_apsh_container_info_get(c, SOFTDPU_APSH_CONTAINER_CGROUP))});
		}
		doca_apsh_containers_free(containers);
	} else if (options.query == "threads") {
		table.columns = {{"PID", "pid", true},
				 {"TID", "tid", true},
				 {"S", "state"},
				 {"PROCESS", "process_name"},
				 {"THREAD", "thread_name"}};
		loop.run("threads", [&](doca_apsh_process *process) {
			doca_apsh_thread **threads = nullptr;
			int count = 0;
			const doca_error_t status = doca_apsh_threads_get(process, &threads, &count);
			if (status != DOCA_SUCCESS)
				return status;
			std::vector<doca_apsh_thread *> rows(threads, threads + count);
			std::sort(rows.begin(), rows.end(), [](doca_apsh_thread *a, doca_apsh_thread *b) {
				return doca_apsh_thread_info_get(a, DOCA_APSH_THREAD_TID) <
				       doca_apsh_thread_info_get(b, DOCA_APSH_THREAD_TID);
			});
			for (doca_apsh_thread *t : rows)
				table.add(
				    {doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_PID),
				     doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_TID),
				     std::string(1, state_letter(doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_STATE))),
				     text_cell(doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_LINUX_PROC_NAME)),
				     text_cell(doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_LINUX_THREAD_NAME))});
			doca_apsh_threads_free(threads);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "libs") {
		table.columns = {
		    {"PID", "pid", true}, {"COMM", "comm"}, {"LOAD ADDRESS", "load_address"}, {"PATH", "path"}};
		loop.run("libraries", [&](doca_apsh_process *process) {
			doca_apsh_lib **libs = nullptr;
			int count = 0;
			const doca_error_t status = doca_apsh_libs_get(process, &libs, &count);
			if (status != DOCA_SUCCESS)
				return status;
			for (int i = 0; i < count; ++i)
				table.add({doca_apsh_lib_info_get(libs[i], DOCA_APSH_LIB_PID), comm_of(process),
					   hex_cell(doca_apsh_lib_info_get(libs[i], DOCA_APSH_LIB_LOAD_ADRESS)),
					   text_cell(doca_apsh_lib_info_get(libs[i], DOCA_APSH_LIB_LIBRARY_PATH))});
			doca_apsh_libs_free(libs);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "vads") {
		table.columns = {{"PID", "pid", true},   {"COMM", "comm"},     {"START", "start"}, {"END", "end"},
				 {"PROT", "protection"}, {"OFFSET", "offset"}, {"PATH", "path"}};
		loop.run("memory areas", [&](doca_apsh_process *process) {
			doca_apsh_vad **vads = nullptr;
			int count = 0;
			const doca_error_t status = doca_apsh_vads_get(process, &vads, &count);
			if (status != DOCA_SUCCESS)
				return status;
			std::vector<doca_apsh_vad *> rows(vads, vads + count);
			std::sort(rows.begin(), rows.end(), [](doca_apsh_vad *a, doca_apsh_vad *b) {
				return doca_apsh_vad_info_get(a, DOCA_APSH_VMA_VM_START) <
				       doca_apsh_vad_info_get(b, DOCA_APSH_VMA_VM_START);
			});
			for (doca_apsh_vad *v : rows)
				table.add({doca_apsh_vad_info_get(v, DOCA_APSH_VMA_PID),
					   text_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_PROCESS_NAME)),
					   hex_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_VM_START)),
					   hex_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_VM_END)),
					   text_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_PROTECTION)),
					   hex_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_OFFSET)),
					   text_cell(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_FILE_PATH))});
			doca_apsh_vads_free(vads);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "envars") {
		table.columns = {{"PID", "pid", true}, {"COMM", "comm"}, {"VARIABLE", "variable"}, {"VALUE", "value"}};
		loop.run("environment", [&](doca_apsh_process *process) {
			doca_apsh_envar **envars = nullptr;
			int count = 0;
			const doca_error_t status = doca_apsh_envars_get(process, &envars, &count);
			if (status != DOCA_SUCCESS)
				return status;
			for (int i = 0; i < count; ++i)
				table.add({doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_PID), comm_of(process),
					   text_cell(doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_VARIABLE)),
					   text_cell(doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_VALUE))});
			doca_apsh_envars_free(envars);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "params") {
		table.columns = {{"PID", "pid", true},
				 {"COMM", "comm"},
				 {"IMAGE BASE", "image_base"},
				 {"IMAGE", "image_path"},
				 {"COMMAND LINE", "command_line"}};
		loop.run("parameters", [&](doca_apsh_process *process) {
			doca_apsh_process_parameters *params = nullptr;
			const doca_error_t status = doca_apsh_process_parameters_get(process, &params);
			if (status != DOCA_SUCCESS)
				return status;
			table.add({doca_apsh_process_parameters_info_get(params, DOCA_APSH_PROCESS_PARAMETERS_PID),
				   comm_of(process),
				   hex_cell(doca_apsh_process_parameters_info_get(
				       params, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR)),
				   text_cell(doca_apsh_process_parameters_info_get(
				       params, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH)),
				   text_cell(doca_apsh_process_parameters_info_get(
				       params, DOCA_APSH_PROCESS_PARAMETERS_CMD_LINE))});
			doca_apsh_process_parameters_free(params);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "injections") {
		table.columns = {{"PID", "pid", true},
				 {"COMM", "comm"},
				 {"START", "start"},
				 {"END", "end"},
				 {"PROT", "protection"},
				 {"SUSPECT START", "suspected_start"},
				 {"SUSPECT END", "suspected_end"},
				 {"PATH", "path"}};
		loop.run("injection detection", [&](doca_apsh_process *process) {
			doca_apsh_injection_detect **found = nullptr;
			int count = 0;
			const doca_error_t status = doca_apsh_injection_detect_get(process, &found, &count);
			if (status != DOCA_SUCCESS)
				return status;
			for (int i = 0; i < count; ++i) {
				doca_apsh_injection_detect *f = found[i];
				table.add({doca_apsh_injection_detect_info_get(f, DOCA_APSH_INJECTION_DETECT_PID),
					   comm_of(process),
					   hex_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_VAD_START)),
					   hex_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_VAD_END)),
					   text_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION)),
					   hex_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START)),
					   hex_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_END)),
					   text_cell(doca_apsh_injection_detect_info_get(
					       f, DOCA_APSH_INJECTION_DETECT_VAD_FILE_PATH))});
			}
			doca_apsh_injection_detect_free(found);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "attest") {
		table.columns = {{"PID", "pid", true},
				 {"COMM", "comm"},
				 {"START", "start"},
				 {"END", "end"},
				 {"PROT", "protection"},
				 {"PAGES", "pages", true},
				 {"PRESENT", "pages_present", true},
				 {"MATCHING", "matching_hashes", true},
				 {"IN MAP", "hash_data_present"},
				 {"VERDICT", "verdict"},
				 {"PATH", "path"},
				 {"REASON", "reason"}};
		loop.show_progress = true;
		loop.run("attestation", [&](doca_apsh_process *process) {
			doca_apsh_attestation **areas = nullptr;
			int count = 0;
			const doca_error_t status =
			    doca_apsh_attestation_get(process, options.hash_map.c_str(), &areas, &count);
			if (status != DOCA_SUCCESS)
				return status;
			for (int i = 0; i < count; ++i) {
				doca_apsh_attestation *a = areas[i];
				const AttestationVerdict verdict = attestation_verdict(a);
				table.add(
				    {doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PID), comm_of(process),
				     hex_cell(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_START_ADDRESS)),
				     hex_cell(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_END_ADDRESS)),
				     text_cell(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PROTECTION)),
				     doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PAGES_NUMBER),
				     doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PAGES_PRESENT),
				     doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_MATCHING_HASHES),
				     doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT),
				     verdict.verdict,
				     text_cell(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA)),
				     verdict.reason});
			}
			doca_apsh_attestation_free(areas);
			return DOCA_SUCCESS;
		});
	} else if (options.query == "yara") {
		table.columns = {{"PID", "pid", true},
				 {"COMM", "comm"},
				 {"RULE", "rule"},
				 {"WINDOW", "window_address"},
				 {"LENGTH", "window_length", true}};
		doca_apsh_user_yara_rules *user_rules = nullptr;
		if (!options.user_rules.empty()) {
			const doca_error_t status =
			    doca_apsh_user_yara_rules_create_from_file(options.user_rules.c_str(), &user_rules);
			if (status != DOCA_SUCCESS)
				return fail("--rules " + options.user_rules + ": " + error_text(status));
			doca_apsh_user_yara_rules_set_monotonic(user_rules, options.monotonic);
		}
		std::vector<doca_apsh_yara_rule> rules = options.rules;
		if (rules.empty())
			rules = {DOCA_APSH_YARA_RULE_HELLO_WORLD, DOCA_APSH_YARA_RULE_REFLECTIVE_DLL_INJECTION,
				 DOCA_APSH_YARA_RULE_MIMIKATZ};
		const uint64_t scan_type = options.heap_only ? DOCA_APSH_YARA_SCAN_HEAP : DOCA_APSH_YARA_SCAN_VMA;
		loop.show_progress = true;
		loop.run("YARA scan", [&](doca_apsh_process *process) {
			doca_apsh_yara **matches = nullptr;
			int count = 0;
			const doca_error_t status =
			    user_rules != nullptr
				? doca_apsh_user_yara_get(process, user_rules, scan_type, &matches, &count)
				: doca_apsh_yara_get(process, rules.data(), static_cast<uint32_t>(rules.size()),
						     scan_type, &matches, &count);
			if (status != DOCA_SUCCESS)
				return status;
			for (int i = 0; i < count; ++i)
				table.add(
				    {doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_PID),
				     text_cell(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_COMM)),
				     text_cell(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_RULE)),
				     hex_cell(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_MATCH_WINDOW_ADDR)),
				     doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_MATCH_WINDOW_LEN)});
			doca_apsh_yara_free(matches);
			return DOCA_SUCCESS;
		});
		doca_apsh_user_yara_rules_destroy(user_rules);
	}
	print_table(table, options.output);
	if (options.verbose)
		print_sdk_messages("");
	return loop.errors > 0 ? 1 : 0;
}

// Pauses the guest over QMP and resumes it (when it ran) on every way out, then says how long it
// stood still.
class GuestPause {
public:
	explicit GuestPause(std::string source) : source_(std::move(source)) {}
	GuestPause(const GuestPause &) = delete;
	GuestPause &operator=(const GuestPause &) = delete;
	~GuestPause()
	{
		if (!paused_)
			return;
		char error[512] = {};
		const doca_error_t status = softdpu_apsh_guest_resume(source_.c_str(), error, sizeof(error));
		const double ms =
		    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
		if (status != DOCA_SUCCESS)
			std::fprintf(stderr, "softdpu apsh: cannot resume the guest (paused %.1f ms ago): %s\n", ms,
				     error);
		else
			std::fprintf(stderr, "softdpu apsh: the guest was paused for %.1f ms (--consistent)\n", ms);
	}
	int start()
	{
		char error[512] = {};
		bool was_running = false;
		start_ = std::chrono::steady_clock::now();
		if (softdpu_apsh_guest_pause(source_.c_str(), &was_running, error, sizeof(error)) != DOCA_SUCCESS)
			return fail(std::string("--consistent: cannot pause the guest: ") + error);
		paused_ = was_running;
		if (!was_running)
			std::fprintf(stderr,
				     "softdpu apsh: the guest was already paused; it stays paused (--consistent)\n");
		return 0;
	}

private:
	std::string source_;
	bool paused_ = false;
	std::chrono::steady_clock::time_point start_;
};

int run_apsh(Options &options)
{
	validate(options);
	if (options.memory) {
		if (!check_readable("--memory", options.memory_path, true))
			return 1;
		::setenv("SOFTDPU_APSH_MEMORY", options.memory->c_str(), 1);
	}
	if (!check_readable("--symbols", options.symbols) || !check_readable("--regions", options.regions) ||
	    !check_readable("--kpgd", options.kpgd) || !check_readable("--hash-map", options.hash_map) ||
	    !check_readable("--rules", options.user_rules))
		return 1;
	// --verbose: also what system start found (kernel, paging, KASLR slide, kpgd, how).
	set_sdk_log_level(options.verbose ? DOCA_LOG_LEVEL_INFO : DOCA_LOG_LEVEL_WARNING);
	Session session;
	if (int status = open_devices(options, session); status != 0)
		return status;
	// --consistent: the guest stands still from system start to the end of the query.
	std::optional<GuestPause> pause;
	if (options.consistent) {
		pause.emplace(options.consistent_source);
		if (int status = pause->start(); status != 0)
			return status;
	}
	if (int status = start_system(options, session); status != 0)
		return status;
	if (options.query == "watch")
		return run_watch(session.system, options.watch);
	if (options.query != "modules" && options.query != "netscan" && options.query != "containers") {
		const doca_error_t status =
		    doca_apsh_processes_get(session.system, &session.processes, &session.process_count);
		if (status != DOCA_SUCCESS)
			return fail("processes: " + error_text(status));
	}
	if (!options.pids.empty() && options.query != "netscan") {
		for (uint32_t pid : options.pids) {
			bool found = false;
			for (int i = 0; i < session.process_count && !found; ++i)
				found = pid_of(session.processes[i]) == pid;
			if (!found) {
				std::fprintf(stderr, "softdpu apsh: no process with pid %u\n", pid);
				return 1;
			}
		}
	}
	return run_query(options, session);
}

} // namespace

void add_apsh_command(CLI::App &app)
{
	CLI::App *apsh =
	    app.add_subcommand("apsh", "ps | threads | libs | vads | modules | netscan | ...: App Shield on a guest");
	auto options = std::make_shared<Options>();
	declare_options(*apsh, *options);
	apsh->footer(kQueryHelp);
	apsh->callback([options] {
		if (int status = run_apsh(*options); status != 0)
			throw CommandFailed{status};
	});
}

} // namespace softdpu::cli
