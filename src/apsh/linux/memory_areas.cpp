// Per-process memory: VMAs (maple tree or vm_next list), file paths, libraries, environment,
// command line, injection candidates and user-memory reads through the process's page tables.
#include "apsh/linux/guest_linux.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sys/mman.h>
#include <unordered_set>

static_assert(PROT_WRITE == 2 && PROT_EXEC == 4); // is_injection_area's bits

namespace softdpu::apsh::os {

namespace {

constexpr uint64_t vm_read = 0x1, vm_write = 0x2, vm_exec = 0x4;
constexpr size_t max_path_components = 256;
constexpr int max_maple_depth = 32;
constexpr size_t max_user_strings_bytes = 1u << 20;
constexpr uint64_t page_mask = 4095;

// Maple tree encoding (lib/maple_tree.c): a node pointer is 256-byte aligned with its type in
// bits 3..6; the root pointer is tagged as a node with (p & 3) == 2.
enum MapleType { maple_dense = 0, maple_leaf_64 = 1, maple_range_64 = 2, maple_arange_64 = 3 };

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

std::string pid_text(const Process &process)
{
	return "process " + std::to_string(process.pid);
}

} // namespace

Status GuestLinux::task_mm(const Process &process, uint64_t &mm) const
{
	auto tgid = read_field(process.task, layout_.task_tgid);
	if (!valid_kernel_pointer(process.task) || !tgid || *tgid != process.pid)
		return error(DOCA_ERROR_NOT_FOUND, pid_text(process) + " is gone");
	auto value = read_field(process.task, layout_.task_mm);
	if (!value)
		return error(DOCA_ERROR_BAD_STATE, pid_text(process) + ": task_struct is unreadable");
	if (*value != 0 && !valid_kernel_pointer(*value))
		return error(DOCA_ERROR_BAD_STATE, pid_text(process) + ": garbage mm pointer");
	mm = *value;
	return Status::success();
}

std::unique_ptr<paging::AddressSpace> GuestLinux::user_space(uint64_t mm) const
{
	// mm->pgd is a direct-map address (randomised base), so translate it through kpgd.
	auto pgd = read_pointer(mm, layout_.mm_pgd);
	if (!pgd)
		return nullptr;
	auto pa = kernel().translate(*pgd);
	if (!pa)
		return nullptr;
	return std::make_unique<paging::AddressSpace>(*memory_, *pa, image_->levels);
}

Status GuestLinux::walk_maple_node(uint64_t encoded, uint64_t min, uint64_t max, int depth, std::vector<uint64_t> &vmas,
				   size_t &nodes) const
{
	const KernelLayout &l = layout_;
	if (depth > max_maple_depth)
		return error(DOCA_ERROR_BAD_STATE, "maple tree is deeper than any real one");
	if (++nodes > size_t{limits_.vads} + 1024)
		return error(DOCA_ERROR_BAD_STATE, "maple tree has more nodes than the area limit allows");
	uint64_t node = encoded & ~uint64_t{0xff};
	int type = static_cast<int>((encoded >> 3) & 0xf);
	if (!valid_kernel_pointer(node))
		return error(DOCA_ERROR_BAD_STATE, "maple tree node pointer is garbage");
	bool leaf = type == maple_leaf_64;
	const Field *pivot_field, *slot_field;
	uint32_t pivots, slots;
	if (type == maple_leaf_64 || type == maple_range_64) {
		pivot_field = &l.range64_pivot, slot_field = &l.range64_slot;
		pivots = l.range64_pivots, slots = l.range64_slots;
	} else if (type == maple_arange_64) {
		pivot_field = &l.arange64_pivot, slot_field = &l.arange64_slot;
		pivots = l.arange64_pivots, slots = l.arange64_slots;
	} else {
		return error(DOCA_ERROR_BAD_STATE, "maple tree node of unexpected type " + std::to_string(type));
	}
	if (slots == 0 || slots > 64 || pivots >= slots)
		return error(DOCA_ERROR_NOT_SUPPORTED, "maple node layout in BTF is not understood");
	uint64_t pivot_values[64], slot_values[64];
	if (!kernel().read_exact(node + pivot_field->offset,
				 {reinterpret_cast<uint8_t *>(pivot_values), size_t{pivots} * 8}) ||
	    !kernel().read_exact(node + slot_field->offset,
				 {reinterpret_cast<uint8_t *>(slot_values), size_t{slots} * 8}))
		return error(DOCA_ERROR_BAD_STATE, "maple tree node is unreadable");
	uint64_t low = min;
	for (uint32_t i = 0; i < slots; i++) {
		bool last = i >= pivots;
		uint64_t high = last ? max : pivot_values[i];
		if (!last && high == 0 && i > 0)
			break; // unused pivots are zero: the node's data ended
		if (high < low || high > max)
			break; // stale or torn: stop at the first pivot out of order
		uint64_t slot = slot_values[i];
		if (slot) {
			if (leaf) {
				vmas.push_back(slot);
				if (vmas.size() > limits_.vads)
					return Status::success();
			} else {
				Status status = walk_maple_node(slot, low, high, depth + 1, vmas, nodes);
				if (!status.ok())
					return status;
			}
		}
		if (high >= max)
			break;
		low = high + 1;
	}
	return Status::success();
}

Status GuestLinux::collect_vmas(uint64_t mm, std::vector<uint64_t> &vmas) const
{
	const KernelLayout &l = layout_;
	vmas.clear();
	if (l.maple_tree()) {
		auto root = read_field(mm, l.mm_maple_root);
		if (!root)
			return error(DOCA_ERROR_BAD_STATE, "mm_struct is unreadable");
		if (*root == 0)
			return Status::success();
		if ((*root & 3) != 2 || *root <= 4096) { // a single entry stored in the root
			vmas.push_back(*root);
			return Status::success();
		}
		size_t nodes = 0;
		return walk_maple_node(*root, 0, ~uint64_t{0}, 0, vmas, nodes);
	}
	if (!l.mm_mmap || !l.vma_next)
		return error(DOCA_ERROR_NOT_SUPPORTED,
			     "the kernel's BTF has neither mm_struct.mm_mt nor mm_struct.mmap");
	std::unordered_set<uint64_t> seen;
	auto vma = read_field(mm, l.mm_mmap);
	while (vma && *vma) {
		if (!valid_kernel_pointer(*vma))
			return error(DOCA_ERROR_BAD_STATE, "VMA list holds a garbage pointer");
		if (!seen.insert(*vma).second)
			return error(DOCA_ERROR_BAD_STATE, "VMA list loops");
		if (vmas.size() >= limits_.vads)
			break;
		vmas.push_back(*vma);
		vma = read_field(*vma, l.vma_next);
	}
	return Status::success();
}

std::string GuestLinux::file_path(uint64_t file) const
{
	const KernelLayout &l = layout_;
	auto dentry = read_pointer(file, l.file_dentry);
	auto vfsmount = read_pointer(file, l.file_mnt);
	if (!dentry)
		return {};
	// Within a batch, each (dentry, mount) is resolved once: the files of a shared library in every
	// process have the same ones.
	const std::pair<uint64_t, uint64_t> key{*dentry, vfsmount.value_or(0)};
	if (batch_) {
		if (auto known = batch_paths_.find(key); known != batch_paths_.end())
			return known->second;
	}
	std::string path = dentry_path(*dentry, vfsmount);
	if (batch_)
		batch_paths_.emplace(key, path);
	return path;
}

std::string GuestLinux::dentry_path(std::optional<uint64_t> dentry, std::optional<uint64_t> vfsmount) const
{
	const KernelLayout &l = layout_;
	std::vector<std::string> parts;
	size_t total = 0;
	for (size_t step = 0; step < max_path_components; step++) {
		auto parent = read_pointer(*dentry, l.dentry_parent);
		if (!parent)
			break;
		std::optional<uint64_t> mount_root = vfsmount ? read_field(*vfsmount, l.vfsmount_root) : std::nullopt;
		if (*parent == *dentry || (mount_root && *mount_root == *dentry)) {
			// The root of this mount: continue at the mount point in the parent mount.
			if (!vfsmount || !l.mount_mnt || !l.mount_parent || !l.mount_mountpoint)
				break;
			uint64_t mount = *vfsmount - l.mount_mnt.offset;
			auto parent_mount = read_pointer(mount, l.mount_parent);
			auto mountpoint = read_pointer(mount, l.mount_mountpoint);
			if (!parent_mount || !mountpoint || *parent_mount == mount)
				break;
			dentry = mountpoint;
			vfsmount = *parent_mount + l.mount_mnt.offset;
			continue;
		}
		auto name_pointer = read_text_pointer(*dentry, l.dentry_name);
		if (!name_pointer)
			break;
		std::string name = read_string(*name_pointer, 256);
		total += name.size() + 1;
		if (total > limits_.string_bytes)
			break;
		parts.push_back(std::move(name));
		dentry = parent;
	}
	std::string path;
	for (auto it = parts.rbegin(); it != parts.rend(); ++it)
		path += "/" + *it;
	return path.empty() ? "/" : path;
}

std::string GuestLinux::special_mapping_name(uint64_t vma) const
{
	// [vdso] and [vvar] are "special mappings": vm_ops is special_mapping_vmops and
	// vm_private_data points at a vm_special_mapping that carries the name.
	if (!special_mapping_vmops_ || !layout_.special_mapping_name)
		return {};
	auto ops = read_field(vma, layout_.vma_ops);
	if (!ops || *ops != *special_mapping_vmops_)
		return {};
	auto mapping = read_pointer(vma, layout_.vma_private_data);
	if (!mapping)
		return {};
	auto name = read_text_pointer(*mapping, layout_.special_mapping_name);
	return name ? read_string(*name, 64) : std::string{};
}

Status GuestLinux::walk_areas(const Process &process, uint64_t mm, std::vector<MemoryArea> &out)
{
	const KernelLayout &l = layout_;
	out.clear();
	if (mm == 0)
		return Status::success(); // kernel threads have no user memory
	std::vector<uint64_t> vmas;
	Status status = collect_vmas(mm, vmas);
	uint64_t start_brk = read_field(mm, l.mm_start_brk).value_or(0);
	uint64_t brk = read_field(mm, l.mm_brk).value_or(0);
	uint64_t start_stack = read_field(mm, l.mm_start_stack).value_or(0);
	uint64_t vdso = read_field(mm, l.mm_vdso).value_or(0);
	std::unordered_set<uint64_t> seen;
	for (uint64_t vma : vmas) {
		if (out.size() >= limits_.vads)
			break;
		if (!valid_kernel_pointer(vma) || !seen.insert(vma).second)
			continue;
		auto owner = read_field(vma, l.vma_mm);
		auto start = read_field(vma, l.vma_start);
		auto end = read_field(vma, l.vma_end);
		if (!owner || *owner != mm || !start || !end || *start >= *end || (*start & page_mask) ||
		    (*end & page_mask))
			continue; // freed or foreign: a stale slot
		MemoryArea area;
		area.pid = process.pid;
		area.process_name = process.comm;
		area.start = *start;
		area.end = *end;
		uint64_t flags = read_field(vma, l.vma_flags).value_or(0);
		area.protection = ((flags & vm_read) ? PROT_READ : 0) | ((flags & vm_write) ? PROT_WRITE : 0) |
				  ((flags & vm_exec) ? PROT_EXEC : 0);
		auto file = read_field(vma, l.vma_file).value_or(0);
		if (file && valid_kernel_pointer(file)) {
			area.file_backed = true;
			area.file_path = file_path(file);
			area.offset = read_field(vma, l.vma_pgoff).value_or(0) << 12;
		} else {
			area.file_path = special_mapping_name(vma);
			if (area.file_path.empty()) {
				if (area.start <= brk && area.end >= start_brk && start_brk)
					area.file_path = "[heap]";
				else if (area.start <= start_stack && area.end >= start_stack)
					area.file_path = "[stack]";
				else if (vdso && area.start == vdso)
					area.file_path = "[vdso]";
			}
		}
		out.push_back(std::move(area));
	}
	std::sort(out.begin(), out.end(), [](const MemoryArea &a, const MemoryArea &b) { return a.start < b.start; });
	if (!status.ok())
		return Status{status.code, pid_text(process) + ": " + status.reason};
	return Status::success();
}

Status GuestLinux::walk_memory_areas(const Process &process, std::vector<MemoryArea> &out)
{
	flush_kernel();
	out.clear();
	uint64_t mm;
	return areas_of(process, mm, out);
}

Status GuestLinux::areas_of(const Process &process, uint64_t &mm, std::vector<MemoryArea> &out)
{
	Status status = task_mm(process, mm);
	if (!status.ok())
		return status;
	return walk_areas(process, mm, out);
}

Status GuestLinux::walk_libraries(const Process &process, std::vector<Library> &out)
{
	flush_kernel();
	out.clear();
	uint64_t mm;
	std::vector<MemoryArea> areas;
	Status status = areas_of(process, mm, areas);
	if (!status.ok())
		return status;
	std::string executable;
	if (auto exe = read_pointer(mm, layout_.mm_exe_file))
		executable = file_path(*exe);
	auto space = mm ? user_space(mm) : nullptr;
	// Each shared object once, at its lowest mapping (what the loader chose as its base).
	std::map<std::string, uint64_t> lowest;
	std::map<std::string, bool> elf_at_offset_zero;
	for (const MemoryArea &area : areas) {
		if (!area.file_backed || area.file_path == executable)
			continue;
		auto [it, inserted] = lowest.try_emplace(area.file_path, area.start);
		if (!inserted)
			it->second = std::min(it->second, area.start);
		if (area.offset == 0 && space) {
			uint8_t magic[4] = {};
			if (space->read_exact(area.start, magic) && magic[0] == 0x7f && magic[1] == 'E' &&
			    magic[2] == 'L' && magic[3] == 'F')
				elf_at_offset_zero[area.file_path] = true;
		}
	}
	for (const auto &[path, base] : lowest) {
		// ELF header in memory, or (when that page is not resident) a shared-object name.
		bool shared_object = elf_at_offset_zero.count(path) || path.find(".so") != std::string::npos;
		if (!shared_object)
			continue;
		if (out.size() >= limits_.libs)
			break;
		out.push_back({process.pid, path, base});
	}
	std::sort(out.begin(), out.end(),
		  [](const Library &a, const Library &b) { return a.load_address < b.load_address; });
	return Status::success();
}

Status GuestLinux::read_user_strings(const Process &process, const Field &start_field, const Field &end_field,
				     std::vector<std::string> &out)
{
	out.clear();
	uint64_t mm;
	Status status = task_mm(process, mm);
	if (!status.ok())
		return status;
	if (mm == 0)
		return Status::success();
	auto start = read_field(mm, start_field);
	auto end = read_field(mm, end_field);
	if (!start || !end || *end < *start)
		return error(DOCA_ERROR_BAD_STATE, pid_text(process) + ": bad argument/environment bounds");
	auto space = user_space(mm);
	if (!space)
		return error(DOCA_ERROR_BAD_STATE, pid_text(process) + ": page tables are unreadable");
	std::vector<uint8_t> bytes(std::min<uint64_t>(*end - *start, max_user_strings_bytes));
	bytes.resize(space->read(*start, bytes));
	size_t pos = 0;
	while (pos < bytes.size()) {
		auto nul = std::find(bytes.begin() + static_cast<ptrdiff_t>(pos), bytes.end(), uint8_t{0});
		size_t length = static_cast<size_t>(nul - bytes.begin()) - pos;
		out.emplace_back(reinterpret_cast<const char *>(bytes.data() + pos),
				 std::min<size_t>(length, limits_.string_bytes));
		pos += length + 1;
	}
	return Status::success();
}

Status GuestLinux::walk_envars(const Process &process, std::vector<EnvVar> &out)
{
	flush_kernel();
	out.clear();
	std::vector<std::string> strings;
	Status status = read_user_strings(process, layout_.mm_env_start, layout_.mm_env_end, strings);
	for (std::string &text : strings) {
		size_t equals = text.find('=');
		if (text.empty() || equals == 0 || equals == std::string::npos)
			continue;
		out.push_back({process.pid, text.substr(0, equals), text.substr(equals + 1)});
	}
	return status;
}

Status GuestLinux::walk_parameters(const Process &process, ProcessParameters &out)
{
	flush_kernel();
	out = {};
	out.pid = process.pid;
	std::vector<std::string> arguments;
	Status status = read_user_strings(process, layout_.mm_arg_start, layout_.mm_arg_end, arguments);
	if (!status.ok())
		return status;
	for (const std::string &argument : arguments)
		out.cmd_line += (out.cmd_line.empty() ? "" : " ") + argument;
	uint64_t mm;
	if (!task_mm(process, mm).ok() || mm == 0)
		return Status::success();
	if (auto exe = read_pointer(mm, layout_.mm_exe_file))
		out.image_path = file_path(*exe);
	std::vector<MemoryArea> areas;
	if (!out.image_path.empty() && walk_areas(process, mm, areas).ok())
		for (const MemoryArea &area : areas)
			if (area.file_backed && area.file_path == out.image_path) {
				out.image_base = area.start; // sorted: the lowest
				break;
			}
	return Status::success();
}

Status GuestLinux::walk_injections(const Process &process, std::vector<Injection> &out)
{
	flush_kernel();
	out.clear();
	uint64_t mm;
	std::vector<MemoryArea> areas;
	// A torn walk still yields the areas read before the break: check those, report the error.
	Status status = areas_of(process, mm, areas);
	for (const MemoryArea &area : areas)
		if (is_injection_area(area))
			out.push_back({process.pid, area, area.start, area.end});
	return status;
}

bool GuestLinux::read_user_page(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out)
{
	std::lock_guard lock(mutex_);
	uint64_t mm;
	if ((page_va & page_mask) || !task_mm(process, mm).ok() || mm == 0)
		return false;
	const paging::AddressSpace *space = scan_space(mm);
	return space && space->read_exact(page_va, out);
}

bool GuestLinux::read_user_page_physical(const Process &process, uint64_t page_va, std::span<uint8_t, 4096> out,
					 uint64_t &physical)
{
	std::lock_guard lock(mutex_);
	physical = kNoPhysicalAddress;
	uint64_t mm;
	if ((page_va & page_mask) || !task_mm(process, mm).ok() || mm == 0)
		return false;
	const paging::AddressSpace *space = scan_space(mm);
	const std::optional<uint64_t> pa = space ? space->translate(page_va) : std::nullopt;
	if (!pa || !memory_->read(*pa, out))
		return false;
	physical = *pa;
	return true;
}

bool GuestLinux::user_page_frames(const Process &process, uint64_t page_va, std::span<uint64_t> physical)
{
	std::lock_guard lock(mutex_);
	std::fill(physical.begin(), physical.end(), kNoPhysicalAddress);
	uint64_t mm;
	if ((page_va & page_mask) || !task_mm(process, mm).ok() || mm == 0)
		return true; // no user memory: nothing present
	const paging::AddressSpace *space = scan_space(mm);
	if (space)
		space->translate_pages(page_va, physical);
	static_assert(paging::AddressSpace::kNoPage == kNoPhysicalAddress);
	return true;
}

bool GuestLinux::read_frame(uint64_t physical, std::span<uint8_t, 4096> out)
{
	std::lock_guard lock(mutex_);
	return (physical & page_mask) == 0 && memory_->read(physical, out);
}

void GuestLinux::read_frames(std::span<const uint64_t> physical, std::span<uint8_t> out, std::span<uint8_t> ok)
{
	if (std::any_of(physical.begin(), physical.end(), [](uint64_t frame) { return (frame & page_mask) != 0; })) {
		LinuxSystem::read_frames(physical, out, ok); // one by one: read_frame refuses what is not a frame
		return;
	}
	std::lock_guard lock(mutex_);
	memory_->read_pages(physical, out, ok);
}

size_t GuestLinux::read_user(const Process &process, uint64_t va, std::span<uint8_t> out)
{
	std::lock_guard lock(mutex_);
	uint64_t mm;
	if (!task_mm(process, mm).ok() || mm == 0)
		return 0;
	const paging::AddressSpace *space = scan_space(mm);
	return space ? space->read(va, out) : 0;
}

const paging::AddressSpace *GuestLinux::scan_space(uint64_t mm)
{
	// A burst is calls less than this apart; after a pause the tables are read afresh, as a query would.
	constexpr auto burst_gap = std::chrono::milliseconds(20);
	const auto now = std::chrono::steady_clock::now();
	auto pgd = read_pointer(mm, layout_.mm_pgd);
	std::optional<uint64_t> top = pgd ? kernel().translate(*pgd) : std::nullopt;
	if (!top) {
		scan_space_.reset();
		return nullptr;
	}
	if (!scan_space_ || scan_space_mm_ != mm || scan_space_->top_table() != *top ||
	    now - scan_space_last_use_ > burst_gap) {
		scan_space_ = std::make_unique<paging::AddressSpace>(*memory_, *top, image_->levels);
		scan_space_mm_ = mm;
		scan_burst_cached_ = false;
	}
	// The burst's small reads (page-table entries) share the source's page cache, as a query's do;
	// a query in between ended it, and a new burst starts it afresh.
	if (!scan_burst_cached_) {
		memory_->begin_query();
		scan_space_->flush(); // the translations and page tables kept are those of this burst only
		scan_burst_cached_ = true;
	}
	scan_space_last_use_ = now;
	return scan_space_.get();
}

} // namespace softdpu::apsh::os
