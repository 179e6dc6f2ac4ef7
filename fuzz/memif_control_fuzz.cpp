// Fuzz target: the control channel of a memif server. Each input is a sequence of messages a
// client sends after HELLO; our server parses them and runs its state machine (with real file
// descriptors attached where the input asks). It must never crash, leak or hang, and must end
// the session cleanly when the client goes away.
#include "memif/connection.hpp"
#include "memif/control_channel.hpp"

#include <libmemif.h>

#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace softdpu::memif;

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

struct Server {
	memif_per_thread_main_handle_t db = nullptr;
	memif_socket_handle_t socket = nullptr;
	memif_conn_handle_t conn = nullptr;
	SocketAddress address;

	Server()
	{
		const std::string name = "@softdpu-memif-control-fuzz-" + std::to_string(getpid());
		require(memif_per_thread_init(&db, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == 0);
		require(memif_per_thread_create_socket(db, &socket, name.c_str(), nullptr) == 0);
		memif_conn_args_t args{};
		args.socket = socket;
		args.is_master = 1;
		args.num_s2m_rings = 2;
		require(memif_create(&conn, &args, nullptr, nullptr, nullptr, nullptr) == 0);
		require(make_socket_address(name.c_str(), address) == 0);
	}
	void pump() const
	{
		for (int i = 0; i < 8; ++i)
			memif_per_thread_poll_event(db, 0);
	}
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static Server server;
	UniqueFd client;
	if (connect_to(server.address, client) != 0)
		return 0;
	server.pump(); // accept, HELLO

	// Chunks: one control byte, then a 128-byte message. Control bit 0: attach a memfd (its size
	// from bits 4..7, in KiB); bit 1: send only (control >> 2) bytes of the message.
	for (size_t at = 0; at + 1 + kMessageSize <= size; at += 1 + kMessageSize) {
		const uint8_t control = data[at];
		const uint8_t *message = data + at + 1;
		UniqueFd fd;
		if ((control & 1) != 0) {
			fd.reset(memfd_create("fuzz region", MFD_CLOEXEC));
			require(fd.valid() && ftruncate(fd.get(), off_t(control >> 4) * 1024) == 0);
		}
		const size_t length = (control & 2) != 0 ? size_t(control >> 2) : kMessageSize;
		iovec io{const_cast<uint8_t *>(message), length};
		alignas(cmsghdr) char cmsg_space[CMSG_SPACE(sizeof(int))] = {};
		msghdr header{};
		header.msg_iov = &io;
		header.msg_iovlen = 1;
		if (fd.valid()) {
			header.msg_control = cmsg_space;
			header.msg_controllen = sizeof cmsg_space;
			cmsghdr *cmsg = CMSG_FIRSTHDR(&header);
			cmsg->cmsg_level = SOL_SOCKET;
			cmsg->cmsg_type = SCM_RIGHTS;
			cmsg->cmsg_len = CMSG_LEN(sizeof(int));
			const int raw = fd.get();
			std::memcpy(CMSG_DATA(cmsg), &raw, sizeof raw);
		}
		if (sendmsg(client.get(), &header, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break; // our side closed the channel
		server.pump();
		// Drain our replies so the socket never fills.
		ReceivedMessage reply;
		while (receive_message(client.get(), reply, nullptr) == MEMIF_ERR_SUCCESS) {
		}
	}
	client.reset();
	server.pump();
	// The session is over: the interface has no channel and no connection left.
	auto *connection = static_cast<Connection *>(server.conn);
	require(!connection->has_channel());
	require(!connection->connected());
	return 0;
}
