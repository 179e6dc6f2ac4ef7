// Offsets and sizes of the kernel structures the walkers read, taken from BTF at open time
// (never hard-coded). A field the kernel does not have stays absent; the walker that needs it
// reports which one, other walkers still work.
#pragma once

#include "apsh/kernel/btf.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace softdpu::apsh::os {

struct Field {
	uint64_t offset = 0;
	uint32_t size = 0; // bytes (1, 2, 4, 8, or an array's total)
	bool present = false;
	explicit operator bool() const { return present; }
};

struct KernelLayout {
	// task_struct
	Field task_state, task_flags, task_tasks, task_mm, task_pid, task_tgid, task_real_parent, task_comm, task_utime,
	    task_stime, task_real_cred, task_files, task_signal, task_thread_node, task_group_leader;
	Field task_start_time; // ns of CLOCK_MONOTONIC at fork (a PID reused is a new start time)
	Field signal_thread_head;
	Field cred_uid, cred_gid;
	// mm_struct: the maple tree (6.1+) or the vm_next list (older)
	Field mm_maple_root, mm_mmap, mm_pgd, mm_start_brk, mm_brk, mm_start_stack, mm_arg_start, mm_arg_end,
	    mm_env_start, mm_env_end, mm_vdso, mm_exe_file;
	Field vma_start, vma_end, vma_next, vma_mm, vma_flags, vma_pgoff, vma_file, vma_ops, vma_private_data;
	Field special_mapping_name;
	Field range64_pivot, range64_slot, arange64_pivot, arange64_slot;
	uint32_t range64_pivots = 0, range64_slots = 0, arange64_pivots = 0, arange64_slots = 0;
	// files and paths
	Field file_mnt, file_dentry, file_op, file_private_data;
	Field dentry_parent, dentry_name;
	Field mount_mnt, mount_parent, mount_mountpoint, vfsmount_root;
	Field files_fdt, fdt_max_fds, fdt_fd;
	// modules: core_layout (before 6.4) or mem[MOD_TEXT]
	Field module_list, module_name, module_core_base, module_core_size, module_mem_base, module_mem_size;
	// sockets
	Field socket_sk, skc_daddr, skc_rcv_saddr, skc_dport, skc_num, skc_family, skc_state, skc_v6_daddr,
	    skc_v6_rcv_saddr, sk_type, sk_protocol;

	// namespaces (task->nsproxy->*_ns->ns.inum; the pid namespace through task->thread_pid), the
	// user namespace (cred->user_ns), cgroup v2 (task->cgroups->dfl_cgrp->kn, kernfs names) and a
	// socket's network namespace (sock_common.skc_net)
	Field task_nsproxy, task_thread_pid, task_cgroups;
	Field nsproxy_uts, nsproxy_ipc, nsproxy_mnt, nsproxy_net, nsproxy_cgroup;
	Field uts_inum, ipc_inum, mnt_inum, pid_ns_inum, net_inum, cgroup_ns_inum, user_ns_inum, cred_user_ns;
	Field pid_level, pid_numbers, upid_nr, upid_ns;
	uint64_t upid_size = 0;
	Field css_set_dfl_cgrp, cgroup_kn, kernfs_name, kernfs_parent;
	Field skc_net;

	bool maple_tree() const { return mm_maple_root.present; }
	// Resolves every field; fails only when the basics of task_struct are missing.
	static bool resolve(const kernel::Btf &btf, KernelLayout &out, std::string &missing);
};

} // namespace softdpu::apsh::os
