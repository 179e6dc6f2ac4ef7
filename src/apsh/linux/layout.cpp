#include "apsh/linux/layout.hpp"

namespace softdpu::apsh::os {

namespace {

Field field(const kernel::Btf &btf, std::string_view type, std::string_view path)
{
	Field result;
	auto member = btf.member(type, path);
	if (!member || member->bit_offset % 8 != 0)
		return result;
	auto size = btf.size_of(member->type);
	if (!size || *size > (1u << 20))
		return result;
	result.offset = member->offset();
	result.size = static_cast<uint32_t>(*size);
	result.present = true;
	return result;
}

// Element count of an array member ("pivot" of maple_range_64).
uint32_t array_length(const kernel::Btf &btf, std::string_view type, std::string_view path)
{
	auto member = btf.member(type, path);
	if (!member)
		return 0;
	auto info = btf.array_info(member->type);
	return info ? info->second : 0;
}

} // namespace

bool KernelLayout::resolve(const kernel::Btf &btf, KernelLayout &out, std::string &missing)
{
	out = {};
	auto &l = out;
	l.task_state = field(btf, "task_struct", "__state");
	if (!l.task_state)
		l.task_state = field(btf, "task_struct", "state"); // before 5.14
	l.task_flags = field(btf, "task_struct", "flags");
	l.task_tasks = field(btf, "task_struct", "tasks");
	l.task_mm = field(btf, "task_struct", "mm");
	l.task_pid = field(btf, "task_struct", "pid");
	l.task_tgid = field(btf, "task_struct", "tgid");
	l.task_real_parent = field(btf, "task_struct", "real_parent");
	l.task_comm = field(btf, "task_struct", "comm");
	l.task_utime = field(btf, "task_struct", "utime");
	l.task_stime = field(btf, "task_struct", "stime");
	l.task_start_time = field(btf, "task_struct", "start_time");
	l.task_real_cred = field(btf, "task_struct", "real_cred");
	l.task_files = field(btf, "task_struct", "files");
	l.task_signal = field(btf, "task_struct", "signal");
	l.task_thread_node = field(btf, "task_struct", "thread_node");
	l.task_group_leader = field(btf, "task_struct", "group_leader");
	l.signal_thread_head = field(btf, "signal_struct", "thread_head");
	l.cred_uid = field(btf, "cred", "uid");
	l.cred_gid = field(btf, "cred", "gid");

	l.mm_maple_root = field(btf, "mm_struct", "mm_mt.ma_root");
	l.mm_mmap = field(btf, "mm_struct", "mmap");
	l.mm_pgd = field(btf, "mm_struct", "pgd");
	l.mm_start_brk = field(btf, "mm_struct", "start_brk");
	l.mm_brk = field(btf, "mm_struct", "brk");
	l.mm_start_stack = field(btf, "mm_struct", "start_stack");
	l.mm_arg_start = field(btf, "mm_struct", "arg_start");
	l.mm_arg_end = field(btf, "mm_struct", "arg_end");
	l.mm_env_start = field(btf, "mm_struct", "env_start");
	l.mm_env_end = field(btf, "mm_struct", "env_end");
	l.mm_vdso = field(btf, "mm_struct", "context.vdso");
	l.mm_exe_file = field(btf, "mm_struct", "exe_file");
	l.vma_start = field(btf, "vm_area_struct", "vm_start");
	l.vma_end = field(btf, "vm_area_struct", "vm_end");
	l.vma_next = field(btf, "vm_area_struct", "vm_next");
	l.vma_mm = field(btf, "vm_area_struct", "vm_mm");
	l.vma_flags = field(btf, "vm_area_struct", "vm_flags");
	l.vma_pgoff = field(btf, "vm_area_struct", "vm_pgoff");
	l.vma_file = field(btf, "vm_area_struct", "vm_file");
	l.vma_ops = field(btf, "vm_area_struct", "vm_ops");
	l.vma_private_data = field(btf, "vm_area_struct", "vm_private_data");
	l.special_mapping_name = field(btf, "vm_special_mapping", "name");
	l.range64_pivot = field(btf, "maple_range_64", "pivot");
	l.range64_slot = field(btf, "maple_range_64", "slot");
	l.arange64_pivot = field(btf, "maple_arange_64", "pivot");
	l.arange64_slot = field(btf, "maple_arange_64", "slot");
	l.range64_pivots = array_length(btf, "maple_range_64", "pivot");
	l.range64_slots = array_length(btf, "maple_range_64", "slot");
	l.arange64_pivots = array_length(btf, "maple_arange_64", "pivot");
	l.arange64_slots = array_length(btf, "maple_arange_64", "slot");

	l.file_mnt = field(btf, "file", "f_path.mnt");
	l.file_dentry = field(btf, "file", "f_path.dentry");
	l.file_op = field(btf, "file", "f_op");
	l.file_private_data = field(btf, "file", "private_data");
	l.dentry_parent = field(btf, "dentry", "d_parent");
	l.dentry_name = field(btf, "dentry", "d_name.name");
	l.mount_mnt = field(btf, "mount", "mnt");
	l.mount_parent = field(btf, "mount", "mnt_parent");
	l.mount_mountpoint = field(btf, "mount", "mnt_mountpoint");
	l.vfsmount_root = field(btf, "vfsmount", "mnt_root");
	l.files_fdt = field(btf, "files_struct", "fdt");
	l.fdt_max_fds = field(btf, "fdtable", "max_fds");
	l.fdt_fd = field(btf, "fdtable", "fd");

	l.module_list = field(btf, "module", "list");
	l.module_name = field(btf, "module", "name");
	l.module_core_base = field(btf, "module", "core_layout.base");
	l.module_core_size = field(btf, "module", "core_layout.size");
	l.module_mem_base = field(btf, "module", "mem.base"); // mem[MOD_TEXT] is element 0
	l.module_mem_size = field(btf, "module", "mem.size");

	l.socket_sk = field(btf, "socket", "sk");
	l.skc_daddr = field(btf, "sock_common", "skc_daddr");
	l.skc_rcv_saddr = field(btf, "sock_common", "skc_rcv_saddr");
	l.skc_dport = field(btf, "sock_common", "skc_dport");
	l.skc_num = field(btf, "sock_common", "skc_num");
	l.skc_family = field(btf, "sock_common", "skc_family");
	l.skc_state = field(btf, "sock_common", "skc_state");
	l.skc_v6_daddr = field(btf, "sock_common", "skc_v6_daddr");
	l.skc_v6_rcv_saddr = field(btf, "sock_common", "skc_v6_rcv_saddr");
	l.sk_type = field(btf, "sock", "sk_type");
	l.sk_protocol = field(btf, "sock", "sk_protocol");

	l.task_nsproxy = field(btf, "task_struct", "nsproxy");
	l.task_thread_pid = field(btf, "task_struct", "thread_pid"); // 4.19+
	l.task_cgroups = field(btf, "task_struct", "cgroups");
	l.nsproxy_uts = field(btf, "nsproxy", "uts_ns");
	l.nsproxy_ipc = field(btf, "nsproxy", "ipc_ns");
	l.nsproxy_mnt = field(btf, "nsproxy", "mnt_ns");
	l.nsproxy_net = field(btf, "nsproxy", "net_ns");
	l.nsproxy_cgroup = field(btf, "nsproxy", "cgroup_ns");
	l.uts_inum = field(btf, "uts_namespace", "ns.inum");
	l.ipc_inum = field(btf, "ipc_namespace", "ns.inum");
	l.mnt_inum = field(btf, "mnt_namespace", "ns.inum");
	l.pid_ns_inum = field(btf, "pid_namespace", "ns.inum");
	l.net_inum = field(btf, "net", "ns.inum");
	l.cgroup_ns_inum = field(btf, "cgroup_namespace", "ns.inum");
	l.user_ns_inum = field(btf, "user_namespace", "ns.inum");
	l.cred_user_ns = field(btf, "cred", "user_ns");
	l.pid_level = field(btf, "pid", "level");
	l.pid_numbers = field(btf, "pid", "numbers");
	l.upid_nr = field(btf, "upid", "nr");
	l.upid_ns = field(btf, "upid", "ns");
	l.upid_size = btf.struct_size("upid").value_or(0);
	l.css_set_dfl_cgrp = field(btf, "css_set", "dfl_cgrp");
	l.cgroup_kn = field(btf, "cgroup", "kn");
	l.kernfs_name = field(btf, "kernfs_node", "name");
	l.kernfs_parent = field(btf, "kernfs_node", "parent");
	if (!l.kernfs_parent)
		l.kernfs_parent = field(btf, "kernfs_node", "__parent"); // 6.15+
	l.skc_net = field(btf, "sock_common", "skc_net.net");

	missing.clear();
	for (auto [present, name] : {std::pair{l.task_tasks.present, "task_struct.tasks"},
				     {l.task_pid.present, "task_struct.pid"},
				     {l.task_tgid.present, "task_struct.tgid"},
				     {l.task_comm.present, "task_struct.comm"},
				     {l.task_mm.present, "task_struct.mm"}})
		if (!present)
			missing += std::string(missing.empty() ? "" : ", ") + name;
	return missing.empty();
}

} // namespace softdpu::apsh::os
