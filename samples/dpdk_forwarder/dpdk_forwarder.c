// pkg-config: doca-common doca-dma doca-argp doca-dpdk-bridge libdpdk
/*
 * DPDK forwarder: a DPU program that forwards packets both ways between the host PF's
 * representor and the uplink p0, through the DOCA DPDK bridge (docs/dpdk-bridge.md).
 *
 * It opens p0's doca_dev, initialises DPDK's EAL (the arguments before "--"; without any, a
 * default that needs neither hugepages nor PCI devices), and probes p0 through the bridge with
 * DOCA's devargs and representor=<host PF representor>: two DPDK ports, the uplink's and the
 * representor's. Whatever arrives on one is sent on the other, in order, none dropped: while a
 * port's link is down, the other port's frames wait in its ring. A peer may leave and come back at
 * any time (the link goes down and up, both logged; frames received for it are dropped): the
 * polling runs on EAL's interrupt thread, where DPDK's net_memif handles a peer's leaving (see
 * "Where the polling runs" below). SIGINT or SIGTERM (or --duration) stops it; it prints its
 * counters and exits 0.
 *
 *   SOFTDPU_SIDE=dpu dpdk_forwarder                         (p0 at 03:00.0, representor pf0vf65535)
 *   SOFTDPU_SIDE=dpu dpdk_forwarder -l 0 --no-huge -m 256 --no-pci -- -p 03:00.0 -r pf0vf65535
 */
#define _GNU_SOURCE /* DPDK's headers use strnlen and friends */
/* rte_intr_instance_alloc and its setters are experimental in DPDK 22.11 (stable since 23.11). */
#define ALLOW_EXPERIMENTAL_API
#include "dpdk_sample_common.h"
#include "sample_argp.h"
#include "sample_common.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_mbuf.h>

#include <doca_argp.h>
#include <doca_dev.h>
#include <doca_dpdk.h>
#include <doca_error.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(DPDK_FORWARDER);

#define DEFAULT_PCI_ADDR "03:00.0"       /* DPU p0 */
#define DEFAULT_REPRESENTOR "pf0vf65535" /* the host PF's representor (mlx5 numbers it VF 65535) */
#define DEFAULT_DEVARGS "dv_flow_en=2,dv_xmeta_en=4"
#define BURST 32
#define RING_SIZE 1024
#define NUM_MBUFS 4095
#define MBUF_CACHE 128
/* A 9000-byte jumbo frame in one mbuf, after the headroom. */
#define MBUF_DATA_ROOM (9216 + RTE_PKTMBUF_HEADROOM)
#define ARG_SIZE 256
#define IDLE_POLLS 1024   /* empty polling rounds before the forwarder naps */
#define IDLE_SLEEP_US 100 /* its nap */

struct fwd_config {
	char pci_addr[32];
	char representor[64];
	char devargs[ARG_SIZE];
	int duration_s;       /* 0: until a signal */
	int stats_interval_s; /* 0: counters only at the end */
};

/* One direction: frames from rx_port go to tx_port. Frames the tx ring could not take yet wait in
 * pending[first, first + count) and go before any new ones, so order is kept. */
struct direction {
	const char *name;
	uint16_t rx_port;
	uint16_t tx_port;
	struct rte_mbuf *pending[BURST];
	uint32_t pending_len[BURST]; /* their lengths: a sent mbuf is the driver's */
	uint16_t pending_first;
	uint16_t pending_count;
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t dropped;
};

static volatile sig_atomic_t force_quit;
static void signal_handler(int signum)
{
	(void)signum;
	force_quit = 1;
}

/* --- command line --- */

static doca_error_t pci_addr_cb(void *param, void *config)
{
	return sample_argp_copy_string(((struct fwd_config *)config)->pci_addr,
				       sizeof(((struct fwd_config *)config)->pci_addr), param, "pci-addr");
}

static doca_error_t representor_cb(void *param, void *config)
{
	return sample_argp_copy_string(((struct fwd_config *)config)->representor,
				       sizeof(((struct fwd_config *)config)->representor), param, "representor");
}

static doca_error_t devargs_cb(void *param, void *config)
{
	struct fwd_config *cfg = config;

	/* May be empty: no devargs but the representor. */
	if (strlen(param) >= sizeof(cfg->devargs)) {
		DOCA_LOG_ERR("--devargs: longer than %zu characters", sizeof(cfg->devargs) - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->devargs, param);
	return DOCA_SUCCESS;
}

static doca_error_t duration_cb(void *param, void *config)
{
	const int value = *(const int *)param;

	if (value < 0) {
		DOCA_LOG_ERR("--duration: %d is negative", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct fwd_config *)config)->duration_s = value;
	return DOCA_SUCCESS;
}

static doca_error_t stats_cb(void *param, void *config)
{
	const int value = *(const int *)param;

	if (value < 0) {
		DOCA_LOG_ERR("--stats: %d is negative", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct fwd_config *)config)->stats_interval_s = value;
	return DOCA_SUCCESS;
}

static doca_error_t register_flags(void)
{
	doca_error_t result;

	result = sample_argp_register_flag("p", "pci-addr", "<address>",
					   "PCI address of the uplink PF (default " DEFAULT_PCI_ADDR ", p0)",
					   DOCA_ARGP_TYPE_STRING, pci_addr_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag(
		    "r", "representor", "<representor>",
		    "The representor to forward with, DPDK's representor= syntax (default " DEFAULT_REPRESENTOR
		    ", the host PF's)",
		    DOCA_ARGP_TYPE_STRING, representor_cb, false);
	if (result == DOCA_SUCCESS)
		result =
		    sample_argp_register_flag("a", "devargs", "<devargs>",
					      "Further devargs for doca_dpdk_port_probe (default " DEFAULT_DEVARGS ")",
					      DOCA_ARGP_TYPE_STRING, devargs_cb, false);
	if (result == DOCA_SUCCESS)
		result = sample_argp_register_flag("d", "duration", "<seconds>",
						   "Stop after this many seconds (default 0: on a signal)",
						   DOCA_ARGP_TYPE_INT, duration_cb, false);
	if (result == DOCA_SUCCESS)
		result =
		    sample_argp_register_flag("s", "stats", "<seconds>",
					      "Print the counters every this many seconds (default 0: only at the end)",
					      DOCA_ARGP_TYPE_INT, stats_cb, false);
	return result;
}

/* --- devices and ports --- */

static doca_error_t start_port(uint16_t port_id, struct rte_mempool *pool)
{
	char name[RTE_ETH_NAME_MAX_LEN] = "";
	int ret;

	rte_eth_dev_get_name_by_port(port_id, name);
	ret = dpdk_sample_start_port(port_id, RING_SIZE, rte_eth_dev_socket_id(port_id), pool);
	if (ret != 0) {
		DOCA_LOG_ERR("Failed to start DPDK port %u (%s): %s", port_id, name, rte_strerror(-ret));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/* The port of the representor: the one that is not the uplink's (the bridge creates the
 * device's own port first, then one per representor). */
static doca_error_t find_representor_port(uint16_t uplink_port, uint16_t *rep_port)
{
	uint16_t port_id;
	uint16_t found = 0;

	RTE_ETH_FOREACH_DEV(port_id)
	{
		if (port_id == uplink_port)
			continue;
		if (found++ == 0)
			*rep_port = port_id;
	}
	if (found != 1) {
		DOCA_LOG_ERR("Expected one representor port besides the uplink's, found %u", found);
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

/* --- forwarding --- */

static bool link_is_up(uint16_t port_id)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	return rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

static void drop_pending(struct direction *dir)
{
	for (uint16_t i = 0; i < dir->pending_count; i++)
		rte_pktmbuf_free(dir->pending[dir->pending_first + i]);
	dir->dropped += dir->pending_count;
	dir->pending_first = 0;
	dir->pending_count = 0;
}

/* One step: send what waits, else receive a burst and send it; true when frames moved. Never
 * blocks. While the other port's link is down nothing is received: frames wait in the receive ring (the sender sees a
 * full ring), so none is lost when one side comes up before the other. Frames received for a port whose link went down
 * since are dropped (counted): their receiver left, a new peer must not get them. */
static bool forward_step(struct direction *dir)
{
	uint16_t received = 0;
	uint16_t sent;

	if (dir->pending_count > 0 && !link_is_up(dir->tx_port))
		drop_pending(dir);
	if (dir->pending_count == 0) {
		if (!link_is_up(dir->tx_port))
			return false;
		received = rte_eth_rx_burst(dir->rx_port, 0, dir->pending, BURST);
		if (received == 0)
			return false;
		for (uint16_t i = 0; i < received; i++) {
			dir->pending_len[i] = rte_pktmbuf_pkt_len(dir->pending[i]);
			dir->rx_bytes += dir->pending_len[i];
		}
		dir->rx_frames += received;
		dir->pending_first = 0;
		dir->pending_count = received;
	}
	sent = rte_eth_tx_burst(dir->tx_port, 0, dir->pending + dir->pending_first, dir->pending_count);
	for (uint16_t i = 0; i < sent; i++)
		dir->tx_bytes += dir->pending_len[dir->pending_first + i];
	dir->tx_frames += sent;
	dir->pending_first += sent;
	dir->pending_count -= sent;
	/* A retry that sent nothing (the other side's ring is full) is not progress: the worker
	 * then counts an idle round and naps instead of spinning. */
	return received > 0 || sent > 0;
}

static void print_counters(const struct direction *dirs, size_t count)
{
	for (size_t i = 0; i < count; i++)
		DOCA_LOG_INFO("%s: received %" PRIu64 " frames (%" PRIu64 " bytes), sent %" PRIu64 " frames (%" PRIu64
			      " bytes), dropped %" PRIu64,
			      dirs[i].name, dirs[i].rx_frames, dirs[i].rx_bytes, dirs[i].tx_frames, dirs[i].tx_bytes,
			      dirs[i].dropped);
}

/*
 * Where the polling runs. DPDK 22.11's net_memif (unchanged up to at least 26.07) handles a peer's
 * disconnection in EAL's interrupt thread: memif_disconnect (memif_socket.c) clears the port's
 * "connected" flag and unmaps the shared regions (memif_free_regions) with nothing that waits for
 * an rx or tx burst already past that flag on another thread, which then reads unmapped memory
 * (SIGSEGV) when a peer exits while frames flow (docs/dpdk-bridge.md). So the forwarder polls on
 * that same thread: a timerfd of its own, registered with EAL's interrupt thread
 * (rte_intr_callback_register), runs one slice of forwarding per expiry, between that thread's
 * other handlers, never during them. A slice lasts at most SLICE_US and re-arms the timer, so
 * net_memif's connection handling waits at most that long. Stopping and closing the ports runs
 * there too: rte_eth_dev_stop calls memif_disconnect as well, which must not run twice at once.
 */
#define SLICE_US 1000    /* the longest slice */
#define BUSY_REARM_US 10 /* the next slice after a busy one: room for the interrupt thread's other work */

/* The ports to stop (those started) and close (those that exist: not RTE_MAX_ETHPORTS). */
struct port_teardown {
	uint16_t ports[2];
	bool started[2];
};

struct worker {
	struct rte_intr_handle *handle;
	int fd; /* the timerfd; -1 when there is none */
	/* forwarding, while `forwarding` is set */
	struct direction *dirs;
	size_t count;
	const struct fwd_config *config;
	uint16_t ports[2]; /* the ports whose link state is watched (and logged) */
	bool link_up[2];   /* their last known state */
	uint32_t idle;     /* empty polling rounds in a row */
	uint64_t start;
	uint64_t next_stats;
	int forwarding;
	int stop;     /* set by the main thread: no further slice */
	int finished; /* set by the last slice */
	int failed;   /* the timer could not be re-armed */
	/* a teardown asked for by the main thread, and the callbacks run so far */
	const struct port_teardown *teardown;
	unsigned int calls;
};

static struct worker worker = {.fd = -1};

static bool arm_worker(uint64_t us)
{
	struct itimerspec when;

	memset(&when, 0, sizeof(when));
	when.it_value.tv_sec = (time_t)(us / 1000000);
	when.it_value.tv_nsec = (long)(us % 1000000) * 1000;
	return timerfd_settime(worker.fd, 0, &when, NULL) == 0;
}

/* Logs a port's link going down or coming up (a peer leaving or connecting). */
static void watch_links(struct worker *w)
{
	for (size_t i = 0; i < 2; i++) {
		const bool up = link_is_up(w->ports[i]);
		char name[RTE_ETH_NAME_MAX_LEN] = "";

		if (up == w->link_up[i])
			continue;
		w->link_up[i] = up;
		rte_eth_dev_get_name_by_port(w->ports[i], name);
		DOCA_LOG_INFO("DPDK port %u (%s): link %s", w->ports[i], name,
			      up ? "up" : "down (its peer left; it comes back when a peer connects)");
	}
}

static void forward_slice(struct worker *w)
{
	const struct fwd_config *config = w->config;
	const uint64_t hz = rte_get_timer_hz();
	const uint64_t slice_end = rte_get_timer_cycles() + hz * SLICE_US / 1000000;
	uint64_t now;

	watch_links(w);
	/* One round at least; more while frames move (or until IDLE_POLLS empty rounds in a row). */
	do {
		bool moved = false;

		for (size_t i = 0; i < w->count; i++)
			moved |= forward_step(&w->dirs[i]);
		w->idle = moved ? 0 : w->idle + 1;
		now = rte_get_timer_cycles();
	} while (w->idle <= IDLE_POLLS && now < slice_end && !force_quit &&
		 !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE));
	if (config->stats_interval_s > 0 && now >= w->next_stats) {
		print_counters(w->dirs, w->count);
		w->next_stats = now + (uint64_t)config->stats_interval_s * hz;
	}
	if (force_quit || __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE) ||
	    (config->duration_s > 0 && now - w->start >= (uint64_t)config->duration_s * hz)) {
		__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
		return;
	}
	/* Polling, but not at full speed when nothing comes: after IDLE_POLLS empty rounds the next
	 * slice comes IDLE_SLEEP_US later, which leaves the CPU to others (the sample shares its machine). */
	if (!arm_worker(w->idle > IDLE_POLLS ? IDLE_SLEEP_US : BUSY_REARM_US)) {
		DOCA_LOG_ERR("Failed to schedule the next forwarding slice: %s", strerror(errno));
		w->failed = 1;
		__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
	}
}

static void teardown_ports(const struct port_teardown *teardown)
{
	for (size_t i = 0; i < 2; i++) {
		if (teardown->started[i])
			rte_eth_dev_stop(teardown->ports[i]);
	}
	for (size_t i = 0; i < 2; i++) {
		if (teardown->ports[i] != RTE_MAX_ETHPORTS)
			rte_eth_dev_close(teardown->ports[i]);
	}
}

/* The timer's handler, on EAL's interrupt thread. */
static void worker_cb(void *arg)
{
	struct worker *w = arg;
	const struct port_teardown *teardown;
	uint64_t expirations;

	if (read(w->fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		DOCA_LOG_WARN("Reading the forwarder's timer failed: %s", strerror(errno));
	if (__atomic_load_n(&w->forwarding, __ATOMIC_ACQUIRE) && !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE))
		forward_slice(w);
	teardown = __atomic_exchange_n(&w->teardown, NULL, __ATOMIC_ACQ_REL);
	if (teardown != NULL)
		teardown_ports(teardown);
	__atomic_add_fetch(&w->calls, 1, __ATOMIC_RELEASE);
}

/* The timer and its registration with EAL's interrupt thread. */
static doca_error_t worker_create(void)
{
	int ret;

	worker.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (worker.fd < 0) {
		DOCA_LOG_ERR("Failed to create a timerfd: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	worker.handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (worker.handle == NULL || rte_intr_fd_set(worker.handle, worker.fd) != 0 ||
	    rte_intr_type_set(worker.handle, RTE_INTR_HANDLE_EXT) != 0) {
		DOCA_LOG_ERR("Failed to make an interrupt handle: %s", rte_strerror(rte_errno));
		return DOCA_ERROR_DRIVER;
	}
	ret = rte_intr_callback_register(worker.handle, worker_cb, &worker);
	if (ret != 0) {
		DOCA_LOG_ERR("Failed to register with EAL's interrupt thread: %s", rte_strerror(-ret));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/*
 * After rte_eal_cleanup: the timer stays registered until then, on purpose. Closing a net_memif
 * server port frees its listener's interrupt handle without unregistering it
 * (memif_socket_remove_device), and any later (un)registration makes the interrupt thread rebuild
 * its epoll set, reading that handle, which must not happen while rte_eal_cleanup unmaps memory.
 * The thread is idle then (the timer disarmed), so the handle and the fd can go.
 */
static void worker_release(void)
{
	if (worker.fd >= 0)
		close(worker.fd);
	worker.fd = -1;
	rte_intr_instance_free(worker.handle);
	worker.handle = NULL;
}

/* Waits until the handler has run once more (the timer armed in `us`). */
static void worker_call(uint64_t us)
{
	const unsigned int calls = __atomic_load_n(&worker.calls, __ATOMIC_ACQUIRE);

	if (!arm_worker(us)) {
		DOCA_LOG_WARN("Failed to arm the forwarder's timer: %s", strerror(errno));
		return;
	}
	while (__atomic_load_n(&worker.calls, __ATOMIC_ACQUIRE) == calls)
		rte_delay_us_sleep(1000);
}

/* Forwards until a signal, --duration or a failure; false on a failure. */
static bool forward(struct direction *dirs, size_t count, uint16_t rep_port, uint16_t uplink_port,
		    const struct fwd_config *config)
{
	worker.dirs = dirs;
	worker.count = count;
	worker.config = config;
	worker.ports[0] = rep_port;
	worker.ports[1] = uplink_port;
	worker.start = rte_get_timer_cycles();
	worker.next_stats = worker.start + (uint64_t)config->stats_interval_s * rte_get_timer_hz();
	__atomic_store_n(&worker.forwarding, 1, __ATOMIC_RELEASE);
	if (!arm_worker(1)) {
		DOCA_LOG_ERR("Failed to arm the forwarder's timer: %s", strerror(errno));
		return false;
	}
	while (!force_quit && !__atomic_load_n(&worker.finished, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(10000);
	/* No further slice: the last one sees `stop` (or has finished already). */
	__atomic_store_n(&worker.stop, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&worker.finished, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(1000);
	__atomic_store_n(&worker.forwarding, 0, __ATOMIC_RELEASE);
	/* Frames received but not sent when it stops. */
	for (size_t i = 0; i < count; i++)
		drop_pending(&dirs[i]);
	return worker.failed == 0;
}

/* Stops and closes the ports on the interrupt thread, then lets that thread settle: closing
 * them unregisters net_memif's interrupt sources, after which the thread rebuilds its epoll set;
 * the second call returns once it has. */
static void close_ports(uint16_t rep_port, bool rep_started, uint16_t uplink_port, bool uplink_started)
{
	const struct port_teardown teardown = {{rep_port, uplink_port}, {rep_started, uplink_started}};

	__atomic_store_n(&worker.teardown, &teardown, __ATOMIC_RELEASE);
	worker_call(1);
	if (__atomic_exchange_n(&worker.teardown, NULL, __ATOMIC_ACQ_REL) != NULL)
		teardown_ports(&teardown); /* the timer failed: here, then */
	worker_call(10000);
}

static doca_error_t run(const struct fwd_config *config)
{
	struct doca_dev *dev = NULL;
	struct rte_mempool *pool = NULL;
	char devargs[2 * ARG_SIZE];
	char uplink_name[RTE_ETH_NAME_MAX_LEN] = "", rep_name[RTE_ETH_NAME_MAX_LEN] = "";
	uint16_t uplink_port = RTE_MAX_ETHPORTS, rep_port = RTE_MAX_ETHPORTS;
	bool uplink_started = false, rep_started = false;
	struct direction dirs[2];
	doca_error_t result;

	result = worker_create();
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_open_device(config->pci_addr, false, &dev);
	if (result != DOCA_SUCCESS)
		return result;
	snprintf(devargs, sizeof(devargs), "%s%srepresentor=%s", config->devargs, config->devargs[0] ? "," : "",
		 config->representor);
	result = doca_dpdk_port_probe(dev, devargs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_dpdk_port_probe(%s, \"%s\") failed: %s", config->pci_addr, devargs,
			     doca_error_get_descr(result));
		goto close_dev;
	}
	result = doca_dpdk_get_first_port_id(dev, &uplink_port);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No DPDK port for the device at %s: %s", config->pci_addr, doca_error_get_descr(result));
		goto close_ports;
	}
	result = find_representor_port(uplink_port, &rep_port);
	if (result != DOCA_SUCCESS)
		goto close_ports;
	rte_eth_dev_get_name_by_port(uplink_port, uplink_name);
	rte_eth_dev_get_name_by_port(rep_port, rep_name);

	pool = rte_pktmbuf_pool_create("forwarder_pool", NUM_MBUFS, MBUF_CACHE, 0, MBUF_DATA_ROOM, rte_socket_id());
	if (pool == NULL) {
		DOCA_LOG_ERR("Failed to create the mbuf pool: %s", rte_strerror(rte_errno));
		result = DOCA_ERROR_NO_MEMORY;
		goto close_ports;
	}
	result = start_port(uplink_port, pool);
	if (result != DOCA_SUCCESS)
		goto close_ports;
	uplink_started = true;
	result = start_port(rep_port, pool);
	if (result != DOCA_SUCCESS)
		goto close_ports;
	rep_started = true;

	memset(dirs, 0, sizeof(dirs));
	dirs[0].name = "representor -> uplink";
	dirs[0].rx_port = rep_port;
	dirs[0].tx_port = uplink_port;
	dirs[1].name = "uplink -> representor";
	dirs[1].rx_port = uplink_port;
	dirs[1].tx_port = rep_port;
	DOCA_LOG_INFO("Forwarding between representor %s (DPDK port %u, %s) and uplink %s (DPDK port %u, %s)",
		      config->representor, rep_port, rep_name, config->pci_addr, uplink_port, uplink_name);
	if (!forward(dirs, 2, rep_port, uplink_port, config))
		result = DOCA_ERROR_DRIVER;
	DOCA_LOG_INFO("Stopped");
	print_counters(dirs, 2);

close_ports:
	close_ports(rep_port, rep_started, uplink_port, uplink_started);
	rte_mempool_free(pool);
close_dev:
	doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	struct fwd_config config;
	doca_error_t result;
	int status = EXIT_FAILURE;
	bool argp_initialised;

	memset(&config, 0, sizeof(config));
	strcpy(config.pci_addr, DEFAULT_PCI_ADDR);
	strcpy(config.representor, DEFAULT_REPRESENTOR);
	strcpy(config.devargs, DEFAULT_DEVARGS);

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;

	result = dpdk_sample_argp_start("dpdk_forwarder", &config, register_flags, argc, argv, &argp_initialised);
	if (result != DOCA_SUCCESS) {
		if (!argp_initialised)
			return EXIT_FAILURE;
		goto destroy_argp;
	}

	signal(SIGINT, signal_handler);
	signal(SIGTERM, signal_handler);
	result = run(&config);
	if (result == DOCA_SUCCESS)
		status = EXIT_SUCCESS;

destroy_argp:
	if (dpdk_sample_eal_initialised()) {
		rte_eal_cleanup();
		worker_release();
		dpdk_sample_remove_runtime_dir();
	}
	doca_argp_destroy();
	return status;
}
