// The RDMA device's data transport (src/device/rdma/transport) between two processes, each figure
// next to its floor measured in the same run:
//   64-byte writes: one Peer::write per operation, and Peer::write_batch of 16/64/256 operations
//                   per call (one process_vm_writev), next to one raw process_vm_writev each;
//   64 KiB writes:  Peer::write next to raw process_vm_writev of the same size;
//   atomics:        Peer::fetch_add (stripe lock, read, write).
// The target is a child forked at start-up (before any thread exists); it binds, registers 1 MiB
// and then only sleeps in read() on its command pipe: one-sided, as RDMA is.
#include <benchmark/benchmark.h>

#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device/rdma/transport/transport.hpp"

namespace {

using namespace softdpu::device::rdma::transport;

constexpr size_t kTargetBytes = 1 << 20;
constexpr uint32_t kPd = 1;

struct TargetInfo {
	uint32_t qpn;
	uint32_t key;
	uint64_t addr;
};

struct {
	pid_t pid = -1;
	int cmd = -1;
	TargetInfo info = {};
	std::string fabric;
	std::unique_ptr<Peer> peer;
} target;

void start_target()
{
	target.fabric = "bench" + std::to_string(getpid()) + "/pf0";
	int to_child[2], from_child[2];
	if (pipe(to_child) != 0 || pipe(from_child) != 0)
		std::_Exit(2);
	target.pid = fork();
	if (target.pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		void *buffer = aligned_alloc(4096, kTargetBytes);
		std::memset(buffer, 0, kTargetBytes);
		std::unique_ptr<Binding> binding;
		TargetInfo info = {};
		info.addr = reinterpret_cast<uint64_t>(buffer);
		MemoryTable *table = MemoryTable::instance();
		if (table == nullptr || Binding::bind(target.fabric, {}, {}, nullptr, &binding) != Status::ok ||
		    table->add(info.addr, kTargetBytes, info.addr,
			       kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic, kPd,
			       &info.key) != Status::ok)
			std::_Exit(3);
		info.qpn = binding->qpn();
		if (write(from_child[1], &info, sizeof(info)) != sizeof(info))
			std::_Exit(4);
		char byte;
		while (read(to_child[0], &byte, 1) > 0) {
		}
		std::_Exit(0);
	}
	close(to_child[0]);
	close(from_child[1]);
	target.cmd = to_child[1];
	if (read(from_child[0], &target.info, sizeof(target.info)) != sizeof(target.info))
		std::_Exit(5);
	close(from_child[0]);
}

void BM_Write64(benchmark::State &state)
{
	uint8_t data[64] = {1};
	struct iovec local = {data, sizeof(data)};
	uint64_t offset = 0;
	for (auto _ : state) {
		if (target.peer->write(&local, 1, target.info.key, target.info.addr + offset, kPd) != Status::ok)
			state.SkipWithError("write failed");
		offset = (offset + 64) % kTargetBytes;
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Write64);

void BM_Write64Batched(benchmark::State &state)
{
	const auto batch = static_cast<size_t>(state.range(0));
	std::vector<uint8_t> data(64 * batch, 1);
	std::vector<struct iovec> local(batch);
	std::vector<RemoteOp> ops(batch);
	uint64_t offset = 0;
	for (auto _ : state) {
		for (size_t i = 0; i < batch; ++i) {
			local[i] = {data.data() + 64 * i, 64};
			ops[i] = RemoteOp{&local[i], 1, target.info.key, target.info.addr + offset, Status::ok};
			offset = (offset + 64) % kTargetBytes;
		}
		if (target.peer->write_batch(ops.data(), batch, kPd) != batch)
			state.SkipWithError("write_batch failed");
	}
	state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
}
BENCHMARK(BM_Write64Batched)->Arg(16)->Arg(64)->Arg(256);

void BM_RawWritev(benchmark::State &state)
{
	const auto size = static_cast<size_t>(state.range(0));
	std::vector<uint8_t> data(size, 1);
	struct iovec local = {data.data(), size};
	uint64_t offset = 0;
	for (auto _ : state) {
		struct iovec remote = {reinterpret_cast<void *>(target.info.addr + offset), size};
		if (process_vm_writev(target.pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size))
			state.SkipWithError("process_vm_writev failed");
		offset = (offset + size) % kTargetBytes;
	}
	state.SetItemsProcessed(state.iterations());
	state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(size));
}
BENCHMARK(BM_RawWritev)->Arg(64)->Arg(64 << 10);

void BM_Write64K(benchmark::State &state)
{
	constexpr size_t kSize = 64 << 10;
	std::vector<uint8_t> data(kSize, 1);
	struct iovec local = {data.data(), kSize};
	uint64_t offset = 0;
	for (auto _ : state) {
		if (target.peer->write(&local, 1, target.info.key, target.info.addr + offset, kPd) != Status::ok)
			state.SkipWithError("write failed");
		offset = (offset + kSize) % kTargetBytes;
	}
	state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kSize));
}
BENCHMARK(BM_Write64K);

void BM_FetchAdd(benchmark::State &state)
{
	uint64_t old = 0;
	for (auto _ : state)
		if (target.peer->fetch_add(target.info.key, target.info.addr, 1, kPd, &old) != Status::ok)
			state.SkipWithError("fetch_add failed");
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FetchAdd);

} // namespace

int main(int argc, char **argv)
{
	start_target(); // before any thread: fork is safe
	if (Peer::connect(target.fabric, target.info.qpn, nullptr, &target.peer) != Status::ok)
		return 1;
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	target.peer.reset();
	close(target.cmd);
	int status = 0;
	waitpid(target.pid, &status, 0);
	return 0;
}
