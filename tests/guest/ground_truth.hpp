// The test guest's own view of itself, as its /bin/apsh-ground-truth printed it to the second
// serial port (tests/guest/initramfs/apsh-ground-truth), parsed into plain structs. Integration
// tests compare App Shield's results with this.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace softdpu::guest {

struct GtProcess {
	uint32_t pid = 0;
	uint32_t ppid = 0;
	uint32_t uid = 0; // real uid
	uint32_t gid = 0; // real gid
	char state = '?'; // /proc state letter: R, S, D, I, T, Z, ...
	// /proc/<pid>/comm. For workqueue workers procfs appends "-<workqueue>" to task->comm.
	std::string comm;
	std::string exe; // /proc/<pid>/exe link; empty for kernel threads
	std::vector<std::string> argv;
	bool kernel_thread = false; // kthreadd and its children
	bool transient = false;     // the collector and its children: gone once the guest is READY
	// /proc/<pid>/ns/*: namespace name ("pid", "mnt", "net", "uts", "ipc", "user", "cgroup", ...) ->
	// inode number; empty when the process had exited before the collector read them.
	std::map<std::string, uint32_t> ns;
	uint32_t ns_pid = 0; // NSpid's last value: the pid inside its own pid namespace
	std::string cgroup;  // /proc/<pid>/cgroup's "0::<path>"
};

struct GtThread {
	uint32_t pid = 0;
	uint32_t tid = 0;
	char state = '?';
	std::string comm;
};

// One /proc/<pid>/maps line.
struct GtMapping {
	uint64_t start = 0;
	uint64_t end = 0; // exclusive
	bool read = false;
	bool write = false;
	bool exec = false;
	bool shared = false;
	uint64_t offset = 0;
	uint64_t inode = 0;
	std::string path; // file path, "[heap]", "[stack]", "[vdso]", "[vvar]", or empty
	bool file_backed() const { return inode != 0; }
	bool operator==(const GtMapping &) const = default;
};

struct GtSocket {
	int protocol = 0; // IPPROTO_TCP or IPPROTO_UDP
	int family = 0;   // AF_INET or AF_INET6
	std::string local_addr;
	uint16_t local_port = 0;
	std::string remote_addr;
	uint16_t remote_port = 0;
	int state = 0; // TCP state number as the kernel keeps it (10 = LISTEN, 1 = ESTABLISHED, 7 = CLOSE)
	uint64_t inode = 0;
	std::vector<uint32_t> owners; // pids with a descriptor for it (transient processes left out)
	uint32_t net_ns = 0;          // the network namespace whose table listed it
};

struct GtModule {
	std::string name;
	uint64_t size = 0;
	uint64_t address = 0;
};

struct GtRange {
	uint64_t start = 0;
	uint64_t end = 0; // exclusive
};

// What a test program (tests/guest/programs/apsh_target.c) wrote to its info file.
struct GtTarget {
	std::string info_name; // e.g. "apsh_target.info"
	uint32_t pid = 0;
	std::string comm;
	uint64_t heap_marker = 0;
	GtRange rwx;
	std::optional<GtRange> file_map;
	uint64_t file_map_offset = 0;
	std::string file_map_path;
	std::vector<std::pair<uint32_t, std::string>> threads; // tid, name
	std::multimap<std::string, std::string> fields;        // every key=value line as written
};

class GroundTruth {
public:
	// Throws std::runtime_error naming the line when the text is malformed or incomplete.
	static GroundTruth parse(std::string_view text, const std::string &origin = "ground truth");
	static GroundTruth load(const std::string &path);

	std::string kernel_release;
	std::string cmdline;
	uint32_t collector_pid = 0;
	std::vector<GtProcess> processes; // sorted by pid
	std::vector<GtThread> threads;    // sorted by pid, then tid
	std::map<uint32_t, std::vector<GtMapping>> maps;
	std::map<uint32_t, std::vector<std::pair<std::string, std::string>>> environ;
	std::map<uint32_t, std::vector<std::pair<int, std::string>>> fds; // fd, link text
	std::vector<GtSocket> sockets;
	std::vector<GtModule> modules;
	std::vector<GtRange> system_ram;
	std::optional<GtRange> kernel_code;
	std::map<std::string, uint64_t> symbols; // anchor kallsyms (real, slid addresses)
	std::vector<GtTarget> targets;
	// softdpu-apsh-config --live run in the guest (initramfs built with --apsh-config): the text
	// files it wrote by name, its output, and the size and SHA-256 (hex) of the BTF it wrote.
	std::map<std::string, std::string> apsh_config_files;
	std::string apsh_config_log;
	std::optional<std::pair<uint64_t, std::string>> apsh_config_btf;

	const GtProcess *process(uint32_t pid) const;
	// Processes that exist once the guest is READY (the collector and its children left out).
	std::vector<const GtProcess *> stable_processes() const;
	std::vector<GtThread> threads_of(uint32_t pid) const;
	const GtTarget *target(std::string_view comm) const;
	std::optional<uint64_t> symbol(const std::string &name) const;
};

// "127.0.0.1", "::1": how the tests expect App Shield to print addresses.
std::string format_ipv4(const uint8_t bytes[4]);
std::string format_ipv6(const uint8_t bytes[16]);

} // namespace softdpu::guest
