// The Linux walkers behind LinuxSystem: tasks, threads, memory areas (maple tree or vm_next
// list), libraries, environment, command lines, modules, sockets and injection candidates, all
// read through the kernel's page tables with offsets from BTF. Every walk validates pointers and
// is bounded by Limits; a torn or cyclic list ends the walk with an error naming the spot.
// Queries are serialised by a mutex (the translation cache is shared).
#pragma once

#include "apsh/introspection.hpp"
#include "apsh/kernel/kernel_image.hpp"
#include "apsh/linux/layout.hpp"
#include "apsh/source/physical_memory.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace softdpu::apsh::os {

class GuestLinux final : public LinuxSystem {
public:
	static Status create(std::unique_ptr<source::PhysicalMemory> memory, std::unique_ptr<kernel::KernelImage> image,
			     const Limits &limits, std::unique_ptr<GuestLinux> &out);

	Status processes(std::vector<Process> &out) override;
	Status threads(const Process &process, std::vector<Thread> &out) override;
	Status libraries(const Process &process, std::vector<Library> &out) override;
	Status memory_areas(const Process &process, std::vector<MemoryArea> &out) override;
	Status modules(std::vector<Module> &out) override;
	Status envars(const Process &process, std::vector<EnvVar> &out) override;
	Status parameters(const Process &process, ProcessParameters &out) override;
	Status connections(std::vector<Connection> &out) override;
	Status injections(const Process &process, std::vector<Injection> &out) override;
	Status containers(std::vector<Container> &out) override;
	bool read_user_page(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out) override;
	bool user_page_frames(const Process &process, uint64_t page_va, std::span<uint64_t> physical) override;
	bool read_frame(uint64_t physical, std::span<uint8_t, 4096> out) override;
	void read_frames(std::span<const uint64_t> physical, std::span<uint8_t> out, std::span<uint8_t> ok) override;
	void begin_batch() override;
	void end_batch() override;
	bool read_user_page_physical(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out,
				     uint64_t &physical) override;
	size_t read_user(const Process &process, uint64_t va, std::span<uint8_t> out) override;
	Status source_failure() const override;
	std::string describe() const override;

	const kernel::KernelImage &image() const { return *image_; }
	const KernelLayout &layout() const { return layout_; }

private:
	GuestLinux() = default;

	// Kernel reads.
	const paging::AddressSpace &kernel() const { return *image_->kernel_space; }
	// The kernel's translations are forgotten at each query's start, and within a batch
	// (begin_batch) at its start only.
	void flush_kernel() const
	{
		if (!batch_)
			kernel().flush();
	}
	bool valid_kernel_pointer(uint64_t pointer) const;
	std::optional<uint64_t> read_field(uint64_t base, const Field &field) const;
	std::optional<uint64_t> read_pointer(uint64_t base, const Field &field) const;
	// A pointer to characters: any alignment.
	std::optional<uint64_t> read_text_pointer(uint64_t base, const Field &field) const;
	std::string read_string(uint64_t va, size_t max_bytes) const;
	std::string read_char_array(uint64_t base, const Field &field) const;

	// Runs a walk as one query: holds mutex_, starts with a fresh translation cache, and returns
	// the source's read failure (the file shrank) if one happened during the walk.
	template <typename Walk> Status query(Walk &&walk);
	// The queries' walks (callers hold mutex_).
	Status walk_threads(const Process &process, std::vector<Thread> &out);
	Status walk_libraries(const Process &process, std::vector<Library> &out);
	Status walk_memory_areas(const Process &process, std::vector<MemoryArea> &out);
	Status walk_modules(std::vector<Module> &out);
	Status walk_envars(const Process &process, std::vector<EnvVar> &out);
	Status walk_parameters(const Process &process, ProcessParameters &out);
	Status walk_connections(std::vector<Connection> &out);
	Status walk_injections(const Process &process, std::vector<Injection> &out);

	// What one walk over many tasks has read already: namespaces and cgroups are shared by most
	// tasks, so each is read once per walk.
	struct SharedObjects {
		std::unordered_map<uint64_t, uint32_t> inum;       // namespace address -> ns.inum
		std::unordered_map<uint64_t, Namespaces> nsproxy;  // nsproxy address -> its namespaces
		std::unordered_map<uint64_t, std::string> cgroups; // css_set address -> cgroup path
	};

	// Shared walks (callers hold mutex_).
	Status walk_processes(std::vector<Process> &out);
	bool read_process(uint64_t task, Process &out, SharedObjects &shared) const;
	// Namespaces, pid in its namespace, cgroup and container of a task (fields the BTF lacks stay empty).
	void read_task_identity(uint64_t task, Process &out, SharedObjects &shared) const;
	uint32_t namespace_inum(uint64_t ns, const Field &inum, SharedObjects &shared) const;
	std::string cgroup_path(uint64_t css_set) const;
	// The fields containers() needs that the BTF lacks ("" when none).
	std::string missing_namespace_fields() const;
	Status walk_containers(std::vector<Container> &out);
	Status task_mm(const Process &process, uint64_t &mm) const;
	Status walk_areas(const Process &process, uint64_t mm, std::vector<MemoryArea> &out);
	// The process's mm (out) and its memory areas.
	Status areas_of(const Process &process, uint64_t &mm, std::vector<MemoryArea> &out);
	Status collect_vmas(uint64_t mm, std::vector<uint64_t> &vmas) const;
	Status walk_maple_node(uint64_t encoded, uint64_t min, uint64_t max, int depth, std::vector<uint64_t> &vmas,
			       size_t &nodes) const;
	std::string file_path(uint64_t file) const;
	std::string dentry_path(std::optional<uint64_t> dentry, std::optional<uint64_t> vfsmount) const;
	std::unique_ptr<paging::AddressSpace> user_space(uint64_t mm) const;
	const paging::AddressSpace *scan_space(uint64_t mm);
	Status read_user_strings(const Process &process, const Field &start_field, const Field &end_field,
				 std::vector<std::string> &out);
	std::string special_mapping_name(uint64_t vma) const;

	std::unique_ptr<source::PhysicalMemory> memory_;
	std::unique_ptr<kernel::KernelImage> image_;
	KernelLayout layout_;
	Limits limits_;
	std::optional<uint64_t> socket_file_ops_, special_mapping_vmops_;
	std::mutex mutex_;

	// read_user/read_user_page come in bursts (a YARA scan or an attestation makes one call per run
	// of pages, thousands for a process): they share one address space, and its translation cache,
	// while the calls follow each other closely and the process keeps the same page table.
	std::unique_ptr<paging::AddressSpace> scan_space_;
	uint64_t scan_space_mm_ = 0;
	std::chrono::steady_clock::time_point scan_space_last_use_;
	bool batch_ = false; // between begin_batch and end_batch
	// The batch's paths by (dentry, vfsmount) (file_path).
	mutable std::map<std::pair<uint64_t, uint64_t>, std::string> batch_paths_;
	bool scan_burst_cached_ = false; // the source's page cache is on for the current burst
};

} // namespace softdpu::apsh::os
