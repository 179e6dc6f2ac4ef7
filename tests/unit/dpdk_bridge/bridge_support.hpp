// The DPDK bridge tests' shared support: the EAL of the test process (one per process, whichever
// test starts it) and a fixture for ports on the packet links.
#pragma once

#include "support/devices.hpp"

#include <doca_dev.h>
#include <softdpu/link.h>

#include <gtest/gtest.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace softdpu_test {

// DPDK's log of this process (every thread's, the interrupt thread's too), captured as well as
// written to stderr: each line with its level, so that a test can tell DPDK's errors it expected
// from ones it did not.
class EalLog {
public:
	struct Line {
		int level; // RTE_LOG_ERR, ...
		std::string text;
	};

	static EalLog &instance()
	{
		static EalLog log;
		return log;
	}

	// Makes DPDK log into this capture (before rte_eal_init, so that the EAL's own lines come too).
	void open()
	{
		static const cookie_io_functions_t functions = {nullptr, &EalLog::write, nullptr, nullptr};
		FILE *stream = fopencookie(this, "w", functions);
		if (stream == nullptr)
			return;
		setvbuf(stream, nullptr, _IONBF, 0);
		(void)rte_openlog_stream(stream);
	}

	// How many lines so far; the lines from `from` on.
	size_t size()
	{
		const std::lock_guard lock(mutex);
		return lines.size();
	}
	std::vector<Line> since(size_t from)
	{
		const std::lock_guard lock(mutex);
		return {lines.begin() + static_cast<std::ptrdiff_t>(std::min(from, lines.size())), lines.end()};
	}

private:
	static ssize_t write(void *cookie, const char *data, size_t size)
	{
		auto *self = static_cast<EalLog *>(cookie);
		(void)fwrite(data, 1, size, stderr);
		// rte_vlog sets the message's level for the thread that writes it.
		const int level = rte_log_cur_msg_loglevel();
		const std::lock_guard lock(self->mutex);
		self->partial.append(data, size);
		for (size_t end = self->partial.find('\n'); end != std::string::npos; end = self->partial.find('\n')) {
			self->lines.push_back({level, self->partial.substr(0, end)});
			self->partial.erase(0, end + 1);
		}
		return static_cast<ssize_t>(size);
	}

	std::mutex mutex;
	std::string partial;
	std::vector<Line> lines;
};

// The EAL of this process, and its run-time directory removed at exit.
struct Eal {
	Eal()
	{
		cpu_set_t saved;
		CPU_ZERO(&saved);
		(void)pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
		// The link sockets of the port tests live in a run directory of this process's own.
		char run_dir_template[] = "/tmp/softdpu_dpdk_bridge_run_XXXXXX";
		if (mkdtemp(run_dir_template) != nullptr) {
			run_dir = run_dir_template;
			(void)setenv("SOFTDPU_RUN_DIR", run_dir.c_str(), 1);
		}
		std::vector<std::string> args = {"unit_dpdk_bridge",
						 "--no-huge",
						 "--no-pci",
						 "-m",
						 "128",
						 "-l",
						 "0",
						 "--log-level=error",
						 "--file-prefix=softdpu_dpdk_bridge_" + std::to_string(getpid())};
		std::vector<char *> argv;
		for (std::string &arg : args)
			argv.push_back(arg.data());
		EalLog::instance().open();
		ok = rte_eal_init(static_cast<int>(argv.size()), argv.data()) >= 0;
		// EAL pins the main thread to lcore 0's CPU: give the test (and the DMA engine threads it
		// starts) every CPU back.
		(void)pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
		if (ok)
			runtime_dir = rte_eal_get_runtime_dir();
	}
	~Eal()
	{
		std::error_code ignored;
		if (!run_dir.empty())
			std::filesystem::remove_all(run_dir, ignored);
		if (!ok)
			return;
		(void)rte_eal_cleanup();
		std::filesystem::remove_all(runtime_dir, ignored);
	}
	bool ok = false;
	std::string run_dir;
	std::string runtime_dir;
};

inline bool eal()
{
	static Eal instance;
	return instance.ok;
}

// Ports on the packet links: the bridge's port on a device's link end, and a plain net_memif port
// on the other end of the same link (the end no doca_dev of this process's side stands for).
class PortLinks : public ::testing::Test {
protected:
	static doca_dev *open_by_iface(const char *iface)
	{
		return softdpu_test::open_first_device([&](doca_devinfo *info) {
			char name[DOCA_DEVINFO_IFACE_NAME_SIZE] = {};
			return doca_devinfo_get_iface_name(info, name, sizeof(name)) == DOCA_SUCCESS &&
			       std::strcmp(name, iface) == 0;
		});
	}

	// The other end of the link that `end` (a function or representor name) ends: a net_memif port
	// with the other role on the same socket.
	static bool probe_peer(const char *end, const std::string &vdev, uint16_t &port_id)
	{
		softdpu_link link{};
		uint8_t is_master = 0;
		if (softdpu_link_find(end, &link, &is_master) != DOCA_SUCCESS)
			return false;
		char dir[SOFTDPU_LINK_SOCKET_SIZE];
		if (softdpu_link_get_socket_dir(dir, sizeof(dir), 1) != DOCA_SUCCESS)
			return false;
		// DPDK's net_memif keeps one socket per path string in a process: the same socket file
		// under another spelling ("links/./x.sock") keeps the two ends apart.
		std::string socket = link.socket;
		socket.insert(socket.rfind('/'), "/.");
		const std::string args = vdev + ",socket=" + socket +
					 ",socket-abstract=no,role=" + (is_master != 0 ? "client" : "server") +
					 ",id=0,bsize=16384,rsize=10";
		return rte_dev_probe(args.c_str()) == 0 && rte_eth_dev_get_port_by_name(vdev.c_str(), &port_id) == 0;
	}

	void start_port(uint16_t port_id)
	{
		rte_eth_conf conf{};
		ASSERT_EQ(rte_eth_dev_configure(port_id, 1, 1, &conf), 0);
		ASSERT_EQ(rte_eth_rx_queue_setup(port_id, 0, 1024, SOCKET_ID_ANY, nullptr, pool), 0);
		ASSERT_EQ(rte_eth_tx_queue_setup(port_id, 0, 1024, SOCKET_ID_ANY, nullptr), 0);
		ASSERT_EQ(rte_eth_dev_start(port_id), 0);
		started.push_back(port_id);
	}

	static bool link_up(uint16_t port_id)
	{
		rte_eth_link link{};
		return rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
	}

	static bool wait_up(uint16_t a, uint16_t b)
	{
		for (int i = 0; i < 1000; ++i) {
			if (link_up(a) && link_up(b))
				return true;
			usleep(10000);
		}
		return false;
	}

	static uint16_t frame_size(uint32_t seq)
	{
		if (seq % 7 == 0)
			return seq % 14 == 0 ? 9000 : 64;
		return static_cast<uint16_t>(64 + (seq * 397) % (9000 - 64 + 1));
	}

	static uint8_t frame_byte(uint32_t seq, uint32_t at) { return static_cast<uint8_t>(seq * 31 + at * 7 + 1); }

	// Sends `count` frames of 64..9000 bytes from `from`, receives them on `to`: every frame
	// arrives once, in order, with its length and every byte.
	void exchange(uint16_t from, uint16_t to, uint32_t count)
	{
		uint32_t sent = 0, received = 0, bad = 0;
		for (int idle = 0; received < count && idle < 20000;) {
			if (sent < count) {
				rte_mbuf *burst[16];
				uint16_t n = 0;
				for (; n < 16 && sent + n < count; ++n) {
					const uint32_t seq = sent + n;
					rte_mbuf *m = rte_pktmbuf_alloc(pool);
					ASSERT_NE(m, nullptr);
					const uint16_t size = frame_size(seq);
					auto *data = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, size));
					ASSERT_NE(data, nullptr);
					for (uint32_t at = 0; at < size; ++at)
						data[at] = frame_byte(seq, at);
					std::memcpy(data + 12, &seq, sizeof(seq));
					burst[n] = m;
				}
				const uint16_t taken = rte_eth_tx_burst(from, 0, burst, n);
				for (uint16_t i = taken; i < n; ++i)
					rte_pktmbuf_free(burst[i]);
				sent += taken;
			}
			rte_mbuf *got[32];
			const uint16_t n = rte_eth_rx_burst(to, 0, got, 32);
			idle = n == 0 ? idle + 1 : 0;
			if (n == 0)
				usleep(100);
			for (uint16_t i = 0; i < n; ++i) {
				rte_mbuf *m = got[i];
				const uint32_t seq = received++;
				uint32_t carried = 0;
				const bool one_segment = m->nb_segs == 1;
				bool same = one_segment && m->pkt_len == frame_size(seq);
				const auto *data = rte_pktmbuf_mtod(m, const uint8_t *);
				if (same) {
					std::memcpy(&carried, data + 12, sizeof(carried));
					same = carried == seq;
					for (uint32_t at = 0; same && at < m->pkt_len; ++at)
						same = (at >= 12 && at < 16) || data[at] == frame_byte(seq, at);
				}
				bad += same ? 0 : 1;
				rte_pktmbuf_free(m);
			}
		}
		EXPECT_EQ(sent, count);
		EXPECT_EQ(received, count);
		EXPECT_EQ(bad, 0u);
	}

	void SetUp() override
	{
		ASSERT_TRUE(eal());
		log_from = EalLog::instance().size();
		pool = rte_pktmbuf_pool_create("port_links", 2047, 0, 0, 16384 + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
		ASSERT_NE(pool, nullptr);
	}

	// Returns once DPDK's interrupt thread has run a callback for an event made now: whatever that
	// thread was doing (a net_memif control channel's disconnect, and the unregistering and
	// freeing of that channel DPDK does right after the callback returns) is done, as the thread
	// handles one event at a time. The event is a byte on a pipe of this call's own, registered
	// with the thread for the call only. (Not an alarm: DPDK 22.11's rte_eal_cleanup frees the
	// alarms' timerfd handle while the thread still watches it, and the thread crashes at exit.)
	static bool interrupt_thread_idle()
	{
		struct Event {
			int fds[2] = {-1, -1};
			std::atomic<bool> ran{false};
		} event;
		if (pipe2(event.fds, O_NONBLOCK | O_CLOEXEC) != 0)
			return false;
		rte_intr_handle *handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
		const auto callback = [](void *arg) {
			auto *ev = static_cast<Event *>(arg);
			char drain[16];
			while (read(ev->fds[0], drain, sizeof(drain)) > 0) {
			}
			ev->ran.store(true);
		};
		bool ran = false;
		if (handle != nullptr && rte_intr_fd_set(handle, event.fds[0]) == 0 &&
		    rte_intr_type_set(handle, RTE_INTR_HANDLE_EXT) == 0 &&
		    rte_intr_callback_register(handle, callback, &event) == 0) {
			const char byte = 1;
			if (write(event.fds[1], &byte, 1) == 1) {
				for (int i = 0; i < 5000 && !event.ran.load(); ++i)
					usleep(1000);
			}
			ran = event.ran.load();
			// -EAGAIN while the callback runs.
			for (int i = 0; i < 5000 && rte_intr_callback_unregister(handle, callback, &event) == -EAGAIN;
			     ++i)
				usleep(1000);
		}
		rte_intr_instance_free(handle);
		close(event.fds[0]);
		close(event.fds[1]);
		return ran;
	}

	// Stops ports one at a time, each once the previous one's disconnect has gone through: the
	// peer's link is down (net_memif marks it down in DPDK's interrupt thread as it starts
	// handling the disconnect) and then that thread has finished the handling (and freed the peer's
	// control channel). DPDK 22.11's net_memif frees a port's control channel both in
	// rte_eth_dev_stop and in the interrupt thread's disconnect handling: stopping a port whose
	// in-process peer was stopped a moment before frees it twice ("EAL: Error: Invalid memory",
	// logged from rte_eth_dev_stop, seen in these tests), and closing it then uses freed memory.
	static void stop_and_settle(const std::vector<uint16_t> &port_ids)
	{
		for (const uint16_t port_id : port_ids) {
			// Its peer may be any port of the process, not only one of port_ids.
			std::vector<uint16_t> others_up;
			uint16_t other = 0;
			RTE_ETH_FOREACH_DEV(other)
			{
				if (other != port_id && link_up(other))
					others_up.push_back(other);
			}
			const bool was_up = link_up(port_id);
			(void)rte_eth_dev_stop(port_id);
			// A peer in this process goes down; one elsewhere (or none) does not, hence the bound.
			for (int i = 0; was_up && i < 100; ++i) {
				if (std::any_of(others_up.begin(), others_up.end(),
						[](uint16_t id) { return !link_up(id); }))
					break;
				usleep(10000);
			}
			EXPECT_TRUE(interrupt_thread_idle() && interrupt_thread_idle())
			    << "DPDK's interrupt thread is stuck";
		}
		EXPECT_TRUE(std::none_of(port_ids.begin(), port_ids.end(), [](uint16_t id) { return link_up(id); }))
		    << "a stopped port's link is up";
	}

	// Every DPDK port of the process, stopped (clients, started last, first), settled, closed and
	// removed.
	static void remove_every_port(const std::vector<uint16_t> &start_order)
	{
		// Each port once (a port id closed and given to a newer port appears twice).
		std::vector<uint16_t> port_ids;
		for (auto id = start_order.rbegin(); id != start_order.rend(); ++id) {
			if (std::find(port_ids.begin(), port_ids.end(), *id) == port_ids.end())
				port_ids.push_back(*id);
		}
		uint16_t port_id = 0;
		RTE_ETH_FOREACH_DEV(port_id)
		{
			if (std::find(port_ids.begin(), port_ids.end(), port_id) == port_ids.end())
				port_ids.push_back(port_id);
		}
		std::erase_if(port_ids, [](uint16_t id) { return rte_eth_dev_is_valid_port(id) == 0; });
		stop_and_settle(port_ids);
		for (const uint16_t id : port_ids) {
			char name[RTE_ETH_NAME_MAX_LEN] = {};
			(void)rte_eth_dev_get_name_by_port(id, name);
			(void)rte_eth_dev_close(id);
			(void)rte_eal_hotplug_remove("vdev", name);
		}
	}

	// DPDK logs this error during this test (it provokes it): a part of the line.
	void expect_eal_error(const std::string &part) { expected_eal_errors.push_back(part); }

	// DPDK 22.11's net_memif, handling the disconnect of a connected port (its peer stopped, exited
	// or was killed, in this process or another; or the port stopped), sometimes hands rte_free a
	// pointer that is not DPDK memory, from memif_disconnect (in DPDK's interrupt thread, or in
	// rte_eth_dev_stop): rte_free refuses it and logs "EAL: Error: Invalid memory"; nothing is
	// freed, nothing else goes wrong. Tests whose ports connect and disconnect allow that line, and
	// only that one.
	void allow_memif_disconnect_bug() { expect_eal_error("EAL: Error: Invalid memory"); }

	void TearDown() override
	{
		remove_every_port(started);
		for (doca_dev *dev : devs)
			EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
		rte_mempool_free(pool);
		// Every error DPDK logged during the test (its interrupt thread's too) was one it expected.
		(void)interrupt_thread_idle();
		for (const EalLog::Line &line : EalLog::instance().since(log_from)) {
			if (line.level > static_cast<int>(RTE_LOG_ERR))
				continue;
			const bool expected = std::any_of(
			    expected_eal_errors.begin(), expected_eal_errors.end(),
			    [&](const std::string &part) { return line.text.find(part) != std::string::npos; });
			EXPECT_TRUE(expected) << "DPDK logged an error the test did not expect: " << line.text;
		}
	}

	size_t log_from = 0;
	std::vector<std::string> expected_eal_errors;
	rte_mempool *pool = nullptr;
	std::vector<uint16_t> started;
	std::vector<doca_dev *> devs;
};

} // namespace softdpu_test
