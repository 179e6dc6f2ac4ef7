// A fake peer on a raw SOCK_SEQPACKET socket sends malformed, out-of-order or lying messages and
// descriptors: our side must disconnect that interface with the right error and a reason.
#include "memif/connection.hpp"
#include "memif/control_channel.hpp"
#include "memif/protocol.hpp"
#include "memif_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <sys/mman.h>

using namespace memif_test;
using namespace softdpu::memif;

namespace {

// Shared memory the fake client builds the way a real client would: region 0 holds one S2M and
// one M2S ring of 16 slots, region 1 the buffers.
struct FakeMemory {
	static constexpr uint8_t kLog2 = 4;
	static constexpr uint16_t kSlots = 1 << kLog2;
	static constexpr uint32_t kBufferSize = 2048;
	UniqueFd rings_fd;
	UniqueFd buffers_fd;
	uint8_t *rings = nullptr;
	size_t rings_size = 2 * ring_bytes(kLog2);
	size_t buffers_size = 2 * kSlots * kBufferSize;

	FakeMemory()
	{
		rings_fd.reset(memfd_create("fake rings", MFD_CLOEXEC));
		buffers_fd.reset(memfd_create("fake buffers", MFD_CLOEXEC));
		EXPECT_EQ(ftruncate(rings_fd.get(), off_t(rings_size)), 0);
		EXPECT_EQ(ftruncate(buffers_fd.get(), off_t(buffers_size)), 0);
		rings = static_cast<uint8_t *>(
		    mmap(nullptr, rings_size, PROT_READ | PROT_WRITE, MAP_SHARED, rings_fd.get(), 0));
		for (int r = 0; r < 2; ++r) {
			RingHeader *header = ring(r);
			header->cookie = kCookie;
			for (uint16_t slot = 0; slot < kSlots; ++slot)
				header->desc[slot] =
				    Descriptor{0, 1, kBufferSize, uint32_t((r * kSlots + slot) * kBufferSize), 0};
		}
	}
	~FakeMemory() { munmap(rings, rings_size); }
	RingHeader *ring(int index) { return reinterpret_cast<RingHeader *>(rings + index * ring_bytes(kLog2)); }
};

class MemifFakePeer : public ::testing::Test {
protected:
	void SetUp() override
	{
		name_ = unique_socket_name("fake");
		ASSERT_EQ(make_socket_address(name_.c_str(), address_), MEMIF_ERR_SUCCESS);
	}
	void TearDown() override { peer_.reset(); }

	// Our server, then the fake client connected to it (HELLO consumed).
	void start_server()
	{
		ASSERT_EQ(ours_.open(name_), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(ours_.create(make_args(true)), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(connect_to(address_, peer_), MEMIF_ERR_SUCCESS);
		Message hello;
		ASSERT_TRUE(receive(hello));
		ASSERT_EQ(hello.type, MessageType::hello);
		EXPECT_EQ(hello.hello.min_version, kProtocolVersion);
		EXPECT_EQ(hello.hello.max_log2_ring_size, kMaxLog2RingSize);
	}

	Connection &server() { return *static_cast<Connection *>(ours_.conn); }

	// Receives one message on the fake side while our side runs.
	bool receive(Message &out)
	{
		int err = MEMIF_ERR_AGAIN;
		run_until([&] { return err != MEMIF_ERR_AGAIN; },
			  [&] {
				  ours_.poll_all();
				  ReceivedMessage received;
				  err = receive_message(peer_.get(), received, nullptr);
				  if (err == MEMIF_ERR_SUCCESS)
					  out = received.message;
			  },
			  3000);
		return err == MEMIF_ERR_SUCCESS;
	}

	void send(const Message &message, int fd = -1) { ASSERT_EQ(send_message(peer_.get(), message, fd), 0); }

	// Sends and expects an ACK.
	void send_acked(const Message &message, int fd = -1)
	{
		send(message, fd);
		Message reply;
		ASSERT_TRUE(receive(reply));
		ASSERT_EQ(reply.type, MessageType::ack) << reply.disconnect.reason;
	}

	// Expects our side to answer with DISCONNECT carrying `code` (and a reason).
	void expect_refusal(int code)
	{
		Message reply;
		ASSERT_TRUE(receive(reply));
		ASSERT_EQ(reply.type, MessageType::disconnect);
		EXPECT_EQ(reply.disconnect.code, uint32_t(code)) << reply.disconnect.reason;
		EXPECT_NE(reply.disconnect.reason[0], '\0');
		// And then closes the channel.
		ReceivedMessage after;
		int err = MEMIF_ERR_AGAIN;
		run_until([&] { return err != MEMIF_ERR_AGAIN; },
			  [&] { err = receive_message(peer_.get(), after, nullptr); });
		EXPECT_EQ(err, MEMIF_ERR_DISCONNECTED);
	}

	static Message init_message(uint16_t version = kProtocolVersion)
	{
		Message init;
		init.type = MessageType::init;
		init.init.version = version;
		init.init.id = 0;
		init.init.mode = MEMIF_INTERFACE_MODE_ETHERNET;
		copy_string_to_field("fake", init.init.name, kNameSize);
		return init;
	}
	static Message region_message(uint16_t index, uint64_t size)
	{
		Message region;
		region.type = MessageType::add_region;
		region.add_region.index = index;
		region.add_region.size = size;
		return region;
	}
	static Message ring_message(bool s2m, uint16_t index, uint32_t offset, uint8_t log2 = FakeMemory::kLog2)
	{
		Message ring;
		ring.type = MessageType::add_ring;
		ring.add_ring.flags = s2m ? kRingFlagS2M : 0;
		ring.add_ring.index = index;
		ring.add_ring.region = 0;
		ring.add_ring.offset = offset;
		ring.add_ring.log2_ring_size = log2;
		return ring;
	}
	static Message connect_message()
	{
		Message connect;
		connect.type = MessageType::connect;
		copy_string_to_field("fake-if", connect.name.if_name, kNameSize);
		return connect;
	}

	// A complete, valid handshake from the fake client; our server ends up connected.
	void full_handshake(FakeMemory &memory)
	{
		UniqueFd event_s2m(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
		UniqueFd event_m2s(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
		send_acked(init_message());
		send_acked(region_message(0, memory.rings_size), memory.rings_fd.get());
		send_acked(region_message(1, memory.buffers_size), memory.buffers_fd.get());
		send_acked(ring_message(true, 0, 0), event_s2m.get());
		send_acked(ring_message(false, 0, uint32_t(ring_bytes(FakeMemory::kLog2))), event_m2s.get());
		send(connect_message());
		Message reply;
		ASSERT_TRUE(receive(reply));
		ASSERT_EQ(reply.type, MessageType::connected);
		ASSERT_EQ(ours_.connects, 1);
	}

	std::string name_;
	SocketAddress address_;
	Endpoint ours_;
	UniqueFd peer_;
};

TEST_F(MemifFakePeer, WrongMessageSizeIsRefused)
{
	start_server();
	const uint8_t short_message[64] = {uint8_t(MessageType::init)};
	ASSERT_EQ(::send(peer_.get(), short_message, sizeof short_message, 0), ssize_t(sizeof short_message));
	expect_refusal(MEMIF_ERR_MFMSG);
}

TEST_F(MemifFakePeer, OversizedMessageIsRefused)
{
	start_server();
	uint8_t long_message[200] = {};
	long_message[0] = uint8_t(MessageType::init);
	ASSERT_EQ(::send(peer_.get(), long_message, sizeof long_message, 0), ssize_t(sizeof long_message));
	expect_refusal(MEMIF_ERR_MFMSG);
}

TEST_F(MemifFakePeer, UnknownMessageTypeIsRefused)
{
	start_server();
	uint8_t message[kMessageSize] = {99};
	ASSERT_EQ(::send(peer_.get(), message, sizeof message, 0), ssize_t(kMessageSize));
	expect_refusal(MEMIF_ERR_UNKNOWN_MSG);
}

TEST_F(MemifFakePeer, MessageBeforeInitIsRefused)
{
	start_server();
	send(connect_message());
	expect_refusal(MEMIF_ERR_MFMSG);
}

TEST_F(MemifFakePeer, FdOnInitIsClosedNotLeaked)
{
	start_server();
	UniqueFd stray(eventfd(0, EFD_CLOEXEC));
	send(init_message(0x0100), stray.get());
	expect_refusal(MEMIF_ERR_PROTO);
	EXPECT_EQ(server().last_error(), MEMIF_ERR_PROTO);
	EXPECT_STREQ(server().last_reason(), "Incompatible memif version");
}

TEST_F(MemifFakePeer, SecondInitIsOutOfOrder)
{
	start_server();
	send_acked(init_message());
	send(init_message());
	expect_refusal(MEMIF_ERR_MFMSG);
	EXPECT_EQ(server().last_error(), MEMIF_ERR_MFMSG);
	EXPECT_STREQ(server().last_reason(), "Unexpected message");
}

TEST_F(MemifFakePeer, RegionIndexOutOfRange)
{
	start_server();
	FakeMemory memory;
	send_acked(init_message());
	send(region_message(300, memory.rings_size), memory.rings_fd.get());
	expect_refusal(MEMIF_ERR_MAXREG);
	EXPECT_EQ(server().last_error(), MEMIF_ERR_MAXREG);
}

TEST_F(MemifFakePeer, RegionWithoutFd)
{
	start_server();
	send_acked(init_message());
	send(region_message(0, 4096));
	expect_refusal(MEMIF_ERR_NO_SHMFD);
}

TEST_F(MemifFakePeer, RingIndexOutOfRange)
{
	start_server();
	FakeMemory memory;
	UniqueFd event(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	send_acked(region_message(0, memory.rings_size), memory.rings_fd.get());
	send(ring_message(true, 5, 0), event.get());
	expect_refusal(MEMIF_ERR_MAXRING);
}

TEST_F(MemifFakePeer, RingWithoutInterruptFd)
{
	start_server();
	FakeMemory memory;
	send_acked(init_message());
	send_acked(region_message(0, memory.rings_size), memory.rings_fd.get());
	send(ring_message(true, 0, 0));
	expect_refusal(MEMIF_ERR_NO_INTFD);
}

TEST_F(MemifFakePeer, RingTooLarge)
{
	start_server();
	FakeMemory memory;
	UniqueFd event(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	send(ring_message(true, 0, 0, 15), event.get());
	expect_refusal(MEMIF_ERR_MAX_RING);
}

TEST_F(MemifFakePeer, RegionTooSmallForItsRings)
{
	start_server();
	FakeMemory memory;
	UniqueFd e1(eventfd(0, EFD_CLOEXEC)), e2(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	send_acked(region_message(0, 256), memory.rings_fd.get()); // the rings need 2 * 384 bytes
	send_acked(ring_message(true, 0, 0), e1.get());
	send_acked(ring_message(false, 0, uint32_t(ring_bytes(FakeMemory::kLog2))), e2.get());
	send(connect_message());
	expect_refusal(MEMIF_ERR_MFMSG);
	EXPECT_STREQ(server().last_reason(), "Ring outside its region");
	EXPECT_EQ(ours_.connects, 0);
}

TEST_F(MemifFakePeer, RegionLargerThanItsFile)
{
	start_server();
	FakeMemory memory;
	UniqueFd e1(eventfd(0, EFD_CLOEXEC)), e2(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	// Mapping past the end of the file would fault (SIGBUS) on access: refused at CONNECT.
	send_acked(region_message(0, 1 << 20), memory.rings_fd.get());
	send_acked(ring_message(true, 0, 0), e1.get());
	send_acked(ring_message(false, 0, uint32_t(ring_bytes(FakeMemory::kLog2))), e2.get());
	send(connect_message());
	expect_refusal(MEMIF_ERR_MFMSG);
	EXPECT_STREQ(server().last_reason(), "Region larger than its file");
}

TEST_F(MemifFakePeer, MisalignedRing)
{
	start_server();
	FakeMemory memory;
	UniqueFd e1(eventfd(0, EFD_CLOEXEC)), e2(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	send_acked(region_message(0, memory.rings_size), memory.rings_fd.get());
	send_acked(ring_message(true, 0, 2), e1.get()); // the indexes could not be accessed atomically
	send_acked(ring_message(false, 0, uint32_t(ring_bytes(FakeMemory::kLog2))), e2.get());
	send(connect_message());
	expect_refusal(MEMIF_ERR_MFMSG);
	EXPECT_STREQ(server().last_reason(), "Ring misaligned");
}

TEST_F(MemifFakePeer, WrongCookie)
{
	start_server();
	FakeMemory memory;
	memory.ring(1)->cookie = 0xdeadbeef;
	UniqueFd e1(eventfd(0, EFD_CLOEXEC)), e2(eventfd(0, EFD_CLOEXEC));
	send_acked(init_message());
	send_acked(region_message(0, memory.rings_size), memory.rings_fd.get());
	send_acked(ring_message(true, 0, 0), e1.get());
	send_acked(ring_message(false, 0, uint32_t(ring_bytes(FakeMemory::kLog2))), e2.get());
	send(connect_message());
	expect_refusal(MEMIF_ERR_COOKIE);
}

TEST_F(MemifFakePeer, DescriptorOutsideItsRegionOnReceive)
{
	start_server();
	FakeMemory memory;
	full_handshake(memory);
	// A packet whose buffer lies past the end of region 1.
	RingHeader *s2m = memory.ring(0);
	s2m->desc[0] = Descriptor{0, 1, 64, uint32_t(memory.buffers_size - 32), 0};
	store_release(s2m->head, 1);
	memif_buffer_t bufs[4];
	uint16_t received = 7;
	EXPECT_EQ(memif_rx_burst(ours_.conn, 0, bufs, 4, &received), MEMIF_ERR_MFMSG);
	EXPECT_EQ(received, 0);
	EXPECT_EQ(ours_.disconnects, 1);
	EXPECT_EQ(server().last_error(), MEMIF_ERR_MFMSG);
	EXPECT_STREQ(server().last_reason(), "Descriptor outside its region");
	expect_refusal(MEMIF_ERR_MFMSG);
	EXPECT_EQ(memif_rx_burst(ours_.conn, 0, bufs, 4, &received), MEMIF_ERR_NOCONN);
}

TEST_F(MemifFakePeer, DescriptorNamingAMissingRegion)
{
	start_server();
	FakeMemory memory;
	full_handshake(memory);
	// The fake client posts an M2S buffer in region 7, which does not exist.
	RingHeader *m2s = memory.ring(1);
	m2s->desc[0] = Descriptor{0, 7, 2048, 0, 0};
	store_release(m2s->head, 1);
	memif_buffer_t buf;
	uint16_t allocated = 9;
	EXPECT_EQ(memif_buffer_alloc(ours_.conn, 0, &buf, 1, &allocated, 64), MEMIF_ERR_MFMSG);
	EXPECT_EQ(allocated, 0);
	EXPECT_EQ(ours_.disconnects, 1);
	expect_refusal(MEMIF_ERR_MFMSG);
}

TEST_F(MemifFakePeer, HeadBeyondTheRing)
{
	start_server();
	FakeMemory memory;
	full_handshake(memory);
	store_release(memory.ring(0)->head, 500); // 500 packets in a 16-slot ring
	memif_buffer_t bufs[4];
	uint16_t received = 0;
	EXPECT_EQ(memif_rx_burst(ours_.conn, 0, bufs, 4, &received), MEMIF_ERR_MFMSG);
	EXPECT_EQ(received, 0);
	EXPECT_STREQ(server().last_reason(), "Ring indexes out of range");
	expect_refusal(MEMIF_ERR_MFMSG);
}

TEST_F(MemifFakePeer, IncompleteChainIsHeldBack)
{
	start_server();
	FakeMemory memory;
	full_handshake(memory);
	RingHeader *s2m = memory.ring(0);
	s2m->desc[0].length = 10;
	s2m->desc[1].length = 20;
	s2m->desc[1].flags = kDescFlagNext; // claims a continuation that is not published
	store_release(s2m->head, 2);
	memif_buffer_t bufs[4];
	uint16_t received = 0;
	ASSERT_EQ(memif_rx_burst(ours_.conn, 0, bufs, 4, &received), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(received, 1); // only the complete packet
	EXPECT_EQ(bufs[0].len, 10u);
	s2m->desc[2].length = 30;
	store_release(s2m->head, 3);
	ASSERT_EQ(memif_rx_burst(ours_.conn, 0, bufs, 4, &received), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(received, 2);
	EXPECT_EQ(bufs[0].flags & MEMIF_BUFFER_FLAG_NEXT, MEMIF_BUFFER_FLAG_NEXT);
	EXPECT_EQ(bufs[1].len, 30u);
	// Returning the buffers clears the NEXT flags the peer left (a stale flag cannot survive).
	ASSERT_EQ(memif_refill_queue(ours_.conn, 0, 3, 0), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(load_acquire(s2m->tail), 3);
	EXPECT_EQ(s2m->desc[1].flags, 0);
}

TEST_F(MemifFakePeer, PeerVanishingIsADisconnect)
{
	start_server();
	FakeMemory memory;
	full_handshake(memory);
	peer_.reset();
	ASSERT_TRUE(run_until([&] { return ours_.disconnects == 1; }, [&] { ours_.poll_all(); }));
	EXPECT_EQ(server().last_error(), MEMIF_ERR_DISCONNECTED);
	// The interface listens again: a new client can connect.
	ASSERT_EQ(connect_to(address_, peer_), MEMIF_ERR_SUCCESS);
	Message hello;
	ASSERT_TRUE(receive(hello));
	EXPECT_EQ(hello.type, MessageType::hello);
}

// A fake server in front of our client.
TEST_F(MemifFakePeer, ClientRefusesIncompatibleHello)
{
	UniqueFd listener;
	ASSERT_EQ(listen_on(address_, listener), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(ours_.open(name_), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(ours_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(run_until([&] { return peer_.valid(); },
			      [&] { peer_.reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)); }));
	Message hello;
	hello.type = MessageType::hello;
	hello.hello.min_version = 0x0300;
	hello.hello.max_version = 0x0300;
	send(hello);
	expect_refusal(MEMIF_ERR_PROTO);
	auto &client = *static_cast<Connection *>(ours_.conn);
	EXPECT_EQ(client.last_error(), MEMIF_ERR_PROTO);
	EXPECT_EQ(ours_.connects, 0);
}

TEST_F(MemifFakePeer, ClientRefusesUnexpectedMessage)
{
	UniqueFd listener;
	ASSERT_EQ(listen_on(address_, listener), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(ours_.open(name_), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(ours_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(run_until([&] { return peer_.valid(); },
			      [&] { peer_.reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)); }));
	Message connected;
	connected.type = MessageType::connected; // before HELLO
	send(connected);
	expect_refusal(MEMIF_ERR_MFMSG);
}

} // namespace
