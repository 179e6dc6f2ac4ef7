// The other process of the cross-process tests and benchmarks. Its side (host or DPU) comes from
// SOFTDPU_SIDE. It reads one command per line on stdin and answers one line on stdout ("ok ..." or
// "err <DOCA error name>"); between commands it sleeps in read(), so its CPU takes no part in what
// the importer does to its memory. EOF on stdin ends it.
//
// Exporter commands: export <pci> <nth> <bytes> <permissions> <pci|rdma> <seed> -> ok <blob hex> <addr>
//                    sum <offset> <len> -> ok <fnv hex>;  stop -> ok <ms>;  destroy -> ok <ms>
// Importer commands: import <pci> <nth> <blob hex> -> ok | err;  readloop <bytes> -> "ok started"
//                    once the first copy succeeded, then copies until killed
// Sync events: see the se_* commands below.
#include "xproc/xproc_support.hpp"

#include <doca_sync_event.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

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
	state.dev = open_by_pci(w[1].c_str(), std::stoi(w[2]));
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
	state.dev = open_by_pci(w[1].c_str(), std::stoi(w[2]));
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
			else if (w[0] == "sum" && w.size() == 3)
				cmd_sum(w);
			else if (w[0] == "stop")
				cmd_stop();
			else if (w[0] == "destroy")
				cmd_destroy();
			else if (w[0] == "pid")
				reply("ok " + std::to_string(getpid()));
			else if (w[0] == "exit")
				return 0;
			else
				reply("err unknown-command");
		} catch (const std::exception &e) {
			reply(std::string("err exception ") + e.what());
		}
	}
	return 0;
}
