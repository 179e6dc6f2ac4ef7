// kill -9 of either side while data moves. The suite name carries "Concurrent": engine threads,
// the killer thread and two processes race, so the TSan pass runs it too.
#include "xproc_fixture.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace xproc_test;
using softdpu::device::Side;

namespace {

TEST(XprocCrashConcurrentTest, HostKilledMidTransferFailsInFlightAndLaterTasks)
{
	SideGuard side(Side::dpu);
	constexpr size_t kBytes = 4 << 20;
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", kBytes, kReadWrite, "pci", 2);
	ASSERT_FALSE(exported.blob.empty());
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *remote = nullptr;
	ASSERT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), exported.blob.size(), p0, &remote),
		  DOCA_SUCCESS);
	const size_t shm_before = dev_shm_entries().size();
	{
		DmaRig rig(p0);
		LocalMemory local(p0, kBytes);
		auto *r = reinterpret_cast<uint8_t *>(exported.addr);
		std::atomic<bool> killed{false};
		std::atomic<uint32_t> successes{0};
		std::thread killer([&] {
			while (successes.load() < 20)
				std::this_thread::yield();
			host->kill9();
			killed.store(true);
		});
		doca_error_t status = DOCA_SUCCESS;
		uint32_t after_kill = 0;
		for (int i = 0; i < 100000 && status == DOCA_SUCCESS; ++i) {
			doca_buf *src = rig.buf(remote, r, kBytes, kBytes);
			doca_buf *dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
			status = rig.copy(src, dst); // 4 MiB: an engine thread copies it
			doca_buf_dec_refcount(src, nullptr);
			doca_buf_dec_refcount(dst, nullptr);
			if (status == DOCA_SUCCESS) {
				successes.fetch_add(1);
				if (killed.load())
					++after_kill; // the kernel may take a moment to tear the process down
			}
		}
		killer.join();
		EXPECT_EQ(host->wait(), SIGKILL);
		EXPECT_TRUE(status == DOCA_ERROR_NOT_CONNECTED || status == DOCA_ERROR_IO_FAILED)
		    << doca_error_get_name(status);
		EXPECT_LT(after_kill, 100000u);
		// Every later task fails cleanly too, whichever direction.
		for (int i = 0; i < 3; ++i) {
			rig.restart();
			doca_buf *src = rig.buf(remote, r, 4096, 4096);
			doca_buf *dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
			EXPECT_EQ(rig.copy(src, dst), DOCA_ERROR_NOT_CONNECTED);
			rig.restart();
			doca_buf *back = rig.buf(remote, r, kBytes, 0);
			doca_buf *local_src = rig.buf(local.mmap, local.data.data(), kBytes, kBytes);
			EXPECT_EQ(rig.copy(local_src, back), DOCA_ERROR_NOT_CONNECTED);
			doca_buf_dec_refcount(local_src, nullptr);
			doca_buf_dec_refcount(src, nullptr);
			doca_buf_dec_refcount(dst, nullptr);
			doca_buf_dec_refcount(back, nullptr);
		}
	}
	doca_mmap *again = nullptr;
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), exported.blob.size(), p0, &again),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
	EXPECT_EQ(dev_shm_entries().size(), shm_before);
}

TEST(XprocCrashConcurrentTest, DpuKilledMidTransferLeavesHostAbleToStopAndDestroy)
{
	SideGuard side(Side::host);
	const std::vector<std::string> shm_before = dev_shm_entries();
	const size_t fds_before = open_fd_count();
	constexpr size_t kBytes = 1 << 20;
	std::vector<uint8_t> memory(kBytes);
	fill_pattern(memory.data(), memory.size(), 6);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	for (int round = 0; round < 3; ++round) {
		doca_mmap *mmap = started_mmap(memory, pf0, kReadWrite);
		ASSERT_NE(mmap, nullptr);
		const void *desc = nullptr;
		size_t len = 0;
		ASSERT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_SUCCESS);
		{
			auto dpu = start_peer("dpu");
			ASSERT_EQ(dpu->call("import 03:00.0 0 " + to_hex(desc, len)), "ok");
			// Small copies run inline on the peer's thread, large ones on its engine: both.
			dpu->send(round == 1 ? "readloop 4096" : "readloop 1048576");
			ASSERT_EQ(dpu->read_line(), "ok started");
			std::this_thread::sleep_for(std::chrono::milliseconds(5 + round * 10));
			dpu->kill9();
			EXPECT_EQ(dpu->wait(), SIGKILL);
		}
		const auto t0 = std::chrono::steady_clock::now();
		EXPECT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
		const auto waited = std::chrono::steady_clock::now() - t0;
		// A dead importer never holds stop for the full bounded wait (1 s).
		EXPECT_LT(waited, std::chrono::milliseconds(900));
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}
	doca_dev_close(pf0);
	// The registry's two memfds (rules and shared state) stay open in this process, whatever the
	// number of exports.
	EXPECT_LE(open_fd_count(), fds_before + 2);
	EXPECT_EQ(dev_shm_entries(), shm_before);
}

} // namespace
