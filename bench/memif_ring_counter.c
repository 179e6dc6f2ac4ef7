/* Counts the packets that pass one memif ring, for bench/memif_bench.py.
 *
 *   memif_ring_counter REGION_PATH SECONDS [RING_OFFSET]
 *
 * REGION_PATH is the client's region 0 (rings first), e.g. /proc/<pid>/fd/<n> of its memfd; ring 0
 * (RING_OFFSET 0, the default) is the client's transmit ring, and its receiver's `tail` index counts
 * the packets taken. The client's receive rings follow its transmit rings (each ring 128 bytes and
 * 16 bytes per slot): there the server's `tail` counts the packets the server delivered
 * (bench/dpdk_bridge_bench.py counts what a forwarder delivers this way). The `tail` is read for
 * SECONDS, at a real-time priority when allowed, so that a reading is held up only when this CPU
 * is (and then the side pinned to it waits too, so the other side moves at most a ring meanwhile).
 *
 * The index is 16 bits and wraps every 65,536 packets, 0.6 ms at 100 Mpps: the count is exact only
 * if no two readings are a wrap apart. Each reading costs the CPU it runs on about 10-20 us on
 * these VMs (a timer and two context switches; from Python it was 20 us more), so the period
 * follows the rate: about STEP_TARGET packets between readings, but every 100-400 us whatever the
 * rate, so that a sudden 3x change of rate (the vCPUs' placement flipping) still stays under a
 * wrap. At 100 Mpps that takes 5-15 % from the side sharing this CPU, about 2 % at 60 Mpps or less
 * (docs/performance.md).
 *
 * Prints one line: packets=N seconds=S samples=N max_gap_us=G max_step=N fill_median=F
 * max_step is the largest count between two readings: near a wrap (memif_bench.py's WRAP_RISK_STEP)
 * one could have been missed, and the caller does not trust the count. fill: head - tail, sampled
 * with the tail. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { RING_HEAD_OFFSET = 6, RING_TAIL_OFFSET = 64, MAX_FILL = 65536, MAP_SIZE = 8192 };
enum { STEP_TARGET = 20000, MIN_PERIOD_NS = 100000, MAX_PERIOD_NS = 400000 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint16_t load_index(const volatile uint8_t *ring, size_t offset)
{
	return __atomic_load_n((const uint16_t *)(const void *)(ring + offset), __ATOMIC_ACQUIRE);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s REGION_PATH SECONDS [RING_OFFSET]\n", argv[0]);
		return 2;
	}
	double seconds = atof(argv[2]);
	if (seconds <= 0) {
		fprintf(stderr, "%s: SECONDS must be > 0\n", argv[0]);
		return 2;
	}
	char *end = NULL;
	unsigned long long ring_offset = argc == 4 ? strtoull(argv[3], &end, 0) : 0;
	if (argc == 4 && (*argv[3] == '\0' || *end != '\0' || ring_offset % 64 != 0)) {
		fprintf(stderr, "%s: RING_OFFSET must be a multiple of 64 bytes\n", argv[0]);
		return 2;
	}
	/* Mapped from the page that holds the ring's first byte: the indexes are in its first 128 bytes. */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	off_t map_offset = (off_t)(ring_offset - ring_offset % page);
	size_t in_map = (size_t)(ring_offset % page);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	const volatile uint8_t *map = mmap(NULL, MAP_SIZE, PROT_READ, MAP_SHARED, fd, map_offset);
	close(fd);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	const volatile uint8_t *ring = map + in_map;
	struct sched_param param = {.sched_priority = 1};
	(void)sched_setscheduler(0, SCHED_FIFO, &param); /* best effort: needs root or CAP_SYS_NICE */

	/* Median fill from a histogram: no allocation per sample. */
	static uint32_t fill_histogram[MAX_FILL];
	uint64_t packets = 0, samples = 0;
	uint32_t max_step = 0;
	double max_gap = 0;
	struct timespec sleep_for = {.tv_sec = 0, .tv_nsec = MIN_PERIOD_NS};
	uint16_t tail = load_index(ring, RING_TAIL_OFFSET);
	double start = now_s(), last = start;
	while (last - start < seconds) {
		nanosleep(&sleep_for, NULL);
		double now = now_s();
		uint16_t current = load_index(ring, RING_TAIL_OFFSET);
		uint16_t head = load_index(ring, RING_HEAD_OFFSET);
		uint32_t step = (uint16_t)(current - tail);
		packets += step;
		if (step > max_step) {
			max_step = step;
		}
		if (now - last > max_gap) {
			max_gap = now - last;
		}
		fill_histogram[(uint16_t)(head - current)]++;
		double rate = (double)step / (now - last);
		double period_ns = rate > 0 ? STEP_TARGET / rate * 1e9 : MAX_PERIOD_NS;
		sleep_for.tv_nsec = period_ns < MIN_PERIOD_NS   ? MIN_PERIOD_NS
				    : period_ns > MAX_PERIOD_NS ? MAX_PERIOD_NS
								: (long)period_ns;
		samples++;
		tail = current;
		last = now;
	}
	uint64_t seen = 0;
	uint32_t fill_median = 0;
	for (uint32_t fill = 0; fill < MAX_FILL; fill++) {
		seen += fill_histogram[fill];
		if (seen * 2 >= samples) {
			fill_median = fill;
			break;
		}
	}
	printf("packets=%llu seconds=%.6f samples=%llu max_gap_us=%.1f max_step=%u fill_median=%u\n",
	       (unsigned long long)packets, last - start, (unsigned long long)samples, max_gap * 1e6, max_step,
	       fill_median);
	return 0;
}
