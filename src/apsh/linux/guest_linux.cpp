#include "apsh/linux/guest_linux.hpp"

#include "common/bytes.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace softdpu::apsh::os {

namespace {

constexpr uint64_t pf_kthread = 0x00200000; // task_struct.flags: a kernel thread

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

using common::hex;

} // namespace

Status GuestLinux::create(std::unique_ptr<source::PhysicalMemory> memory, std::unique_ptr<kernel::KernelImage> image,
			  const Limits &limits, std::unique_ptr<GuestLinux> &out)
{
	std::unique_ptr<GuestLinux> system(new GuestLinux());
	std::string missing;
	if (!KernelLayout::resolve(image->btf, system->layout_, missing))
		return error(DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks " + missing);
	system->socket_file_ops_ = image->symbol("socket_file_ops");
	system->special_mapping_vmops_ = image->symbol("special_mapping_vmops");
	system->memory_ = std::move(memory);
	system->image_ = std::move(image);
	system->limits_ = limits;
	// Check the anchor: init_task must be readable and be pid 0.
	auto init = system->image_->symbol("init_task");
	auto pid = system->read_field(*init, system->layout_.task_pid);
	// Reads that failed because the file shrank are that error, not a wrong kernel or a cut image.
	if (Status failure = system->memory_->failure(); !failure.ok())
		return failure;
	if (!pid || *pid != 0)
		return error(DOCA_ERROR_INVALID_VALUE,
			     "init_task at " + hex(*init) +
				 " does not read as the idle task (wrong kernel page table or symbols)");
	// The kernel knows where its RAM ends (max_pfn): a source that stops before that was cut short,
	// and walks would later break on the missing pages with less helpful errors.
	if (auto max_pfn_va = system->image_->symbol("max_pfn")) {
		auto max_pfn = system->kernel().read_value<uint64_t>(*max_pfn_va);
		if (Status failure = system->memory_->failure(); !failure.ok())
			return failure;
		uint64_t source_end = 0;
		for (const RamRange &range : system->memory_->ranges())
			source_end = std::max(source_end, range.gpa_end);
		if (!max_pfn) // the kernel's own data is missing from the source
			return error(DOCA_ERROR_INVALID_VALUE,
				     "image is truncated: kernel data at " + hex(*max_pfn_va) +
					 " is not in the source, which ends at " + hex(source_end));
		if (*max_pfn < (uint64_t{1} << 40) && *max_pfn * 4096 > source_end)
			return error(DOCA_ERROR_INVALID_VALUE, "image is truncated: the kernel has RAM up to " +
								   hex(*max_pfn * 4096) + ", the source ends at " +
								   hex(source_end));
	}
	out = std::move(system);
	return Status::success();
}

std::string GuestLinux::describe() const
{
	std::string text = image_->release.empty() ? "Linux (release unknown)" : image_->release;
	text += ", " + std::to_string(image_->levels) + "-level paging, KASLR +" + hex(image_->virtual_slide);
	text += ", kpgd " + hex(image_->kpgd) + ", " + std::to_string(image_->symbols.size()) + " symbols, " +
		std::to_string(image_->btf.type_count()) + " BTF types, " + memory_->kind_name() + " source, via " +
		image_->method;
	return text;
}

bool GuestLinux::valid_kernel_pointer(uint64_t pointer) const
{
	// Kernel half of the canonical space (both depths), and at least 8-byte aligned.
	return pointer >= 0xff00000000000000ull && (pointer & 7) == 0 && kernel().translate(pointer).has_value();
}

std::optional<uint64_t> GuestLinux::read_field(uint64_t base, const Field &field) const
{
	if (!field.present || field.size == 0)
		return std::nullopt;
	uint64_t value = 0;
	size_t bytes = std::min<size_t>(field.size, 8);
	if (!kernel().read_exact(base + field.offset, {reinterpret_cast<uint8_t *>(&value), bytes}))
		return std::nullopt;
	return value;
}

std::optional<uint64_t> GuestLinux::read_pointer(uint64_t base, const Field &field) const
{
	auto value = read_field(base, field);
	if (!value || !valid_kernel_pointer(*value))
		return std::nullopt;
	return value;
}

std::optional<uint64_t> GuestLinux::read_text_pointer(uint64_t base, const Field &field) const
{
	auto value = read_field(base, field);
	if (!value || *value < 0xff00000000000000ull || !kernel().translate(*value))
		return std::nullopt;
	return value;
}

std::string GuestLinux::read_string(uint64_t va, size_t max_bytes) const
{
	std::string text;
	char chunk[256];
	while (text.size() < max_bytes) {
		size_t want = std::min(sizeof(chunk), max_bytes - text.size());
		// Never cross into the next page in one read: it may be unmapped while this one is not.
		want = std::min<size_t>(want, 4096 - ((va + text.size()) & 4095));
		size_t got = kernel().read(va + text.size(), {reinterpret_cast<uint8_t *>(chunk), want});
		size_t length = strnlen(chunk, got);
		text.append(chunk, length);
		if (length < want || got < want)
			break;
	}
	return text;
}

std::string GuestLinux::read_char_array(uint64_t base, const Field &field) const
{
	if (!field)
		return {};
	return read_string(base + field.offset, field.size);
}

bool GuestLinux::read_process(uint64_t task, Process &out, SharedObjects &shared) const
{
	const KernelLayout &l = layout_;
	auto pid = read_field(task, l.task_pid);
	auto tgid = read_field(task, l.task_tgid);
	if (!pid || !tgid)
		return false;
	out = {};
	out.task = task;
	out.pid = static_cast<uint32_t>(*tgid);
	out.comm = read_char_array(task, l.task_comm);
	out.state = read_field(task, l.task_state).value_or(0);
	out.cpu_time_ns = read_field(task, l.task_utime).value_or(0) + read_field(task, l.task_stime).value_or(0);
	out.start_time_ns = read_field(task, l.task_start_time).value_or(0);
	if (auto parent = read_pointer(task, l.task_real_parent))
		out.ppid = static_cast<uint32_t>(read_field(*parent, l.task_tgid).value_or(0));
	if (auto cred = read_pointer(task, l.task_real_cred)) {
		out.uid = static_cast<uint32_t>(read_field(*cred, l.cred_uid).value_or(0));
		out.gid = static_cast<uint32_t>(read_field(*cred, l.cred_gid).value_or(0));
	}
	auto flags = read_field(task, l.task_flags).value_or(0);
	out.is_kernel_thread = (flags & pf_kthread) || read_field(task, l.task_mm).value_or(0) == 0;
	read_task_identity(task, out, shared);
	return true;
}

Status GuestLinux::walk_processes(std::vector<Process> &out)
{
	out.clear();
	flush_kernel();
	const uint64_t init = *image_->symbol("init_task");
	const uint64_t link = layout_.task_tasks.offset;
	std::unordered_set<uint64_t> seen{init};
	SharedObjects shared;
	uint64_t task = init;
	for (;;) {
		auto next = read_field(task, layout_.task_tasks);
		if (!next || !valid_kernel_pointer(*next))
			return error(DOCA_ERROR_BAD_STATE, "task list is torn after task " + hex(task) + " (" +
							       std::to_string(out.size()) + " processes read)");
		uint64_t candidate = *next - link;
		if (candidate == init)
			return Status::success();
		if (!seen.insert(candidate).second)
			return error(DOCA_ERROR_BAD_STATE, "task list loops back to " + hex(candidate) + " after " +
							       std::to_string(out.size()) + " processes");
		if (out.size() >= limits_.processes)
			return Status::success(); // the configured maximum: a truncated list, by request
		Process process;
		if (!read_process(candidate, process, shared))
			return error(DOCA_ERROR_BAD_STATE,
				     "task " + hex(candidate) + " in the task list is unreadable");
		out.push_back(std::move(process));
		task = candidate;
	}
}

template <typename Walk> Status GuestLinux::query(Walk &&walk)
{
	std::lock_guard lock(mutex_);
	flush_kernel();
	memory_->clear_failure();
	memory_->begin_query();
	Status status = walk();
	memory_->end_query();
	scan_burst_cached_ = false;
	// A read that failed because the file shrank (or an I/O error) reads as absent memory; what
	// went wrong then is that, not what the walk made of the missing bytes ("list is torn").
	if (Status failure = memory_->failure(); !failure.ok())
		return failure;
	return status;
}

Status GuestLinux::processes(std::vector<Process> &out)
{
	return query([&] { return walk_processes(out); });
}

Status GuestLinux::threads(const Process &process, std::vector<Thread> &out)
{
	return query([&] { return walk_threads(process, out); });
}

Status GuestLinux::modules(std::vector<Module> &out)
{
	return query([&] { return walk_modules(out); });
}

Status GuestLinux::connections(std::vector<Connection> &out)
{
	return query([&] { return walk_connections(out); });
}

Status GuestLinux::memory_areas(const Process &process, std::vector<MemoryArea> &out)
{
	return query([&] { return walk_memory_areas(process, out); });
}

Status GuestLinux::libraries(const Process &process, std::vector<Library> &out)
{
	return query([&] { return walk_libraries(process, out); });
}

Status GuestLinux::envars(const Process &process, std::vector<EnvVar> &out)
{
	return query([&] { return walk_envars(process, out); });
}

Status GuestLinux::parameters(const Process &process, ProcessParameters &out)
{
	return query([&] { return walk_parameters(process, out); });
}

Status GuestLinux::injections(const Process &process, std::vector<Injection> &out)
{
	return query([&] { return walk_injections(process, out); });
}

Status GuestLinux::containers(std::vector<Container> &out)
{
	return query([&] { return walk_containers(out); });
}

void GuestLinux::begin_batch()
{
	std::lock_guard lock(mutex_);
	kernel().flush();
	memory_->hold_cache(true);
	batch_paths_.clear();
	batch_ = true;
}

void GuestLinux::end_batch()
{
	std::lock_guard lock(mutex_);
	memory_->hold_cache(false);
	batch_paths_.clear();
	batch_ = false;
	scan_burst_cached_ = false;
}

Status GuestLinux::source_failure() const
{
	return memory_->failure();
}

Status GuestLinux::walk_threads(const Process &process, std::vector<Thread> &out)
{
	out.clear();
	flush_kernel();
	const KernelLayout &l = layout_;
	if (!l.task_signal || !l.signal_thread_head || !l.task_thread_node)
		return error(DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks signal_struct.thread_head");
	auto tgid = read_field(process.task, l.task_tgid);
	if (!valid_kernel_pointer(process.task) || !tgid || *tgid != process.pid)
		return error(DOCA_ERROR_NOT_FOUND, "process " + std::to_string(process.pid) + " is gone");
	auto signal = read_pointer(process.task, l.task_signal);
	if (!signal)
		return error(DOCA_ERROR_BAD_STATE, "process " + std::to_string(process.pid) + " has no signal_struct");
	const uint64_t head = *signal + l.signal_thread_head.offset;
	std::unordered_set<uint64_t> seen;
	uint64_t node = head;
	for (;;) {
		auto next = kernel().read_value<uint64_t>(node);
		if (!next || !valid_kernel_pointer(*next))
			return error(DOCA_ERROR_BAD_STATE,
				     "thread list of process " + std::to_string(process.pid) + " is torn");
		if (*next == head)
			return Status::success();
		if (!seen.insert(*next).second)
			return error(DOCA_ERROR_BAD_STATE,
				     "thread list of process " + std::to_string(process.pid) + " loops");
		if (out.size() >= limits_.threads)
			return Status::success();
		uint64_t task = *next - l.task_thread_node.offset;
		Thread thread;
		thread.task = task;
		thread.pid = static_cast<uint32_t>(read_field(task, l.task_tgid).value_or(0));
		thread.tid = static_cast<uint32_t>(read_field(task, l.task_pid).value_or(0));
		thread.state = read_field(task, l.task_state).value_or(0);
		thread.process_name = process.comm;
		thread.thread_name = read_char_array(task, l.task_comm);
		out.push_back(std::move(thread));
		node = *next;
	}
}

Status GuestLinux::walk_modules(std::vector<Module> &out)
{
	out.clear();
	flush_kernel();
	const KernelLayout &l = layout_;
	auto head = image_->symbol("modules");
	if (!head)
		return error(DOCA_ERROR_NOT_SUPPORTED, "no address for the kernel's module list (symbol `modules`)");
	const Field &base = l.module_core_base ? l.module_core_base : l.module_mem_base;
	const Field &size = l.module_core_size ? l.module_core_size : l.module_mem_size;
	if (!l.module_list || !l.module_name || !base || !size)
		return error(DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks module.core_layout and module.mem");
	std::unordered_set<uint64_t> seen;
	uint64_t node = *head;
	for (;;) {
		auto next = kernel().read_value<uint64_t>(node);
		if (!next || !valid_kernel_pointer(*next))
			return error(DOCA_ERROR_BAD_STATE,
				     "module list is torn after " + std::to_string(out.size()) + " modules");
		if (*next == *head)
			return Status::success();
		if (!seen.insert(*next).second)
			return error(DOCA_ERROR_BAD_STATE, "module list loops");
		if (out.size() >= limits_.modules)
			return Status::success();
		uint64_t module = *next - l.module_list.offset;
		Module entry;
		entry.name = read_char_array(module, l.module_name);
		entry.address = read_field(module, base).value_or(0);
		entry.size = read_field(module, size).value_or(0);
		out.push_back(std::move(entry));
		node = *next;
	}
}

} // namespace softdpu::apsh::os
