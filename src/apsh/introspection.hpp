// The contract between App Shield's DOCA API layer (src/apsh/api/) and the Linux guest reader
// (src/apsh/source/, paging/, kernel/, linux/). The reader turns a physical-memory source into
// snapshots of kernel objects; the API layer validates arguments, applies DOCA's limits and
// hands the snapshots out through doca_apsh_*_info_get. Nothing here knows about DOCA handles.
#pragma once

#include <doca_error.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh {

// An error with a reason a user can act on ("ram.img: not a memory image: no kernel found").
struct Status {
	doca_error_t code = DOCA_SUCCESS;
	std::string reason;
	bool ok() const { return code == DOCA_SUCCESS; }
	static Status success() { return {}; }
};

// One range of guest-physical RAM and where its bytes are in the source file.
struct RamRange {
	uint64_t gpa_start = 0;
	uint64_t gpa_end = 0; // exclusive
	uint64_t file_offset = 0;
};

enum class SourceKind {
	automatic,       // detect from the file's header: ELF core, LiME, otherwise raw
	qemu_shared_ram, // the memory-backend-file of a running QEMU guest
	raw,             // a flat image (offset = GPA within the ranges)
	elf_core,        // QEMU dump-guest-memory (ELF)
	lime,            // LiME
	// A running QEMU process, read through its own memory (process_vm_readv, /proc/PID/mem);
	// SourceSpec::path is the PID, the QEMU -name or the libvirt domain.
	qemu_pid,
	qemu_name,
	libvirt_domain,
};

struct SourceSpec {
	SourceKind kind = SourceKind::automatic;
	std::string path;             // the file; or the PID, -name or domain of the process kinds
	std::string qmp_socket;       // optional: ask QEMU for the RAM layout
	std::vector<RamRange> ranges; // empty: derive from the source (headers, QMP, file size)
};

// How errors name a source: the file's path, or "pid:1234", "qemu-name:vm1", "libvirt:web".
inline std::string source_label(const SourceSpec &spec)
{
	switch (spec.kind) {
	case SourceKind::qemu_pid:
		return "pid:" + spec.path;
	case SourceKind::qemu_name:
		return "qemu-name:" + spec.path;
	case SourceKind::libvirt_domain:
		return "libvirt:" + spec.path;
	default:
		return spec.path;
	}
}

// What a user may supply instead of letting the reader derive it from memory. Everything is
// optional: with nothing set, the reader finds VMCOREINFO, kallsyms and BTF in guest memory.
struct KernelHints {
	std::optional<uint64_t> kpgd;                      // physical address of the kernel's top page table
	std::unordered_map<std::string, uint64_t> symbols; // name -> address
	bool symbols_are_slid = true;                      // false: unslid (System.map) values, KASLR to be found
	std::vector<uint8_t> btf;                          // raw BTF blob (as /sys/kernel/btf/vmlinux)
};

// Upper bounds on every walk: a torn or hostile list ends the walk instead of hanging it.
struct Limits {
	uint32_t processes = 32768;
	uint32_t threads = 65536;
	uint32_t vads = 65536;
	uint32_t modules = 4096;
	uint32_t libs = 4096;
	uint32_t string_bytes = 4096;
};

// A task's namespaces: the inode numbers /proc/PID/ns/* link to ("net:[4026531840]"); 0 when
// the kernel has no such namespace or the task has none (an exiting task has no nsproxy).
struct Namespaces {
	uint32_t pid = 0; // the pid namespace the task itself is in (not pid_for_children)
	uint32_t mnt = 0;
	uint32_t net = 0;
	uint32_t uts = 0;
	uint32_t ipc = 0;
	uint32_t user = 0;
	uint32_t cgroup = 0;
	bool operator==(const Namespaces &) const = default;
};

struct Process {
	uint64_t task = 0; // guest virtual address of the task_struct (the reader's handle)
	uint32_t pid = 0;
	uint32_t ppid = 0;
	std::string comm;
	uint64_t cpu_time_ns = 0;   // utime + stime
	uint64_t start_time_ns = 0; // task_struct.start_time: CLOCK_MONOTONIC ns at fork; 0 when unknown
	uint32_t uid = 0;
	uint32_t gid = 0;
	uint64_t state = 0; // task_struct.__state
	bool is_kernel_thread = false;
	Namespaces ns;
	uint32_t ns_pid = 0;      // the pid as its own pid namespace sees it (NSpid's last value)
	std::string cgroup;       // cgroup v2 path from the root ("/system.slice/x.scope"; "/" at the root)
	std::string container_id; // the runtime's container ID when the cgroup path names one
	std::string runtime;      // "docker", "cri-o", "containerd", "podman", "lxc" or empty
};

// Processes that share a container identity (see LinuxSystem::containers).
struct Container {
	std::string id;      // the runtime's container ID, or "mnt:[N]", "pid:[N]", "net:[N]" without one
	std::string runtime; // as Process::runtime
	// The cgroup and namespaces of its first process in a pid namespace of its own, else of its
	// first process.
	std::string cgroup;
	Namespaces ns;
	std::vector<uint32_t> net_namespaces; // its processes' network namespaces other than the host's
	std::vector<Process> processes;
};

struct Thread {
	uint64_t task = 0;
	uint32_t pid = 0; // thread group id
	uint32_t tid = 0;
	uint64_t state = 0;
	std::string process_name;
	std::string thread_name;
};

struct Library {
	uint32_t pid = 0;
	std::string path;
	uint64_t load_address = 0;
};

// PROT_READ/PROT_WRITE/PROT_EXEC bits from vm_flags.
struct MemoryArea {
	uint32_t pid = 0;
	std::string process_name;
	uint64_t start = 0;
	uint64_t end = 0;    // exclusive
	uint64_t offset = 0; // file offset in bytes (0 for anonymous areas, as procfs prints)
	uint32_t protection = 0;
	std::string file_path; // "[heap]", "[stack]", "[vdso]", or empty for other anonymous areas
	bool file_backed = false;
};

struct Module {
	uint64_t address = 0;
	std::string name;
	uint64_t size = 0;
};

struct EnvVar {
	uint32_t pid = 0;
	std::string variable;
	std::string value;
};

struct ProcessParameters {
	uint32_t pid = 0;
	std::string cmd_line; // arguments joined by single spaces
	std::string image_path;
	uint64_t image_base = 0;
};

struct Connection {
	uint32_t pid = 0;
	std::string comm;
	int protocol = 0; // IPPROTO_TCP or IPPROTO_UDP
	int family = 0;   // AF_INET or AF_INET6
	std::string local_addr;
	std::string remote_addr;
	uint16_t local_port = 0;
	uint16_t remote_port = 0;
	int state = 0;       // TCP state (1 = ESTABLISHED, 10 = LISTEN); 7 (CLOSE) for unconnected UDP
	uint32_t net_ns = 0; // the socket's network namespace (sock_common.skc_net), 0 if unknown
};

struct Injection {
	uint32_t pid = 0;
	MemoryArea area; // the suspicious area
	uint64_t suspected_start = 0;
	uint64_t suspected_end = 0;
};

// malfind's rule, which LinuxSystem::injections applies to a process's areas: writable and
// executable, or executable with no file behind it that the kernel did not provide ([vdso]).
inline bool is_injection_area(const MemoryArea &area)
{
	const bool executable = (area.protection & 4) != 0; // PROT_EXEC
	const bool writable = (area.protection & 2) != 0;   // PROT_WRITE
	const bool kernel_provided = !area.file_backed && area.file_path.starts_with("[");
	return executable && (writable || (!area.file_backed && !kernel_provided));
}

// A guest whose kernel has been located. Queries read the source afresh each time (the guest
// keeps running), so two calls may differ; each result is consistent within itself as far as
// the walk could tell, and every walk is bounded by Limits.
class LinuxSystem {
public:
	virtual ~LinuxSystem() = default;

	static Status open(const SourceSpec &source, const KernelHints &hints, const Limits &limits,
			   std::unique_ptr<LinuxSystem> &out);

	virtual Status processes(std::vector<Process> &out) = 0;
	virtual Status threads(const Process &process, std::vector<Thread> &out) = 0;
	virtual Status libraries(const Process &process, std::vector<Library> &out) = 0;
	virtual Status memory_areas(const Process &process, std::vector<MemoryArea> &out) = 0;
	virtual Status modules(std::vector<Module> &out) = 0;
	virtual Status envars(const Process &process, std::vector<EnvVar> &out) = 0;
	virtual Status parameters(const Process &process, ProcessParameters &out) = 0;
	virtual Status connections(std::vector<Connection> &out) = 0;
	virtual Status injections(const Process &process, std::vector<Injection> &out) = 0;
	// Processes grouped by container: by the runtime's container ID where the cgroup path names
	// one, else by the first of the mount, pid and network namespaces that is not the host's
	// (init_task's). Host processes and kernel threads are in none. NOT_SUPPORTED when the kernel's BTF lacks the
	// namespace structures.
	virtual Status containers(std::vector<Container> &out) = 0;

	// Reads one page of a process's memory. Returns false when the page is not present.
	virtual bool read_user_page(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out) = 0;
	// read_user_page, also giving the page's guest-physical address (for callers that cache what
	// they compute from a page by its frame, such as attestation's page hashes); `physical` is
	// kNoPhysicalAddress when the reader cannot tell.
	static constexpr uint64_t kNoPhysicalAddress = ~uint64_t{0};
	virtual bool read_user_page_physical(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out,
					     uint64_t &physical)
	{
		physical = kNoPhysicalAddress;
		return read_user_page(process, page_va, out);
	}
	// The guest-physical address of each of physical.size() consecutive pages from the page-aligned
	// page_va, without reading them (for callers that read each frame once, such as the continuous
	// watch): kNoPhysicalAddress for a page that is not present. False when the reader cannot tell
	// (the default), and then `physical` is unspecified.
	virtual bool user_page_frames(const Process &process, uint64_t page_va, std::span<uint64_t> physical)
	{
		(void)process;
		(void)page_va;
		(void)physical;
		return false;
	}
	// Reads the guest-physical page `physical` (an address user_page_frames gave); false when it
	// cannot be read (and by default: readers that give no frames).
	virtual bool read_frame(uint64_t physical, std::span<uint8_t, 4096> out)
	{
		(void)physical;
		(void)out;
		return false;
	}
	// Between begin_batch() and end_batch(), queries share the small reads of guest memory they make
	// (a cache of recent pages) instead of each reading afresh: for a caller that makes many queries
	// as one look at the guest (the watch's poll). Bytes read are then at most as old as the batch.
	virtual void begin_batch() {}
	virtual void end_batch() {}
	// Reads many frames at once: page i of out (4,096 bytes each) from physical[i], ok[i] as
	// read_frame would return. The default reads them one by one; readers over a source that reads
	// many pieces per call (a QEMU process) batch them.
	virtual void read_frames(std::span<const uint64_t> physical, std::span<uint8_t> out, std::span<uint8_t> ok)
	{
		for (size_t i = 0; i < physical.size(); ++i)
			ok[i] = read_frame(physical[i], std::span<uint8_t, 4096>(out.data() + i * 4096, 4096)) ? 1 : 0;
	}
	// Reads user memory; stops at the first page that is not present, returns the bytes read.
	virtual size_t read_user(const Process &process, uint64_t va, std::span<uint8_t> out) = 0;
	// Whether the source could be read since the last query began: a memory image that shrank
	// (or failed to read) makes its reads come back as absent pages, which read_user and
	// read_user_page cannot tell apart; the queries above return this error themselves.
	virtual Status source_failure() const { return Status::success(); }

	// What the reader found, for diagnostics and the CLI ("6.1.0-56-amd64, 5-level, KASLR +0x3600000").
	virtual std::string describe() const = 0;
};

// Pausing a running QEMU guest over its QMP socket (source/qmp.cpp): "stop" when it runs
// (was_running tells whether it did), "cont" to resume it.
Status pause_qemu_guest(const std::string &qmp_socket, bool &was_running);
Status resume_qemu_guest(const std::string &qmp_socket);

} // namespace softdpu::apsh
