// Namespaces, cgroups and containers of tasks: task->nsproxy->{uts,ipc,mnt,net,cgroup}_ns->ns.inum,
// the pid namespace the task is in (task->thread_pid->numbers[level].ns, what /proc/PID/ns/pid
// shows; nsproxy->pid_ns_for_children is where its children go), the user namespace
// (real_cred->user_ns), and the cgroup v2 path (task->cgroups->dfl_cgrp->kn, kernfs names up to the
// root). Containers are then grouped from these (containers.cpp).
#include "apsh/linux/containers.hpp"
#include "apsh/linux/guest_linux.hpp"

#include <algorithm>

namespace softdpu::apsh::os {

namespace {

constexpr uint32_t max_pid_ns_level = 32; // MAX_PID_NS_LEVEL
constexpr int max_cgroup_depth = 64;
constexpr size_t max_cgroup_name = 256; // NAME_MAX + 1

} // namespace

uint32_t GuestLinux::namespace_inum(uint64_t ns, const Field &inum, SharedObjects &shared) const
{
	if (!inum || !valid_kernel_pointer(ns))
		return 0;
	auto [it, added] = shared.inum.emplace(ns, 0);
	if (added)
		it->second = static_cast<uint32_t>(read_field(ns, inum).value_or(0));
	return it->second;
}

std::string GuestLinux::cgroup_path(uint64_t css_set) const
{
	const KernelLayout &l = layout_;
	auto cgroup = read_pointer(css_set, l.css_set_dfl_cgrp);
	auto kn = cgroup ? read_pointer(*cgroup, l.cgroup_kn) : std::nullopt;
	if (!kn || !l.kernfs_name || !l.kernfs_parent)
		return {};
	std::vector<std::string> names;
	uint64_t node = *kn;
	for (int depth = 0;; depth++) {
		if (depth >= max_cgroup_depth)
			return {}; // a loop, or a torn chain
		auto parent = read_field(node, l.kernfs_parent);
		if (!parent)
			return {};
		if (*parent == 0)
			break; // the hierarchy's root: its name is not part of the path
		if (!valid_kernel_pointer(*parent))
			return {};
		auto name = read_text_pointer(node, l.kernfs_name);
		if (!name)
			return {};
		names.push_back(read_string(*name, max_cgroup_name));
		node = *parent;
	}
	std::string path;
	for (auto it = names.rbegin(); it != names.rend(); ++it)
		path += "/" + *it;
	return path.empty() ? "/" : path;
}

void GuestLinux::read_task_identity(uint64_t task, Process &out, SharedObjects &shared) const
{
	const KernelLayout &l = layout_;
	if (auto nsproxy = read_pointer(task, l.task_nsproxy)) {
		auto [it, added] = shared.nsproxy.emplace(*nsproxy, Namespaces{});
		if (added) {
			Namespaces &ns = it->second;
			auto inum_of = [&](const Field &pointer, const Field &inum) {
				auto address = read_pointer(*nsproxy, pointer);
				return address ? namespace_inum(*address, inum, shared) : 0;
			};
			ns.uts = inum_of(l.nsproxy_uts, l.uts_inum);
			ns.ipc = inum_of(l.nsproxy_ipc, l.ipc_inum);
			ns.mnt = inum_of(l.nsproxy_mnt, l.mnt_inum);
			ns.net = inum_of(l.nsproxy_net, l.net_inum);
			ns.cgroup = inum_of(l.nsproxy_cgroup, l.cgroup_ns_inum);
		}
		out.ns = it->second;
	}
	if (auto cred = read_pointer(task, l.task_real_cred))
		if (auto user_ns = read_pointer(*cred, l.cred_user_ns))
			out.ns.user = namespace_inum(*user_ns, l.user_ns_inum, shared);
	// The pid namespace the task is in: the deepest of its pid's numbers.
	if (auto pid = read_pointer(task, l.task_thread_pid); pid && l.pid_level && l.pid_numbers && l.upid_size) {
		auto level = read_field(*pid, l.pid_level);
		if (level && *level <= max_pid_ns_level) {
			uint64_t upid = *pid + l.pid_numbers.offset + *level * l.upid_size;
			if (l.upid_nr)
				out.ns_pid = static_cast<uint32_t>(read_field(upid, l.upid_nr).value_or(0));
			if (auto ns = read_pointer(upid, l.upid_ns))
				out.ns.pid = namespace_inum(*ns, l.pid_ns_inum, shared);
		}
	}
	if (auto css_set = read_pointer(task, l.task_cgroups)) {
		auto [it, added] = shared.cgroups.emplace(*css_set, std::string());
		if (added)
			it->second = cgroup_path(*css_set);
		out.cgroup = it->second;
	}
	if (!out.cgroup.empty()) {
		CgroupContainer container = container_of_cgroup(out.cgroup);
		out.container_id = std::move(container.id);
		out.runtime = std::move(container.runtime);
	}
}

std::string GuestLinux::missing_namespace_fields() const
{
	const KernelLayout &l = layout_;
	std::string missing;
	for (auto [present, name] : {std::pair{l.task_nsproxy.present, "task_struct.nsproxy"},
				     {l.nsproxy_mnt.present, "nsproxy.mnt_ns"},
				     {l.nsproxy_net.present, "nsproxy.net_ns"},
				     {l.mnt_inum.present, "mnt_namespace.ns.inum"},
				     {l.net_inum.present, "net.ns.inum"},
				     {l.pid_ns_inum.present, "pid_namespace.ns.inum"},
				     {l.task_thread_pid.present, "task_struct.thread_pid"},
				     {l.pid_level.present && l.pid_numbers.present && l.upid_size > 0, "pid.numbers"}})
		if (!present)
			missing += std::string(missing.empty() ? "" : ", ") + name;
	return missing;
}

Status GuestLinux::walk_containers(std::vector<Container> &out)
{
	out.clear();
	if (std::string missing = missing_namespace_fields(); !missing.empty())
		return Status{DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks " + missing + " (namespaces)"};
	std::vector<Process> processes;
	Status status = walk_processes(processes);
	if (!status.ok())
		return status;
	// The host's namespaces are init_task's (init_nsproxy, init_pid_ns, init_user_ns).
	Process host;
	SharedObjects shared;
	read_task_identity(*image_->symbol("init_task"), host, shared);
	if (host.ns.mnt == 0 || host.ns.pid == 0)
		return Status{DOCA_ERROR_BAD_STATE, "init_task's namespaces are unreadable"};
	out = group_containers(processes, host.ns);
	return Status::success();
}

} // namespace softdpu::apsh::os
