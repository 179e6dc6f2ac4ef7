// Host <-> DPU across processes, each figure next to a baseline measured in the same run:
//   throughput: DMA of 64 KiB and 1 MiB from the host process's exported memory into this (DPU)
//               process, as a ratio to raw process_vm_readv of the same sizes, interleaved
//   latency:    one 4 KiB task, submit -> completion callback, cross-process and same-process
//   sync event: round trip between two processes (ping-pong on two exported events), next to a
//               futex ping-pong on a shared page and a pipe ping-pong
// The host is a child forked at start-up (before any thread exists); it exports and then only
// sleeps in read() on its command pipe, or answers ping-pongs when asked.
#include <benchmark/benchmark.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kHostBytes = 16 << 20;
constexpr size_t kBlob = 192;

// ------------------------------------------------------------------ plumbing

void read_all(int fd, void *p, size_t n)
{
	auto *b = static_cast<uint8_t *>(p);
	while (n > 0) {
		const ssize_t r = read(fd, b, n);
		if (r <= 0)
			std::_Exit(2);
		b += r;
		n -= static_cast<size_t>(r);
	}
}

void write_all(int fd, const void *p, size_t n)
{
	const auto *b = static_cast<const uint8_t *>(p);
	while (n > 0) {
		const ssize_t r = write(fd, b, n);
		if (r <= 0)
			std::_Exit(2);
		b += r;
		n -= static_cast<size_t>(r);
	}
}

doca_dev *open_by_pci(const char *pci)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	doca_dev *dev = nullptr;
	if (doca_devinfo_create_list(&list, &count) != DOCA_SUCCESS)
		return nullptr;
	for (uint32_t i = 0; i < count && dev == nullptr; ++i) {
		uint8_t equal = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal)
			doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

void check(doca_error_t r, const char *what)
{
	if (r != DOCA_SUCCESS) {
		std::fprintf(stderr, "%s: %s\n", what, doca_error_get_name(r));
		std::_Exit(1);
	}
}

// A page shared with the child for the futex baseline.
struct SharedWords {
	std::atomic<uint32_t> ping;
	std::atomic<uint32_t> pong;
	std::atomic<uint32_t> waiters;
};
SharedWords *shared_words;

// The same shape as a sync event: the poster wakes only when someone sleeps; the waiter spins a
// while, then sleeps in the kernel.
void futex_post(std::atomic<uint32_t> &word, uint32_t value)
{
	word.store(value, std::memory_order_seq_cst);
	if (shared_words->waiters.load(std::memory_order_seq_cst) != 0)
		syscall(SYS_futex, &word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void futex_wait_for(std::atomic<uint32_t> &word, uint32_t value)
{
	for (int i = 0; i < 4096; ++i) {
		if (word.load(std::memory_order_acquire) == value)
			return;
		__builtin_ia32_pause();
	}
	shared_words->waiters.fetch_add(1, std::memory_order_seq_cst);
	for (uint32_t seen; (seen = word.load(std::memory_order_seq_cst)) != value;)
		syscall(SYS_futex, &word, FUTEX_WAIT, seen, nullptr, nullptr, 0);
	shared_words->waiters.fetch_sub(1, std::memory_order_seq_cst);
}

// ------------------------------------------------------------------ the host child

struct Host {
	pid_t pid = -1;
	int cmd = -1;   // parent -> child
	int reply = -1; // child -> parent
	int ping_pipe[2] = {-1, -1};
	int pong_pipe[2] = {-1, -1};
	uint8_t mmap_blob[kBlob];
	uint64_t base = 0;
	uint8_t event_blob[2][kBlob];
} host;

[[noreturn]] void host_main(int cmd, int reply)
{
	setenv("SOFTDPU_SIDE", "host", 1);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	auto *memory = static_cast<uint8_t *>(std::aligned_alloc(4096, kHostBytes));
	for (size_t i = 0; i < kHostBytes; ++i)
		memory[i] = static_cast<uint8_t>(i * 7);
	doca_mmap *mmap = nullptr;
	check(doca_mmap_create(&mmap), "mmap_create");
	check(doca_mmap_set_memrange(mmap, memory, kHostBytes), "set_memrange");
	check(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE),
	      "set_permissions");
	check(doca_mmap_add_dev(mmap, pf0), "add_dev");
	check(doca_mmap_start(mmap), "mmap_start");
	const void *blob = nullptr;
	size_t len = 0;
	check(doca_mmap_export_pci(mmap, pf0, &blob, &len), "export_pci");
	write_all(reply, blob, kBlob);
	const uint64_t base = reinterpret_cast<uint64_t>(memory);
	write_all(reply, &base, sizeof(base));
	doca_sync_event *events[2];
	for (doca_sync_event *&event : events) {
		check(doca_sync_event_create(&event), "se_create");
		check(doca_sync_event_add_publisher_location_cpu(event, pf0), "se_pub");
		check(doca_sync_event_add_subscriber_location_dpu(event), "se_sub");
		check(doca_sync_event_start(event), "se_start");
		const uint8_t *data = nullptr;
		check(doca_sync_event_export_to_dpu(event, pf0, &data, &len), "export_to_dpu");
		write_all(reply, data, kBlob);
	}
	for (;;) {
		char op = 0;
		uint64_t n = 0;
		if (read(cmd, &op, 1) != 1)
			std::_Exit(0);
		read_all(cmd, &n, sizeof(n));
		if (op == 'S') { // sync events: wait ping > k-1, set pong = k
			for (uint64_t k = 1; k <= n; ++k) {
				check(doca_sync_event_wait_gt(events[0], k - 1, UINT64_MAX), "wait_gt");
				check(doca_sync_event_update_set(events[1], k), "update_set");
			}
		} else if (op == 'F') { // futex words
			for (uint64_t k = 1; k <= n; ++k) {
				futex_wait_for(shared_words->ping, static_cast<uint32_t>(k));
				futex_post(shared_words->pong, static_cast<uint32_t>(k));
			}
		} else if (op == 'P') { // pipes
			char byte;
			for (uint64_t k = 1; k <= n; ++k) {
				read_all(host.ping_pipe[0], &byte, 1);
				write_all(host.pong_pipe[1], &byte, 1);
			}
		}
		write_all(reply, "D", 1);
	}
}

void start_host()
{
	shared_words =
	    static_cast<SharedWords *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	int to_child[2], from_child[2];
	if (pipe(to_child) != 0 || pipe(from_child) != 0 || pipe(host.ping_pipe) != 0 || pipe(host.pong_pipe) != 0)
		std::_Exit(1);
	host.pid = fork();
	if (host.pid == 0) {
		close(to_child[1]); // else the host never sees end-of-file when the DPU side is done
		close(from_child[0]);
		host_main(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	host.cmd = to_child[1];
	host.reply = from_child[0];
	read_all(host.reply, host.mmap_blob, kBlob);
	read_all(host.reply, &host.base, sizeof(host.base));
	read_all(host.reply, host.event_blob[0], kBlob);
	read_all(host.reply, host.event_blob[1], kBlob);
}

void host_command(char op, uint64_t n)
{
	write_all(host.cmd, &op, 1);
	write_all(host.cmd, &n, sizeof(n));
}

void host_done()
{
	char done;
	read_all(host.reply, &done, 1);
}

// ------------------------------------------------------------------ the DPU side (this process)

struct Dpu {
	doca_dev *p0 = nullptr;
	doca_mmap *remote = nullptr;
	doca_mmap *local = nullptr;
	std::vector<uint8_t> local_memory;
	doca_buf_inventory *inventory = nullptr;
	doca_pe *pe = nullptr;
	doca_dma *dma = nullptr;
	doca_sync_event *events[2] = {};
	int64_t completed = 0;
} dpu;

void done_cb(doca_dma_task_memcpy *task, union doca_data, union doca_data)
{
	++dpu.completed;
	doca_buf_reset_data_len(doca_dma_task_memcpy_get_dst(task));
}

void error_cb(doca_dma_task_memcpy *task, union doca_data, union doca_data)
{
	std::fprintf(stderr, "DMA task failed: %s\n",
		     doca_error_get_name(doca_task_get_status(doca_dma_task_memcpy_as_task(task))));
	std::_Exit(1);
}

void setup_dpu()
{
	setenv("SOFTDPU_SIDE", "dpu", 1);
	dpu.p0 = open_by_pci("03:00.0");
	check(doca_mmap_create_from_export(nullptr, host.mmap_blob, kBlob, dpu.p0, &dpu.remote), "create_from_export");
	dpu.local_memory.resize(kHostBytes);
	check(doca_mmap_create(&dpu.local), "local mmap");
	check(doca_mmap_set_memrange(dpu.local, dpu.local_memory.data(), kHostBytes), "local memrange");
	check(doca_mmap_add_dev(dpu.local, dpu.p0), "local add_dev");
	check(doca_mmap_start(dpu.local), "local start");
	check(doca_buf_inventory_create(256, &dpu.inventory), "inventory");
	check(doca_buf_inventory_start(dpu.inventory), "inventory start");
	check(doca_pe_create(&dpu.pe), "pe");
	check(doca_dma_create(dpu.p0, &dpu.dma), "dma");
	check(doca_pe_connect_ctx(dpu.pe, doca_dma_as_ctx(dpu.dma)), "connect");
	check(doca_dma_task_memcpy_set_conf(dpu.dma, done_cb, error_cb, 64), "conf");
	check(doca_ctx_start(doca_dma_as_ctx(dpu.dma)), "ctx start");
	for (int i = 0; i < 2; ++i) {
		check(doca_sync_event_create_from_export(dpu.p0, host.event_blob[i], kBlob, &dpu.events[i]),
		      "se import");
		check(doca_sync_event_start(dpu.events[i]), "se start");
	}
}

doca_buf *buf(doca_mmap *mmap, uint8_t *addr, size_t len, size_t data_len)
{
	doca_buf *out = nullptr;
	check(doca_buf_inventory_buf_get_by_args(dpu.inventory, mmap, addr, len, addr, data_len, &out), "buf");
	return out;
}

// ---- throughput: `depth` tasks of `size` bytes in flight (distinct slices), next to process_vm_readv

void BM_XprocDmaThroughput(benchmark::State &state)
{
	const size_t size = static_cast<size_t>(state.range(0));
	const int depth = static_cast<int>(state.range(1));
	const bool write = state.range(2) != 0; // DPU -> host
	auto *remote = reinterpret_cast<uint8_t *>(host.base);
	uint8_t *local = dpu.local_memory.data();
	std::vector<doca_dma_task_memcpy *> tasks;
	for (int i = 0; i < depth; ++i) {
		const size_t off = (static_cast<size_t>(i) * size) % kHostBytes;
		doca_dma_task_memcpy *task = nullptr;
		union doca_data user = {};
		doca_buf *from =
		    write ? buf(dpu.local, local + off, size, size) : buf(dpu.remote, remote + off, size, size);
		doca_buf *to = write ? buf(dpu.remote, remote + off, size, 0) : buf(dpu.local, local + off, size, 0);
		check(doca_dma_task_memcpy_alloc_init(dpu.dma, from, to, user, &task), "alloc");
		tasks.push_back(task);
	}
	std::vector<struct iovec> liov(depth), riov(depth);
	for (int i = 0; i < depth; ++i) {
		const size_t off = (static_cast<size_t>(i) * size) % kHostBytes;
		liov[i] = {local + off, size};
		riov[i] = {remote + off, size};
	}
	double dma_s = 0, readv_s = 0;
	for (auto _ : state) {
		auto t0 = Clock::now();
		const int64_t target = dpu.completed + depth;
		for (doca_dma_task_memcpy *task : tasks)
			doca_task_submit(doca_dma_task_memcpy_as_task(task));
		while (dpu.completed < target)
			doca_pe_progress(dpu.pe);
		auto t1 = Clock::now();
		// The baseline: the same bytes, one raw CMA call per slice (what a task does).
		for (int i = 0; i < depth; ++i) {
			const ssize_t n = write ? process_vm_writev(host.pid, &liov[i], 1, &riov[i], 1, 0)
						: process_vm_readv(host.pid, &liov[i], 1, &riov[i], 1, 0);
			if (n != static_cast<ssize_t>(size))
				std::_Exit(3);
		}
		auto t2 = Clock::now();
		dma_s += std::chrono::duration<double>(t1 - t0).count();
		readv_s += std::chrono::duration<double>(t2 - t1).count();
		state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
	}
	const double bytes = static_cast<double>(state.iterations()) * depth * size;
	state.SetBytesProcessed(static_cast<int64_t>(bytes));
	state.counters["dma_GBps"] = bytes / dma_s / 1e9;
	state.counters[write ? "writev_GBps" : "readv_GBps"] = bytes / readv_s / 1e9;
	state.counters["ratio"] = readv_s / dma_s;
	for (doca_dma_task_memcpy *task : tasks) {
		doca_buf_dec_refcount(const_cast<doca_buf *>(doca_dma_task_memcpy_get_src(task)), nullptr);
		doca_buf_dec_refcount(doca_dma_task_memcpy_get_dst(task), nullptr);
		doca_task_free(doca_dma_task_memcpy_as_task(task));
	}
}
BENCHMARK(BM_XprocDmaThroughput)
    ->ArgNames({"size", "depth", "write"})
    ->Args({64 << 10, 16, 0})
    ->Args({1 << 20, 8, 0})
    ->Args({4 << 10, 16, 1})
    ->Args({64 << 10, 16, 1})
    ->Args({1 << 20, 8, 1})
    ->UseManualTime();

// ---- latency: one 4 KiB task, submit -> completion callback; cross-process (arg 1) or local (arg 0)

void BM_DmaTaskLatency4K(benchmark::State &state)
{
	const bool cross = state.range(0) == 1;
	constexpr size_t kSize = 4096;
	uint8_t *local = dpu.local_memory.data();
	doca_buf *src = cross ? buf(dpu.remote, reinterpret_cast<uint8_t *>(host.base), kSize, kSize)
			      : buf(dpu.local, local + (8 << 20), kSize, kSize);
	doca_buf *dst = buf(dpu.local, local, kSize, 0);
	doca_dma_task_memcpy *task = nullptr;
	union doca_data user = {};
	check(doca_dma_task_memcpy_alloc_init(dpu.dma, src, dst, user, &task), "alloc");
	for (auto _ : state) {
		const int64_t target = dpu.completed + 1;
		doca_task_submit(doca_dma_task_memcpy_as_task(task));
		while (dpu.completed < target)
			doca_pe_progress(dpu.pe);
	}
	state.SetLabel(cross ? "cross-process" : "same-process");
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}
BENCHMARK(BM_DmaTaskLatency4K)->Arg(1)->Arg(0);

// The floor under the cross-process figure: one raw 4 KiB process_vm_readv from the host child.
void BM_RawReadv4K(benchmark::State &state)
{
	struct iovec local = {dpu.local_memory.data(), 4096};
	struct iovec remote = {reinterpret_cast<void *>(host.base), 4096};
	for (auto _ : state)
		if (process_vm_readv(host.pid, &local, 1, &remote, 1, 0) != 4096)
			std::_Exit(3);
}
BENCHMARK(BM_RawReadv4K);

// ---- ping-pong round trips between this process and the host child

void BM_PingPong(benchmark::State &state)
{
	const int kind = static_cast<int>(state.range(0)); // 0 sync events, 1 futex, 2 pipe
	constexpr uint64_t kBatch = 1000;
	uint64_t k = 0;
	shared_words->ping.store(0);
	shared_words->pong.store(0);
	// Fresh values for every run of this benchmark.
	if (kind == 0) {
		doca_sync_event_update_set(dpu.events[0], 0);
		doca_sync_event_update_set(dpu.events[1], 0);
	}
	double seconds = 0;
	for (auto _ : state) {
		state.PauseTiming();
		host_command(kind == 0 ? 'S' : kind == 1 ? 'F' : 'P', kBatch);
		state.ResumeTiming();
		const auto t0 = Clock::now();
		for (uint64_t i = 1; i <= kBatch; ++i) {
			if (kind == 0) {
				check(doca_sync_event_update_set(dpu.events[0], i), "ping");
				check(doca_sync_event_wait_gt(dpu.events[1], i - 1, UINT64_MAX), "wait pong");
			} else if (kind == 1) {
				futex_post(shared_words->ping, static_cast<uint32_t>(i));
				futex_wait_for(shared_words->pong, static_cast<uint32_t>(i));
			} else {
				char byte = 1;
				write_all(host.ping_pipe[1], &byte, 1);
				read_all(host.pong_pipe[0], &byte, 1);
			}
		}
		seconds += std::chrono::duration<double>(Clock::now() - t0).count();
		if (kind == 0) {
			uint64_t pong = 0;
			doca_sync_event_get(dpu.events[1], &pong);
			if (pong != kBatch) {
				std::fprintf(stderr, "ping-pong out of step: pong %llu\n", (unsigned long long)pong);
				std::_Exit(4);
			}
		}
		state.PauseTiming();
		host_done();
		if (kind == 0) {
			doca_sync_event_update_set(dpu.events[0], 0);
			doca_sync_event_update_set(dpu.events[1], 0);
		} else if (kind == 1) {
			shared_words->ping.store(0);
			shared_words->pong.store(0);
		}
		state.ResumeTiming();
		k += kBatch;
	}
	state.SetItemsProcessed(static_cast<int64_t>(k));
	state.counters["round_trip_us"] = k != 0 ? seconds / static_cast<double>(k) * 1e6 : 0;
	state.SetLabel(kind == 0 ? "sync events" : kind == 1 ? "futex" : "pipe");
}
BENCHMARK(BM_PingPong)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

} // namespace

int main(int argc, char **argv)
{
	start_host(); // before any thread: fork is safe
	setup_dpu();
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	close(host.cmd);
	int status = 0;
	waitpid(host.pid, &status, 0);
	return 0;
}
