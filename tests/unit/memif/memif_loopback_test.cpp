// Our libmemif talking to itself: both roles in one thread (each with its own database), and
// across two processes.
#include "memif/connection.hpp"
#include "memif_test_support.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/wait.h>
#include <vector>

using namespace memif_test;

namespace {

// Sends and receives counted, content-checked packets of a given size over one queue.
class PacketFlow {
public:
	// capacity: the bytes one tx buffer holds (the client's buffer size; on the server, what the
	// client posted: buffer size minus headroom). memif_buffer_alloc's count is in buffers.
	PacketFlow(memif_conn_handle_t tx, memif_conn_handle_t rx, uint16_t qid, size_t size, uint16_t headroom = 0,
		   size_t capacity = 2048)
	    : tx_(tx), rx_(rx), qid_(qid), size_(size), headroom_(headroom),
	      slots_(uint16_t(std::max<size_t>(1, (size + capacity - 1) / capacity)))
	{
	}

	// Sends one packet if the ring has room; returns whether it did.
	bool send_one()
	{
		memif_buffer_t bufs[16];
		uint16_t allocated = 0;
		const int err = memif_buffer_alloc(tx_, qid_, bufs, slots_, &allocated, uint16_t(size_));
		if (allocated == 0) {
			EXPECT_TRUE(err == MEMIF_ERR_NOBUF_RING || err == MEMIF_ERR_SUCCESS) << memif_strerror(err);
			return false;
		}
		size_t written = 0;
		for (uint16_t b = 0; b < allocated; ++b) {
			auto *data = static_cast<uint8_t *>(bufs[b].data);
			for (uint32_t i = 0; i < bufs[b].len; ++i, ++written)
				data[i] = pattern_byte(sent_, written);
			if (b == 0)
				std::memcpy(data, &sent_, sizeof sent_);
		}
		EXPECT_EQ(written, size_);
		EXPECT_EQ(allocated, slots_);
		uint16_t transmitted = 0;
		EXPECT_EQ(memif_tx_burst(tx_, qid_, bufs, allocated, &transmitted), MEMIF_ERR_SUCCESS);
		EXPECT_EQ(transmitted, allocated);
		++sent_;
		return true;
	}

	// Receives what is there; checks order, length and every byte.
	void receive()
	{
		memif_buffer_t bufs[64];
		uint16_t received = 0;
		ASSERT_EQ(memif_rx_burst(rx_, qid_, bufs, 64, &received), MEMIF_ERR_SUCCESS);
		for (uint16_t b = 0; b < received; ++b) {
			EXPECT_NE(bufs[b].flags & MEMIF_BUFFER_FLAG_RX, 0);
			auto *data = static_cast<uint8_t *>(bufs[b].data);
			packet_.insert(packet_.end(), data, data + bufs[b].len);
			if ((bufs[b].flags & MEMIF_BUFFER_FLAG_NEXT) == 0)
				check_packet();
		}
		if (received > 0) {
			ASSERT_EQ(memif_refill_queue(rx_, qid_, received, headroom_), MEMIF_ERR_SUCCESS);
		}
	}

	uint32_t sent() const { return sent_; }
	uint32_t received() const { return received_; }
	uint32_t bad() const { return bad_; }

private:
	void check_packet()
	{
		bool good = packet_.size() == size_;
		uint32_t sequence = ~0u;
		if (good) {
			std::memcpy(&sequence, packet_.data(), sizeof sequence);
			good = sequence == received_;
			for (size_t i = sizeof sequence; good && i < packet_.size(); ++i)
				good = packet_[i] == pattern_byte(sequence, i);
		}
		bad_ += good ? 0 : 1;
		++received_;
		packet_.clear();
	}

	memif_conn_handle_t tx_;
	memif_conn_handle_t rx_;
	uint16_t qid_;
	size_t size_;
	uint16_t headroom_;
	uint16_t slots_;
	uint32_t sent_ = 0;
	uint32_t received_ = 0;
	uint32_t bad_ = 0;
	std::vector<uint8_t> packet_;
};

class MemifLoopback : public ::testing::Test {
protected:
	void SetUp() override
	{
		name_ = unique_socket_name("loop");
		ASSERT_EQ(server_.open(name_), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(client_.open(name_), MEMIF_ERR_SUCCESS);
	}

	void pump()
	{
		server_.poll_all();
		client_.poll_all();
	}

	bool wait_connected()
	{
		return run_until([&] { return server_.connects > 0 && client_.connects > 0; }, [&] { pump(); });
	}

	// Creates both interfaces (server first), connects them and posts the client's rx buffers.
	void connect(memif_conn_args_t server_args, memif_conn_args_t client_args, uint16_t headroom = 0)
	{
		ASSERT_EQ(server_.create(server_args), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(client_.create(client_args), MEMIF_ERR_SUCCESS);
		ASSERT_TRUE(wait_connected());
		for (uint16_t qid = 0; qid < std::max<uint16_t>(client_args.num_m2s_rings, 1); ++qid)
			ASSERT_EQ(memif_refill_queue(client_.conn, qid, 0xffff, headroom), MEMIF_ERR_SUCCESS);
	}

	void run_flow(PacketFlow &flow, uint32_t packets)
	{
		ASSERT_TRUE(run_until([&] { return flow.received() >= packets; },
				      [&] {
					      for (int i = 0; i < 64 && flow.sent() < packets; ++i)
						      if (!flow.send_one())
							      break;
					      flow.receive();
				      },
				      20000));
		EXPECT_EQ(flow.sent(), packets);
		EXPECT_EQ(flow.received(), packets);
		EXPECT_EQ(flow.bad(), 0u);
	}

	std::string name_;
	Endpoint server_;
	Endpoint client_;
};

TEST_F(MemifLoopback, ConnectsAndReportsDetails)
{
	auto server_args = make_args(true, 7);
	auto client_args = make_args(false, 7);
	connect(server_args, client_args);

	char buffer[2048];
	memif_details_t details;
	ASSERT_EQ(memif_get_details(client_.conn, &details, buffer, sizeof buffer), MEMIF_ERR_SUCCESS);
	EXPECT_STREQ(reinterpret_cast<char *>(details.if_name), "client-if");
	EXPECT_STREQ(reinterpret_cast<char *>(details.remote_if_name), "server-if");
	EXPECT_STREQ(reinterpret_cast<char *>(details.inst_name), "memif-test");
	EXPECT_STREQ(reinterpret_cast<char *>(details.remote_inst_name), "memif-test");
	EXPECT_STREQ(reinterpret_cast<char *>(details.socket_filename), name_.c_str());
	EXPECT_EQ(details.id, 7u);
	EXPECT_EQ(details.role, 1);
	EXPECT_EQ(details.link_up_down, 1);
	EXPECT_EQ(details.regions_num, 2);
	EXPECT_EQ(details.rx_queues_num, 1);
	EXPECT_EQ(details.tx_queues_num, 1);
	EXPECT_EQ(details.rx_queues[0].ring_size, 1024u);
	EXPECT_EQ(details.rx_queues[0].buffer_size, 2048);
	EXPECT_EQ(details.rx_queues[0].head, 1024); // the refill posted every slot
	EXPECT_EQ(details.regions[1].size, 2u * 1024 * 2048);

	ASSERT_EQ(memif_get_details(server_.conn, &details, buffer, sizeof buffer), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(details.role, 0);
	EXPECT_EQ(details.link_up_down, 1);
	EXPECT_EQ(details.regions_num, 2);
	EXPECT_STREQ(reinterpret_cast<char *>(details.remote_if_name), "client-if");

	// Too small a buffer is reported, not overrun.
	char tiny[8];
	EXPECT_EQ(memif_get_details(server_.conn, &details, tiny, sizeof tiny), MEMIF_ERR_NOBUF_DET);
	EXPECT_EQ(memif_get_version(), 0x0200);
	EXPECT_STREQ(memif_get_socket_filename(server_.socket), name_.c_str());
}

TEST_F(MemifLoopback, PacketsBothWaysWrapTheIndexes)
{
	connect(make_args(true), make_args(false));
	// More than 65,536 packets: the 16-bit ring indexes wrap.
	PacketFlow up(client_.conn, server_.conn, 0, 64);
	run_flow(up, 70000);
	PacketFlow down(server_.conn, client_.conn, 0, 1500);
	run_flow(down, 20000);
}

TEST_F(MemifLoopback, ChainedJumboPacketsBothWays)
{
	connect(make_args(true), make_args(false));
	PacketFlow up(client_.conn, server_.conn, 0, 9000); // 5 buffers of 2048 bytes
	run_flow(up, 3000);
	PacketFlow down(server_.conn, client_.conn, 0, 9000);
	run_flow(down, 3000);
}

TEST_F(MemifLoopback, HeadroomShrinksPostedBuffers)
{
	connect(make_args(true), make_args(false), 128);
	memif_buffer_t bufs[8];
	uint16_t count = 0;
	ASSERT_EQ(memif_buffer_alloc(server_.conn, 0, bufs, 2, &count, 3000), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(count, 2);
	EXPECT_EQ(bufs[0].len, 2048u - 128);
	EXPECT_EQ(bufs[0].flags & MEMIF_BUFFER_FLAG_NEXT, MEMIF_BUFFER_FLAG_NEXT);
	EXPECT_EQ(bufs[1].len, 3000u - (2048 - 128));
	uint16_t sent = 0;
	ASSERT_EQ(memif_tx_burst(server_.conn, 0, bufs, count, &sent), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(sent, 2);
	memif_buffer_t in[8];
	uint16_t received = 0;
	ASSERT_EQ(memif_rx_burst(client_.conn, 0, in, 8, &received), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(received, 2);
	EXPECT_EQ(in[0].len, 2048u - 128);
	EXPECT_EQ(in[1].len, 3000u - (2048 - 128));
	// The data starts `headroom` bytes into each 2048-byte buffer of the client's region 1.
	char details_buffer[1024];
	memif_details_t details;
	ASSERT_EQ(memif_get_details(client_.conn, &details, details_buffer, sizeof details_buffer), MEMIF_ERR_SUCCESS);
	const auto offset = static_cast<uint8_t *>(in[0].data) - static_cast<uint8_t *>(details.regions[1].addr);
	EXPECT_EQ(offset % 2048, 128);
	ASSERT_EQ(memif_refill_queue(client_.conn, 0, received, 128), MEMIF_ERR_SUCCESS);
	PacketFlow down(server_.conn, client_.conn, 0, 3000, 128, 2048 - 128);
	run_flow(down, 1000);
}

// libmemif 3.1: a request memif_buffer_alloc cannot meet in full is MEMIF_ERR_NOBUF_RING, also when
// `count` (in buffers) is too small for the next whole chained packet; count_out says what was
// handed out, and a packet that did not fit is not handed out at all.
TEST_F(MemifLoopback, BufferAllocCountTooSmallForAChainIsNobufRing)
{
	connect(make_args(true), make_args(false));
	for (memif_conn_handle_t tx : {client_.conn, server_.conn}) {
		SCOPED_TRACE(tx == client_.conn ? "client" : "server");
		memif_buffer_t bufs[8];
		uint16_t count = 99;
		// 3000 bytes take two 2048-byte buffers: one buffer is not enough for even one packet.
		EXPECT_EQ(memif_buffer_alloc(tx, 0, bufs, 1, &count, 3000), MEMIF_ERR_NOBUF_RING);
		EXPECT_EQ(count, 0);
		// Three buffers: one whole packet (two buffers), and no room for the next one.
		EXPECT_EQ(memif_buffer_alloc(tx, 0, bufs, 3, &count, 3000), MEMIF_ERR_NOBUF_RING);
		ASSERT_EQ(count, 2);
		EXPECT_EQ(bufs[0].flags & MEMIF_BUFFER_FLAG_NEXT, MEMIF_BUFFER_FLAG_NEXT);
		EXPECT_EQ(bufs[1].flags & MEMIF_BUFFER_FLAG_NEXT, 0);
		// The refused packet took no slot: the next allocation continues right after the first.
		memif_buffer_t more[2];
		EXPECT_EQ(memif_buffer_alloc(tx, 0, more, 2, &count, 3000), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(count, 2);
		EXPECT_EQ(more[0].desc_index, (bufs[1].desc_index + 1) % 1024);
		bufs[2] = more[0];
		bufs[3] = more[1];
		// Nothing asked, nothing refused.
		EXPECT_EQ(memif_buffer_alloc(tx, 0, more, 0, &count, 64), MEMIF_ERR_SUCCESS);
		EXPECT_EQ(count, 0);
		uint16_t sent = 0;
		ASSERT_EQ(memif_tx_burst(tx, 0, bufs, 4, &sent), MEMIF_ERR_SUCCESS);
		EXPECT_EQ(sent, 4);
	}
	// A full ring: what fits is handed out, the rest is MEMIF_ERR_NOBUF_RING.
	std::vector<memif_buffer_t> bufs(1100);
	uint16_t count = 0;
	EXPECT_EQ(memif_buffer_alloc(client_.conn, 0, bufs.data(), 1100, &count, 64), MEMIF_ERR_NOBUF_RING);
	EXPECT_EQ(count, 1024 - 4); // the four buffers sent above are not received yet
	EXPECT_EQ(memif_buffer_alloc(client_.conn, 0, bufs.data(), 1, &count, 64), MEMIF_ERR_NOBUF_RING);
	EXPECT_EQ(count, 0);
	// Once the server returns the two packets, their slots are free again.
	memif_buffer_t in[8];
	uint16_t received = 0;
	ASSERT_EQ(memif_rx_burst(server_.conn, 0, in, 8, &received), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(received, 4);
	ASSERT_EQ(memif_refill_queue(server_.conn, 0, received, 0), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(memif_buffer_alloc(client_.conn, 0, bufs.data(), 4, &count, 64), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(count, 4);
}

// libmemif 3.1: memif_rx_burst consumes the queue's interrupt event, also when the ring turns out
// to be empty (a late signal for packets already read must not stay pending forever).
TEST_F(MemifLoopback, RxBurstConsumesTheInterruptEvent)
{
	connect(make_args(true), make_args(false));
	int efd = -1;
	ASSERT_EQ(memif_get_queue_efd(client_.conn, 0, &efd), MEMIF_ERR_SUCCESS);
	PacketFlow down(server_.conn, client_.conn, 0, 60);
	ASSERT_TRUE(down.send_one()); // interrupt mode (the default): the server signals
	pollfd readable{efd, POLLIN, 0};
	EXPECT_EQ(poll(&readable, 1, 0), 1);
	down.receive();
	EXPECT_EQ(down.received(), 1u);
	EXPECT_EQ(poll(&readable, 1, 0), 0);
	// A signal with nothing behind it: rx_burst finds no packet and still consumes it.
	const uint64_t one = 1;
	ASSERT_EQ(write(efd, &one, sizeof one), ssize_t(sizeof one));
	memif_buffer_t bufs[4];
	uint16_t received = 9;
	EXPECT_EQ(memif_rx_burst(client_.conn, 0, bufs, 4, &received), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(received, 0);
	EXPECT_EQ(poll(&readable, 1, 0), 0);
}

TEST_F(MemifLoopback, SeveralQueuesEachWay)
{
	auto server_args = make_args(true);
	server_args.num_s2m_rings = 3;
	server_args.num_m2s_rings = 2;
	auto client_args = server_args;
	client_args.is_master = 0;
	client_args.log2_ring_size = 8;
	client_args.buffer_size = 4096;
	connect(server_args, client_args);

	char buffer[4096];
	memif_details_t details;
	ASSERT_EQ(memif_get_details(server_.conn, &details, buffer, sizeof buffer), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(details.rx_queues_num, 3);
	EXPECT_EQ(details.tx_queues_num, 2);
	EXPECT_EQ(details.rx_queues[2].ring_size, 256u);

	for (uint16_t qid = 0; qid < 3; ++qid) {
		PacketFlow up(client_.conn, server_.conn, qid, 100 + qid * 1000, 0, 4096);
		run_flow(up, 2000);
	}
	for (uint16_t qid = 0; qid < 2; ++qid) {
		PacketFlow down(server_.conn, client_.conn, qid, 5000 + qid, 0, 4096);
		run_flow(down, 2000);
	}
	memif_buffer_t buf;
	uint16_t count = 0;
	EXPECT_EQ(memif_buffer_alloc(server_.conn, 2, &buf, 1, &count, 64), MEMIF_ERR_QID);
	EXPECT_EQ(memif_rx_burst(client_.conn, 2, &buf, 1, &count), MEMIF_ERR_QID);
}

TEST_F(MemifLoopback, SecretsMustMatch)
{
	auto server_args = make_args(true);
	std::strcpy(reinterpret_cast<char *>(server_args.secret), "s3cr3t");
	ASSERT_EQ(server_.create(server_args), MEMIF_ERR_SUCCESS);
	auto *server = static_cast<softdpu::memif::Connection *>(server_.conn);

	// Missing secret.
	ASSERT_EQ(client_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	auto *client = static_cast<softdpu::memif::Connection *>(client_.conn);
	ASSERT_TRUE(run_until([&] { return server->last_error() == MEMIF_ERR_NOSECRET; }, [&] { pump(); }));
	ASSERT_TRUE(run_until([&] { return client->last_error() == MEMIF_ERR_DISCONNECT; }, [&] { pump(); }));
	EXPECT_STREQ(client->last_reason(), "Secret required");
	memif_delete(&client_.conn);

	// Wrong secret.
	auto wrong = make_args(false);
	std::strcpy(reinterpret_cast<char *>(wrong.secret), "guess");
	ASSERT_EQ(client_.create(wrong), MEMIF_ERR_SUCCESS);
	client = static_cast<softdpu::memif::Connection *>(client_.conn);
	ASSERT_TRUE(run_until([&] { return server->last_error() == MEMIF_ERR_SECRET; }, [&] { pump(); }));
	ASSERT_TRUE(run_until([&] { return client->last_error() == MEMIF_ERR_DISCONNECT; }, [&] { pump(); }));
	EXPECT_STREQ(client->last_reason(), "Incorrect secret");
	EXPECT_EQ(server_.connects + client_.connects, 0);
	memif_delete(&client_.conn);

	// Right secret.
	auto right = make_args(false);
	std::strcpy(reinterpret_cast<char *>(right.secret), "s3cr3t");
	ASSERT_EQ(client_.create(right), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(wait_connected());
}

TEST_F(MemifLoopback, ModeMismatchIsRefused)
{
	auto server_args = make_args(true);
	server_args.mode = MEMIF_INTERFACE_MODE_IP;
	ASSERT_EQ(server_.create(server_args), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(client_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	auto *server = static_cast<softdpu::memif::Connection *>(server_.conn);
	auto *client = static_cast<softdpu::memif::Connection *>(client_.conn);
	ASSERT_TRUE(run_until([&] { return server->last_error() == MEMIF_ERR_MODE; }, [&] { pump(); }));
	ASSERT_TRUE(run_until([&] { return client->last_error() == MEMIF_ERR_DISCONNECT; }, [&] { pump(); }));
	EXPECT_STREQ(client->last_reason(), "Mode mismatch");
	EXPECT_EQ(server_.connects + client_.connects, 0);
}

TEST_F(MemifLoopback, UnknownIdIsRefused)
{
	ASSERT_EQ(server_.create(make_args(true, 1)), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(client_.create(make_args(false, 2)), MEMIF_ERR_SUCCESS);
	auto *client = static_cast<softdpu::memif::Connection *>(client_.conn);
	ASSERT_TRUE(run_until([&] { return client->last_error() == MEMIF_ERR_DISCONNECT; }, [&] { pump(); }));
	EXPECT_STREQ(client->last_reason(), "ID not found");
}

TEST_F(MemifLoopback, InterruptModeSignalsAndPollingModeDoesNot)
{
	ASSERT_EQ(server_.create(make_args(true), true), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(client_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(wait_connected());

	// Interrupt mode (the default): the server's on_interrupt runs when the client transmits.
	PacketFlow up(client_.conn, server_.conn, 0, 60);
	ASSERT_TRUE(up.send_one());
	ASSERT_TRUE(run_until([&] { return server_.interrupts > 0; }, [&] { pump(); }));
	up.receive();
	EXPECT_EQ(up.received(), 1u);

	// Polling mode: the client sets MASK_INT on its rx ring, so the server does not signal.
	ASSERT_EQ(memif_refill_queue(client_.conn, 0, 0xffff, 0), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(memif_set_rx_mode(client_.conn, MEMIF_RX_MODE_POLLING, 0), MEMIF_ERR_SUCCESS);
	int efd = -1;
	ASSERT_EQ(memif_get_queue_efd(client_.conn, 0, &efd), MEMIF_ERR_SUCCESS);
	PacketFlow down(server_.conn, client_.conn, 0, 60);
	ASSERT_TRUE(down.send_one());
	uint64_t counter = 0;
	EXPECT_LT(read(efd, &counter, sizeof counter), 0); // nothing signalled
	down.receive();
	EXPECT_EQ(down.received(), 1u);

	// Back to interrupt mode: the client's queue eventfd becomes readable.
	ASSERT_EQ(memif_set_rx_mode(client_.conn, MEMIF_RX_MODE_INTERRUPT, 0), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(down.send_one());
	EXPECT_EQ(read(efd, &counter, sizeof counter), ssize_t(sizeof counter));
	EXPECT_EQ(counter, 1u);
	EXPECT_EQ(memif_set_rx_mode(client_.conn, MEMIF_RX_MODE_POLLING, 5), MEMIF_ERR_QID);
}

TEST_F(MemifLoopback, ClientReconnectsWhenTheServerReturns)
{
	itimerspec fast{};
	fast.it_value.tv_nsec = 20'000'000;
	fast.it_interval.tv_nsec = 20'000'000;
	ASSERT_EQ(memif_per_thread_set_connection_request_timer(client_.db, fast), MEMIF_ERR_SUCCESS);
	// The client comes first: no server yet, it keeps retrying.
	ASSERT_EQ(client_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	for (int i = 0; i < 20; ++i) {
		pump();
		usleep(1000);
	}
	EXPECT_EQ(client_.connects, 0);
	ASSERT_EQ(server_.create(make_args(true)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(wait_connected());

	// The server goes away: its own disconnect callback runs before memif_delete returns (as in
	// libmemif 3.1), and the client sees the disconnect.
	ASSERT_EQ(server_.disconnects, 0);
	ASSERT_EQ(memif_delete(&server_.conn), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(server_.disconnects, 1);
	ASSERT_TRUE(run_until([&] { return client_.disconnects == 1; }, [&] { pump(); }));
	auto *client = static_cast<softdpu::memif::Connection *>(client_.conn);
	EXPECT_EQ(client->last_error(), MEMIF_ERR_DISCONNECT);
	uint16_t count = 0;
	memif_buffer_t buf;
	EXPECT_EQ(memif_buffer_alloc(client_.conn, 0, &buf, 1, &count, 64), MEMIF_ERR_NOCONN);

	// It returns: the client reconnects on its own and traffic flows again.
	ASSERT_EQ(server_.create(make_args(true)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(run_until([&] { return client_.connects == 2 && server_.connects == 2; }, [&] { pump(); }));
	ASSERT_EQ(memif_refill_queue(client_.conn, 0, 0xffff, 0), MEMIF_ERR_SUCCESS);
	PacketFlow down(server_.conn, client_.conn, 0, 256);
	run_flow(down, 500);
}

TEST_F(MemifLoopback, ZeroCopyForwardingWithEnqTx)
{
	connect(make_args(true), make_args(false));
	// The server sends to the client; the client forwards the very buffers back (enq_tx).
	PacketFlow down(server_.conn, client_.conn, 0, 200);
	ASSERT_TRUE(down.send_one());
	memif_buffer_t bufs[4];
	uint16_t received = 0;
	ASSERT_TRUE(
	    run_until([&] { return received > 0; },
		      [&] { ASSERT_EQ(memif_rx_burst(client_.conn, 0, bufs, 4, &received), MEMIF_ERR_SUCCESS); }));
	ASSERT_EQ(received, 1);
	const void *data = bufs[0].data;
	uint16_t queued = 0;
	ASSERT_EQ(memif_buffer_enq_tx(client_.conn, 0, bufs, 1, &queued), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(queued, 1);
	EXPECT_EQ(bufs[0].data, data);
	uint16_t sent = 0;
	ASSERT_EQ(memif_tx_burst(client_.conn, 0, bufs, 1, &sent), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(memif_refill_queue(client_.conn, 0, 1, 0), MEMIF_ERR_SUCCESS);

	memif_buffer_t echo;
	uint16_t got = 0;
	ASSERT_TRUE(run_until([&] { return got > 0; },
			      [&] { ASSERT_EQ(memif_rx_burst(server_.conn, 0, &echo, 1, &got), MEMIF_ERR_SUCCESS); }));
	ASSERT_EQ(echo.len, 200u);
	uint32_t sequence = 1;
	std::memcpy(&sequence, echo.data, sizeof sequence);
	EXPECT_EQ(sequence, 0u);
	for (size_t i = 4; i < 200; ++i)
		ASSERT_EQ(static_cast<uint8_t *>(echo.data)[i], pattern_byte(0, i));
	EXPECT_EQ(memif_buffer_enq_tx(server_.conn, 0, &echo, 1, &queued), MEMIF_ERR_INVAL_ARG);
}

TEST_F(MemifLoopback, AcrossTwoProcesses)
{
	const pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		// The server in its own process: echoes 5000 packets back, then waits for the client to go.
		Endpoint server;
		int status = server.open(name_) == MEMIF_ERR_SUCCESS ? 0 : 10;
		if (status == 0 && server.create(make_args(true)) != MEMIF_ERR_SUCCESS)
			status = 11;
		uint32_t echoed = 0;
		const bool ok =
		    status == 0 &&
		    run_until([&] { return server.disconnects > 0; },
			      [&] {
				      server.poll_all();
				      memif_buffer_t in[32];
				      memif_buffer_t out[32];
				      uint16_t rx = 0, allocated = 0, tx = 0;
				      if (memif_rx_burst(server.conn, 0, in, 32, &rx) != 0 || rx == 0)
					      return;
				      memif_buffer_alloc(server.conn, 0, out, rx, &allocated, uint16_t(in[0].len));
				      for (uint16_t i = 0; i < allocated; ++i) {
					      out[i].len = in[i].len;
					      std::memcpy(out[i].data, in[i].data, in[i].len);
				      }
				      memif_tx_burst(server.conn, 0, out, allocated, &tx);
				      memif_refill_queue(server.conn, 0, rx, 0);
				      echoed += tx;
			      },
			      20000);
		_exit(status != 0 ? status : (ok && echoed == 5000 ? 0 : 12));
	}
	// The client: its retry timer finds the server once the child listens.
	itimerspec fast{};
	fast.it_value.tv_nsec = 10'000'000;
	fast.it_interval.tv_nsec = 10'000'000;
	ASSERT_EQ(memif_per_thread_set_connection_request_timer(client_.db, fast), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(client_.create(make_args(false)), MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(run_until([&] { return client_.connects > 0; }, [&] { client_.poll_all(); }));
	ASSERT_EQ(memif_refill_queue(client_.conn, 0, 0xffff, 0), MEMIF_ERR_SUCCESS);
	// Send one packet at a time and check each echo.
	PacketFlow out(client_.conn, nullptr, 0, 512);
	PacketFlow back(nullptr, client_.conn, 0, 512);
	for (uint32_t i = 0; i < 5000; ++i) {
		ASSERT_TRUE(run_until([&] { return out.send_one(); }, [] {}));
		ASSERT_TRUE(run_until([&] { return back.received() == i + 1; }, [&] { back.receive(); }));
	}
	EXPECT_EQ(back.bad(), 0u);
	memif_delete(&client_.conn);
	int status = -1;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(MemifApi, StrerrorAndArgumentChecks)
{
	EXPECT_STREQ(memif_strerror(MEMIF_ERR_SUCCESS), "Success");
	EXPECT_STREQ(memif_strerror(MEMIF_ERR_SECRET), "Secret mismatch");
	EXPECT_STREQ(memif_strerror(MEMIF_ERR_PRIVHDR), "Private headers not supported");
	EXPECT_STREQ(memif_strerror(-1), "Unknown error");
	EXPECT_STREQ(memif_strerror(1000), "Unknown error");

	EXPECT_EQ(memif_create(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_INVAL_ARG);
	EXPECT_EQ(memif_delete(nullptr), MEMIF_ERR_INVAL_ARG);
	memif_conn_handle_t none = nullptr;
	EXPECT_EQ(memif_delete(&none), MEMIF_ERR_NOCONN);
	uint16_t count = 0;
	EXPECT_EQ(memif_rx_burst(nullptr, 0, nullptr, 0, &count), MEMIF_ERR_NOCONN);
	EXPECT_EQ(memif_poll_event(0), MEMIF_ERR_INVAL_ARG); // no memif_init yet
	EXPECT_EQ(memif_per_thread_poll_event(nullptr, 0), MEMIF_ERR_INVAL_ARG);

	Endpoint endpoint;
	ASSERT_EQ(endpoint.open(unique_socket_name("args")), MEMIF_ERR_SUCCESS);
	auto args = make_args(true);
	args.log2_ring_size = 15;
	EXPECT_EQ(endpoint.create(args), MEMIF_ERR_MAX_RING);
	args = make_args(true);
	args.socket = nullptr;
	memif_conn_handle_t conn = nullptr;
	// A per-thread database has no default socket.
	EXPECT_EQ(memif_create(&conn, &args, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_INVAL_ARG);
	memif_socket_handle_t bad_socket = nullptr;
	EXPECT_EQ(memif_per_thread_create_socket(endpoint.db, &bad_socket, "", nullptr), MEMIF_ERR_INVAL_ARG);
	EXPECT_EQ(memif_per_thread_create_socket(endpoint.db, &bad_socket, std::string(200, 'x').c_str(), nullptr),
		  MEMIF_ERR_INVAL_ARG);

	// A socket used by a master cannot serve a slave, nor be deleted while in use.
	ASSERT_EQ(endpoint.create(make_args(true)), MEMIF_ERR_SUCCESS);
	args = make_args(false);
	args.socket = endpoint.socket;
	EXPECT_EQ(memif_create(&conn, &args, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_INVAL_ARG);
	EXPECT_EQ(memif_delete_socket(&endpoint.socket), MEMIF_ERR_INVAL_ARG);
	EXPECT_EQ(memif_request_connection(endpoint.conn), MEMIF_ERR_INVAL_ARG);
	memif_buffer_t buf;
	EXPECT_EQ(memif_buffer_alloc(endpoint.conn, 0, &buf, 1, &count, 64), MEMIF_ERR_NOCONN);
}

TEST(MemifApi, GlobalDatabaseWithControlFdCallback)
{
	// The callback style: the application watches the fds libmemif reports.
	static std::vector<int> watched;
	watched.clear();
	auto update = [](int fd, uint8_t events, void *) -> int {
		if (events & MEMIF_FD_EVENT_DEL)
			watched.erase(std::remove(watched.begin(), watched.end(), fd), watched.end());
		else
			watched.push_back(fd);
		return 0;
	};
	ASSERT_EQ(memif_init(update, const_cast<char *>("global-app"), nullptr, nullptr, nullptr), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(memif_init(update, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_ALREADY);
	EXPECT_EQ(watched.size(), 1u);                       // the connection request timer
	EXPECT_EQ(memif_poll_event(0), MEMIF_ERR_INVAL_ARG); // the application polls, not libmemif

	const std::string name = unique_socket_name("global");
	memif_socket_handle_t socket = nullptr;
	ASSERT_EQ(memif_create_socket(&socket, name.c_str(), nullptr), MEMIF_ERR_SUCCESS);
	Endpoint peer;
	ASSERT_EQ(peer.open(name), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(peer.create(make_args(true)), MEMIF_ERR_SUCCESS);

	int connected = 0;
	auto args = make_args(false);
	args.socket = socket;
	memif_conn_handle_t conn = nullptr;
	ASSERT_EQ(memif_create(
		      &conn, &args,
		      [](memif_conn_handle_t, void *ctx) {
			      ++*static_cast<int *>(ctx);
			      return 0;
		      },
		      nullptr, nullptr, &connected),
		  MEMIF_ERR_SUCCESS);
	ASSERT_TRUE(run_until([&] { return connected > 0 && peer.connects > 0; },
			      [&] {
				      peer.poll_all();
				      for (int fd : std::vector<int>(watched))
					      memif_control_fd_handler(fd, MEMIF_FD_EVENT_READ);
			      }));
	EXPECT_GE(watched.size(), 2u); // timer and control channel
	ASSERT_EQ(memif_delete(&conn), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(conn, nullptr);
	ASSERT_EQ(memif_delete_socket(&socket), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(memif_cleanup(), MEMIF_ERR_SUCCESS);
	EXPECT_TRUE(watched.empty());
}

TEST(MemifApi, CustomAllocatorServesEveryAllocation)
{
	static size_t allocations = 0;
	static size_t frees = 0;
	allocations = frees = 0;
	auto counting_alloc = [](size_t size) -> void * {
		++allocations;
		return std::malloc(size);
	};
	auto counting_realloc = [](void *pointer, size_t size) -> void * { return std::realloc(pointer, size); };
	auto counting_free = [](void *pointer) {
		if (pointer != nullptr)
			++frees;
		std::free(pointer);
	};
	memif_per_thread_main_handle_t db = nullptr;
	ASSERT_EQ(
	    memif_per_thread_init(&db, nullptr, nullptr, nullptr, counting_alloc, counting_realloc, counting_free),
	    MEMIF_ERR_SUCCESS);
	memif_socket_handle_t socket = nullptr;
	ASSERT_EQ(memif_per_thread_create_socket(db, &socket, unique_socket_name("alloc").c_str(), nullptr),
		  MEMIF_ERR_SUCCESS);
	auto args = make_args(true);
	args.socket = socket;
	memif_conn_handle_t conn = nullptr;
	ASSERT_EQ(memif_create(&conn, &args, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_SUCCESS);
	EXPECT_GE(allocations, 3u); // database, socket, connection and their containers
	ASSERT_EQ(memif_delete(&conn), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(memif_delete_socket(&socket), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(memif_per_thread_cleanup(&db), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(db, nullptr);
	EXPECT_EQ(allocations, frees);
}

TEST(MemifApi, CancelPollEvent)
{
	memif_per_thread_main_handle_t db = nullptr;
	ASSERT_EQ(memif_per_thread_init(&db, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_SUCCESS);
	ASSERT_EQ(memif_per_thread_cancel_poll_event(db), MEMIF_ERR_SUCCESS);
	EXPECT_EQ(memif_per_thread_poll_event(db, -1), MEMIF_ERR_POLL_CANCEL);
	EXPECT_EQ(memif_per_thread_poll_event(db, 0), MEMIF_ERR_SUCCESS); // consumed
	ASSERT_EQ(memif_per_thread_cleanup(&db), MEMIF_ERR_SUCCESS);
}

} // namespace
