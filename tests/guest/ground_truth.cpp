#include "ground_truth.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace softdpu::guest {
namespace {

constexpr std::string_view kFormatVersion = "1";

using Namespaces = std::map<uint32_t, std::map<std::string, uint32_t>>;

struct Line {
	size_t number = 0;
	std::string_view text;
};

class Parser {
public:
	Parser(std::string origin) : origin_(std::move(origin)) {}

	[[noreturn]] void fail(size_t line, const std::string &what) const
	{
		throw std::runtime_error(origin_ + ":" + std::to_string(line) + ": " + what);
	}

	uint64_t number(const Line &line, std::string_view text, int base = 10) const
	{
		if (base == 16 && (text.starts_with("0x") || text.starts_with("0X")))
			text.remove_prefix(2);
		uint64_t value = 0;
		auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
		if (text.empty() || error != std::errc() || end != text.data() + text.size())
			fail(line.number, "expected a " + std::string(base == 16 ? "hexadecimal" : "decimal") +
					      " number, found '" + std::string(text) + "'");
		return value;
	}

	uint32_t number32(const Line &line, std::string_view text) const
	{
		uint64_t value = number(line, text);
		if (value > UINT32_MAX)
			fail(line.number, "number out of range: " + std::string(text));
		return static_cast<uint32_t>(value);
	}

private:
	std::string origin_;
};

std::vector<std::string_view> split(std::string_view text, char separator)
{
	std::vector<std::string_view> parts;
	size_t start = 0;
	for (;;) {
		size_t at = text.find(separator, start);
		if (at == std::string_view::npos) {
			parts.push_back(text.substr(start));
			return parts;
		}
		parts.push_back(text.substr(start, at - start));
		start = at + 1;
	}
}

std::vector<std::string_view> words(std::string_view text)
{
	std::vector<std::string_view> out;
	size_t at = 0;
	while (at < text.size()) {
		while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
			at++;
		size_t start = at;
		while (at < text.size() && text[at] != ' ' && text[at] != '\t')
			at++;
		if (at > start)
			out.push_back(text.substr(start, at - start));
	}
	return out;
}

// The rest of the line after `count` whitespace-separated words, leading blanks removed.
std::string_view after_words(std::string_view text, size_t count)
{
	size_t at = 0;
	for (size_t i = 0; i < count; i++) {
		while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
			at++;
		while (at < text.size() && text[at] != ' ' && text[at] != '\t')
			at++;
	}
	while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
		at++;
	return text.substr(at);
}

char state_letter(const Parser &parser, const Line &line, std::string_view text)
{
	if (text.size() != 1)
		parser.fail(line.number, "expected a one-letter process state, found '" + std::string(text) + "'");
	return text[0];
}

void parse_processes(const Parser &p, const std::vector<Line> &lines, GroundTruth &gt)
{
	for (const Line &line : lines) {
		auto f = split(line.text, '\t');
		if (f.size() != 8)
			p.fail(line.number,
			       "a process line has 8 tab-separated fields, this one " + std::to_string(f.size()));
		GtProcess proc;
		proc.pid = p.number32(line, f[0]);
		proc.ppid = p.number32(line, f[1]);
		proc.uid = p.number32(line, f[2]);
		proc.gid = p.number32(line, f[3]);
		proc.state = state_letter(p, line, f[4]);
		proc.comm = f[5];
		proc.exe = f[6];
		if (!f[7].empty()) {
			auto args = split(f[7], '\x1f');
			args.pop_back(); // each argument ends with the separator
			proc.argv.assign(args.begin(), args.end());
		}
		proc.kernel_thread = proc.pid == 2 || proc.ppid == 2;
		gt.processes.push_back(std::move(proc));
	}
}

void parse_threads(const Parser &p, const std::vector<Line> &lines, GroundTruth &gt)
{
	for (const Line &line : lines) {
		auto f = split(line.text, '\t');
		if (f.size() != 4)
			p.fail(line.number,
			       "a thread line has 4 tab-separated fields, this one " + std::to_string(f.size()));
		gt.threads.push_back(
		    {p.number32(line, f[0]), p.number32(line, f[1]), state_letter(p, line, f[2]), std::string(f[3])});
	}
}

void parse_maps(const Parser &p, const Line &header, uint32_t pid, const std::vector<Line> &lines, GroundTruth &gt)
{
	auto &maps = gt.maps[pid];
	if (!maps.empty())
		p.fail(header.number, "second maps section for pid " + std::to_string(pid));
	for (const Line &line : lines) {
		auto w = words(line.text);
		if (w.size() < 5)
			p.fail(line.number, "a maps line has at least 5 fields");
		auto range = split(w[0], '-');
		if (range.size() != 2 || w[1].size() != 4)
			p.fail(line.number, "not a maps line: " + std::string(line.text));
		GtMapping m;
		m.start = p.number(line, range[0], 16);
		m.end = p.number(line, range[1], 16);
		m.read = w[1][0] == 'r';
		m.write = w[1][1] == 'w';
		m.exec = w[1][2] == 'x';
		m.shared = w[1][3] == 's';
		m.offset = p.number(line, w[2], 16);
		m.inode = p.number(line, w[4]);
		m.path = after_words(line.text, 5);
		maps.push_back(std::move(m));
	}
}

void parse_environ(uint32_t pid, const std::vector<Line> &lines, GroundTruth &gt)
{
	auto &env = gt.environ[pid];
	for (const Line &line : lines) {
		if (line.text.empty())
			continue;
		size_t eq = line.text.find('=');
		if (eq == std::string_view::npos)
			env.emplace_back(std::string(line.text), std::string());
		else
			env.emplace_back(std::string(line.text.substr(0, eq)), std::string(line.text.substr(eq + 1)));
	}
}

void parse_fds(const Parser &p, uint32_t pid, const std::vector<Line> &lines, GroundTruth &gt)
{
	auto &fds = gt.fds[pid];
	for (const Line &line : lines) {
		auto f = split(line.text, '\t');
		if (f.size() != 2)
			p.fail(line.number, "an fds line is '<fd>\\t<link>'");
		fds.emplace_back(static_cast<int>(p.number32(line, f[0])), std::string(f[1]));
	}
}

// /proc/net/{tcp,udp}[6] print each address as 32-bit words in host (little-endian) order.
std::string decode_address(const Parser &p, const Line &line, std::string_view hex, int family)
{
	size_t words_needed = family == AF_INET ? 1 : 4;
	if (hex.size() != words_needed * 8)
		p.fail(line.number, "bad address '" + std::string(hex) + "'");
	uint8_t bytes[16] = {};
	for (size_t w = 0; w < words_needed; w++) {
		uint64_t value = p.number(line, hex.substr(w * 8, 8), 16);
		for (int b = 0; b < 4; b++)
			bytes[w * 4 + b] = static_cast<uint8_t>(value >> (8 * b));
	}
	return family == AF_INET ? format_ipv4(bytes) : format_ipv6(bytes);
}

// The pid a /proc path names ("/proc/123/ns:", "/proc/123/status:..."), or 0.
uint32_t proc_path_pid(std::string_view text)
{
	if (!text.starts_with("/proc/"))
		return 0;
	text.remove_prefix(6);
	uint32_t pid = 0;
	auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
	return error == std::errc() && end != text.data() && *end == '/' ? pid : 0;
}

// "ls -l /proc/[0-9]*/ns/": "/proc/<pid>/ns:" headers, then "... <name> -> <type>:[<inode>]".
// Links of a process that exited meanwhile fail to read and are left out.
void parse_namespaces(const Parser &p, const std::vector<Line> &lines, Namespaces &out)
{
	uint32_t pid = 0;
	for (const Line &line : lines) {
		std::string_view t = line.text;
		if (t.ends_with("/ns:") || t.ends_with("/ns/:")) { // busybox keeps the trailing slash
			pid = proc_path_pid(t);
			if (pid == 0)
				p.fail(line.number, "not a /proc/<pid>/ns: header");
			continue;
		}
		size_t arrow = t.find(" -> ");
		if (pid == 0 || arrow == std::string_view::npos)
			continue; // "total 0", blank lines
		auto w = words(t.substr(0, arrow));
		std::string_view target = t.substr(arrow + 4);
		size_t open = target.find(":[");
		if (w.empty() || open == std::string_view::npos || !target.ends_with("]"))
			continue;
		out[pid][std::string(w.back())] = p.number32(line, target.substr(open + 2, target.size() - open - 3));
	}
}

// "grep -H '^NSpid:' /proc/[0-9]*/status": "/proc/<pid>/status:NSpid:\t<pid>[\t<pid in ns>...]".
void parse_nspid(const Parser &p, const std::vector<Line> &lines, std::map<uint32_t, uint32_t> &out)
{
	for (const Line &line : lines) {
		uint32_t pid = proc_path_pid(line.text);
		size_t key = line.text.find(":NSpid:");
		if (pid == 0 || key == std::string_view::npos)
			p.fail(line.number, "an nspid line is '/proc/<pid>/status:NSpid:...'");
		auto w = words(line.text.substr(key + 7));
		if (w.empty())
			p.fail(line.number, "NSpid without a value");
		out[pid] = p.number32(line, w.back());
	}
}

// "grep -H '' /proc/[0-9]*/cgroup": "/proc/<pid>/cgroup:0::<path>" (cgroup v2).
void parse_cgroups(const Parser &p, const std::vector<Line> &lines, std::map<uint32_t, std::string> &out)
{
	for (const Line &line : lines) {
		uint32_t pid = proc_path_pid(line.text);
		size_t key = line.text.find("/cgroup:0::");
		if (pid == 0)
			p.fail(line.number, "a cgroups line is '/proc/<pid>/cgroup:<line>'");
		if (key != std::string_view::npos)
			out[pid] = std::string(line.text.substr(key + 11));
	}
}

void parse_net(const Parser &p, const Line &header, std::string_view table, const std::vector<Line> &lines,
	       GroundTruth &gt)
{
	// "tcp@<pid>": the table of <pid>'s network namespace; "tcp": the host's.
	uint32_t net_pid = 0;
	if (size_t at = table.find('@'); at != std::string_view::npos) {
		net_pid = p.number32(header, table.substr(at + 1));
		table = table.substr(0, at);
	}
	int protocol = table.starts_with("tcp") ? IPPROTO_TCP : table.starts_with("udp") ? IPPROTO_UDP : 0;
	int family = table.ends_with("6") ? AF_INET6 : AF_INET;
	if (protocol == 0 || (table != "tcp" && table != "udp" && table != "tcp6" && table != "udp6"))
		p.fail(header.number, "unknown net table '" + std::string(table) + "'");
	for (const Line &line : lines) {
		auto w = words(line.text);
		if (w.empty() || w[0] == "sl")
			continue; // column header
		if (w.size() < 10)
			p.fail(line.number, "a /proc/net line has at least 10 fields");
		auto local = split(w[1], ':');
		auto remote = split(w[2], ':');
		if (local.size() != 2 || remote.size() != 2)
			p.fail(line.number, "bad address:port pair");
		GtSocket s;
		s.protocol = protocol;
		s.family = family;
		s.local_addr = decode_address(p, line, local[0], family);
		s.local_port = static_cast<uint16_t>(p.number(line, local[1], 16));
		s.remote_addr = decode_address(p, line, remote[0], family);
		s.remote_port = static_cast<uint16_t>(p.number(line, remote[1], 16));
		s.state = static_cast<int>(p.number(line, w[3], 16));
		s.inode = p.number(line, w[9]);
		s.net_ns = net_pid; // a pid until mark_transient_and_owners makes it the namespace
		gt.sockets.push_back(std::move(s));
	}
}

void parse_modules(const Parser &p, const std::vector<Line> &lines, GroundTruth &gt)
{
	for (const Line &line : lines) {
		auto w = words(line.text);
		if (w.size() < 6)
			p.fail(line.number, "a /proc/modules line has at least 6 fields");
		gt.modules.push_back({std::string(w[0]), p.number(line, w[1]), p.number(line, w[5], 16)});
	}
}

void parse_iomem(const Parser &p, const std::vector<Line> &lines, GroundTruth &gt)
{
	for (const Line &line : lines) {
		size_t indent = line.text.find_first_not_of(' ');
		std::string_view text = line.text.substr(indent == std::string_view::npos ? 0 : indent);
		size_t colon = text.find(" : ");
		if (colon == std::string_view::npos)
			p.fail(line.number, "not an iomem line: " + std::string(line.text));
		auto range = split(text.substr(0, colon), '-');
		if (range.size() != 2)
			p.fail(line.number, "not an iomem range: " + std::string(line.text));
		GtRange r{p.number(line, range[0], 16), p.number(line, range[1], 16) + 1};
		std::string_view name = text.substr(colon + 3);
		if (indent == 0 && name == "System RAM")
			gt.system_ram.push_back(r);
		else if (name == "Kernel code")
			gt.kernel_code = r;
	}
}

void parse_kallsyms(const Parser &p, const std::vector<Line> &lines, GroundTruth &gt)
{
	for (const Line &line : lines) {
		auto w = words(line.text);
		if (w.size() == 3) // core kernel symbols only ("[module]" makes a fourth word)
			gt.symbols[std::string(w[2])] = p.number(line, w[0], 16);
	}
}

GtRange parse_range(const Parser &p, const Line &line, std::string_view text)
{
	auto r = split(text, '-');
	if (r.size() != 2)
		p.fail(line.number, "expected 0xSTART-0xEND, found '" + std::string(text) + "'");
	return {p.number(line, r[0], 16), p.number(line, r[1], 16)};
}

void parse_target(const Parser &p, std::string_view name, const std::vector<Line> &lines, GroundTruth &gt)
{
	GtTarget t;
	t.info_name = name;
	for (const Line &line : lines) {
		size_t eq = line.text.find('=');
		if (eq == std::string_view::npos)
			p.fail(line.number, "a target info line is key=value");
		std::string_view key = line.text.substr(0, eq), value = line.text.substr(eq + 1);
		t.fields.emplace(std::string(key), std::string(value));
		if (key == "pid") {
			t.pid = p.number32(line, value);
		} else if (key == "comm") {
			t.comm = value;
		} else if (key == "heap_marker") {
			t.heap_marker = p.number(line, value, 16);
		} else if (key == "rwx") {
			t.rwx = parse_range(p, line, value);
		} else if (key == "file_map") {
			auto w = words(value);
			if (w.size() != 3)
				p.fail(line.number, "file_map is '0xSTART-0xEND OFFSET PATH'");
			t.file_map = parse_range(p, line, w[0]);
			t.file_map_offset = p.number(line, w[1]);
			t.file_map_path = w[2];
		} else if (key == "thread") {
			auto w = words(value);
			if (w.size() != 2)
				p.fail(line.number, "thread is 'TID NAME'");
			t.threads.emplace_back(p.number32(line, w[0]), std::string(w[1]));
		}
	}
	gt.targets.push_back(std::move(t));
}

// A file sent as a section: its lines, each ending in a newline.
std::string joined(const std::vector<Line> &lines)
{
	std::string text;
	for (const Line &line : lines) {
		text += line.text;
		text += '\n';
	}
	return text;
}

// "<size> <sha256 hex>"
std::pair<uint64_t, std::string> parse_btf_line(const Parser &p, const Line &header, const std::vector<Line> &lines)
{
	if (lines.size() != 1)
		p.fail(header.number, "apsh-config-btf: expected one line \"<size> <sha256>\"");
	auto w = words(lines[0].text);
	if (w.size() != 2 || w[1].size() != 64 || w[1].find_first_not_of("0123456789abcdef") != std::string_view::npos)
		p.fail(lines[0].number, "apsh-config-btf: expected \"<size> <sha256>\"");
	return {p.number(lines[0], w[0]), std::string(w[1])};
}

void mark_transient_and_owners(GroundTruth &gt)
{
	std::set<uint32_t> transient{gt.collector_pid};
	for (bool grew = true; grew;) {
		grew = false;
		for (const auto &proc : gt.processes)
			if (transient.contains(proc.ppid) && transient.insert(proc.pid).second)
				grew = true;
	}
	for (auto &proc : gt.processes)
		proc.transient = transient.contains(proc.pid);

	std::map<uint64_t, std::vector<uint32_t>> owners;
	for (const auto &[pid, fds] : gt.fds) {
		if (transient.contains(pid))
			continue;
		for (const auto &[fd, link] : fds) {
			if (!link.starts_with("socket:[") || !link.ends_with("]"))
				continue;
			uint64_t inode = 0;
			std::string_view digits(link.data() + 8, link.size() - 9);
			if (std::from_chars(digits.data(), digits.data() + digits.size(), inode).ec == std::errc())
				owners[inode].push_back(pid);
		}
	}
	auto net_of = [&](uint32_t pid) -> uint32_t {
		const GtProcess *process = gt.process(pid);
		if (process == nullptr)
			return 0;
		auto it = process->ns.find("net");
		return it != process->ns.end() ? it->second : 0;
	};
	const uint32_t host_net = net_of(1);
	for (auto &socket : gt.sockets) {
		auto it = owners.find(socket.inode);
		if (it != owners.end())
			socket.owners = it->second;
		socket.net_ns = socket.net_ns == 0 ? host_net : net_of(socket.net_ns);
	}
}

} // namespace

GroundTruth GroundTruth::parse(std::string_view text, const std::string &origin)
{
	Parser p(origin);
	GroundTruth gt;
	std::vector<Line> lines;
	for (size_t start = 0, number = 1; start < text.size(); number++) {
		size_t end = text.find('\n', start);
		if (end == std::string_view::npos)
			end = text.size();
		std::string_view line = text.substr(start, end - start);
		if (line.ends_with('\r')) // written through a tty with onlcr
			line.remove_suffix(1);
		lines.push_back({number, line});
		start = end + 1;
	}
	if (lines.empty() || lines[0].text != "@@GROUND-TRUTH " + std::string(kFormatVersion))
		p.fail(1, "not a ground truth file of format " + std::string(kFormatVersion) +
			      " (first line '@@GROUND-TRUTH 1' expected)");

	Namespaces namespaces;
	std::map<uint32_t, uint32_t> ns_pids;
	std::map<uint32_t, std::string> cgroups;
	bool done = false, have_collector = false;
	std::optional<Line> open;
	std::string open_name, open_arg;
	std::vector<Line> body;
	for (size_t i = 1; i < lines.size(); i++) {
		const Line &line = lines[i];
		std::string_view t = line.text;
		if (done) {
			if (!t.empty())
				p.fail(line.number, "text after @@DONE");
			continue;
		}
		if (t.starts_with("@@UPTIME "))
			continue;
		if (!open) {
			if (t.starts_with("@@COLLECTOR ")) {
				gt.collector_pid = p.number32(line, t.substr(12));
				have_collector = true;
			} else if (t.starts_with("@@BEGIN ")) {
				auto w = words(t.substr(8));
				if (w.empty() || w.size() > 2)
					p.fail(line.number, "@@BEGIN takes a section name and at most one argument");
				open = line;
				open_name = w[0];
				open_arg = w.size() == 2 ? std::string(w[1]) : std::string();
				body.clear();
			} else if (t == "@@DONE") {
				done = true;
			} else if (!t.empty()) {
				p.fail(line.number, "text outside a section: '" + std::string(t) + "'");
			}
			continue;
		}
		if (!t.starts_with("@@END")) {
			body.push_back(line);
			continue;
		}
		if (t != "@@END " + open_name)
			p.fail(line.number, "'" + std::string(t) + "' closes section '" + open_name + "'");
		auto pid_arg = [&] { return p.number32(*open, open_arg); };
		if (open_name == "uname")
			gt.kernel_release = body.empty() ? "" : std::string(body[0].text);
		else if (open_name == "cmdline")
			gt.cmdline = body.empty() ? "" : std::string(body[0].text);
		else if (open_name == "processes")
			parse_processes(p, body, gt);
		else if (open_name == "threads")
			parse_threads(p, body, gt);
		else if (open_name == "maps")
			parse_maps(p, *open, pid_arg(), body, gt);
		else if (open_name == "environ")
			parse_environ(pid_arg(), body, gt);
		else if (open_name == "fds")
			parse_fds(p, pid_arg(), body, gt);
		else if (open_name == "net")
			parse_net(p, *open, open_arg, body, gt);
		else if (open_name == "modules")
			parse_modules(p, body, gt);
		else if (open_name == "namespaces")
			parse_namespaces(p, body, namespaces);
		else if (open_name == "nspid")
			parse_nspid(p, body, ns_pids);
		else if (open_name == "cgroups")
			parse_cgroups(p, body, cgroups);
		else if (open_name == "iomem")
			parse_iomem(p, body, gt);
		else if (open_name == "kallsyms")
			parse_kallsyms(p, body, gt);
		else if (open_name == "target")
			parse_target(p, open_arg, body, gt);
		else if (open_name == "apsh-config-file")
			gt.apsh_config_files[open_arg] = joined(body);
		else if (open_name == "apsh-config-log")
			gt.apsh_config_log = joined(body);
		else if (open_name == "apsh-config-btf")
			gt.apsh_config_btf = parse_btf_line(p, *open, body);
		// Other sections (vmcoreinfo) are informational.
		open.reset();
	}
	if (open)
		p.fail(open->number, "section '" + open_name + "' is never closed (truncated capture?)");
	if (!done)
		p.fail(lines.size(), "no @@DONE line: the capture is incomplete");
	if (!have_collector)
		p.fail(1, "no @@COLLECTOR line");
	if (gt.processes.empty())
		p.fail(lines.size(), "no processes section");

	std::sort(gt.processes.begin(), gt.processes.end(),
		  [](const GtProcess &a, const GtProcess &b) { return a.pid < b.pid; });
	std::sort(gt.threads.begin(), gt.threads.end(), [](const GtThread &a, const GtThread &b) {
		return std::pair(a.pid, a.tid) < std::pair(b.pid, b.tid);
	});
	for (auto &process : gt.processes) {
		if (auto it = namespaces.find(process.pid); it != namespaces.end())
			process.ns = it->second;
		if (auto it = ns_pids.find(process.pid); it != ns_pids.end())
			process.ns_pid = it->second;
		if (auto it = cgroups.find(process.pid); it != cgroups.end())
			process.cgroup = it->second;
	}
	mark_transient_and_owners(gt);
	return gt;
}

GroundTruth GroundTruth::load(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		throw std::runtime_error(path + ": cannot open the ground truth file");
	std::stringstream content;
	content << in.rdbuf();
	return parse(content.str(), path);
}

const GtProcess *GroundTruth::process(uint32_t pid) const
{
	auto it = std::lower_bound(processes.begin(), processes.end(), pid,
				   [](const GtProcess &p, uint32_t value) { return p.pid < value; });
	return it != processes.end() && it->pid == pid ? &*it : nullptr;
}

std::vector<const GtProcess *> GroundTruth::stable_processes() const
{
	std::vector<const GtProcess *> out;
	for (const auto &proc : processes)
		if (!proc.transient)
			out.push_back(&proc);
	return out;
}

std::vector<GtThread> GroundTruth::threads_of(uint32_t pid) const
{
	std::vector<GtThread> out;
	for (const auto &thread : threads)
		if (thread.pid == pid)
			out.push_back(thread);
	return out;
}

const GtTarget *GroundTruth::target(std::string_view comm) const
{
	for (const auto &t : targets)
		if (t.comm == comm)
			return &t;
	return nullptr;
}

std::optional<uint64_t> GroundTruth::symbol(const std::string &name) const
{
	auto it = symbols.find(name);
	if (it == symbols.end())
		return std::nullopt;
	return it->second;
}

std::string format_ipv4(const uint8_t bytes[4])
{
	char text[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, bytes, text, sizeof text);
	return text;
}

std::string format_ipv6(const uint8_t bytes[16])
{
	char text[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, bytes, text, sizeof text);
	return text;
}

} // namespace softdpu::guest
