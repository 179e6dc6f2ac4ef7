// softdpu link list [--json]: the packet links of the topology (softdpu/link.h, docs/links.md),
// their two ends, memif sockets, state and counters. The state comes from the filesystem and the
// kernel's table of unix sockets (link_state.hpp): nothing connects to a link to find it out; the
// counters from the counters files that "softdpu link attach" keeps (softdpu_link_stats_read).
// softdpu link attach: the options; the forwarder is link_attach.cpp.
#include "commands.hpp"
#include "link_attach.hpp"
#include "link_state.hpp"

#include <softdpu/link.h>
#include <softdpu/topology.h>

#include <nlohmann/json.hpp>

#include <net/if.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace softdpu::cli {

namespace {

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

// The counters of one end, when a process ("softdpu link attach") keeps them.
struct EndCounters {
	bool kept = false;
	softdpu_link_stats stats{};
	uint32_t pid = 0;
};

EndCounters counters_of(const softdpu_link &link, bool server)
{
	EndCounters out;
	out.kept = softdpu_link_stats_read(link.name, server ? 1 : 0, &out.stats, &out.pid) == DOCA_SUCCESS;
	return out;
}

nlohmann::json counters_json(const EndCounters &counters)
{
	if (!counters.kept)
		return nullptr;
	const auto direction = [](const softdpu_link_counters &c) {
		return nlohmann::json{{"packets", c.packets}, {"bytes", c.bytes}, {"drops", c.drops}};
	};
	return {{"pid", counters.pid}, {"rx", direction(counters.stats.rx)}, {"tx", direction(counters.stats.tx)}};
}

// "client:rx=3/294/0,tx=3/294/0" (packets/bytes/drops) for each end that has counters; "-" if none.
std::string counters_text(const EndCounters &server, const EndCounters &client)
{
	std::string text;
	const auto add = [&text](const char *role, const EndCounters &c) {
		if (!c.kept)
			return;
		char part[160];
		std::snprintf(part, sizeof(part), "%s%s:rx=%llu/%llu/%llu,tx=%llu/%llu/%llu", text.empty() ? "" : ";",
			      role, (unsigned long long)c.stats.rx.packets, (unsigned long long)c.stats.rx.bytes,
			      (unsigned long long)c.stats.rx.drops, (unsigned long long)c.stats.tx.packets,
			      (unsigned long long)c.stats.tx.bytes, (unsigned long long)c.stats.tx.drops);
		text += part;
	};
	add("server", server);
	add("client", client);
	return text.empty() ? "-" : text;
}

nlohmann::json end_json(const softdpu_link_end &end, const EndCounters &counters)
{
	const bool outside = std::strcmp(end.side, "outside") == 0;
	return {{"side", end.side},
		{"owner", outside ? nlohmann::json(nullptr) : nlohmann::json(end.owner)},
		{"iface", end.iface[0] != '\0' ? nlohmann::json(end.iface) : nlohmann::json(nullptr)},
		{"role", end.is_master ? "server" : "client"},
		{"counters", counters_json(counters)}};
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
			const EndCounters server = counters_of(link, true);
			const EndCounters client = counters_of(link, false);
			list.push_back({{"name", link.name},
					{"kind", kind_name(link.kind)},
					{"socket", link.socket},
					{"interface_id", link.interface_id},
					{"buffer_size", link.buffer_size},
					{"ring_size", 1u << link.log2_ring_size},
					{"server", end_json(link.server, server)},
					{"client", end_json(link.client, client)},
					{"state", state.state},
					{"peers", state.peers}});
		}
		const nlohmann::json out = {{"topology", source}, {"socket_dir", dir}, {"links", list}};
		std::printf("%s\n", out.dump(2).c_str());
		return 0;
	}
	std::printf("softdpu links of topology %s: %u link(s), sockets in %s\n\n", source, count, dir);
	std::printf("%-10s %-12s %-26s %-30s %-12s %-14s %s\n", "LINK", "KIND", "SERVER (memif master)",
		    "CLIENT (memif slave)", "STATE", "COUNTERS", "SOCKET");
	for (const softdpu_link &link : links) {
		const LinkState state = state_of(link.socket, sockets);
		const std::string counters = counters_text(counters_of(link, true), counters_of(link, false));
		std::printf("%-10s %-12s %-26s %-30s %-12s %-14s %s\n", link.name, kind_name(link.kind),
			    end_text(link.server).c_str(), end_text(link.client).c_str(), state.state.c_str(),
			    counters.c_str(), link.socket);
	}
	return 0;
}

// softdpu link attach: options checked here, the forwarder in link_attach.cpp.
void add_link_attach_command(CLI::App &link)
{
	auto options = std::make_shared<AttachOptions>();
	auto role = std::make_shared<std::string>();
	auto id = std::make_shared<std::string>();
	CLI::App *attach = link.add_subcommand(
	    "attach", "forward frames between one end of a link and a TAP interface or another memif socket");
	attach
	    ->add_option("end", options->end,
			 "the end: an uplink (p0, p1: its outside end), a function (pf0: its link's client end) or a "
			 "representor (hpf0 or pf0hpf: serves), by name or network interface")
	    ->required();
	attach->add_option("--tap", options->tap, "create TAP interface IFNAME (root) and forward to it")
	    ->option_text("IFNAME");
	attach->add_option("--netns", options->netns, "create the TAP in network namespace NAME (ip netns)")
	    ->option_text("NAME");
	attach->add_option("--memif", options->memif, "forward to the memif interface on socket SOCKET")
	    ->option_text("SOCKET");
	attach->add_option("--role", *role, "memif role on SOCKET: client (connect, default) or server (serve)")
	    ->option_text("client|server");
	attach->add_option("--id", *id, "memif interface id on SOCKET (default 0)")->option_text("N");
	attach->footer("Runs in the foreground until SIGINT or SIGTERM; removes the TAP and its counters file "
		       "when it stops. Counters: softdpu link list. Frames of up to 9000 bytes and more, one 16 KiB "
		       "memif buffer each (a DPDK peer passes bsize=16384).");
	attach->callback([options, role, id] {
		AttachOptions &o = *options;
		if (o.tap.empty() == o.memif.empty())
			fail_usage("give one of --tap IFNAME or --memif SOCKET");
		if (!o.netns.empty() && o.tap.empty())
			fail_usage("--netns goes with --tap");
		if ((!role->empty() || !id->empty()) && o.memif.empty())
			fail_usage(std::string(role->empty() ? "--id" : "--role") + " goes with --memif");
		if (!o.tap.empty() && (o.tap.size() >= IFNAMSIZ || o.tap.find_first_of("/ \t\n:") != std::string::npos))
			fail_usage("--tap: bad interface name \"" + o.tap +
				   "\" (1 to 15 characters, no '/', ':' or space)");
		if (!o.netns.empty() && (o.netns.find('/') != std::string::npos || o.netns == "." || o.netns == ".."))
			fail_usage("--netns: bad namespace name \"" + o.netns + "\"");
		if (o.memif.size() >= SOFTDPU_LINK_SOCKET_SIZE)
			fail_usage("--memif: socket path longer than " + std::to_string(SOFTDPU_LINK_SOCKET_SIZE - 1) +
				   " bytes");
		if (!role->empty() && *role != "client" && *role != "server")
			fail_usage("--role: " + *role + " not in {client,server}");
		o.memif_server = *role == "server";
		if (!id->empty()) {
			char *rest = nullptr;
			errno = 0;
			const unsigned long long value = std::strtoull(id->c_str(), &rest, 10);
			if ((*id)[0] == '-' || *rest != '\0' || errno != 0 || value > UINT32_MAX)
				fail_usage("--id: expected a number from 0 to 4294967295, got \"" + *id + "\"");
			o.memif_id = static_cast<uint32_t>(value);
		}
#if SOFTDPU_HAVE_MEMIF
		if (int status = link_attach(o); status != 0)
			throw CommandFailed{status};
#else
		std::fprintf(stderr, "softdpu link attach: this build has no libmemif\n");
		throw CommandFailed{1};
#endif
	});
}

} // namespace

void add_link_command(CLI::App &app)
{
	CLI::App *link = app.add_subcommand(
	    "link", "list | attach: the packet links between emulated functions, their state and counters");
	link->require_subcommand(1);
	link->footer("Packet links: docs/links.md.");
	auto json = std::make_shared<bool>(false);
	CLI::App *list =
	    link->add_subcommand("list", "list every link, its two ends, memif socket, state and counters");
	list->add_flag("--json", *json, "JSON instead of a table");
	list->footer("States: down (no socket), stale (a socket file nobody serves), listening (the server waits "
		     "for its peer), connected (a peer is connected), not-a-socket.\nCounters (rx/tx "
		     "packets/bytes/drops): kept by \"softdpu link attach\" for the end it attaches; \"-\" (null) "
		     "otherwise.\nSockets: $SOFTDPU_RUN_DIR/links, else $XDG_RUNTIME_DIR/softdpu/links, else "
		     "/tmp/softdpu-<uid>/links.");
	list->callback([json] {
		if (int status = list_links(*json); status != 0)
			throw CommandFailed{status};
	});
	add_link_attach_command(*link);
}
} // namespace softdpu::cli
