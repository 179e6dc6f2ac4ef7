// The state of a link's socket, read from the filesystem and the kernel's table of unix sockets
// (/proc/net/unix): nothing connects to a link to find it out. "softdpu link list" shows it;
// "softdpu link attach" refuses an end that someone else already serves or connects.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace softdpu::cli {

// What the kernel's socket table says about one path: a listener, and connections accepted on it.
struct SocketUse {
	bool listening = false;
	uint32_t peers = 0;
};

// /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path". A listening socket has
// __SO_ACCEPTCON (0x10000) in Flags; a connection accepted on it carries the listener's path
// with state SS_CONNECTED (3). Only sockets of the caller's network namespace are listed.
inline std::map<std::string, SocketUse> unix_socket_table()
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

inline LinkState state_of(const std::string &socket, const std::map<std::string, SocketUse> &table)
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

} // namespace softdpu::cli
