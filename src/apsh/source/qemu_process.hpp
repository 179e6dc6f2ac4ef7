// Guest RAM of a running QEMU process, read from outside through the process's own memory: no
// change to the VM's command line, no restart, no agent. The RAM blocks' bytes are read at QEMU's
// host virtual addresses with process_vm_readv (cross-memory attach), or with pread on
// /proc/PID/mem where that is missing. The guest-physical layout (which GPA ranges are which
// offsets of which RAM block: pc.ram or the machine's backend, NUMA nodes' memdevs, pc-dimms)
// comes from QMP when a socket is given (`info mtree -f`, `query-memdev`, `info ramblock`), else
// from QEMU's command line (/proc/PID/cmdline: -m, -machine, the memory backend objects, -numa,
// -device pc-dimm) and the x86 PC rules QEMU itself applies (below_4g_mem_size of pc and q35,
// the device memory region). Each RAM block's host address is its mapping in /proc/PID/maps: the
// one mapping of the block's size; blocks of one size are told apart by content over QMP.
//
// The parsers (maps, command line, `info ramblock`) take untrusted text and are fuzzed
// (fuzz/apsh_qemu_process_fuzz.cpp; the QMP ones in fuzz/apsh_qmp_fuzz.cpp).
#pragma once

#include "apsh/introspection.hpp"
#include "apsh/source/physical_memory.hpp"
#include "apsh/source/qmp.hpp"
#include "common/unique_fd.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::source {

// One line of /proc/PID/maps.
struct ProcMapping {
	uint64_t start = 0;
	uint64_t end = 0;        // exclusive
	std::string permissions; // "rw-p"
	uint64_t offset = 0;
	uint64_t inode = 0;
	std::string path; // empty for anonymous memory; "[heap]", "/memfd:ram0 (deleted)", ...
};

// Parses /proc/PID/maps text. Fails on a malformed line (naming it).
Status parse_proc_maps(std::string_view text, std::vector<ProcMapping> &out);

// What QEMU's command line says about guest RAM.
struct QemuCommandLine {
	std::string program;                      // argv[0]
	std::string name;                         // -name NAME or -name guest=NAME,...
	uint64_t ram_bytes = 128ull << 20;        // -m (QEMU's x86 default: 128 MiB), or the backend's size
	bool ram_given = false;                   // -m or a memory-backend object named by -machine
	std::string machine;                      // -machine type as written ("pc", "q35", "pc-q35-7.2"); "" default
	std::optional<uint64_t> max_ram_below_4g; // -machine max-ram-below-4g=
	std::string memory_backend;               // -machine memory-backend=ID
	std::optional<uint64_t> max_ram;          // -m maxmem=: memory devices may be plugged above RAM
	// memory-backend-* objects (-object, also libvirt's JSON form): id and size, in order.
	std::vector<std::pair<std::string, uint64_t>> backends;
	std::vector<std::string> numa_memdevs; // -numa node,memdev=ID, in node order
	struct Dimm {
		std::string memdev;
		std::optional<uint64_t> address; // addr=; else QEMU places it
	};
	std::vector<Dimm> dimms; // -device pc-dimm, in order
};

// True for a QEMU system emulator's program name (qemu-system-*, qemu-kvm, kvm).
bool is_qemu_program(std::string_view program);
// Parses /proc/PID/cmdline (arguments separated by NULs). Fails on values QEMU would refuse
// (a size it cannot read), never on options it does not know.
Status parse_qemu_cmdline(std::string_view cmdline, QemuCommandLine &out);
// A QEMU size ("256", "256M", "1.5G", "4194304k"); default_unit is the multiplier of a bare
// number (MiB for -m, bytes for properties).
std::optional<uint64_t> parse_qemu_size(std::string_view text, uint64_t default_unit);

// The guest-physical layout of an x86 PC guest's RAM block, as QEMU 7.2's pc (i440fx) and q35
// machines lay it out: [0, below_4g) at block offset 0 and [4 GiB, 4 GiB + above_4g) after it.
// RamRange::file_offset is the offset in the RAM block. Fails for machines that are not pc/q35.
Status x86_pc_ram_layout(const QemuCommandLine &command_line, std::vector<RamRange> &out);

// The whole x86 PC guest RAM as pieces of QEMU RAM blocks: the main RAM (pc.ram, the backend
// -machine memory-backend= names, or the NUMA nodes' memdevs one after another in node order)
// split as x86_pc_ram_layout says, then each pc-dimm in the device memory region (from
// ROUND_UP(4 GiB + RAM above 4 GiB, 1 GiB), at its addr= or the first free 2 MiB-aligned place, as
// QEMU 7.2 plugs it). blocks: each RAM block's name and size.
Status x86_pc_ram_blocks(const QemuCommandLine &command_line, std::vector<RamBlockPiece> &pieces,
			 std::vector<std::pair<std::string, uint64_t>> &blocks);

// One row of HMP `info ramblock`.
struct RamBlockInfo {
	std::string name;
	uint64_t offset = 0;
	uint64_t used = 0;
	uint64_t total = 0;
};
Status parse_ramblock_table(std::string_view text, std::vector<RamBlockInfo> &out);

// The RAM block's mapping: the one readable and writable mapping of exactly `size` bytes that is
// anonymous or shared (memory-backend-ram, -file, -memfd). Fails when none or several qualify.
Status find_ram_mapping(const std::vector<ProcMapping> &maps, uint64_t size, uint64_t &host_address);

// Reads a QEMU process's memory at host virtual addresses.
class QemuProcessMemory : public ByteSource {
public:
	~QemuProcessMemory() override = default;
	bool read(uint64_t address, std::span<uint8_t> out, std::string &why) const override;
	// Up to 1,024 pieces per process_vm_readv (IOV_MAX); through /proc/PID/mem, one pread each.
	size_t read_pieces(std::span<const Piece> pieces, std::string &why) const override;
	uint64_t size() const override { return end_; }
	uint32_t pid() const { return pid_; }
	// "QEMU process 1234 (-name vm1)"
	std::string describe() const;
	// Whether reads go through process_vm_readv (false: /proc/PID/mem).
	bool cross_memory_attach() const { return !mem_fd_.valid(); }

private:
	friend Status open_qemu_process(const SourceSpec &, std::unique_ptr<QemuProcessMemory> &,
					std::vector<RamRange> &);
	bool exited() const;

	uint32_t pid_ = 0;
	std::string name_;
	uint64_t end_ = 0;
	softdpu::common::UniqueFd mem_fd_; // /proc/PID/mem, when process_vm_readv is not available
	softdpu::common::UniqueFd pid_fd_; // pidfd: tells exit (and a reused pid) apart
};

// Finds the process (spec.kind qemu_pid, qemu_name or libvirt_domain, spec.path the PID, -name or
// domain), checks that it is QEMU and that this process may read it, derives the layout
// (spec.qmp_socket, else the command line) and returns ranges whose file_offset is the host
// virtual address in QEMU. Errors name the cause and the fix (permissions: uid, ptrace_scope,
// CAP_SYS_PTRACE).
Status open_qemu_process(const SourceSpec &spec, std::unique_ptr<QemuProcessMemory> &out,
			 std::vector<RamRange> &ranges);

// Finds running QEMU processes by -name (libvirt's "guest=NAME" included); pids in order.
std::vector<uint32_t> find_qemu_by_name(const std::string &name);

} // namespace softdpu::apsh::source
