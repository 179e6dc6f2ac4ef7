// A DPU program's receive loop through the DOCA DPDK bridge, for bench/dpdk_bridge_bench.py
// (docs/performance.md, "DOCA DPDK bridge").
//
//   bench_dpdk_bridge_rx [EAL options] -- [--iface p0] [--devargs STR] [--rx-port NAME] [--tx-port NAME]
//                        [--burst 32] [--mbufs 16384] [--mbuf-size 2176] [--convert] [--time]
//                        [--seconds S] [--loop-seconds S]
//
// Opens the DOCA device whose interface is --iface (run with SOFTDPU_SIDE=dpu for the DPU's p0),
// probes it with doca_dpdk_port_probe(dev, devargs) (with representor=... the representor ports
// come up too), then receives in bursts on the DPDK port whose name contains --rx-port (default:
// the device's first port, doca_dpdk_get_first_port_id), counting frames and bytes, and frees
// them in bulk, as testpmd's rxonly does. With --tx-port it forwards every burst to that port
// instead (what it cannot send is freed and counted as dropped): a minimal forwarder.
//
// --convert turns every received mbuf into a doca_buf (doca_dpdk_mempool_mbuf_to_buf over a
// doca_dpdk_mempool on the pool, registered on the device) and releases it (doca_buf_dec_refcount)
// before the mbuf is freed. --time measures with the TSC the rx bursts that returned frames and
// the conversions, per frame: the mean (a burst of more than 1 ms is a preemption or SIGSTOP, not
// counted) and the median over frames.
// --loop-seconds S, after receiving, converts and releases the same 32 mbufs in a tight loop for
// S seconds (the cost with hot caches and no rx around it; the median of chunks of 64 bursts).
// The receive window starts at the first frame.
//
// Stops after --seconds (0: at SIGINT/SIGTERM) and prints one line of key=value pairs.
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_dpdk.h>
#include <doca_error.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::atomic<bool> stop_requested{false};

void on_signal(int)
{
	stop_requested.store(true, std::memory_order_relaxed);
}

struct Options {
	std::string iface = "p0";
	std::string devargs = "dv_flow_en=2";
	std::string rx_port;
	std::string tx_port;
	unsigned burst = 32;
	unsigned mbufs = 16384;
	unsigned mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	bool convert = false;
	bool timed = false;
	double seconds = 0;
	double loop_seconds = 0;
};

[[noreturn]] void usage(const char *program)
{
	std::fprintf(stderr,
		     "usage: %s [EAL options] -- [--iface p0] [--devargs STR] [--rx-port NAME] [--tx-port NAME] "
		     "[--burst 32] [--mbufs 16384] [--mbuf-size 2176] [--convert] [--time] [--seconds S] "
		     "[--loop-seconds S]\n",
		     program);
	std::exit(2);
}

Options parse(int argc, char **argv, const char *program)
{
	Options options;
	for (int i = 0; i < argc; ++i) {
		const std::string arg = argv[i];
		auto value = [&]() -> const char * {
			if (i + 1 >= argc)
				usage(program);
			return argv[++i];
		};
		if (arg == "--iface")
			options.iface = value();
		else if (arg == "--devargs")
			options.devargs = value();
		else if (arg == "--rx-port")
			options.rx_port = value();
		else if (arg == "--tx-port")
			options.tx_port = value();
		else if (arg == "--burst")
			options.burst = static_cast<unsigned>(std::strtoul(value(), nullptr, 0));
		else if (arg == "--mbufs")
			options.mbufs = static_cast<unsigned>(std::strtoul(value(), nullptr, 0));
		else if (arg == "--mbuf-size")
			options.mbuf_size = static_cast<unsigned>(std::strtoul(value(), nullptr, 0));
		else if (arg == "--convert")
			options.convert = true;
		else if (arg == "--time")
			options.timed = true;
		else if (arg == "--seconds")
			options.seconds = std::strtod(value(), nullptr);
		else if (arg == "--loop-seconds")
			options.loop_seconds = std::strtod(value(), nullptr);
		else
			usage(program);
	}
	if (options.burst == 0 || options.burst > 512 || options.mbuf_size <= RTE_PKTMBUF_HEADROOM ||
	    options.mbuf_size > UINT16_MAX)
		usage(program);
	return options;
}

bool check(doca_error_t result, const char *what)
{
	if (result != DOCA_SUCCESS)
		std::fprintf(stderr, "%s: %s\n", what, doca_error_get_descr(result));
	return result == DOCA_SUCCESS;
}

doca_dev *open_by_iface(const std::string &iface)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	if (!check(doca_devinfo_create_list(&list, &count), "doca_devinfo_create_list"))
		return nullptr;
	doca_dev *dev = nullptr;
	for (uint32_t i = 0; i < count && dev == nullptr; ++i) {
		char name[DOCA_DEVINFO_IFACE_NAME_SIZE] = {};
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS && iface == name)
			(void)check(doca_dev_open(list[i], &dev), "doca_dev_open");
	}
	(void)doca_devinfo_destroy_list(list);
	if (dev == nullptr)
		std::fprintf(stderr, "no DOCA device with interface %s on this side (SOFTDPU_SIDE=dpu for p0)\n",
			     iface.c_str());
	return dev;
}

// The DPDK port whose name contains `part`; -1 if none or more than one.
int port_named(const std::string &part)
{
	int found = -1;
	uint16_t port_id = 0;
	RTE_ETH_FOREACH_DEV(port_id)
	{
		char name[RTE_ETH_NAME_MAX_LEN] = {};
		if (rte_eth_dev_get_name_by_port(port_id, name) != 0 || std::strstr(name, part.c_str()) == nullptr)
			continue;
		if (found >= 0) {
			std::fprintf(stderr, "more than one DPDK port's name contains \"%s\"\n", part.c_str());
			return -1;
		}
		found = port_id;
	}
	if (found < 0)
		std::fprintf(stderr, "no DPDK port's name contains \"%s\"\n", part.c_str());
	return found;
}

void list_ports()
{
	uint16_t port_id = 0;
	RTE_ETH_FOREACH_DEV(port_id)
	{
		char name[RTE_ETH_NAME_MAX_LEN] = {};
		(void)rte_eth_dev_get_name_by_port(port_id, name);
		std::fprintf(stderr, "port %u: %s\n", port_id, name);
	}
}

bool start_port(uint16_t port_id, rte_mempool *pool)
{
	rte_eth_conf conf{};
	if (rte_eth_dev_configure(port_id, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port_id, 0, 1024, SOCKET_ID_ANY, nullptr, pool) != 0 ||
	    rte_eth_tx_queue_setup(port_id, 0, 1024, SOCKET_ID_ANY, nullptr) != 0 || rte_eth_dev_start(port_id) != 0) {
		std::fprintf(stderr, "DPDK port %u could not be configured and started\n", port_id);
		return false;
	}
	return true;
}

struct Counters {
	uint64_t frames = 0;
	uint64_t bytes = 0;
	uint64_t bursts = 0;
	uint64_t empty_polls = 0;
	uint64_t sent = 0;
	uint64_t dropped = 0;
	uint64_t convert_failures = 0;
	uint64_t rx_cycles = 0; // bursts that returned frames
	uint64_t rx_timed_frames = 0;
	uint64_t convert_cycles = 0;
	uint64_t convert_timed_frames = 0;
	uint64_t preempted = 0; // timed spans over 1 ms, not counted
};

// Cycles per frame, weighted by frames: the median is what a typical frame cost, whatever a few
// bursts during which this CPU was taken away (a busy or shared machine) cost.
class PerFrameHistogram {
public:
	void add(uint64_t cycles, uint16_t frames)
	{
		const uint64_t per_frame = cycles / frames;
		bins_[per_frame < kBins ? per_frame : kBins - 1] += frames;
		total_ += frames;
	}
	double median_ns(uint64_t hz) const
	{
		uint64_t seen = 0;
		for (size_t cycles = 0; cycles < kBins; ++cycles) {
			seen += bins_[cycles];
			if (total_ != 0 && seen * 2 >= total_)
				return static_cast<double>(cycles) * 1e9 / static_cast<double>(hz);
		}
		return 0;
	}

private:
	static constexpr size_t kBins = 1 << 16;
	std::vector<uint64_t> bins_ = std::vector<uint64_t>(kBins);
	uint64_t total_ = 0;
};

// mbuf_to_buf + doca_buf_dec_refcount for each mbuf; false if any conversion failed.
bool convert_all(doca_dpdk_mempool *mempool, doca_buf_inventory *inventory, rte_mbuf **mbufs, uint16_t count)
{
	bool ok = true;
	for (uint16_t i = 0; i < count; ++i) {
		doca_buf *buf = nullptr;
		if (doca_dpdk_mempool_mbuf_to_buf(mempool, inventory, mbufs[i], &buf) != DOCA_SUCCESS) {
			ok = false;
			continue;
		}
		(void)doca_buf_dec_refcount(buf, nullptr);
	}
	return ok;
}

} // namespace

int main(int argc, char **argv)
{
	const int eal_args = rte_eal_init(argc, argv);
	if (eal_args < 0) {
		std::fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	const Options options = parse(argc - eal_args - 1, argv + eal_args + 1, argv[0]);
	std::signal(SIGINT, on_signal);
	std::signal(SIGTERM, on_signal);

	int rc = 1;
	doca_dev *dev = open_by_iface(options.iface);
	rte_mempool *pool = nullptr;
	doca_dpdk_mempool *mempool = nullptr;
	doca_buf_inventory *inventory = nullptr;
	int rx_port = -1;
	int tx_port = -1;
	Counters counters;
	PerFrameHistogram rx_histogram;
	PerFrameHistogram convert_histogram;
	std::vector<rte_mbuf *> burst(options.burst);
	uint64_t start_cycles = 0;
	uint64_t end_cycles = 0;
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t preempted_from = hz / 1000;
	double loop_ns = 0;
	uint64_t loop_frames = 0;
	if (dev == nullptr)
		goto out;
	if (!check(doca_dpdk_port_probe(dev, options.devargs.c_str()), "doca_dpdk_port_probe"))
		goto out;
	list_ports();
	if (options.rx_port.empty()) {
		uint16_t first = 0;
		if (!check(doca_dpdk_get_first_port_id(dev, &first), "doca_dpdk_get_first_port_id"))
			goto out;
		rx_port = first;
	} else {
		rx_port = port_named(options.rx_port);
	}
	if (!options.tx_port.empty())
		tx_port = port_named(options.tx_port);
	if (rx_port < 0 || (!options.tx_port.empty() && (tx_port < 0 || tx_port == rx_port)))
		goto out;
	// As testpmd's defaults: a per-lcore cache of 250 mbufs, RTE_MBUF_DEFAULT_BUF_SIZE.
	pool = rte_pktmbuf_pool_create("bench_rx_pool", options.mbufs, 250, 0, static_cast<uint16_t>(options.mbuf_size),
				       SOCKET_ID_ANY);
	if (pool == nullptr) {
		std::fprintf(stderr, "rte_pktmbuf_pool_create: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	if (options.convert || options.loop_seconds > 0) {
		if (!check(doca_dpdk_mempool_create(pool, &mempool), "doca_dpdk_mempool_create") ||
		    !check(doca_dpdk_mempool_dev_add(mempool, dev), "doca_dpdk_mempool_dev_add") ||
		    !check(doca_dpdk_mempool_start(mempool), "doca_dpdk_mempool_start") ||
		    !check(doca_buf_inventory_create(options.burst, &inventory), "doca_buf_inventory_create") ||
		    !check(doca_buf_inventory_start(inventory), "doca_buf_inventory_start"))
			goto out;
	}
	// The serving ends first (a net_memif client starts only when its server is up): the order
	// the caller names them in is the order they start in.
	if (!start_port(static_cast<uint16_t>(rx_port), pool) ||
	    (tx_port >= 0 && !start_port(static_cast<uint16_t>(tx_port), pool)))
		goto out;
	std::fprintf(stderr, "receiving on port %d%s%s\n", rx_port, tx_port >= 0 ? ", forwarding to port " : "",
		     tx_port >= 0 ? std::to_string(tx_port).c_str() : "");

	start_cycles = rte_rdtsc();
	while (!stop_requested.load(std::memory_order_relaxed)) {
		const uint64_t t0 = options.timed ? rte_rdtsc() : 0;
		const uint16_t count = rte_eth_rx_burst(static_cast<uint16_t>(rx_port), 0, burst.data(),
							static_cast<uint16_t>(options.burst));
		if (counters.frames == 0) {
			// The window (and --seconds) starts at the first frame, not while the sender connects.
			if (count == 0)
				continue;
			start_cycles = rte_rdtsc();
		}
		if (count == 0) {
			++counters.empty_polls;
			if (options.seconds > 0 && (counters.empty_polls & 0xfff) == 0 &&
			    rte_rdtsc() - start_cycles >
				static_cast<uint64_t>(options.seconds * static_cast<double>(hz)))
				break;
			continue;
		}
		const uint64_t t1 = options.timed ? rte_rdtsc() : 0;
		++counters.bursts;
		counters.frames += count;
		for (uint16_t i = 0; i < count; ++i)
			counters.bytes += burst[i]->pkt_len;
		if (options.convert) {
			if (!convert_all(mempool, inventory, burst.data(), count))
				++counters.convert_failures;
		}
		if (options.timed) {
			const uint64_t t2 = rte_rdtsc();
			if (t1 - t0 < preempted_from) {
				counters.rx_cycles += t1 - t0;
				counters.rx_timed_frames += count;
				rx_histogram.add(t1 - t0, count);
			} else {
				++counters.preempted;
			}
			if (options.convert) {
				if (t2 - t1 < preempted_from) {
					counters.convert_cycles += t2 - t1;
					counters.convert_timed_frames += count;
					convert_histogram.add(t2 - t1, count);
				} else {
					++counters.preempted;
				}
			}
		}
		if (tx_port >= 0) {
			const uint16_t sent = rte_eth_tx_burst(static_cast<uint16_t>(tx_port), 0, burst.data(), count);
			counters.sent += sent;
			if (sent < count) {
				counters.dropped += count - sent;
				rte_pktmbuf_free_bulk(burst.data() + sent, count - sent);
			}
		} else {
			rte_pktmbuf_free_bulk(burst.data(), count);
		}
		if (options.seconds > 0 && (counters.bursts & 0xfff) == 0 &&
		    rte_rdtsc() - start_cycles > static_cast<uint64_t>(options.seconds * static_cast<double>(hz)))
			break;
	}
	end_cycles = rte_rdtsc();

	if (options.loop_seconds > 0) {
		// The same mbufs converted and released over and over: no rx, hot caches.
		std::vector<rte_mbuf *> held(options.burst);
		if (rte_pktmbuf_alloc_bulk(pool, held.data(), options.burst) != 0) {
			std::fprintf(stderr, "rte_pktmbuf_alloc_bulk failed\n");
			goto out;
		}
		for (rte_mbuf *mbuf : held)
			(void)rte_pktmbuf_append(mbuf, 64);
		// Chunks of 64 bursts; the median chunk (a chunk in which this CPU was taken away is
		// an outlier on a shared machine).
		const uint64_t loop_until = static_cast<uint64_t>(options.loop_seconds * static_cast<double>(hz));
		const uint64_t loop_start = rte_rdtsc();
		uint64_t now = loop_start;
		bool ok = true;
		std::vector<uint64_t> chunks;
		while (now - loop_start < loop_until) {
			const uint64_t before = now;
			for (int repeat = 0; repeat < 64; ++repeat)
				ok = convert_all(mempool, inventory, held.data(),
						 static_cast<uint16_t>(options.burst)) &&
				     ok;
			loop_frames += 64ULL * options.burst;
			now = rte_rdtsc();
			chunks.push_back(now - before);
		}
		std::nth_element(chunks.begin(), chunks.begin() + static_cast<std::ptrdiff_t>(chunks.size() / 2),
				 chunks.end());
		loop_ns = static_cast<double>(chunks[chunks.size() / 2]) * 1e9 / static_cast<double>(hz) /
			  (64.0 * options.burst);
		rte_pktmbuf_free_bulk(held.data(), options.burst);
		if (!ok)
			++counters.convert_failures;
	}

	{
		const double seconds = static_cast<double>(end_cycles - start_cycles) / static_cast<double>(hz);
		auto ns_per = [&](uint64_t cycles, uint64_t frames) {
			return frames == 0 ? 0.0
					   : static_cast<double>(cycles) * 1e9 / static_cast<double>(hz) /
						 static_cast<double>(frames);
		};
		std::printf(
		    "frames=%llu bytes=%llu seconds=%.3f bursts=%llu empty_polls=%llu frames_per_burst=%.2f "
		    "sent=%llu dropped=%llu rx_ns_per_frame=%.2f convert_ns_per_frame=%.2f "
		    "rx_ns_per_frame_median=%.2f convert_ns_per_frame_median=%.2f loop_convert_ns_per_frame=%.2f "
		    "loop_frames=%llu preempted=%llu convert_failures=%llu\n",
		    static_cast<unsigned long long>(counters.frames), static_cast<unsigned long long>(counters.bytes),
		    seconds, static_cast<unsigned long long>(counters.bursts),
		    static_cast<unsigned long long>(counters.empty_polls),
		    counters.bursts == 0 ? 0.0
					 : static_cast<double>(counters.frames) / static_cast<double>(counters.bursts),
		    static_cast<unsigned long long>(counters.sent), static_cast<unsigned long long>(counters.dropped),
		    ns_per(counters.rx_cycles, counters.rx_timed_frames),
		    ns_per(counters.convert_cycles, counters.convert_timed_frames), rx_histogram.median_ns(hz),
		    convert_histogram.median_ns(hz), loop_ns, static_cast<unsigned long long>(loop_frames),
		    static_cast<unsigned long long>(counters.preempted),
		    static_cast<unsigned long long>(counters.convert_failures));
		std::fflush(stdout);
		rc = counters.convert_failures == 0 ? 0 : 1;
	}

out:
	if (rx_port >= 0) {
		(void)rte_eth_dev_stop(static_cast<uint16_t>(rx_port));
		(void)rte_eth_dev_close(static_cast<uint16_t>(rx_port));
	}
	if (tx_port >= 0) {
		(void)rte_eth_dev_stop(static_cast<uint16_t>(tx_port));
		(void)rte_eth_dev_close(static_cast<uint16_t>(tx_port));
	}
	if (inventory != nullptr) {
		(void)doca_buf_inventory_stop(inventory);
		(void)doca_buf_inventory_destroy(inventory);
	}
	if (mempool != nullptr)
		(void)doca_dpdk_mempool_destroy(mempool);
	if (pool != nullptr)
		rte_mempool_free(pool);
	if (dev != nullptr)
		(void)doca_dev_close(dev);
	(void)rte_eal_cleanup();
	return rc;
}
