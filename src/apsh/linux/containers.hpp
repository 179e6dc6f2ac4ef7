// Container identity from what the kernel records: the runtime's container ID in a cgroup path,
// and the grouping of processes into containers (by that ID, else by their own namespaces).
// Pure functions over the reader's records; GuestLinux feeds them.
#pragma once

#include "apsh/introspection.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::os {

struct CgroupContainer {
	std::string id;      // empty when the path names no container
	std::string runtime; // "docker", "cri-o", "containerd", "podman", "lxc" or empty
};

// The container a cgroup v2 path names, as runtimes name their cgroups:
//   systemd driver:  .../docker-<64 hex>.scope, crio-<id>.scope, cri-containerd-<id>.scope,
//                    libpod-<id>.scope (podman)
//   cgroupfs driver: /docker/<id>, /kubepods/.../pod<uid>/<id>, /libpod_parent/libpod-<id>, /lxc/<name>,
//                    /lxc.payload.<name>
// The deepest component that names one wins; runtime monitors (crio-conmon-, libpod-conmon-) are not
// containers.
CgroupContainer container_of_cgroup(std::string_view path);

// Groups processes into containers: by container ID where there is one, else by the first of the
// mount, pid and network namespaces that differs from the host's ("mnt:[N]", "pid:[N]",
// "net:[N]"). Processes with neither are the host's and in no container, and so are kernel threads. Containers come in
// the order of their first process.
std::vector<Container> group_containers(const std::vector<Process> &processes, const Namespaces &host);

} // namespace softdpu::apsh::os
