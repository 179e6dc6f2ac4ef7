// softdpu link attach: a foreground forwarder between one end of a packet link (docs/links.md) and a
// Linux TAP interface or another memif socket. The link side is softdpu's libmemif on the end's
// socket; the counters of that end go to its counters file (softdpu/link.h) while it runs.
#pragma once

#include <cstdint>
#include <string>

namespace softdpu::cli {

struct AttachOptions {
	std::string end;           // "p0", "pf0", "hpf0" or "pf0hpf": which end of which link
	std::string tap;           // --tap IFNAME
	std::string netns;         // --netns NAME (with --tap): /var/run/netns/NAME
	std::string memif;         // --memif SOCKET
	bool memif_server = false; // --role server: serve SOCKET (else connect to it)
	uint32_t memif_id = 0;     // --id N: the memif interface id on SOCKET
};

// Runs until SIGINT or SIGTERM: 0, or 1 with the reason printed (nothing left behind either way).
int link_attach(const AttachOptions &options);

} // namespace softdpu::cli
