// Sockets: every process's open files (files → fdt → fd[]) whose f_op is socket_file_ops, then
// file → socket → sock and the addresses in sock_common. Each socket is listed once, under the
// first process found holding it, with its network namespace (sock_common.skc_net).
#include "apsh/linux/guest_linux.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unordered_set>

namespace softdpu::apsh::os {

namespace {

constexpr size_t max_fds_scanned = 1u << 16;
constexpr size_t max_connections = 1u << 16;

std::string format_address(int family, const uint8_t *bytes)
{
	char text[INET6_ADDRSTRLEN] = {};
	inet_ntop(family, bytes, text, sizeof(text));
	return text;
}

} // namespace

Status GuestLinux::walk_connections(std::vector<Connection> &out)
{
	out.clear();
	const KernelLayout &l = layout_;
	if (!socket_file_ops_)
		return Status{DOCA_ERROR_NOT_SUPPORTED, "no address for socket_file_ops"};
	if (!l.task_files || !l.files_fdt || !l.fdt_max_fds || !l.fdt_fd || !l.file_op || !l.file_private_data ||
	    !l.socket_sk || !l.skc_family || !l.skc_num || !l.skc_dport || !l.skc_state || !l.sk_protocol)
		return Status{DOCA_ERROR_NOT_SUPPORTED, "the kernel's BTF lacks the socket structures"};
	std::vector<Process> processes;
	Status status = walk_processes(processes);
	std::unordered_set<uint64_t> seen_sockets, seen_tables;
	SharedObjects shared;
	std::vector<uint64_t> fds;
	for (const Process &process : processes) {
		if (process.is_kernel_thread)
			continue;
		auto files = read_pointer(process.task, l.task_files);
		if (!files || !seen_tables.insert(*files).second)
			continue;
		auto fdt = read_pointer(*files, l.files_fdt);
		if (!fdt)
			continue;
		auto max_fds = read_field(*fdt, l.fdt_max_fds);
		auto fd_array = read_pointer(*fdt, l.fdt_fd);
		if (!max_fds || !fd_array)
			continue;
		fds.assign(std::min<uint64_t>(*max_fds, max_fds_scanned), 0);
		fds.resize(kernel().read(*fd_array, {reinterpret_cast<uint8_t *>(fds.data()), fds.size() * 8}) / 8);
		for (uint64_t file : fds) {
			if (!file || !valid_kernel_pointer(file))
				continue;
			auto op = read_field(file, l.file_op);
			if (!op || *op != *socket_file_ops_)
				continue;
			auto socket = read_pointer(file, l.file_private_data);
			auto sock = socket ? read_pointer(*socket, l.socket_sk) : std::nullopt;
			if (!sock || !seen_sockets.insert(*sock).second)
				continue;
			int family = static_cast<int>(read_field(*sock, l.skc_family).value_or(0));
			int protocol = static_cast<int>(read_field(*sock, l.sk_protocol).value_or(0));
			if ((family != AF_INET && family != AF_INET6) ||
			    (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP))
				continue;
			Connection connection;
			connection.pid = process.pid;
			connection.comm = process.comm;
			connection.family = family;
			connection.protocol = protocol;
			connection.local_port = static_cast<uint16_t>(read_field(*sock, l.skc_num).value_or(0));
			connection.remote_port =
			    ntohs(static_cast<uint16_t>(read_field(*sock, l.skc_dport).value_or(0)));
			connection.state = static_cast<int>(read_field(*sock, l.skc_state).value_or(0));
			if (auto net = read_pointer(*sock, l.skc_net))
				connection.net_ns = namespace_inum(*net, l.net_inum, shared);
			uint8_t local[16] = {}, remote[16] = {};
			if (family == AF_INET) {
				kernel().read(*sock + l.skc_rcv_saddr.offset, {local, 4});
				kernel().read(*sock + l.skc_daddr.offset, {remote, 4});
			} else if (l.skc_v6_rcv_saddr && l.skc_v6_daddr) {
				kernel().read(*sock + l.skc_v6_rcv_saddr.offset, {local, 16});
				kernel().read(*sock + l.skc_v6_daddr.offset, {remote, 16});
			}
			connection.local_addr = format_address(family, local);
			connection.remote_addr = format_address(family, remote);
			out.push_back(std::move(connection));
			if (out.size() >= max_connections)
				return status;
		}
	}
	return status;
}

} // namespace softdpu::apsh::os
