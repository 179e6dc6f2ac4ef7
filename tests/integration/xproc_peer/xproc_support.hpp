// Helpers shared by the cross-process tests, the xproc_peer program and the cross-process
// benchmarks: opening a device by PCI address, hex blobs, data patterns, a DMA rig over any mmap,
// and Peer (a child process driven over pipes, one command line -> one reply line).
#pragma once

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include <sys/types.h>

#include "support/devices.hpp"
#include <cstddef>
#include <cstdint>

#include <string>
#include <vector>

namespace xproc_test {

using softdpu_test::open_by_pci;

std::string to_hex(const void *data, size_t len);
std::vector<uint8_t> from_hex(const std::string &hex);

// Byte i of pattern `seed`.
inline uint8_t pattern_byte(uint32_t seed, size_t i)
{
	return static_cast<uint8_t>(seed * 31u + i * 7u + (i >> 8));
}
void fill_pattern(uint8_t *p, size_t len, uint32_t seed, size_t first_index = 0);
bool check_pattern(const uint8_t *p, size_t len, uint32_t seed, size_t first_index = 0);
uint64_t fnv(const uint8_t *p, size_t len);

// A PE, a DMA context on `dev` (which stays the caller's to close) and an inventory; completion
// status lands in `last_status`.
struct DmaRig {
	explicit DmaRig(doca_dev *dev, uint32_t num_tasks = 64, uint32_t num_bufs = 256);
	~DmaRig();
	DmaRig(const DmaRig &) = delete;
	DmaRig &operator=(const DmaRig &) = delete;

	doca_buf *buf(doca_mmap *mmap, void *addr, size_t len, size_t data_len);
	// Submits one memcpy and progresses until it completes; returns its status.
	doca_error_t copy(doca_buf *src, doca_buf *dst);
	// After a failed task the context stops by itself: bring it back to running.
	void restart();
	void progress_until_done(uint32_t count);

	doca_dev *dev;
	doca_pe *pe = nullptr;
	doca_dma *dma = nullptr;
	doca_buf_inventory *inventory = nullptr;
	uint32_t completed = 0;
	uint32_t failed = 0;
	doca_error_t last_status = DOCA_SUCCESS;
};

// A child process running `program` with `args`, environment additions `env` ("K=V").
class Peer {
public:
	Peer(const std::string &program, const std::vector<std::string> &args, const std::vector<std::string> &env);
	~Peer();
	Peer(const Peer &) = delete;
	Peer &operator=(const Peer &) = delete;

	// Sends one command line and returns the reply line ("" on EOF or after timeout_ms).
	std::string call(const std::string &line, int timeout_ms = 10000);
	void send(const std::string &line);
	std::string read_line(int timeout_ms = 10000);
	void kill9();
	// Waits for the child to exit; returns its wait status (-1 if it did not in timeout_ms).
	int wait(int timeout_ms = 10000);
	pid_t pid() const { return pid_; }

private:
	pid_t pid_ = -1;
	int to_child_ = -1;
	int from_child_ = -1;
	std::string buffered_;
	bool reaped_ = false;
};

// Splits a reply "ok a b c" into words.
std::vector<std::string> words(const std::string &line);

// Entries of /proc/self/fd, and the names in /dev/shm that softdpu could have made (starting with
// "softdpu" or "doca", sorted: it shares memory through memfds, so none is expected). Other names,
// and the test guests' RAM files, are left out: tests running beside these keep files there.
size_t open_fd_count();
std::vector<std::string> dev_shm_entries();

} // namespace xproc_test
