#include "apsh/source/qemu_process.hpp"

#include "apsh/source/qmp.hpp"
#include "common/bytes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <signal.h>
#include <span>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

namespace softdpu::apsh::source {

namespace {

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t k4GiB = 4ull << 30;
constexpr size_t kMaxProcText = 64u << 20; // a maps file of a QEMU with many threads stays far below

// Reads a /proc text file whole (procfs reports size 0: read to the end). errno_out: the error of
// a failed open or read (0 on success).
bool read_proc_file(const std::string &path, std::string &out, int &errno_out)
{
	out.clear();
	errno_out = 0;
	const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno_out = errno;
		return false;
	}
	char chunk[65536];
	for (;;) {
		const ssize_t n = ::read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errno_out = errno;
			::close(fd);
			return false;
		}
		if (n == 0)
			break;
		out.append(chunk, static_cast<size_t>(n));
		if (out.size() > kMaxProcText) {
			errno_out = EFBIG;
			::close(fd);
			return false;
		}
	}
	::close(fd);
	return true;
}

std::string_view next_line(std::string_view &text)
{
	const size_t newline = text.find('\n');
	std::string_view line = text.substr(0, newline);
	text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
	return line;
}

std::string_view next_field(std::string_view &line)
{
	const size_t start = line.find_first_not_of(' ');
	if (start == std::string_view::npos) {
		line = {};
		return {};
	}
	line.remove_prefix(start);
	const size_t end = line.find(' ');
	std::string_view field = line.substr(0, end);
	line.remove_prefix(end == std::string_view::npos ? line.size() : end);
	return field;
}

// QEMU's option syntax: "a,b=c,,d" -> {"a"}, {"b", "c,d"}; ",," is a comma inside a value.
std::vector<std::pair<std::string, std::string>> split_qemu_options(std::string_view text)
{
	std::vector<std::pair<std::string, std::string>> items;
	std::string current;
	auto finish = [&] {
		const size_t equals = current.find('=');
		if (equals == std::string::npos)
			items.emplace_back(current, std::string());
		else
			items.emplace_back(current.substr(0, equals), current.substr(equals + 1));
		current.clear();
	};
	for (size_t i = 0; i < text.size(); i++) {
		if (text[i] == ',') {
			if (i + 1 < text.size() && text[i + 1] == ',') {
				current += ',';
				i++;
				continue;
			}
			finish();
			continue;
		}
		current += text[i];
	}
	finish();
	return items;
}

// The value of a key in split options; the first item without '=' counts as key `implied`.
std::optional<std::string> option_value(const std::vector<std::pair<std::string, std::string>> &items,
					std::string_view key, std::string_view implied = {})
{
	for (size_t i = 0; i < items.size(); i++) {
		const auto &[name, value] = items[i];
		if (!implied.empty() && i == 0 && value.empty() && !name.empty() && key == implied &&
		    name.find('=') == std::string::npos && !name.starts_with(std::string(implied) + "="))
			return name;
		if (name == key)
			return value;
	}
	return std::nullopt;
}

std::string errno_text(int number)
{
	return std::strerror(number);
}

uint32_t my_uid()
{
	return static_cast<uint32_t>(::geteuid());
}

// A field ("Uid:", "CapEff:") of /proc/PID/status: the text after the name, nullopt when missing.
std::optional<std::string> status_field(const std::string &pid_dir, std::string_view field)
{
	std::string status;
	int err = 0;
	if (!read_proc_file(pid_dir + "/status", status, err))
		return std::nullopt;
	std::string_view text = status;
	while (!text.empty()) {
		std::string_view line = next_line(text);
		if (line.starts_with(field)) {
			line.remove_prefix(field.size());
			const size_t start = line.find_first_not_of(" \t");
			return std::string(start == std::string_view::npos ? std::string_view{} : line.substr(start));
		}
	}
	return std::nullopt;
}

std::optional<uint32_t> process_uid(uint32_t pid)
{
	auto uids = status_field("/proc/" + std::to_string(pid), "Uid:");
	if (!uids)
		return std::nullopt;
	std::string_view text = *uids;
	const size_t end = text.find_first_of(" \t");
	auto uid = common::parse_decimal(text.substr(0, end));
	if (!uid || *uid > UINT32_MAX)
		return std::nullopt;
	return static_cast<uint32_t>(*uid);
}

bool have_cap_sys_ptrace()
{
	auto caps = status_field("/proc/self", "CapEff:");
	if (!caps)
		return false;
	auto value = common::parse_hex(*caps);
	return value && (*value & (1ull << 19)) != 0; // CAP_SYS_PTRACE
}

std::optional<int> yama_ptrace_scope()
{
	std::string text;
	int err = 0;
	if (!read_proc_file("/proc/sys/kernel/yama/ptrace_scope", text, err) || text.empty())
		return std::nullopt;
	if (text[0] < '0' || text[0] > '3')
		return std::nullopt;
	return text[0] - '0';
}

std::string user_name_of(uint32_t uid)
{
	// /etc/passwd only (no NSS: the library stays free of getpwuid's static buffers).
	std::string passwd;
	int err = 0;
	if (read_proc_file("/etc/passwd", passwd, err)) {
		std::string_view text = passwd;
		while (!text.empty()) {
			std::string_view line = next_line(text);
			const size_t first = line.find(':');
			const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
			const size_t third = second == std::string_view::npos ? second : line.find(':', second + 1);
			if (third == std::string_view::npos)
				continue;
			if (common::parse_decimal(line.substr(second + 1, third - second - 1)) == uid)
				return std::string(line.substr(0, first)) + " (uid " + std::to_string(uid) + ")";
		}
	}
	return "uid " + std::to_string(uid);
}

// Why this process may not read process pid, and what to do about it.
Status permission_error(uint32_t pid, const std::string &what, int number)
{
	const std::string head =
	    "QEMU process " + std::to_string(pid) + ": cannot read " + what + ": " + errno_text(number) + ": ";
	const bool cap = have_cap_sys_ptrace();
	const auto scope = yama_ptrace_scope();
	const auto owner = process_uid(pid);
	const uint32_t me = my_uid();
	if (scope && *scope == 3)
		return error(DOCA_ERROR_NOT_PERMITTED,
			     head + "kernel.yama.ptrace_scope is 3, which forbids reading any other process's memory "
				    "until the next reboot; read an image instead (QMP dump-guest-memory, virsh dump "
				    "--memory-only) or boot with ptrace_scope below 3");
	if (owner && *owner != me && !cap)
		return error(DOCA_ERROR_NOT_PERMITTED, head + "the process runs as " + user_name_of(*owner) +
							   " and softdpu as " + user_name_of(me) +
							   ": run softdpu as root (sudo), as that user, or with "
							   "CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep on the program)");
	if (scope && *scope == 2 && !cap)
		return error(DOCA_ERROR_NOT_PERMITTED,
			     head + "kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may read another process): run "
				    "softdpu as root (sudo) or with CAP_SYS_PTRACE");
	if (scope && *scope == 1 && !cap)
		return error(DOCA_ERROR_NOT_PERMITTED,
			     head + "kernel.yama.ptrace_scope is 1 (only a parent may read a process): run softdpu as "
				    "root (sudo) or with CAP_SYS_PTRACE, or allow it for everyone with sysctl "
				    "kernel.yama.ptrace_scope=0");
	return error(DOCA_ERROR_NOT_PERMITTED,
		     head + "the kernel refused although uid and ptrace_scope allow it: QEMU may be non-dumpable "
			    "(it runs setuid, or with a changed user) or a security module (SELinux, AppArmor: "
			    "libvirt's sVirt) denies ptrace read access; run softdpu as root in the same security "
			    "context, or read an image instead (virsh dump --memory-only)");
}

std::string comm_of(const std::string &pid_dir)
{
	std::string comm;
	int err = 0;
	if (!read_proc_file(pid_dir + "/comm", comm, err))
		return "?";
	while (!comm.empty() && comm.back() == '\n')
		comm.pop_back();
	return comm;
}

bool process_gone(uint32_t pid)
{
	return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

} // namespace

Status parse_proc_maps(std::string_view text, std::vector<ProcMapping> &out)
{
	out.clear();
	size_t line_number = 0;
	while (!text.empty()) {
		std::string_view line = next_line(text);
		line_number++;
		if (line.empty())
			continue;
		std::string_view rest = line;
		const std::string_view range = next_field(rest);
		const std::string_view permissions = next_field(rest);
		const std::string_view offset = next_field(rest);
		const std::string_view device = next_field(rest);
		const std::string_view inode = next_field(rest);
		const size_t dash = range.find('-');
		ProcMapping mapping;
		const auto start = common::parse_hex(range.substr(0, dash));
		const auto parsed_offset = common::parse_hex(offset);
		const auto parsed_inode = common::parse_decimal(inode);
		std::optional<uint64_t> end;
		if (dash != std::string_view::npos)
			end = common::parse_hex(range.substr(dash + 1));
		if (!start || !end || *end <= *start || permissions.size() != 4 || !parsed_offset ||
		    device.find(':') == std::string_view::npos || !parsed_inode)
			return error(DOCA_ERROR_INVALID_VALUE, "maps line " + std::to_string(line_number) +
								   " is malformed: \"" +
								   std::string(line.substr(0, 120)) + "\"");
		mapping.start = *start;
		mapping.end = *end;
		mapping.permissions = std::string(permissions);
		mapping.offset = *parsed_offset;
		mapping.inode = *parsed_inode;
		const size_t path_start = rest.find_first_not_of(' ');
		if (path_start != std::string_view::npos)
			mapping.path = std::string(rest.substr(path_start));
		out.push_back(std::move(mapping));
		if (out.size() > 1000000)
			return error(DOCA_ERROR_INVALID_VALUE, "maps has more than 1,000,000 lines");
	}
	return Status::success();
}

bool is_qemu_program(std::string_view program)
{
	const size_t slash = program.rfind('/');
	const std::string_view base = slash == std::string_view::npos ? program : program.substr(slash + 1);
	return base.starts_with("qemu-system-") || base == "qemu-kvm" || base == "kvm";
}

std::optional<uint64_t> parse_qemu_size(std::string_view text, uint64_t default_unit)
{
	if (text.empty())
		return std::nullopt;
	size_t digits = 0;
	while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.'))
		digits++;
	const std::string_view number = text.substr(0, digits);
	std::string_view suffix = text.substr(digits);
	uint64_t unit = default_unit;
	if (!suffix.empty()) {
		if (suffix.size() != 1)
			return std::nullopt;
		switch (suffix[0]) {
		case 'b':
		case 'B':
			unit = 1;
			break;
		case 'k':
		case 'K':
			unit = 1ull << 10;
			break;
		case 'm':
		case 'M':
			unit = 1ull << 20;
			break;
		case 'g':
		case 'G':
			unit = 1ull << 30;
			break;
		case 't':
		case 'T':
			unit = 1ull << 40;
			break;
		case 'p':
		case 'P':
			unit = 1ull << 50;
			break;
		default:
			return std::nullopt;
		}
	}
	const size_t point = number.find('.');
	const auto whole = common::parse_decimal(number.substr(0, point));
	if (!whole || *whole > UINT64_MAX / unit)
		return std::nullopt;
	uint64_t value = *whole * unit;
	if (point != std::string_view::npos) {
		// A fraction: "1.5G". QEMU takes it for a suffixed number only.
		const std::string_view fraction = number.substr(point + 1);
		if (fraction.empty() || fraction.size() > 9 || fraction.find('.') != std::string_view::npos ||
		    suffix.empty())
			return std::nullopt;
		const auto digits_value = common::parse_decimal(fraction);
		if (!digits_value)
			return std::nullopt;
		uint64_t scale = 1;
		for (size_t i = 0; i < fraction.size(); i++)
			scale *= 10;
		const unsigned __int128 part = static_cast<unsigned __int128>(*digits_value) * unit / scale;
		if (part > UINT64_MAX - value)
			return std::nullopt;
		value += static_cast<uint64_t>(part);
	}
	return value;
}

Status parse_qemu_cmdline(std::string_view cmdline, QemuCommandLine &out)
{
	out = {};
	std::vector<std::string_view> args;
	while (!cmdline.empty()) {
		const size_t nul = cmdline.find('\0');
		args.push_back(cmdline.substr(0, nul));
		cmdline.remove_prefix(nul == std::string_view::npos ? cmdline.size() : nul + 1);
	}
	if (args.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "empty command line (a kernel thread, or an exited process)");
	out.program = std::string(args[0]);
	std::optional<uint64_t> m_bytes;
	std::vector<std::pair<size_t, std::string>> numa_nodes; // node id, memdev
	for (size_t i = 1; i < args.size(); i++) {
		std::string_view option = args[i];
		if (!option.starts_with('-'))
			continue;
		option.remove_prefix(option.starts_with("--") ? 2 : 1);
		if (i + 1 >= args.size())
			break;
		const std::string_view value = args[i + 1];
		if (option == "m") {
			i++;
			auto items = split_qemu_options(value);
			// "-m slots=4,maxmem=8G" (no size): the default size, maxmem= still checked.
			if (auto max = option_value(items, "maxmem")) {
				auto max_bytes = parse_qemu_size(*max, kMiB);
				if (!max_bytes)
					return error(DOCA_ERROR_INVALID_VALUE, "-m maxmem=" + *max + ": not a size");
				out.max_ram = max_bytes;
			}
			auto size = option_value(items, "size", "size");
			if (!size)
				continue;
			auto bytes = parse_qemu_size(*size, kMiB);
			if (!bytes || *bytes == 0)
				return error(DOCA_ERROR_INVALID_VALUE, "-m " + std::string(value) + ": not a size");
			m_bytes = bytes;
		} else if (option == "machine" || option == "M") {
			i++;
			auto items = split_qemu_options(value);
			if (auto type = option_value(items, "type", "type"))
				out.machine = *type;
			if (auto below = option_value(items, "max-ram-below-4g")) {
				auto bytes = parse_qemu_size(*below, 1);
				if (!bytes)
					return error(DOCA_ERROR_INVALID_VALUE,
						     "-machine max-ram-below-4g=" + *below + ": not a size");
				out.max_ram_below_4g = bytes;
			}
			if (auto backend = option_value(items, "memory-backend"))
				out.memory_backend = *backend;
		} else if (option == "numa") {
			i++;
			auto items = split_qemu_options(value);
			if (option_value(items, "type", "type").value_or("") != "node")
				continue;
			auto memdev = option_value(items, "memdev");
			if (!memdev)
				continue;
			size_t node = numa_nodes.size();
			if (auto id = option_value(items, "nodeid")) {
				auto parsed = common::parse_decimal(*id);
				if (!parsed || *parsed >= 4096)
					return error(DOCA_ERROR_INVALID_VALUE,
						     "-numa node,nodeid=" + *id + ": not a node");
				node = static_cast<size_t>(*parsed);
			}
			numa_nodes.emplace_back(node, *memdev);
		} else if (option == "device") {
			i++;
			std::string driver, memdev, address;
			if (value.starts_with('{')) {
				auto json = nlohmann::json::parse(value, nullptr, false);
				if (json.is_object()) {
					if (json.contains("driver") && json["driver"].is_string())
						driver = json["driver"].get<std::string>();
					if (json.contains("memdev") && json["memdev"].is_string())
						memdev = json["memdev"].get<std::string>();
					if (json.contains("addr") && json["addr"].is_number_unsigned())
						address = std::to_string(json["addr"].get<uint64_t>());
				}
			} else {
				auto items = split_qemu_options(value);
				driver = option_value(items, "driver", "driver").value_or("");
				memdev = option_value(items, "memdev").value_or("");
				address = option_value(items, "addr").value_or("");
			}
			if (driver != "pc-dimm" || memdev.empty())
				continue;
			QemuCommandLine::Dimm dimm{memdev, std::nullopt};
			if (!address.empty()) {
				auto parsed = address.starts_with("0x")
						  ? common::parse_hex(std::string_view(address).substr(2))
						  : common::parse_decimal(address);
				if (!parsed)
					return error(DOCA_ERROR_INVALID_VALUE,
						     "-device pc-dimm,addr=" + address + ": not an address");
				dimm.address = parsed;
			}
			out.dimms.push_back(std::move(dimm));
		} else if (option == "name") {
			i++;
			auto items = split_qemu_options(value);
			if (auto name = option_value(items, "guest", "guest"))
				out.name = *name;
		} else if (option == "object") {
			i++;
			std::string id, size, type;
			if (value.starts_with('{')) {
				// libvirt's JSON form: {"qom-type":"memory-backend-ram","id":"pc.ram","size":...}
				auto json = nlohmann::json::parse(value, nullptr, false);
				if (json.is_object()) {
					if (json.contains("qom-type") && json["qom-type"].is_string())
						type = json["qom-type"].get<std::string>();
					if (json.contains("id") && json["id"].is_string())
						id = json["id"].get<std::string>();
					if (json.contains("size") && json["size"].is_number_unsigned())
						size = std::to_string(json["size"].get<uint64_t>());
					else if (json.contains("size") && json["size"].is_string())
						size = json["size"].get<std::string>();
				}
			} else {
				auto items = split_qemu_options(value);
				type = option_value(items, "qom-type", "qom-type").value_or("");
				id = option_value(items, "id").value_or("");
				size = option_value(items, "size").value_or("");
			}
			if (type.starts_with("memory-backend-") && !id.empty() && !size.empty()) {
				auto bytes = parse_qemu_size(size, 1);
				if (!bytes)
					return error(DOCA_ERROR_INVALID_VALUE, "-object " + type + ",id=" + id +
										   ": size " + size + " is not a size");
				out.backends.emplace_back(id, *bytes);
				if (out.backends.size() > 4096)
					return error(DOCA_ERROR_INVALID_VALUE, "more than 4096 memory backends");
			}
		}
	}
	if (m_bytes) {
		out.ram_bytes = *m_bytes;
		out.ram_given = true;
	}
	if (!out.memory_backend.empty())
		for (const auto &[id, bytes] : out.backends)
			if (id == out.memory_backend) {
				out.ram_bytes = bytes;
				out.ram_given = true;
			}
	if (numa_nodes.size() > 4096)
		return error(DOCA_ERROR_INVALID_VALUE, "more than 4096 NUMA nodes");
	std::stable_sort(numa_nodes.begin(), numa_nodes.end(),
			 [](const auto &a, const auto &b) { return a.first < b.first; });
	for (const auto &node : numa_nodes)
		out.numa_memdevs.push_back(node.second);
	if (!out.numa_memdevs.empty() && out.memory_backend.empty()) {
		// The machine's RAM is the nodes' memdevs one after another (QEMU checks that -m agrees).
		uint64_t total = 0;
		for (const std::string &memdev : out.numa_memdevs) {
			auto backend = std::find_if(out.backends.begin(), out.backends.end(),
						    [&](const auto &b) { return b.first == memdev; });
			if (backend == out.backends.end())
				return error(DOCA_ERROR_INVALID_VALUE,
					     "-numa node,memdev=" + memdev + ": no memory-backend object has that id");
			if (backend->second > UINT64_MAX - total)
				return error(DOCA_ERROR_INVALID_VALUE, "the NUMA nodes' memory overflows");
			total += backend->second;
		}
		out.ram_bytes = total;
		out.ram_given = true;
	}
	return Status::success();
}

Status x86_pc_ram_layout(const QemuCommandLine &command_line, std::vector<RamRange> &out)
{
	out.clear();
	const std::string &machine = command_line.machine;
	const bool q35 = machine == "q35" || machine.starts_with("pc-q35");
	const bool i440fx = machine.empty() || machine == "pc" || machine.starts_with("pc-i440fx") ||
			    (machine.starts_with("pc-") && !q35);
	if (!q35 && !i440fx)
		return error(DOCA_ERROR_NOT_SUPPORTED,
			     "machine type \"" + machine +
				 "\" is not an x86 PC (pc or q35): its RAM layout is unknown without QMP; give the QMP "
				 "socket (,qmp=SOCKET or --qmp)");
	const uint64_t ram = command_line.ram_bytes;
	uint64_t lowmem = 0;
	if (q35) {
		// pc_q35_init: leave 1/2 GiB for I/O and 256 MiB for MMCONFIG below 4 GiB.
		lowmem = ram >= 0xb0000000ull ? 0x80000000ull : 0xb0000000ull;
		const uint64_t limit = command_line.max_ram_below_4g.value_or(k4GiB);
		lowmem = std::min(lowmem, limit);
	} else {
		// pc_init1: 3.5 GiB by default; guests that reach it get 3 GiB (gigabyte alignment).
		lowmem = command_line.max_ram_below_4g.value_or(0xe0000000ull);
		if (lowmem == 0)
			lowmem = 0xe0000000ull;
		if (ram >= lowmem && lowmem > 0xc0000000ull)
			lowmem = 0xc0000000ull;
	}
	if (lowmem > k4GiB)
		return error(DOCA_ERROR_INVALID_VALUE, "max-ram-below-4g is above 4 GiB");
	const uint64_t below = ram >= lowmem ? lowmem : ram;
	const uint64_t above = ram - below;
	if (below > 0)
		out.push_back({0, below, 0});
	if (above > 0) {
		if (above > UINT64_MAX - k4GiB)
			return error(DOCA_ERROR_INVALID_VALUE, "guest RAM size overflows the address space");
		out.push_back({k4GiB, k4GiB + above, below});
	}
	if (out.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "guest RAM size is 0");
	return Status::success();
}

Status x86_pc_ram_blocks(const QemuCommandLine &command_line, std::vector<RamBlockPiece> &pieces,
			 std::vector<std::pair<std::string, uint64_t>> &blocks)
{
	pieces.clear();
	blocks.clear();
	std::vector<RamRange> ranges; // offsets in the machine's RAM
	Status status = x86_pc_ram_layout(command_line, ranges);
	if (!status.ok())
		return status;
	auto backend_size = [&](const std::string &id) -> std::optional<uint64_t> {
		for (const auto &[name, bytes] : command_line.backends)
			if (name == id)
				return bytes;
		return std::nullopt;
	};
	// The machine's RAM as blocks, one after another.
	if (!command_line.memory_backend.empty())
		blocks.emplace_back(command_line.memory_backend, command_line.ram_bytes);
	else if (!command_line.numa_memdevs.empty())
		for (const std::string &memdev : command_line.numa_memdevs) {
			auto size = backend_size(memdev);
			if (!size)
				return error(DOCA_ERROR_INVALID_VALUE,
					     "-numa node,memdev=" + memdev + ": no memory-backend object has that id");
			blocks.emplace_back(memdev, *size);
		}
	else
		blocks.emplace_back("pc.ram", command_line.ram_bytes);
	uint64_t top = 0; // the end of RAM in guest-physical space
	for (const RamRange &range : ranges) {
		uint64_t gpa = range.gpa_start, machine_offset = range.file_offset;
		uint64_t block_start = 0;
		for (const auto &[name, size] : blocks) {
			const uint64_t block_end = block_start + size;
			if (gpa < range.gpa_end && machine_offset < block_end && machine_offset >= block_start) {
				const uint64_t length = std::min(range.gpa_end - gpa, block_end - machine_offset);
				if (length > 0)
					pieces.push_back({name, gpa, gpa + length, machine_offset - block_start});
				gpa += length;
				machine_offset += length;
			}
			block_start = block_end;
		}
		top = std::max(top, range.gpa_end);
	}
	// Memory devices: QEMU 7.2's pc_memory_init puts the device memory region at
	// ROUND_UP(4 GiB + RAM above 4 GiB, 1 GiB) when maxmem is above the RAM size;
	// memory_device_get_free_addr places a device without addr= at the first free place aligned
	// to its backend's alignment (2 MiB for anonymous RAM on x86-64).
	if (command_line.dimms.empty())
		return Status::success();
	if (!command_line.max_ram || *command_line.max_ram <= command_line.ram_bytes)
		return error(DOCA_ERROR_INVALID_VALUE, "-device pc-dimm needs -m maxmem= above the RAM size");
	constexpr uint64_t kGiB = 1ull << 30, kAlign = 2ull << 20;
	const uint64_t above = std::max(top, k4GiB) - k4GiB;
	const uint64_t base = (k4GiB + above + kGiB - 1) / kGiB * kGiB;
	// The region's end: base + (maxmem - RAM) + 1 GiB per slot (enforce_aligned_dimm), checked: a
	// maxmem near 2^64 does not fit the address space.
	const uint64_t device_bytes = *command_line.max_ram - command_line.ram_bytes;
	const uint64_t slot_bytes = kGiB * command_line.dimms.size();
	if (device_bytes > UINT64_MAX - base || slot_bytes > UINT64_MAX - base - device_bytes)
		return error(DOCA_ERROR_INVALID_VALUE, "-m maxmem=" + std::to_string(*command_line.max_ram) +
							   ": the device memory region overflows the address space");
	const uint64_t limit = base + device_bytes + slot_bytes;
	std::vector<std::pair<uint64_t, uint64_t>> used; // [start, end) of plugged devices
	for (const QemuCommandLine::Dimm &dimm : command_line.dimms) {
		auto size = backend_size(dimm.memdev);
		if (!size || *size == 0)
			return error(DOCA_ERROR_INVALID_VALUE, "-device pc-dimm,memdev=" + dimm.memdev +
								   ": no memory-backend object has that id");
		uint64_t address = 0;
		if (dimm.address) {
			address = *dimm.address;
		} else {
			address = base;
			std::sort(used.begin(), used.end());
			for (const auto &[start, end] : used)
				if (address < end && address + *size > start)
					address = (end + kAlign - 1) / kAlign * kAlign;
		}
		if (address < base || address > limit || *size > limit - address)
			return error(DOCA_ERROR_INVALID_VALUE, "-device pc-dimm,memdev=" + dimm.memdev +
								   " lies outside the device memory region");
		for (const auto &[start, end] : used)
			if (address < end && address + *size > start)
				return error(DOCA_ERROR_INVALID_VALUE, "-device pc-dimm,memdev=" + dimm.memdev +
									   " overlaps another memory device");
		used.emplace_back(address, address + *size);
		blocks.emplace_back(dimm.memdev, *size);
		pieces.push_back({dimm.memdev, address, address + *size, 0});
	}
	return Status::success();
}

Status parse_ramblock_table(std::string_view text, std::vector<RamBlockInfo> &out)
{
	out.clear();
	bool header = false;
	while (!text.empty()) {
		std::string_view line = next_line(text);
		if (line.ends_with('\r'))
			line.remove_suffix(1);
		if (line.find("Block Name") != std::string_view::npos) {
			header = true;
			continue;
		}
		if (!header || line.find_first_not_of(' ') == std::string_view::npos)
			continue;
		// "<name> <psize> <unit> 0x<offset> 0x<used> 0x<total>[ ...]"; a name has no spaces.
		std::string_view rest = line;
		RamBlockInfo block;
		block.name = std::string(next_field(rest));
		next_field(rest); // page size number
		next_field(rest); // its unit
		const std::string_view offset = next_field(rest), used = next_field(rest), total = next_field(rest);
		auto parse = [](std::string_view field) {
			return field.starts_with("0x") ? common::parse_hex(field.substr(2)) : std::nullopt;
		};
		auto o = parse(offset), u = parse(used), t = parse(total);
		if (block.name.empty() || !o || !u || !t)
			return error(DOCA_ERROR_INVALID_VALUE,
				     "`info ramblock` line is malformed: \"" + std::string(line.substr(0, 120)) + "\"");
		block.offset = *o;
		block.used = *u;
		block.total = *t;
		out.push_back(std::move(block));
		if (out.size() > 65536)
			return error(DOCA_ERROR_INVALID_VALUE, "`info ramblock` lists too many blocks");
	}
	if (!header)
		return error(DOCA_ERROR_INVALID_VALUE, "`info ramblock` has no table header");
	return Status::success();
}

namespace {

// The mappings that may be a RAM block of `size` bytes: read-write, exactly that size, anonymous,
// shared (memfd, file) or on hugetlbfs.
std::vector<const ProcMapping *> ram_mapping_candidates(const std::vector<ProcMapping> &maps, uint64_t size)
{
	std::vector<const ProcMapping *> candidates;
	for (const ProcMapping &mapping : maps) {
		if (mapping.end - mapping.start != size || mapping.permissions.size() != 4 ||
		    mapping.permissions[0] != 'r' || mapping.permissions[1] != 'w')
			continue;
		const bool anonymous = mapping.path.empty() && mapping.inode == 0;
		const bool shared = mapping.permissions[3] == 's';
		const bool hugetlb = mapping.path.find("/hugepages") != std::string::npos;
		if (anonymous || shared || hugetlb)
			candidates.push_back(&mapping);
	}
	return candidates;
}

// RAM blocks of one size, told apart by content: pages QEMU shows at their guest-physical
// addresses (HMP xp) compared with each candidate mapping at the block's offsets. The assignment
// of blocks to mappings whose matching non-zero pages are the most wins, if no other ties it.
// `memory` reads the mappings the way the source will (process_vm_readv or /proc/PID/mem, as probed).
Status assign_twins_by_content(QmpSession &qmp, const QemuProcessMemory &memory, const std::vector<std::string> &twins,
			       const std::vector<RamBlockPiece> &pieces, const std::vector<uint64_t> &candidates,
			       std::map<std::string, uint64_t> &host_addresses)
{
	constexpr size_t kSamples = 32, kPage = 4096;
	const size_t count = twins.size();
	if (count > 6)
		return error(DOCA_ERROR_NOT_SUPPORTED, "more than 6 RAM blocks of one size");
	std::vector<std::vector<size_t>> score(count, std::vector<size_t>(count, 0));
	std::vector<uint8_t> mine(kPage);
	for (size_t b = 0; b < count; b++) {
		uint64_t total = 0;
		for (const RamBlockPiece &piece : pieces)
			if (piece.block == twins[b])
				total += piece.gpa_end - piece.gpa_start;
		for (size_t sample = 0; sample < kSamples && total >= kPage; sample++) {
			uint64_t skip = (total / kSamples * sample) & ~(kPage - 1);
			for (const RamBlockPiece &piece : pieces) {
				if (piece.block != twins[b])
					continue;
				const uint64_t length = piece.gpa_end - piece.gpa_start;
				if (skip >= length) {
					skip -= length;
					continue;
				}
				if (length - skip < kPage)
					break;
				std::string text;
				std::vector<uint8_t> theirs;
				Status status = qmp.hmp("xp /512xg " + common::hex(piece.gpa_start + skip), text);
				if (status.ok())
					status = parse_hmp_xp_words(text, theirs);
				if (!status.ok())
					return status;
				if (theirs.size() != kPage ||
				    std::all_of(theirs.begin(), theirs.end(), [](uint8_t byte) { return byte == 0; }))
					break;
				for (size_t c = 0; c < count; c++) {
					std::string why;
					if (!memory.read(candidates[c] + piece.offset + skip, mine, why))
						return error(DOCA_ERROR_IO_FAILED, why);
					if (mine == theirs)
						score[b][c]++;
				}
				break;
			}
		}
	}
	std::vector<size_t> order(count), best;
	for (size_t i = 0; i < count; i++)
		order[i] = i;
	size_t best_total = 0;
	bool tie = false;
	do {
		size_t total = 0;
		for (size_t b = 0; b < count; b++)
			total += score[b][order[b]];
		if (total > best_total) {
			best_total = total;
			best = order;
			tie = false;
		} else if (total == best_total) {
			tie = true;
		}
	} while (std::next_permutation(order.begin(), order.end()));
	if (best_total == 0 || tie)
		return error(DOCA_ERROR_NOT_SUPPORTED, "their contents do not tell them apart either");
	for (size_t b = 0; b < count; b++)
		host_addresses[twins[b]] = candidates[best[b]];
	return Status::success();
}

} // namespace

Status find_ram_mapping(const std::vector<ProcMapping> &maps, uint64_t size, uint64_t &host_address)
{
	const std::vector<const ProcMapping *> candidates = ram_mapping_candidates(maps, size);
	if (candidates.size() == 1) {
		host_address = candidates[0]->start;
		return Status::success();
	}
	if (candidates.empty())
		return error(DOCA_ERROR_NOT_FOUND, "no read-write mapping of the guest RAM's size (" +
						       std::to_string(size) +
						       " bytes) in its maps: not a QEMU with that much RAM, or its RAM "
						       "is laid out otherwise than its command line says; give the QMP "
						       "socket");
	std::string list;
	for (const ProcMapping *mapping : candidates)
		list += (list.empty() ? "" : ", ") + common::hex(mapping->start);
	return error(DOCA_ERROR_NOT_SUPPORTED, std::to_string(candidates.size()) +
						   " mappings have the guest RAM's size (" + std::to_string(size) +
						   " bytes, at " + list + "): cannot tell which holds RAM");
}

std::vector<uint32_t> find_qemu_by_name(const std::string &name)
{
	std::vector<uint32_t> pids;
	DIR *proc = ::opendir("/proc");
	if (proc == nullptr)
		return pids;
	while (const dirent *entry = ::readdir(proc)) {
		auto pid = common::parse_decimal(entry->d_name);
		if (!pid || *pid == 0 || *pid > UINT32_MAX)
			continue;
		std::string cmdline;
		int err = 0;
		if (!read_proc_file(std::string("/proc/") + entry->d_name + "/cmdline", cmdline, err))
			continue;
		QemuCommandLine parsed;
		if (parse_qemu_cmdline(cmdline, parsed).ok() && is_qemu_program(parsed.program) && parsed.name == name)
			pids.push_back(static_cast<uint32_t>(*pid));
	}
	::closedir(proc);
	std::sort(pids.begin(), pids.end());
	return pids;
}

std::string QemuProcessMemory::describe() const
{
	return "QEMU process " + std::to_string(pid_) + (name_.empty() ? "" : " (-name " + name_ + ")");
}

bool QemuProcessMemory::exited() const
{
	if (pid_fd_.valid()) {
		pollfd waiter{pid_fd_.get(), POLLIN, 0};
		return ::poll(&waiter, 1, 0) == 1 && (waiter.revents & (POLLIN | POLLHUP)) != 0;
	}
	return process_gone(pid_);
}

bool QemuProcessMemory::read(uint64_t address, std::span<uint8_t> out, std::string &why) const
{
	size_t done = 0;
	while (done < out.size()) {
		ssize_t n;
		if (mem_fd_.valid()) {
			n = ::pread(mem_fd_.get(), out.data() + done, out.size() - done,
				    static_cast<off_t>(address + done));
		} else {
			iovec local{out.data() + done, out.size() - done};
			iovec remote{reinterpret_cast<void *>(address + done), out.size() - done};
			n = ::process_vm_readv(static_cast<pid_t>(pid_), &local, 1, &remote, 1, 0);
		}
		if (n > 0) {
			done += static_cast<size_t>(n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		const int number = n < 0 ? errno : 0;
		if (exited() || number == ESRCH)
			why = describe() + " exited while it was read";
		else if (number == EPERM || number == EACCES)
			why = permission_error(pid_, "its memory", number).reason;
		else
			why = describe() + ": guest RAM at host address " + common::hex(address + done) +
			      " can no longer be read (" + (number != 0 ? errno_text(number) : "end of memory") +
			      "): QEMU unmapped it (the VM shuts down, or memory was unplugged)";
		return false;
	}
	return true;
}

size_t QemuProcessMemory::read_pieces(std::span<const Piece> pieces, std::string &why) const
{
	if (mem_fd_.valid())
		return ByteSource::read_pieces(pieces, why);
	constexpr size_t max_iovecs = 1024; // IOV_MAX
	std::array<iovec, max_iovecs> local;
	std::array<iovec, max_iovecs> remote;
	size_t done = 0;
	while (done < pieces.size()) {
		const size_t count = std::min(pieces.size() - done, max_iovecs);
		size_t total = 0;
		for (size_t i = 0; i < count; ++i) {
			const Piece &piece = pieces[done + i];
			local[i] = {piece.out.data(), piece.out.size()};
			remote[i] = {reinterpret_cast<void *>(piece.offset), piece.out.size()};
			total += piece.out.size();
		}
		const ssize_t n =
		    ::process_vm_readv(static_cast<pid_t>(pid_), local.data(), count, remote.data(), count, 0);
		if (n < 0 && errno == EINTR)
			continue;
		// The pieces the call read whole; the next one (short, or the call failed) is read alone,
		// which retries what can be retried and says why it cannot be read.
		size_t whole = 0;
		if (n > 0)
			for (size_t left = static_cast<size_t>(n);
			     whole < count && left >= pieces[done + whole].out.size(); ++whole)
				left -= pieces[done + whole].out.size();
		done += whole;
		if (n >= 0 && static_cast<size_t>(n) == total)
			continue;
		if (done < pieces.size()) {
			if (!read(pieces[done].offset, pieces[done].out, why))
				return done;
			++done;
		}
	}
	return done;
}

Status open_qemu_process(const SourceSpec &spec, std::unique_ptr<QemuProcessMemory> &out, std::vector<RamRange> &ranges)
{
	ranges.clear();
	uint32_t pid = 0;
	switch (spec.kind) {
	case SourceKind::qemu_pid: {
		auto parsed = common::parse_decimal(spec.path);
		if (!parsed || *parsed == 0 || *parsed > 4194304)
			return error(DOCA_ERROR_INVALID_VALUE, "pid: \"" + spec.path + "\" is not a process ID");
		pid = static_cast<uint32_t>(*parsed);
		break;
	}
	case SourceKind::qemu_name: {
		auto pids = find_qemu_by_name(spec.path);
		if (pids.empty())
			return error(DOCA_ERROR_NOT_FOUND, "qemu-name:" + spec.path + ": no running QEMU has -name " +
							       spec.path +
							       " (see ps -C qemu-system-x86_64 -o pid,args)");
		if (pids.size() > 1) {
			std::string list;
			for (uint32_t p : pids)
				list += (list.empty() ? "" : ", ") + std::to_string(p);
			return error(DOCA_ERROR_INVALID_VALUE, "qemu-name:" + spec.path +
								   ": several QEMU processes have -name " + spec.path +
								   " (pids " + list + "); choose one with pid:PID");
		}
		pid = pids[0];
		break;
	}
	case SourceKind::libvirt_domain: {
		// libvirt writes the QEMU's pid to its run directory (system and session daemons); the
		// command line carries -name guest=DOMAIN as well.
		std::vector<std::string> pid_files = {"/run/libvirt/qemu/" + spec.path + ".pid"};
		if (const char *runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime != '\0')
			pid_files.push_back(std::string(runtime) + "/libvirt/qemu/run/" + spec.path + ".pid");
		for (const std::string &file : pid_files) {
			std::string text;
			int err = 0;
			if (!read_proc_file(file, text, err))
				continue;
			while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
				text.pop_back();
			auto parsed = common::parse_decimal(text);
			if (parsed && *parsed > 0 && *parsed <= 4194304) {
				pid = static_cast<uint32_t>(*parsed);
				break;
			}
		}
		if (pid == 0) {
			auto pids = find_qemu_by_name(spec.path);
			if (pids.size() == 1)
				pid = pids[0];
		}
		if (pid == 0) {
			const bool virsh =
			    ::access("/usr/bin/virsh", X_OK) == 0 || ::access("/usr/local/bin/virsh", X_OK) == 0;
			return error(DOCA_ERROR_NOT_FOUND,
				     "libvirt:" + spec.path + ": domain " + spec.path + " is not running here: no " +
					 pid_files[0] + " and no QEMU with -name guest=" + spec.path +
					 (virsh ? " (virsh list --all shows the domains)"
						: " (virsh is not installed: is libvirt running on this machine?)"));
		}
		break;
	}
	default:
		return error(DOCA_ERROR_INVALID_VALUE, "not a QEMU process source");
	}

	const std::string pid_dir = "/proc/" + std::to_string(pid);
	std::string cmdline;
	int err = 0;
	if (!read_proc_file(pid_dir + "/cmdline", cmdline, err))
		return error(DOCA_ERROR_NOT_FOUND, "pid:" + std::to_string(pid) + ": no process " +
						       std::to_string(pid) +
						       (err == ENOENT ? "" : " (" + errno_text(err) + ")"));
	QemuCommandLine command_line;
	Status status = parse_qemu_cmdline(cmdline, command_line);
	const std::string comm = comm_of(pid_dir);
	if (!status.ok() && cmdline.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "process " + std::to_string(pid) + " (" + comm +
							   ") is not QEMU: it has no command line (a kernel thread, or "
							   "it exited)");
	if (status.ok() && !is_qemu_program(command_line.program))
		return error(DOCA_ERROR_INVALID_VALUE, "process " + std::to_string(pid) + " (" + comm +
							   ") is not QEMU: its program is " + command_line.program +
							   ", not qemu-system-*");
	if (!status.ok())
		return error(status.code, "QEMU process " + std::to_string(pid) + ": command line: " + status.reason);
	const std::string what = "QEMU process " + std::to_string(pid) +
				 (command_line.name.empty() ? "" : " (-name " + command_line.name + ")");
	if (command_line.program.find("x86_64") == std::string::npos &&
	    command_line.program.find("i386") == std::string::npos &&
	    command_line.program.find("kvm") == std::string::npos)
		return error(DOCA_ERROR_NOT_SUPPORTED, what + ": " + command_line.program +
							   " is not an x86 emulator (App Shield reads x86-64 guests)");

	std::string maps_text;
	if (!read_proc_file(pid_dir + "/maps", maps_text, err)) {
		if (err == EACCES || err == EPERM)
			return permission_error(pid, "its memory map (" + pid_dir + "/maps)", err);
		return error(err == ENOENT || err == ESRCH ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_IO_FAILED,
			     what + ": cannot read " + pid_dir + "/maps: " + errno_text(err));
	}
	if (maps_text.empty())
		return error(DOCA_ERROR_NOT_FOUND, what + " exited (its memory map is empty)");
	std::vector<ProcMapping> maps;
	status = parse_proc_maps(maps_text, maps);
	if (!status.ok())
		return error(status.code, what + ": " + pid_dir + "/maps: " + status.reason);

	// The layout as pieces of RAM blocks, and each block's size.
	std::vector<RamBlockPiece> pieces;
	std::vector<std::pair<std::string, uint64_t>> blocks;
	QmpSession qmp; // open while the layout is worked out (RAM blocks of one size need it)
	if (!spec.qmp_socket.empty()) {
		status = qmp.open(spec.qmp_socket);
		std::string mtree, ramblock, memdevs;
		std::vector<std::string> backends;
		if (status.ok())
			status = qmp.hmp("info mtree -f", mtree);
		if (status.ok())
			status = qmp.execute("query-memdev", &memdevs);
		if (status.ok())
			status = parse_qmp_memdev_ids(memdevs, backends);
		if (status.ok())
			status = parse_mtree_ram_pieces(mtree, backends, pieces);
		if (status.ok())
			status = qmp.hmp("info ramblock", ramblock);
		std::vector<RamBlockInfo> table;
		if (status.ok())
			status = parse_ramblock_table(ramblock, table);
		if (!status.ok())
			return error(status.code, what + ": QMP " + spec.qmp_socket + ": " + status.reason);
		for (const RamBlockPiece &piece : pieces) {
			if (std::any_of(blocks.begin(), blocks.end(),
					[&](const auto &b) { return b.first == piece.block; }))
				continue;
			auto block = std::find_if(table.begin(), table.end(), [&](const RamBlockInfo &b) {
				return b.name == piece.block || b.name == "/objects/" + piece.block;
			});
			if (block == table.end())
				return error(DOCA_ERROR_INVALID_VALUE,
					     what + ": QMP lists no RAM block named " + piece.block);
			blocks.emplace_back(piece.block, block->used);
		}
	} else {
		status = x86_pc_ram_blocks(command_line, pieces, blocks);
		if (!status.ok())
			return error(status.code, what + ": " + status.reason);
	}
	if (blocks.empty())
		return error(DOCA_ERROR_NOT_FOUND, what + ": no guest RAM");
	for (size_t i = 0; i < blocks.size(); i++)
		for (size_t j = 0; j < i; j++)
			if (blocks[i].first == blocks[j].first)
				return error(DOCA_ERROR_INVALID_VALUE,
					     what + ": RAM block " + blocks[i].first + " is listed twice");
	// The reader: cross-memory attach first, /proc/PID/mem where the kernel lacks it (or a policy
	// blocks it). Probed at the first RAM mapping read, before any comparison reads through it.
	auto memory = std::make_unique<QemuProcessMemory>();
	memory->pid_ = pid;
	memory->name_ = command_line.name;
	const int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
	if (pid_fd >= 0)
		memory->pid_fd_.reset(pid_fd);
	bool probed = false;
	auto probe_reader = [&](uint64_t host_address) -> Status {
		if (probed)
			return Status::success();
		uint8_t probe[8];
		iovec local{probe, sizeof(probe)};
		iovec remote{reinterpret_cast<void *>(host_address), sizeof(probe)};
		if (::process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) !=
		    static_cast<ssize_t>(sizeof(probe))) {
			const int first = errno;
			if (first == ESRCH)
				return error(DOCA_ERROR_NOT_FOUND, what + " exited");
			const int fd = ::open((pid_dir + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				const int second = errno;
				if (first == EPERM || first == EACCES || second == EPERM || second == EACCES)
					return permission_error(pid, "its memory",
								first == EPERM || first == EACCES ? first : second);
				return error(DOCA_ERROR_IO_FAILED,
					     what + ": cannot read its memory: process_vm_readv: " + errno_text(first) +
						 ", " + pid_dir + "/mem: " + errno_text(second));
			}
			memory->mem_fd_.reset(fd);
			if (::pread(fd, probe, sizeof(probe), static_cast<off_t>(host_address)) !=
			    static_cast<ssize_t>(sizeof(probe))) {
				const int second = errno;
				if (second == EPERM || second == EACCES)
					return permission_error(pid, "its memory", second);
				return error(DOCA_ERROR_IO_FAILED, what + ": cannot read guest RAM at " +
								       common::hex(host_address) + ": " +
								       errno_text(second));
			}
		}
		probed = true;
		return Status::success();
	};
	// Each block's mapping: the one eligible mapping of its size.
	std::map<std::string, uint64_t> host_addresses;
	for (const auto &[name, size] : blocks) {
		if (host_addresses.count(name) != 0)
			continue; // placed with a block of the same size
		std::string twins;
		std::vector<std::string> group = {name};
		for (const auto &[other, other_size] : blocks)
			if (other != name && other_size == size) {
				twins += (twins.empty() ? "" : ", ") + other;
				group.push_back(other);
			}
		if (!twins.empty()) {
			const std::string head = what + ": RAM blocks " + name + " and " + twins +
						 " have the same size (" + std::to_string(size) +
						 " bytes): their mappings in QEMU cannot be told apart";
			if (spec.qmp_socket.empty())
				return error(
				    DOCA_ERROR_NOT_SUPPORTED,
				    head + " without QMP (give the QMP socket, give the memory backends different "
					   "sizes, or read an image: QMP dump-guest-memory)");
			std::vector<uint64_t> candidates;
			for (const ProcMapping *mapping : ram_mapping_candidates(maps, size))
				candidates.push_back(mapping->start);
			if (candidates.size() != group.size())
				return error(DOCA_ERROR_NOT_SUPPORTED, head + ": " + std::to_string(candidates.size()) +
									   " mappings have that size");
			status = probe_reader(candidates[0]);
			if (!status.ok())
				return status;
			status = assign_twins_by_content(qmp, *memory, group, pieces, candidates, host_addresses);
			if (!status.ok())
				return error(status.code,
					     head + ": " + status.reason + " (read an image: QMP dump-guest-memory)");
			continue;
		}
		uint64_t host_address = 0;
		status = find_ram_mapping(maps, size, host_address);
		if (!status.ok())
			return error(status.code, what + ": RAM block " + name + ": " + status.reason);
		host_addresses[name] = host_address;
	}
	uint64_t end = 0;
	for (const RamBlockPiece &piece : pieces) {
		const auto block =
		    std::find_if(blocks.begin(), blocks.end(), [&](const auto &b) { return b.first == piece.block; });
		const uint64_t block_size = block->second;
		const uint64_t length = piece.gpa_end - piece.gpa_start;
		if (piece.offset > block_size || length > block_size - piece.offset)
			return error(DOCA_ERROR_INVALID_VALUE, what + ": the RAM layout reaches past RAM block " +
								   piece.block + " (" + std::to_string(block_size) +
								   " bytes)");
		const uint64_t host = host_addresses[piece.block] + piece.offset;
		ranges.push_back({piece.gpa_start, piece.gpa_end, host});
		end = std::max(end, host + length);
	}
	std::sort(ranges.begin(), ranges.end(),
		  [](const RamRange &a, const RamRange &b) { return a.gpa_start < b.gpa_start; });
	const uint64_t host_address = host_addresses.begin()->second;

	memory->end_ = end;
	status = probe_reader(host_address);
	if (!status.ok())
		return status;
	out = std::move(memory);
	return Status::success();
}

} // namespace softdpu::apsh::source
