#include "apsh/linux/containers.hpp"

#include <algorithm>
#include <map>

namespace softdpu::apsh::os {

namespace {

bool is_hex_id(std::string_view text)
{
	return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// One path component: "docker-<id>.scope", "<id>", "lxc.payload.<name>", ...
CgroupContainer component_container(std::string_view parent, std::string_view name)
{
	std::string_view stem = name;
	if (stem.ends_with(".scope"))
		stem.remove_suffix(6);
	if (stem.find("conmon") != std::string_view::npos)
		return {};
	static constexpr std::pair<std::string_view, std::string_view> prefixes[] = {{"docker-", "docker"},
										     {"crio-", "cri-o"},
										     {"cri-containerd-", "containerd"},
										     {"containerd-", "containerd"},
										     {"libpod-", "podman"}};
	for (auto [prefix, runtime] : prefixes)
		if (stem.starts_with(prefix) && is_hex_id(stem.substr(prefix.size())))
			return {std::string(stem.substr(prefix.size())), std::string(runtime)};
	if (is_hex_id(stem)) {
		// cgroupfs driver: the parent directory names the runtime ("/docker/<id>"); kubelet's
		// pods ("/kubepods/besteffort/pod<uid>/<id>") do not say which one.
		std::string runtime;
		if (parent == "docker")
			runtime = "docker";
		else if (parent == "libpod_parent")
			runtime = "podman";
		return {std::string(stem), runtime};
	}
	if (name.starts_with("lxc.payload.") && name.size() > 12)
		return {std::string(name.substr(12)), "lxc"};
	if (parent == "lxc" && !name.empty())
		return {std::string(name), "lxc"};
	return {};
}

} // namespace

CgroupContainer container_of_cgroup(std::string_view path)
{
	CgroupContainer found;
	std::string_view parent;
	size_t start = 0;
	while (start <= path.size()) {
		size_t end = path.find('/', start);
		if (end == std::string_view::npos)
			end = path.size();
		std::string_view name = path.substr(start, end - start);
		if (!name.empty()) {
			CgroupContainer here = component_container(parent, name);
			if (!here.id.empty())
				found = std::move(here);
			parent = name;
		}
		start = end + 1;
	}
	return found;
}

std::vector<Container> group_containers(const std::vector<Process> &processes, const Namespaces &host)
{
	std::vector<Container> out;
	std::map<std::string, size_t> index;
	for (const Process &process : processes) {
		if (process.is_kernel_thread)
			continue; // kdevtmpfs has a mount namespace of its own, and is no container
		std::string key = process.container_id;
		if (key.empty()) {
			if (process.ns.mnt != 0 && process.ns.mnt != host.mnt)
				key = "mnt:[" + std::to_string(process.ns.mnt) + "]";
			else if (process.ns.pid != 0 && process.ns.pid != host.pid)
				key = "pid:[" + std::to_string(process.ns.pid) + "]";
			else if (process.ns.net != 0 && process.ns.net != host.net)
				key = "net:[" + std::to_string(process.ns.net) + "]";
			else
				continue;
		}
		auto [it, added] = index.emplace(key, out.size());
		if (added) {
			Container container;
			container.id = key;
			container.runtime = process.runtime;
			container.cgroup = process.cgroup;
			container.ns = process.ns;
			out.push_back(std::move(container));
		}
		Container &container = out[it->second];
		// A runtime's first process (unshare, runc init's parent) may still be in the host's pid
		// namespace: the container's namespaces are those of its first process inside its own.
		if (!added && container.ns.pid == host.pid && process.ns.pid != 0 && process.ns.pid != host.pid) {
			container.ns = process.ns;
			container.cgroup = process.cgroup;
		}
		if (process.ns.net != 0 && process.ns.net != host.net &&
		    std::find(container.net_namespaces.begin(), container.net_namespaces.end(), process.ns.net) ==
			container.net_namespaces.end())
			container.net_namespaces.push_back(process.ns.net);
		container.processes.push_back(process);
	}
	return out;
}

} // namespace softdpu::apsh::os
