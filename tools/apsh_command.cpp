// softdpu apsh <query> [options]: App Shield from the command line. Every query goes through the
// public DOCA API (doca_apsh.h) exactly as an application would: context with the DPU's DMA
// device, system bound to a representor, optional configuration files, system start, queries.
// The memory source comes from --memory (set as SOFTDPU_APSH_MEMORY for this process) or, when
// absent, from the environment or the topology. docs/apsh-cli.md describes the options.
#include "commands.hpp"

#include "common/regular_file.hpp"
#include "core/dev/dev.hpp"

#include <doca_apsh.h>
#include <doca_apsh_attr.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <softdpu/apsh.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace softdpu::cli {

namespace {

using Json = nlohmann::ordered_json; // keys in column order

constexpr const char *kUsage =
    "usage: softdpu apsh <query> [options]\n"
    "\n"
    "queries:\n"
    "  ps          processes (pid, ppid, uid, gid, state, cpu time, comm)\n"
    "  threads     threads of every process\n"
    "  libs        loaded libraries\n"
    "  vads        memory areas\n"
    "  modules     kernel modules\n"
    "  envars      environment variables\n"
    "  netscan     TCP/UDP sockets (IPv4 and IPv6)\n"
    "  params      command line and image path\n"
    "  injections  suspected code injections (anonymous executable or writable+executable areas)\n"
    "  attest      attestation of executable areas against a hash map (--hash-map)\n"
    "  yara        YARA scan (DOCA's built-in rules, or --rules FILE)\n"
    "\n"
    "memory source (default: SOFTDPU_APSH_MEMORY, else the topology's representor memory):\n"
    "  --memory KIND:PATH   KIND: qemu (a running QEMU's shared RAM file), raw, elf (dump-guest-memory),\n"
    "                       lime, auto (detect from the file); a bare PATH means auto\n"
    "  --qmp SOCKET         QEMU's QMP socket, asked for the RAM layout (qemu/auto only)\n"
    "  --symbols FILE       symbol map (softdpu-apsh-config output or a Volatility 3 ISF)\n"
    "  --regions FILE       memory regions file\n"
    "  --kpgd FILE          kpgd file\n"
    "  --rep PCI            the representor to bind (default: the first with a memory source)\n"
    "  (without --symbols/--regions/--kpgd everything is derived from the memory itself)\n"
    "\n"
    "output and selection:\n"
    "  --json               JSON array instead of a table\n"
    "  --pid N              only process N (repeatable)\n"
    "  --no-progress        no progress bar (it is shown on stderr only when stderr is a terminal)\n"
    "  --verbose            also print the SDK's warnings and what system start found\n"
    "\n"
    "attest:  --hash-map FILE (softdpu-exec-hash-build-map output)\n"
    "yara:    --rule Hello_World|Reflective_Dll_Injection|Mimikatz (repeatable; default all three)\n"
    "         --rules FILE (user rules, beyond DOCA) [--monotonic], --heap (heap only),\n"
    "         --window-size N, --window-step N\n";

// ---------------------------------------------------------------------------------------------
// SDK log capture: App Shield explains failures in the SDK log; we show those messages in our
// own error lines instead of raw log records.

std::vector<std::string> &sdk_messages()
{
	static std::vector<std::string> messages;
	return messages;
}

char sdk_log_buffer[4096];

void on_sdk_record(char *record)
{
	std::string_view text(record);
	// "[time][pid][LEVEL][source][file:line][function] message": keep the level and the message.
	std::string level;
	if (size_t start = text.find("]["); start != std::string_view::npos) {
		start = text.find("][", start + 2);
		if (start != std::string_view::npos) {
			const size_t end = text.find(']', start + 2);
			if (end != std::string_view::npos)
				level = std::string(text.substr(start + 2, end - start - 2));
		}
	}
	if (const size_t end = text.find("] "); end != std::string_view::npos)
		text.remove_prefix(end + 2);
	while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
		text.remove_suffix(1);
	sdk_messages().push_back((level.empty() ? "" : level + ": ") + std::string(text));
}

void capture_sdk_log(doca_log_level level)
{
	doca_log_backend *backend = nullptr;
	if (doca_log_backend_create_with_buffer_sdk(sdk_log_buffer, sizeof(sdk_log_buffer), on_sdk_record, &backend) ==
	    DOCA_SUCCESS)
		doca_log_backend_set_sdk_level(backend, level);
}

void print_sdk_messages(const char *indent)
{
	for (const std::string &message : sdk_messages())
		std::fprintf(stderr, "%s%s\n", indent, message.c_str());
	sdk_messages().clear();
}

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
	std::string query;
	std::optional<std::string> memory; // "<kind>:<path>" in SOFTDPU_APSH_MEMORY's syntax
	std::string qmp;
	std::string symbols, regions, kpgd, rep_pci;
	std::vector<uint32_t> pids;
	bool json = false;
	bool progress = true;
	bool verbose = false;
	std::string hash_map;
	std::vector<doca_apsh_yara_rule> rules;
	std::string user_rules;
	bool monotonic = false;
	bool heap_only = false;
	std::optional<uint32_t> window_size, window_step;
};

const char *const kQueries[] = {"ps",      "threads", "libs",       "vads",   "modules", "envars",
				"netscan", "params",  "injections", "attest", "yara"};

[[noreturn]] void fail_usage(const std::string &message)
{
	std::fprintf(stderr, "softdpu apsh: %s\n(softdpu apsh --help for usage)\n", message.c_str());
	std::exit(2);
}

template <typename Integer> Integer parse_number(std::string_view option, std::string_view text)
{
	Integer value{};
	const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
	if (ec != std::errc() || end != text.data() + text.size() || text.empty())
		fail_usage(std::string(option) + ": expected a non-negative number, got \"" + std::string(text) + "\"");
	return value;
}

// "qemu:/dev/shm/x" -> "qemu_shared_ram:/dev/shm/x"; a bare path -> "auto:PATH".
std::string memory_spec(std::string_view text)
{
	static const std::pair<std::string_view, std::string_view> kinds[] = {{"qemu", "qemu_shared_ram"},
									      {"qemu_shared_ram", "qemu_shared_ram"},
									      {"raw", "raw"},
									      {"elf", "elf_core"},
									      {"elf_core", "elf_core"},
									      {"lime", "lime"},
									      {"auto", "auto"}};
	const size_t colon = text.find(':');
	if (colon != std::string_view::npos) {
		for (const auto &[alias, kind] : kinds)
			if (text.substr(0, colon) == alias) {
				if (colon + 1 == text.size())
					fail_usage("--memory: empty path after \"" + std::string(alias) + ":\"");
				return std::string(kind) + ":" + std::string(text.substr(colon + 1));
			}
		if (text.substr(0, colon).find('/') == std::string_view::npos)
			fail_usage("--memory: unknown kind \"" + std::string(text.substr(0, colon)) +
				   "\" (expected qemu, raw, elf, lime or auto)");
	}
	if (text.empty())
		fail_usage("--memory: empty path");
	return "auto:" + std::string(text);
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

Options parse_options(Arguments args)
{
	Options options;
	if (args.empty())
		fail_usage("missing query");
	if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		std::fputs(kUsage, stdout);
		std::exit(0);
	}
	options.query = std::string(args[0]);
	if (std::find(std::begin(kQueries), std::end(kQueries), options.query) == std::end(kQueries))
		fail_usage("unknown query \"" + options.query + "\"");
	for (size_t i = 1; i < args.size(); ++i) {
		const std::string_view option = args[i];
		auto value = [&]() -> std::string_view {
			if (i + 1 >= args.size())
				fail_usage(std::string(option) + " needs a value");
			return args[++i];
		};
		if (option == "--json")
			options.json = true;
		else if (option == "--no-progress")
			options.progress = false;
		else if (option == "--verbose")
			options.verbose = true;
		else if (option == "--monotonic")
			options.monotonic = true;
		else if (option == "--heap")
			options.heap_only = true;
		else if (option == "--memory")
			options.memory = memory_spec(value());
		else if (option == "--qmp")
			options.qmp = value();
		else if (option == "--symbols")
			options.symbols = value();
		else if (option == "--regions")
			options.regions = value();
		else if (option == "--kpgd")
			options.kpgd = value();
		else if (option == "--rep")
			options.rep_pci = value();
		else if (option == "--pid")
			options.pids.push_back(parse_number<uint32_t>(option, value()));
		else if (option == "--hash-map")
			options.hash_map = value();
		else if (option == "--rules")
			options.user_rules = value();
		else if (option == "--window-size")
			options.window_size = parse_number<uint32_t>(option, value());
		else if (option == "--window-step")
			options.window_step = parse_number<uint32_t>(option, value());
		else if (option == "--rule") {
			const std::string_view name = value();
			auto rule = builtin_rule(name);
			if (!rule)
				fail_usage("--rule: unknown rule \"" + std::string(name) +
					   "\" (Hello_World, Reflective_Dll_Injection, Mimikatz)");
			options.rules.push_back(*rule);
		} else if (option == "-h" || option == "--help") {
			std::fputs(kUsage, stdout);
			std::exit(0);
		} else
			fail_usage("unknown option \"" + std::string(option) + "\"");
	}
	if (!options.qmp.empty()) {
		if (!options.memory)
			fail_usage("--qmp goes with --memory qemu:PATH");
		if (!options.memory->starts_with("qemu_shared_ram:") && !options.memory->starts_with("auto:"))
			fail_usage("--qmp only goes with a qemu (or auto) memory source");
	}
	if (options.query == "attest" && options.hash_map.empty())
		fail_usage("attest needs --hash-map FILE (written by softdpu-exec-hash-build-map)");
	if (options.query != "attest" && !options.hash_map.empty())
		fail_usage("--hash-map only goes with attest");
	const bool yara_options = !options.rules.empty() || !options.user_rules.empty() || options.monotonic ||
				  options.heap_only || options.window_size || options.window_step;
	if (options.query != "yara" && yara_options)
		fail_usage("--rule, --rules, --monotonic, --heap and --window-* only go with yara");
	if (!options.rules.empty() && !options.user_rules.empty())
		fail_usage("--rule and --rules cannot be combined");
	if (options.query == "modules" && !options.pids.empty())
		fail_usage("--pid does not apply to modules");
	return options;
}

// A file the user named must be readable before the SDK sees it, so the error names the option.
// Only regular files (and block devices for the memory image) are opened: a FIFO would block.
bool check_readable(const char *option, const std::string &path,
		    softdpu::common::FileKinds kinds = softdpu::common::FileKinds::regular)
{
	if (path.empty())
		return true;
	softdpu::common::OpenedFile file;
	std::string error;
	if (!softdpu::common::open_data_file(path, kinds, file, error)) {
		std::fprintf(stderr, "softdpu apsh: %s %s: %s\n", option, path.c_str(),
			     file.error_number != 0 ? std::strerror(file.error_number) : error.c_str());
		return false;
	}
	return true;
}

// ---------------------------------------------------------------------------------------------
// Tables: each cell is a JSON value; the table view prints it, the JSON view keeps its type.

struct Column {
	const char *header;
	const char *key;
	bool right_aligned = false;
	bool two_decimals = false; // a number shown as "%.2f" in the table (JSON keeps it)
};

struct Table {
	std::vector<Column> columns;
	std::vector<std::vector<Json>> rows;

	void add(std::vector<Json> row) { rows.push_back(std::move(row)); }
};

Json hex(uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

Json text_or_empty(const char *text)
{
	return text != nullptr ? Json(text) : Json("");
}

std::string cell_text(const Json &cell, const Column &column)
{
	if (column.two_decimals && cell.is_number()) {
		char text[32];
		std::snprintf(text, sizeof(text), "%.2f", cell.get<double>());
		return text;
	}
	if (cell.is_string())
		return cell.get<std::string>().empty() ? "-" : cell.get<std::string>();
	if (cell.is_boolean())
		return cell.get<bool>() ? "yes" : "no";
	if (cell.is_null())
		return "-";
	return cell.dump();
}

void print_table(const Table &table, bool json)
{
	if (json) {
		Json out = Json::array();
		for (const auto &row : table.rows) {
			Json object = Json::object();
			for (size_t c = 0; c < table.columns.size(); ++c)
				object[table.columns[c].key] = row[c];
			out.push_back(std::move(object));
		}
		std::printf("%s\n", out.dump(2).c_str());
		return;
	}
	std::vector<std::vector<std::string>> cells;
	std::vector<size_t> widths;
	for (const Column &column : table.columns)
		widths.push_back(std::strlen(column.header));
	for (const auto &row : table.rows) {
		std::vector<std::string> line;
		for (size_t c = 0; c < row.size(); ++c) {
			line.push_back(cell_text(row[c], table.columns[c]));
			widths[c] = std::max(widths[c], line.back().size());
		}
		cells.push_back(std::move(line));
	}
	auto print_line = [&](const std::vector<std::string> &line) {
		std::string out;
		for (size_t c = 0; c < line.size(); ++c) {
			const bool last = c + 1 == line.size();
			const size_t pad = widths[c] - line[c].size();
			if (table.columns[c].right_aligned)
				out.append(pad, ' ');
			out += line[c];
			if (!last && !table.columns[c].right_aligned)
				out.append(pad, ' ');
			if (!last)
				out += "  ";
		}
		std::printf("%s\n", out.c_str());
	};
	std::vector<std::string> headers;
	for (const Column &column : table.columns)
		headers.emplace_back(column.header);
	print_line(headers);
	for (const auto &line : cells)
		print_line(line);
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
			char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE] = {};
			if (doca_devinfo_rep_get_pci_addr_str(session.reps[i], pci) == DOCA_SUCCESS &&
			    options.rep_pci == pci)
				chosen = session.reps[i];
		} else if (source_from_environment || session.reps[i]->representor().memory)
			chosen = session.reps[i];
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

int run_query(const Options &options, Session &session)
{
	Table table;
	ProcessLoop loop{options, session};
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
			table.add({hex(doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_OFFSET)),
				   doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_SIZE),
				   text_or_empty(doca_apsh_module_info_get(modules[i], DOCA_APSH_MODULES_NAME))});
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
			table.add({pid, text_or_empty(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_COMM)),
				   text_or_empty(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_PROTOCOL)),
				   text_or_empty(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_LOCAL_ADDR)),
				   doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_LOCAL_PORT),
				   text_or_empty(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_REMOTE_ADDR)),
				   doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_REMOTE_PORT),
				   text_or_empty(doca_apsh_netscan_info_get(c, DOCA_APSH_NETSCAN_STATE))});
		}
		doca_apsh_netscan_free(connections);
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
				     text_or_empty(doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_LINUX_PROC_NAME)),
				     text_or_empty(doca_apsh_thread_info_get(t, DOCA_APSH_THREAD_LINUX_THREAD_NAME))});
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
					   hex(doca_apsh_lib_info_get(libs[i], DOCA_APSH_LIB_LOAD_ADRESS)),
					   text_or_empty(doca_apsh_lib_info_get(libs[i], DOCA_APSH_LIB_LIBRARY_PATH))});
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
					   text_or_empty(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_PROCESS_NAME)),
					   hex(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_VM_START)),
					   hex(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_VM_END)),
					   text_or_empty(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_PROTECTION)),
					   hex(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_OFFSET)),
					   text_or_empty(doca_apsh_vad_info_get(v, DOCA_APSH_VMA_FILE_PATH))});
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
				table.add(
				    {doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_PID), comm_of(process),
				     text_or_empty(doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_VARIABLE)),
				     text_or_empty(doca_apsh_envar_info_get(envars[i], DOCA_APSH_ENVARS_VALUE))});
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
				   hex(doca_apsh_process_parameters_info_get(
				       params, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_BASE_ADDR)),
				   text_or_empty(doca_apsh_process_parameters_info_get(
				       params, DOCA_APSH_PROCESS_PARAMETERS_IMAGE_FULL_PATH)),
				   text_or_empty(doca_apsh_process_parameters_info_get(
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
				table.add(
				    {doca_apsh_injection_detect_info_get(f, DOCA_APSH_INJECTION_DETECT_PID),
				     comm_of(process),
				     hex(doca_apsh_injection_detect_info_get(f, DOCA_APSH_INJECTION_DETECT_VAD_START)),
				     hex(doca_apsh_injection_detect_info_get(f, DOCA_APSH_INJECTION_DETECT_VAD_END)),
				     text_or_empty(doca_apsh_injection_detect_info_get(
					 f, DOCA_APSH_INJECTION_DETECT_VAD_PROTECTION)),
				     hex(doca_apsh_injection_detect_info_get(
					 f, DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_START)),
				     hex(doca_apsh_injection_detect_info_get(
					 f, DOCA_APSH_INJECTION_DETECT_SUSPECTED_AREA_END)),
				     text_or_empty(doca_apsh_injection_detect_info_get(
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
				 {"PATH", "path"}};
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
				table.add({doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PID), comm_of(process),
					   hex(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_START_ADDRESS)),
					   hex(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_END_ADDRESS)),
					   text_or_empty(doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PROTECTION)),
					   doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PAGES_NUMBER),
					   doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_PAGES_PRESENT),
					   doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_MATCHING_HASHES),
					   doca_apsh_attst_info_get(a, DOCA_APSH_ATTESTATION_HASH_DATA_IS_PRESENT),
					   text_or_empty(doca_apsh_attst_info_get(
					       a, DOCA_APSH_ATTESTATION_PATH_OF_MEMORY_AREA))});
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
				table.add({doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_PID),
					   text_or_empty(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_COMM)),
					   text_or_empty(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_RULE)),
					   hex(doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_MATCH_WINDOW_ADDR)),
					   doca_apsh_yara_info_get(matches[i], DOCA_APSH_YARA_MATCH_WINDOW_LEN)});
			doca_apsh_yara_free(matches);
			return DOCA_SUCCESS;
		});
		doca_apsh_user_yara_rules_destroy(user_rules);
	}
	print_table(table, options.json);
	if (options.verbose)
		print_sdk_messages("");
	return loop.errors > 0 ? 1 : 0;
}

} // namespace

int apsh_command(Arguments args)
{
	const Options options = parse_options(args);
	if (options.memory) {
		std::string spec = *options.memory;
		const std::string path = spec.substr(spec.find(':') + 1);
		if (!check_readable("--memory", path, softdpu::common::FileKinds::regular_or_block_device))
			return 1;
		if (!options.qmp.empty())
			spec += ",qmp=" + options.qmp;
		::setenv("SOFTDPU_APSH_MEMORY", spec.c_str(), 1);
	}
	if (!check_readable("--symbols", options.symbols) || !check_readable("--regions", options.regions) ||
	    !check_readable("--kpgd", options.kpgd) || !check_readable("--hash-map", options.hash_map) ||
	    !check_readable("--rules", options.user_rules))
		return 1;
	// --verbose: also what system start found (kernel, paging, KASLR slide, kpgd, how).
	capture_sdk_log(options.verbose ? DOCA_LOG_LEVEL_INFO : DOCA_LOG_LEVEL_WARNING);
	Session session;
	if (int status = open_devices(options, session); status != 0)
		return status;
	if (int status = start_system(options, session); status != 0)
		return status;
	if (options.query != "modules" && options.query != "netscan") {
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

} // namespace softdpu::cli
