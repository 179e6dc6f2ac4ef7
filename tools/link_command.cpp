// softdpu link list [--json]: the packet links of the topology (softdpu/link.h, docs/links.md),
// their two ends, memif sockets and state. The state comes from the filesystem and the kernel's
// table of unix sockets (/proc/net/unix): nothing connects to a link to find it out.
#include "commands.hpp"

#include <softdpu/link.h>
#include <softdpu/topology.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace softdpu::cli {

namespace {

// What the kernel's socket table says about one path: a listener, and connections accepted on it.
struct SocketUse {
	bool listening = false;
	uint32_t peers = 0;
};

// /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path". A listening socket has
// __SO_ACCEPTCON (0x10000) in Flags; a connection accepted on it carries the listener's path
// with state SS_CONNECTED (3).
std::map<std::string, SocketUse> unix_socket_table()
{
	std::map<std::string, SocketUse> table;
	std::ifstream in("/proc/net/unix");
	std::string line;
	std::getline(in, line); // header
	while (std::getline(in, line)) {
		std::istringstream fields(line);
		std::string num, refcount, protocol, flags, type, state, inode, path;
		if (!(fields >> num >> refcount >> protocol >> flags >> type >> state >> inode >> path))
			continue; // unbound socket: no path
		SocketUse &use = table[path];
		if (std::strtoul(flags.c_str(), nullptr, 16) & 0x10000)
			use.listening = true;
		else if (std::strtoul(state.c_str(), nullptr, 16) == 3)
			++use.peers;
	}
	return table;
}

struct LinkState {
	std::string state; // down, not-a-socket, stale, listening, connected
	uint32_t peers = 0;
};

LinkState state_of(const std::string &socket, const std::map<std::string, SocketUse> &table)
{
	struct stat st {};
	if (lstat(socket.c_str(), &st) != 0)
		return {"down", 0};
	if (!S_ISSOCK(st.st_mode))
		return {"not-a-socket", 0};
	const auto it = table.find(socket);
	if (it == table.end() || !it->second.listening)
		return {"stale", 0}; // a socket file nobody serves (a server that was killed)
	if (it->second.peers == 0)
		return {"listening", 0};
	return {"connected", it->second.peers};
}

const char *kind_name(softdpu_link_kind kind)
{
	switch (kind) {
	case SOFTDPU_LINK_KIND_REPRESENTOR:
		return "representor";
	case SOFTDPU_LINK_KIND_UPLINK:
		return "uplink";
	case SOFTDPU_LINK_KIND_EXTERNAL:
		return "external";
	}
	return "?";
}

std::string end_text(const softdpu_link_end &end)
{
	if (std::strcmp(end.side, "outside") == 0)
		return "outside";
	std::string text = std::string(end.side) + " " + end.owner;
	if (end.iface[0] != '\0')
		text += " (" + std::string(end.iface) + ")";
	return text;
}

nlohmann::json end_json(const softdpu_link_end &end)
{
	const bool outside = std::strcmp(end.side, "outside") == 0;
	return {{"side", end.side},
		{"owner", outside ? nlohmann::json(nullptr) : nlohmann::json(end.owner)},
		{"iface", end.iface[0] != '\0' ? nlohmann::json(end.iface) : nlohmann::json(nullptr)},
		{"role", end.is_master ? "server" : "client"}};
}

int fail(const char *what, doca_error_t status)
{
	std::fprintf(stderr, "softdpu link: %s (%s)\n", what, doca_error_get_name(status));
	print_sdk_messages("  ");
	return 1;
}

int list_links(bool json)
{
	uint32_t count = 0;
	doca_error_t status = softdpu_link_get_count(&count);
	if (status != DOCA_SUCCESS)
		return fail("cannot list links", status);
	std::vector<softdpu_link> links(count);
	for (uint32_t i = 0; i < count; ++i)
		if ((status = softdpu_link_get(i, &links[i])) != DOCA_SUCCESS)
			return fail("cannot list links", status);
	char dir[SOFTDPU_LINK_SOCKET_SIZE] = {};
	if ((status = softdpu_link_get_socket_dir(dir, sizeof(dir), 0)) != DOCA_SUCCESS)
		return fail("cannot find the socket directory", status);
	const char *source = "";
	const char *side = "";
	if ((status = softdpu_topology_get_current(&source, &side)) != DOCA_SUCCESS)
		return fail("cannot load the topology", status);

	const auto sockets = unix_socket_table();
	if (json) {
		nlohmann::json list = nlohmann::json::array();
		for (const softdpu_link &link : links) {
			const LinkState state = state_of(link.socket, sockets);
			list.push_back({{"name", link.name},
					{"kind", kind_name(link.kind)},
					{"socket", link.socket},
					{"interface_id", link.interface_id},
					{"buffer_size", link.buffer_size},
					{"ring_size", 1u << link.log2_ring_size},
					{"server", end_json(link.server)},
					{"client", end_json(link.client)},
					{"state", state.state},
					{"peers", state.peers}});
		}
		const nlohmann::json out = {{"topology", source}, {"socket_dir", dir}, {"links", list}};
		std::printf("%s\n", out.dump(2).c_str());
		return 0;
	}
	std::printf("softdpu links of topology %s: %u link(s), sockets in %s\n\n", source, count, dir);
	std::printf("%-10s %-12s %-26s %-30s %-12s %s\n", "LINK", "KIND", "SERVER (memif master)",
		    "CLIENT (memif slave)", "STATE", "SOCKET");
	for (const softdpu_link &link : links) {
		const LinkState state = state_of(link.socket, sockets);
		std::printf("%-10s %-12s %-26s %-30s %-12s %s\n", link.name, kind_name(link.kind),
			    end_text(link.server).c_str(), end_text(link.client).c_str(), state.state.c_str(),
			    link.socket);
	}
	return 0;
}

} // namespace

void add_link_command(CLI::App &app)
{
	CLI::App *link = app.add_subcommand("link", "list: the packet links between emulated functions");
	link->require_subcommand(1);
	link->footer("Packet links: docs/links.md.");
	auto json = std::make_shared<bool>(false);
	CLI::App *list = link->add_subcommand("list", "list every link, its two ends, memif socket and state");
	list->add_flag("--json", *json, "JSON instead of a table");
	list->footer("States: down (no socket), stale (a socket file nobody serves), listening (the server waits "
		     "for its peer), connected (a peer is connected), not-a-socket.\nSockets: $SOFTDPU_RUN_DIR/links, "
		     "else $XDG_RUNTIME_DIR/softdpu/links, else /tmp/softdpu-<uid>/links.");
	list->callback([json] {
		if (int status = list_links(*json); status != 0)
			throw CommandFailed{status};
	});
}

} // namespace softdpu::cli
