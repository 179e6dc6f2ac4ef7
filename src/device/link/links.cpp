#include "device/link/links.hpp"

namespace softdpu::device {

const char *to_string(LinkKind kind) noexcept
{
	switch (kind) {
	case LinkKind::representor:
		return "representor";
	case LinkKind::uplink:
		return "uplink";
	case LinkKind::external:
		return "external";
	}
	return "?";
}

const char *to_string(LinkRole role) noexcept
{
	return role == LinkRole::server ? "server" : "client";
}

std::string link_socket_directory(std::string_view run_dir)
{
	std::string dir(run_dir);
	while (!dir.empty() && dir.back() == '/')
		dir.pop_back();
	return dir + "/links";
}

std::string link_socket_path(std::string_view run_dir, std::string_view name)
{
	return link_socket_directory(run_dir) + "/" + std::string(name) + ".sock";
}

namespace {

LinkEnd end_of(const Function &function, LinkRole role)
{
	return LinkEnd{function.name, function.iface, function.side, role};
}

} // namespace

LinkTable links_of(const Topology &topology, std::string_view run_dir)
{
	LinkTable table;
	for (const auto &owned : topology.all_functions()) {
		const Function &function = *owned;
		if (function.iface.empty() || function.link_layer != LinkLayer::ethernet)
			continue;
		Link link;
		link.buffer_size = kLinkBufferSize;
		link.log2_ring_size = kLinkLog2RingSize;
		if (const Representor *rep = topology.representor_of(function)) {
			link.name = rep->name;
			link.kind = LinkKind::representor;
			link.server = LinkEnd{rep->name, rep->iface, Side::dpu, LinkRole::server};
			link.client = end_of(function, LinkRole::client);
		} else {
			link.name = function.name;
			link.kind = function.side == Side::dpu && function.type == FuncType::pf ? LinkKind::uplink
												: LinkKind::external;
			link.server = end_of(function, LinkRole::server);
			link.client = LinkEnd{{}, {}, Side::host, LinkRole::client};
		}
		link.socket = link_socket_path(run_dir, link.name);
		if (link.socket.size() > kLinkMaxSocketPath) {
			table.links.clear();
			table.error = "link " + link.name + ": socket path " + link.socket + " is longer than " +
				      std::to_string(kLinkMaxSocketPath) +
				      " bytes (set SOFTDPU_RUN_DIR to a shorter directory)";
			return table;
		}
		table.links.push_back(std::move(link));
	}
	return table;
}

std::optional<LinkEndRef> find_link_end(const LinkTable &table, std::string_view name) noexcept
{
	if (name.empty())
		return std::nullopt;
	for (const Link &link : table.links) {
		if (link.server.owner == name)
			return LinkEndRef{&link, true};
		if (link.client.owner == name)
			return LinkEndRef{&link, false};
	}
	return std::nullopt;
}

} // namespace softdpu::device
