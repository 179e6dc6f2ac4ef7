// Both ends of a memif link in two threads of one process, each with its own database, moving
// counted and content-checked packets through the shared rings: under TSan this checks that the
// ring indexes order every descriptor and payload access.
#include "memif_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace memif_test;

namespace {

constexpr uint32_t kPackets = 20000;
constexpr uint16_t kSize = 3000; // two buffers each: chains cross the threads too

TEST(MemifConcurrent, TwoThreadsExchangePackets)
{
	const std::string name = unique_socket_name("threads");
	std::atomic<bool> server_ready{false};
	std::atomic<uint32_t> server_bad{0};
	std::atomic<uint32_t> client_received{0};
	std::atomic<uint32_t> client_bad{0};

	std::thread server_thread([&] {
		// The server echoes every packet it receives.
		Endpoint server;
		ASSERT_EQ(server.open(name), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(server.create(make_args(true)), MEMIF_ERR_SUCCESS);
		server_ready = true;
		uint32_t echoed = 0;
		run_until([&] { return echoed == kPackets; },
			  [&] {
				  server.poll_all();
				  memif_buffer_t in[32];
				  memif_buffer_t out[32];
				  uint16_t rx = 0;
				  if (memif_rx_burst(server.conn, 0, in, 32, &rx) != MEMIF_ERR_SUCCESS || rx == 0)
					  return;
				  uint16_t allocated = 0;
				  memif_buffer_alloc(server.conn, 0, out, rx, &allocated, 0);
				  if (allocated != rx) {
					  ++server_bad;
					  return;
				  }
				  for (uint16_t i = 0; i < rx; ++i) {
					  std::memcpy(out[i].data, in[i].data, in[i].len);
					  out[i].len = in[i].len;
					  out[i].flags = in[i].flags & MEMIF_BUFFER_FLAG_NEXT;
					  if ((in[i].flags & MEMIF_BUFFER_FLAG_NEXT) == 0)
						  ++echoed;
				  }
				  uint16_t tx = 0;
				  memif_tx_burst(server.conn, 0, out, rx, &tx);
				  memif_refill_queue(server.conn, 0, rx, 0);
			  },
			  60000);
		// Let the client drain before the interface goes away.
		run_until([&] { return client_received.load() == kPackets; }, [] {}, 60000);
	});

	std::thread client_thread([&] {
		while (!server_ready)
			std::this_thread::yield();
		Endpoint client;
		ASSERT_EQ(client.open(name), MEMIF_ERR_SUCCESS);
		ASSERT_EQ(client.create(make_args(false)), MEMIF_ERR_SUCCESS);
		ASSERT_TRUE(run_until([&] { return client.connects > 0; }, [&] { client.poll_all(); }));
		ASSERT_EQ(memif_refill_queue(client.conn, 0, 0xffff, 0), MEMIF_ERR_SUCCESS);
		uint32_t sent = 0;
		uint32_t received = 0;
		std::vector<uint8_t> packet;
		run_until([&] { return received == kPackets; },
			  [&] {
				  // Keep at most 64 packets in flight so the echo always has room.
				  while (sent < kPackets && sent - received < 64) {
					  memif_buffer_t bufs[2];
					  uint16_t allocated = 0;
					  memif_buffer_alloc(client.conn, 0, bufs, 2, &allocated, kSize);
					  if (allocated != 2)
						  break;
					  size_t at = 0;
					  for (auto &buf : bufs)
						  for (uint32_t i = 0; i < buf.len; ++i, ++at)
							  static_cast<uint8_t *>(buf.data)[i] = pattern_byte(sent, at);
					  uint16_t tx = 0;
					  memif_tx_burst(client.conn, 0, bufs, 2, &tx);
					  ++sent;
				  }
				  memif_buffer_t in[32];
				  uint16_t rx = 0;
				  if (memif_rx_burst(client.conn, 0, in, 32, &rx) != MEMIF_ERR_SUCCESS)
					  return;
				  for (uint16_t i = 0; i < rx; ++i) {
					  auto *data = static_cast<uint8_t *>(in[i].data);
					  packet.insert(packet.end(), data, data + in[i].len);
					  if ((in[i].flags & MEMIF_BUFFER_FLAG_NEXT) != 0)
						  continue;
					  bool good = packet.size() == kSize;
					  for (size_t b = 0; good && b < packet.size(); ++b)
						  good = packet[b] == pattern_byte(received, b);
					  client_bad += good ? 0 : 1;
					  ++received;
					  client_received = received;
					  packet.clear();
				  }
				  if (rx > 0)
					  memif_refill_queue(client.conn, 0, rx, 0);
			  },
			  60000);
	});

	client_thread.join();
	server_thread.join();
	EXPECT_EQ(client_received.load(), kPackets);
	EXPECT_EQ(client_bad.load(), 0u);
	EXPECT_EQ(server_bad.load(), 0u);
}

TEST(MemifConcurrent, CancelWakesABlockedPoll)
{
	memif_per_thread_main_handle_t db = nullptr;
	ASSERT_EQ(memif_per_thread_init(&db, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), MEMIF_ERR_SUCCESS);
	std::atomic<int> result{-1};
	std::thread poller([&] { result = memif_per_thread_poll_event(db, -1); });
	usleep(20000);
	ASSERT_EQ(memif_per_thread_cancel_poll_event(db), MEMIF_ERR_SUCCESS);
	poller.join();
	EXPECT_EQ(result.load(), MEMIF_ERR_POLL_CANCEL);
	ASSERT_EQ(memif_per_thread_cleanup(&db), MEMIF_ERR_SUCCESS);
}

} // namespace
