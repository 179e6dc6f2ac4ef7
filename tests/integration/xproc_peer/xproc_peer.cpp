// The other process of the cross-process tests and benchmarks. Its side (host or DPU) comes from
// SOFTDPU_SIDE. It reads one command per line on stdin and answers one line on stdout ("ok ..." or
// "err <DOCA error name>"); between commands it sleeps in read(), so its CPU takes no part in what
// the importer does to its memory. EOF on stdin ends it.
//
// Exporter commands: export <pci> <nth> <bytes> <permissions> <pci|rdma> <seed> -> ok <blob hex> <addr>
//                    sum <offset> <len> -> ok <fnv hex>;  stop -> ok <ms>;  destroy -> ok <ms>
//                    exec -> ok exec (then a fresh peer runs, same pid)
// Importer commands: import <pci> <nth> <blob hex> -> ok | err;  readloop <bytes> -> "ok started"
//                    once the first copy succeeded, then copies until killed;
//                    stallwrite <bytes> <ms> <seed> -> "ok started", then the task's status
// Sync events: see the se_* commands below.
#include "xproc_peer/xproc_support.hpp"

#include <doca_sync_event.h>

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

using namespace xproc_test;

namespace {

struct State {
	doca_dev *dev = nullptr;
	uint8_t *memory = nullptr;
	size_t bytes = 0;
	doca_mmap *mmap = nullptr;
	doca_mmap *imported = nullptr;
	doca_sync_event *event = nullptr;
	doca_sync_event *event2 = nullptr;
} state;

// Every device opened, closed once each at EOF.
std::vector<doca_dev *> opened;

doca_dev *open_dev(const std::string &pci, int nth = 0)
{
	doca_dev *dev = open_by_pci(pci.c_str(), nth);
	if (dev != nullptr)
		opened.push_back(dev);
	return dev;
}

void reply(const std::string &line)
{
	std::cout << line << std::endl;
}

void reply_error(doca_error_t result)
{
	reply(std::string("err ") + doca_error_get_name(result));
}

double elapsed_ms(std::chrono::steady_clock::time_point since)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

void cmd_export(const std::vector<std::string> &w)
{
	state.dev = open_dev(w[1], std::stoi(w[2]));
	if (state.dev == nullptr)
		return reply_error(DOCA_ERROR_NOT_FOUND);
	state.bytes = std::stoull(w[3]);
	state.memory = static_cast<uint8_t *>(std::aligned_alloc(4096, (state.bytes + 4095) / 4096 * 4096));
	fill_pattern(state.memory, state.bytes, static_cast<uint32_t>(std::stoul(w[6])));
	doca_error_t r = doca_mmap_create(&state.mmap);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_memrange(state.mmap, state.memory, state.bytes);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_permissions(state.mmap, static_cast<uint32_t>(std::stoul(w[4], nullptr, 0)));
	if (r == DOCA_SUCCESS)
		r = doca_mmap_add_dev(state.mmap, state.dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(state.mmap);
	const void *blob = nullptr;
	size_t len = 0;
	if (r == DOCA_SUCCESS)
		r = w[5] == "rdma" ? doca_mmap_export_rdma(state.mmap, state.dev, &blob, &len)
				   : doca_mmap_export_pci(state.mmap, state.dev, &blob, &len);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	char addr[32];
	std::snprintf(addr, sizeof(addr), "%p", static_cast<void *>(state.memory));
	reply("ok " + to_hex(blob, len) + " " + addr);
}

void cmd_import(const std::vector<std::string> &w)
{
	state.dev = open_dev(w[1], std::stoi(w[2]));
	if (state.dev == nullptr)
		return reply_error(DOCA_ERROR_NOT_FOUND);
	const std::vector<uint8_t> blob = from_hex(w[3]);
	const doca_error_t r =
	    doca_mmap_create_from_export(nullptr, blob.data(), blob.size(), state.dev, &state.imported);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	reply("ok");
}

// Copies from the imported memory into a local buffer until killed (or until a copy fails).
[[noreturn]] void cmd_readloop(const std::vector<std::string> &w)
{
	const size_t bytes = std::stoull(w[1]);
	std::vector<uint8_t> local(bytes);
	doca_mmap *local_mmap = nullptr;
	doca_mmap_create(&local_mmap);
	doca_mmap_set_memrange(local_mmap, local.data(), local.size());
	doca_mmap_add_dev(local_mmap, state.dev);
	doca_mmap_start(local_mmap);
	void *base = nullptr;
	size_t len = 0;
	doca_mmap_get_memrange(state.imported, &base, &len);
	DmaRig rig(state.dev);
	bool announced = false;
	for (;;) {
		doca_buf *src = rig.buf(state.imported, base, bytes, bytes);
		doca_buf *dst = rig.buf(local_mmap, local.data(), bytes, 0);
		const doca_error_t r = rig.copy(src, dst);
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
		if (r != DOCA_SUCCESS) {
			reply_error(r);
			std::_Exit(3);
		}
		if (!announced) {
			reply("ok started");
			announced = true;
		}
	}
}

// stallwrite <bytes> <stall ms> <seed>: one DMA task copying a local page-aligned buffer into the
// imported memory, whose source pages are missing under userfaultfd: the copy stalls inside the
// import's access until a second thread fills them (pattern seed) after <stall ms>. Replies
// "ok started" (the stall begins), then the task's status.
void cmd_stallwrite(const std::vector<std::string> &w)
{
	const size_t bytes = std::stoull(w[1]);
	const auto stall = std::chrono::milliseconds(std::stoll(w[2]));
	const auto seed = static_cast<uint32_t>(std::stoul(w[3]));
	const size_t len = (bytes + 4095) / 4096 * 4096;
	auto *local =
	    static_cast<uint8_t *>(mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (local == MAP_FAILED)
		return reply(std::string("err mmap ") + std::strerror(errno));
	// Registered (start faults every page in, as pinning does), then the pages dropped again and
	// left to userfaultfd: the copy's reads of them stall until the filler supplies them.
	doca_mmap *local_mmap = nullptr;
	doca_mmap_create(&local_mmap);
	doca_mmap_set_memrange(local_mmap, local, len);
	doca_mmap_add_dev(local_mmap, state.dev);
	const doca_error_t started = doca_mmap_start(local_mmap);
	if (started != DOCA_SUCCESS)
		return reply_error(started);
	madvise(local, len, MADV_DONTNEED);
	const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC));
	struct uffdio_api api = {UFFD_API, 0, 0};
	struct uffdio_register reg = {};
	reg.range = {reinterpret_cast<uint64_t>(local), len};
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) != 0)
		return reply(std::string("err userfaultfd ") + std::strerror(errno));
	doca_error_t r = DOCA_SUCCESS;
	void *base = nullptr;
	size_t remote_len = 0;
	doca_mmap_get_memrange(state.imported, &base, &remote_len);
	std::thread filler([&] {
		std::this_thread::sleep_for(stall);
		std::vector<uint8_t> page(4096);
		for (size_t off = 0; off < len; off += 4096) {
			fill_pattern(page.data(), page.size(), seed, off);
			struct uffdio_copy copy = {};
			copy.dst = reinterpret_cast<uint64_t>(local) + off;
			copy.src = reinterpret_cast<uint64_t>(page.data());
			copy.len = 4096;
			ioctl(uffd, UFFDIO_COPY, &copy);
		}
	});
	{
		DmaRig rig(state.dev);
		doca_buf *src = rig.buf(local_mmap, local, bytes, bytes);
		doca_buf *dst = rig.buf(state.imported, base, bytes, 0);
		reply("ok started");
		r = rig.copy(src, dst);
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
	}
	filler.join();
	doca_mmap_destroy(local_mmap);
	close(uffd);
	munmap(local, len);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	reply("ok");
}

// exec: replaces this program by a fresh xproc_peer (same pid, same pipes), with address space
// randomization off so that two runs lay out memory the same way.
void cmd_exec()
{
	personality(ADDR_NO_RANDOMIZE);
	// Replied first: the caller sends nothing more until it has read this, so no command of the
	// new program's can be lost in this program's input buffer.
	reply("ok exec");
	char *const argv[] = {const_cast<char *>("xproc_peer"), nullptr};
	execv("/proc/self/exe", argv);
	reply(std::string("err exec ") + std::strerror(errno));
}

void cmd_sum(const std::vector<std::string> &w)
{
	const size_t off = std::stoull(w[1]), len = std::stoull(w[2]);
	if (state.memory == nullptr || off > state.bytes || len > state.bytes - off)
		return reply_error(DOCA_ERROR_INVALID_VALUE);
	char out[32];
	std::snprintf(out, sizeof(out), "%016llx", (unsigned long long)fnv(state.memory + off, len));
	reply(std::string("ok ") + out);
}

void cmd_stop()
{
	const auto t0 = std::chrono::steady_clock::now();
	const doca_error_t r = doca_mmap_stop(state.mmap);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	reply("ok " + std::to_string(elapsed_ms(t0)));
}

void cmd_destroy()
{
	const auto t0 = std::chrono::steady_clock::now();
	const doca_error_t r = doca_mmap_destroy(state.mmap);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	state.mmap = nullptr;
	reply("ok " + std::to_string(elapsed_ms(t0)));
}

std::vector<doca_sync_event *> events;
std::vector<doca_pe *> pes;

doca_sync_event *event_at(const std::string &index)
{
	const size_t i = std::stoul(index);
	return i < events.size() ? events[i] : nullptr;
}

// se_export <pci>: a started stand-alone event (CPU publisher, DPU subscriber) exported to the DPU.
void cmd_se_export(const std::vector<std::string> &w)
{
	doca_dev *dev = open_dev(w[1]);
	doca_sync_event *event = nullptr;
	doca_error_t r = doca_sync_event_create(&event);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_add_publisher_location_cpu(event, dev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_add_subscriber_location_dpu(event);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_start(event);
	const uint8_t *blob = nullptr;
	size_t len = 0;
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_export_to_dpu(event, dev, &blob, &len);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	events.push_back(event);
	reply("ok " + std::to_string(events.size() - 1) + " " + to_hex(blob, len));
}

// se_import <pci> <nth> <blob> [ctx]: create from export, started stand-alone (or left for se_taskwait).
void cmd_se_import(const std::vector<std::string> &w)
{
	doca_dev *dev = open_dev(w[1], std::stoi(w[2]));
	const std::vector<uint8_t> blob = from_hex(w[3]);
	doca_sync_event *event = nullptr;
	doca_error_t r = doca_sync_event_create_from_export(dev, blob.data(), blob.size(), &event);
	if (r == DOCA_SUCCESS && w.size() < 5)
		r = doca_sync_event_start(event);
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	events.push_back(event);
	reply("ok " + std::to_string(events.size() - 1));
}

void wait_cb(doca_sync_event_task_wait_gt *task, union doca_data, union doca_data ctx_data)
{
	*static_cast<doca_error_t *>(ctx_data.ptr) =
	    doca_task_get_status(doca_sync_event_task_wait_gt_as_doca_task(task));
	doca_task_free(doca_sync_event_task_wait_gt_as_doca_task(task));
}

// se_taskwait <i> <value>: a wait-gt task on a PE (the event as a context), progressed to completion.
void cmd_se_taskwait(const std::vector<std::string> &w)
{
	doca_sync_event *event = event_at(w[1]);
	doca_pe *pe = nullptr;
	doca_pe_create(&pe);
	doca_ctx *ctx = doca_sync_event_as_ctx(event);
	doca_error_t status = DOCA_ERROR_IN_PROGRESS;
	union doca_data data;
	data.ptr = &status;
	doca_ctx_set_user_data(ctx, data);
	doca_pe_connect_ctx(pe, ctx);
	doca_sync_event_task_wait_gt_set_conf(event, wait_cb, wait_cb, 1);
	doca_error_t r = doca_ctx_start(ctx);
	doca_sync_event_task_wait_gt *task = nullptr;
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_task_wait_gt_alloc_init(event, std::stoull(w[2]), 0xFF, data, &task);
	if (r == DOCA_SUCCESS)
		r = doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(task));
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	reply("ok submitted");
	while (status == DOCA_ERROR_IN_PROGRESS)
		doca_pe_progress(pe);
	// Back to idle, so the event can be destroyed at EOF (the PE after it).
	doca_ctx_stop(ctx);
	for (int i = 0; i < 1000; ++i)
		doca_pe_progress(pe);
	pes.push_back(pe);
	if (status == DOCA_SUCCESS)
		reply("ok");
	else
		reply_error(status);
}

// se_pong <in> <out> <n>: for k = 1..n wait for in > k-1, then set out = k.
void cmd_se_pong(const std::vector<std::string> &w)
{
	doca_sync_event *in = event_at(w[1]), *out = event_at(w[2]);
	const uint64_t n = std::stoull(w[3]);
	reply("ok ready");
	for (uint64_t k = 1; k <= n; ++k) {
		doca_error_t r = doca_sync_event_wait_gt(in, k - 1, UINT64_MAX);
		if (r == DOCA_SUCCESS)
			r = doca_sync_event_update_set(out, k);
		if (r != DOCA_SUCCESS)
			return reply_error(r);
	}
	reply("ok");
}

void cmd_se(const std::vector<std::string> &w)
{
	doca_sync_event *event = w.size() > 1 ? event_at(w[1]) : nullptr;
	if (event == nullptr)
		return reply_error(DOCA_ERROR_INVALID_VALUE);
	doca_error_t r = DOCA_SUCCESS;
	uint64_t value = 0;
	if (w[0] == "se_set" && w.size() == 3)
		r = doca_sync_event_update_set(event, std::stoull(w[2]));
	else if (w[0] == "se_add" && w.size() == 3)
		r = doca_sync_event_update_add(event, std::stoull(w[2]), &value);
	else if (w[0] == "se_addn" && w.size() == 3) {
		for (uint64_t i = std::stoull(w[2]); i > 0 && r == DOCA_SUCCESS; --i)
			r = doca_sync_event_update_add(event, 1, &value);
	} else if (w[0] == "se_get")
		r = doca_sync_event_get(event, &value);
	else if (w[0] == "se_wait" && w.size() == 3)
		r = doca_sync_event_wait_gt(event, std::stoull(w[2]), UINT64_MAX);
	else if (w[0] == "se_wait_yield" && w.size() == 3)
		r = doca_sync_event_wait_gt_yield(event, std::stoull(w[2]), UINT64_MAX);
	else if (w[0] == "se_destroy") {
		doca_sync_event_stop(event);
		r = doca_sync_event_destroy(event);
		events[std::stoul(w[1])] = nullptr;
	} else
		return reply("err unknown-command");
	if (r != DOCA_SUCCESS)
		return reply_error(r);
	reply("ok " + std::to_string(value));
}

// Releases everything at EOF, so leak checkers see a clean exit.
void clean_up()
{
	for (doca_sync_event *event : events) {
		if (event != nullptr) {
			doca_sync_event_stop(event);
			doca_sync_event_destroy(event);
		}
	}
	for (doca_pe *pe : pes)
		doca_pe_destroy(pe);
	if (state.imported != nullptr)
		doca_mmap_destroy(state.imported);
	if (state.mmap != nullptr)
		doca_mmap_destroy(state.mmap);
	std::free(state.memory);
	for (auto it = opened.rbegin(); it != opened.rend(); ++it)
		doca_dev_close(*it);
}

} // namespace

int main()
{
	std::string line;
	while (std::getline(std::cin, line)) {
		const std::vector<std::string> w = words(line);
		if (w.empty())
			continue;
		try {
			if (w[0] == "export" && w.size() == 7)
				cmd_export(w);
			else if (w[0] == "import" && w.size() == 4)
				cmd_import(w);
			else if (w[0] == "readloop" && w.size() == 2)
				cmd_readloop(w);
			else if (w[0] == "stallwrite" && w.size() == 4)
				cmd_stallwrite(w);
			else if (w[0] == "exec")
				cmd_exec();
			else if (w[0] == "sum" && w.size() == 3)
				cmd_sum(w);
			else if (w[0] == "stop")
				cmd_stop();
			else if (w[0] == "destroy")
				cmd_destroy();
			else if (w[0] == "se_export" && w.size() == 2)
				cmd_se_export(w);
			else if (w[0] == "se_import" && w.size() >= 4)
				cmd_se_import(w);
			else if (w[0] == "se_taskwait" && w.size() == 3)
				cmd_se_taskwait(w);
			else if (w[0] == "se_pong" && w.size() == 4)
				cmd_se_pong(w);
			else if (w[0].rfind("se_", 0) == 0)
				cmd_se(w);
			else if (w[0] == "pid")
				reply("ok " + std::to_string(getpid()));
			else if (w[0] == "exit")
				break;
			else
				reply("err unknown-command");
		} catch (const std::exception &e) {
			reply(std::string("err exception ") + e.what());
		}
	}
	clean_up();
	return 0;
}
