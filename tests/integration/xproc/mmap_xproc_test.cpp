// doca_mmap export/import and DMA across processes: the peer (host side) exports its memory and
// sleeps; this process (DPU side) imports it and moves data with DMA tasks.
#include "support/topology_with_caps.hpp"
#include "xproc_fixture.hpp"

#include "core/mem/mmap.hpp"
#include "core/xproc/blob.hpp"
#include "core/xproc/registry.hpp"

#include <doca_sync_event.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace xproc_test;
using softdpu::device::Side;

namespace {

constexpr uint32_t kReadOnly = DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;

doca_error_t import(const std::vector<uint8_t> &blob, doca_dev *dev, doca_mmap **mmap)
{
	return doca_mmap_create_from_export(nullptr, blob.data(), blob.size(), dev, mmap);
}

// Rewrites the checksum after a test patched a field, so only the semantic checks can object.
void reseal(std::vector<uint8_t> &blob)
{
	const uint64_t sum = softdpu::xproc::blob_checksum(blob.data());
	std::memcpy(blob.data() + softdpu::xproc::kBlobChecksumOffset, &sum, sizeof(sum));
}

std::string fnv_hex(const uint8_t *p, size_t len)
{
	char out[32];
	std::snprintf(out, sizeof(out), "%016llx", (unsigned long long)fnv(p, len));
	return out;
}

class XprocMmapTest : public ::testing::Test {
protected:
	SideGuard side_{Side::dpu};
};

TEST_F(XprocMmapTest, HostToDpuGatherAndDpuToHostScatterWhileHostSleeps)
{
	constexpr size_t kBytes = 1 << 20;
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", kBytes, kReadWrite, "pci", 5);
	ASSERT_FALSE(exported.blob.empty());

	doca_dev *p0 = open_by_pci("03:00.0");
	ASSERT_NE(p0, nullptr);
	doca_mmap *remote = nullptr;
	ASSERT_EQ(import(exported.blob, p0, &remote), DOCA_SUCCESS);
	uint8_t from_export = 0, exported_flag = 1;
	EXPECT_EQ(doca_mmap_get_from_export(remote, &from_export), DOCA_SUCCESS);
	EXPECT_EQ(from_export, 1);
	EXPECT_EQ(doca_mmap_get_exported(remote, &exported_flag), DOCA_SUCCESS);
	EXPECT_EQ(exported_flag, 0);
	void *base = nullptr;
	size_t len = 0;
	ASSERT_EQ(doca_mmap_get_memrange(remote, &base, &len), DOCA_SUCCESS);
	EXPECT_EQ(reinterpret_cast<uint64_t>(base), exported.addr);
	EXPECT_EQ(len, kBytes);
	{
		DmaRig rig(p0);
		LocalMemory local(p0, kBytes);
		auto *r = static_cast<uint8_t *>(base);

		// Host -> DPU, gather: three remote pieces (out of order) into one local buffer.
		doca_buf *s1 = rig.buf(remote, r + 4096, 100000, 100000);
		doca_buf *s2 = rig.buf(remote, r + 300000, 200000, 200000);
		doca_buf *s3 = rig.buf(remote, r, 4096, 4096);
		ASSERT_EQ(doca_buf_chain_list(s1, s2), DOCA_SUCCESS);
		ASSERT_EQ(doca_buf_chain_list(s1, s3), DOCA_SUCCESS);
		doca_buf *d = rig.buf(local.mmap, local.data.data(), kBytes, 0);
		ASSERT_EQ(rig.copy(s1, d), DOCA_SUCCESS);
		size_t got = 0;
		doca_buf_get_data_len(d, &got);
		ASSERT_EQ(got, 304096u);
		EXPECT_TRUE(check_pattern(local.data.data(), 100000, 5, 4096));
		EXPECT_TRUE(check_pattern(local.data.data() + 100000, 200000, 5, 300000));
		EXPECT_TRUE(check_pattern(local.data.data() + 300000, 4096, 5, 0));
		doca_buf_dec_refcount(s1, nullptr);
		doca_buf_dec_refcount(d, nullptr);

		// DPU -> host, scatter: one local buffer (pattern 9) into two remote pieces.
		fill_pattern(local.data.data(), kBytes, 9);
		doca_buf *src = rig.buf(local.mmap, local.data.data(), 150000, 150000);
		doca_buf *t1 = rig.buf(remote, r + 500000, 50000, 0);
		doca_buf *t2 = rig.buf(remote, r + 700000, 300000, 0);
		ASSERT_EQ(doca_buf_chain_list(t1, t2), DOCA_SUCCESS);
		ASSERT_EQ(rig.copy(src, t1), DOCA_SUCCESS);
		size_t l1 = 0, l2 = 0;
		doca_buf_get_data_len(t1, &l1);
		doca_buf_get_data_len(t2, &l2);
		EXPECT_EQ(l1, 50000u);
		EXPECT_EQ(l2, 100000u);
		EXPECT_EQ(host->call("sum 500000 50000"), "ok " + fnv_hex(local.data.data(), 50000));
		EXPECT_EQ(host->call("sum 700000 100000"), "ok " + fnv_hex(local.data.data() + 50000, 100000));
		// The byte after the written range is untouched (still the host's pattern 5).
		std::vector<uint8_t> untouched(100);
		fill_pattern(untouched.data(), untouched.size(), 5, 800000);
		EXPECT_EQ(host->call("sum 800000 100"), "ok " + fnv_hex(untouched.data(), untouched.size()));
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(t1, nullptr);
		// Large copies go to the engine threads: 1 MiB host -> DPU in one task.
		doca_buf *big_src = rig.buf(remote, r, kBytes, kBytes);
		doca_buf *big_dst = rig.buf(local.mmap, local.data.data(), kBytes, 0);
		ASSERT_EQ(rig.copy(big_src, big_dst), DOCA_SUCCESS);
		fill_pattern(untouched.data(), 0, 5);
		EXPECT_TRUE(check_pattern(local.data.data(), 500000, 5));
		doca_buf_dec_refcount(big_src, nullptr);
		doca_buf_dec_refcount(big_dst, nullptr);
	}
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(XprocMmapTest, ReadOnlyExportRejectsWrites)
{
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", 65536, kReadOnly, "pci", 3);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *remote = nullptr;
	ASSERT_EQ(import(exported.blob, p0, &remote), DOCA_SUCCESS);
	const std::string before = host->call("sum 0 65536");
	{
		DmaRig rig(p0);
		LocalMemory local(p0, 65536);
		auto *r = reinterpret_cast<uint8_t *>(exported.addr);
		doca_buf *src = rig.buf(remote, r, 65536, 65536);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), 65536, 0);
		EXPECT_EQ(rig.copy(src, dst), DOCA_SUCCESS);
		EXPECT_TRUE(check_pattern(local.data.data(), 65536, 3));
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
		rig.restart();

		doca_buf *lsrc = rig.buf(local.mmap, local.data.data(), 1000, 1000);
		doca_buf *rdst = rig.buf(remote, r, 65536, 0);
		EXPECT_EQ(rig.copy(lsrc, rdst), DOCA_ERROR_NOT_PERMITTED);
		// The data path refuses too, whoever calls it.
		uint8_t byte = 0;
		EXPECT_EQ(remote->remote()->write(exported.addr, &byte, 1), DOCA_ERROR_NOT_PERMITTED);
		doca_buf_dec_refcount(lsrc, nullptr);
		doca_buf_dec_refcount(rdst, nullptr);
	}
	EXPECT_EQ(host->call("sum 0 65536"), before);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(XprocMmapTest, OnlyTheExportedRangeIsReachable)
{
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", 8192, kReadWrite);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *remote = nullptr;
	ASSERT_EQ(import(exported.blob, p0, &remote), DOCA_SUCCESS);
	doca_buf_inventory *inventory = nullptr;
	ASSERT_EQ(doca_buf_inventory_create(4, &inventory), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_inventory_start(inventory), DOCA_SUCCESS);
	auto *r = reinterpret_cast<uint8_t *>(exported.addr);
	doca_buf *buf = nullptr;
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, remote, r + 4096, 8192, &buf),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_buf_inventory_buf_get_by_addr(inventory, remote, r - 1, 16, &buf), DOCA_ERROR_INVALID_VALUE);
	uint8_t bytes[16];
	softdpu::mem::RemoteMemory *mem = remote->remote();
	ASSERT_NE(mem, nullptr);
	EXPECT_EQ(mem->read(exported.addr + 8192 - 8, bytes, 16), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(mem->read(exported.addr - 8, bytes, 16), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(mem->write(exported.addr + 8192, bytes, 1), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(mem->read(UINT64_MAX - 4, bytes, 8), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(mem->read(exported.addr + 8192 - 16, bytes, 16), DOCA_SUCCESS);
	EXPECT_TRUE(check_pattern(bytes, 16, 1, 8192 - 16));
	doca_buf_inventory_stop(inventory);
	doca_buf_inventory_destroy(inventory);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	doca_dev_close(p0);
}

// Stop, destroy and exit of the exporter each revoke the import: tasks fail with NOT_CONNECTED,
// the descriptor cannot be imported again (NOT_PERMITTED).
class XprocRevokeTest : public XprocMmapTest, public ::testing::WithParamInterface<const char *> {};

TEST_P(XprocRevokeTest, RevokedExportFailsTasksAndImports)
{
	const std::string how = GetParam();
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.2", 65536, kReadWrite, "pci", 4);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *remote = nullptr;
	ASSERT_EQ(import(exported.blob, p0, &remote), DOCA_SUCCESS);
	{
		DmaRig rig(p0);
		LocalMemory local(p0, 65536);
		auto *r = reinterpret_cast<uint8_t *>(exported.addr);
		doca_buf *src = rig.buf(remote, r, 4096, 4096);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), 65536, 0);
		ASSERT_EQ(rig.copy(src, dst), DOCA_SUCCESS);
		ASSERT_TRUE(check_pattern(local.data.data(), 4096, 4));

		if (how == "stop") {
			EXPECT_EQ(words(host->call("stop")).at(0), "ok");
		} else if (how == "destroy") {
			EXPECT_EQ(words(host->call("destroy")).at(0), "ok");
		} else {
			host->send("exit");
			EXPECT_NE(host->wait(), -1);
		}
		std::memset(local.data.data(), 0, 4096);
		doca_buf_set_data(dst, local.data.data(), 0);
		rig.restart();
		EXPECT_EQ(rig.copy(src, dst), DOCA_ERROR_NOT_CONNECTED);
		// Never touched: no data arrived.
		EXPECT_EQ(local.data[0], 0);
		rig.restart();
		doca_buf *lsrc = rig.buf(local.mmap, local.data.data(), 100, 100);
		doca_buf *rdst = rig.buf(remote, r, 4096, 0);
		EXPECT_EQ(rig.copy(lsrc, rdst), DOCA_ERROR_NOT_CONNECTED);
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
		doca_buf_dec_refcount(lsrc, nullptr);
		doca_buf_dec_refcount(rdst, nullptr);
	}
	doca_mmap *again = nullptr;
	EXPECT_EQ(import(exported.blob, p0, &again), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_destroy(remote), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Ways, XprocRevokeTest, ::testing::Values("stop", "destroy", "exit"));

TEST_F(XprocMmapTest, BadDescriptorsAreRejectedAtImport)
{
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", 65536, kReadWrite);
	ASSERT_EQ(exported.blob.size(), softdpu::xproc::kBlobSize);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *mmap = nullptr;

	// Truncated, too long, empty.
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), exported.blob.size() - 1, p0, &mmap),
		  DOCA_ERROR_INVALID_VALUE);
	std::vector<uint8_t> longer = exported.blob;
	longer.push_back(0);
	EXPECT_EQ(import(longer, p0, &mmap), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, exported.blob.data(), 0, p0, &mmap), DOCA_ERROR_INVALID_VALUE);
	// Corrupted: any flipped byte breaks the checksum.
	for (size_t i = 0; i < exported.blob.size(); i += 7) {
		std::vector<uint8_t> corrupted = exported.blob;
		corrupted[i] ^= 0x40;
		EXPECT_EQ(import(corrupted, p0, &mmap), DOCA_ERROR_INVALID_VALUE) << "byte " << i;
	}
	// Forged: a valid structure with a guessed secret, a widened range, another generation.
	std::vector<uint8_t> forged = exported.blob;
	forged[softdpu::xproc::kBlobOffsetSecret + 3] ^= 1;
	reseal(forged);
	EXPECT_EQ(import(forged, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);
	forged = exported.blob;
	const uint64_t wider = 1 << 30;
	std::memcpy(forged.data() + softdpu::xproc::kBlobOffsetLength, &wider, sizeof(wider));
	reseal(forged);
	EXPECT_EQ(import(forged, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);
	forged = exported.blob;
	forged[softdpu::xproc::kBlobOffsetGeneration] += 1;
	reseal(forged);
	EXPECT_EQ(import(forged, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);
	// Another user's export.
	forged = exported.blob;
	const uint32_t other_uid = static_cast<uint32_t>(getuid()) + 1;
	std::memcpy(forged.data() + softdpu::xproc::kBlobOffsetUid, &other_uid, sizeof(other_uid));
	reseal(forged);
	EXPECT_EQ(import(forged, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);

	// The genuine descriptor still works; after stop it is a replay and is refused.
	ASSERT_EQ(import(exported.blob, p0, &mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	EXPECT_EQ(words(host->call("stop")).at(0), "ok");
	EXPECT_EQ(import(exported.blob, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);
	doca_dev_close(p0);
}

TEST_F(XprocMmapTest, DeviceMatchingFollowsTheTopology)
{
	auto host = start_peer("host");
	const Export pf0 = peer_export(*host, "0b:00.0", 4096, kReadWrite);
	auto host2 = start_peer("host");
	const Export pf1 = peer_export(*host2, "0b:00.1", 4096, kReadWrite);
	auto host3 = start_peer("host");
	const Export pf0vf1 = peer_export(*host3, "0b:00.3", 4096, kReadWrite);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_dev *p1 = open_by_pci("03:00.1");
	doca_dev *p0s0 = open_by_pci("03:00.0", 1);
	ASSERT_NE(p0s0, nullptr);
	ASSERT_NE(p0s0, p0);
	doca_mmap *mmap = nullptr;
	EXPECT_EQ(import(pf0.blob, p1, &mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(import(pf1.blob, p0, &mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(import(pf0vf1.blob, p1, &mmap), DOCA_ERROR_NOT_PERMITTED);
	// An SF cannot import PCI exports (no create-from-export capability).
	EXPECT_EQ(import(pf0.blob, p0s0, &mmap), DOCA_ERROR_NOT_SUPPORTED);
	for (auto [blob, dev] : {std::pair{&pf0.blob, p0}, std::pair{&pf1.blob, p1}, std::pair{&pf0vf1.blob, p0}}) {
		ASSERT_EQ(import(*blob, dev, &mmap), DOCA_SUCCESS);
		// A DMA context of another device may not use it.
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}
	ASSERT_EQ(import(pf0.blob, p0, &mmap), DOCA_SUCCESS);
	{
		DmaRig rig(p1);
		LocalMemory local(p1, 4096);
		doca_buf *src = rig.buf(mmap, reinterpret_cast<void *>(pf0.addr), 4096, 4096);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), 4096, 0);
		EXPECT_EQ(rig.copy(src, dst), DOCA_ERROR_NOT_PERMITTED);
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
	}
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(p0s0);
	doca_dev_close(p1);
	doca_dev_close(p0);
}

TEST_F(XprocMmapTest, RdmaExportImportsAnywhereButIsNotForDma)
{
	auto host = start_peer("host");
	const Export exported =
	    peer_export(*host, "0b:00.0", 4096, DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, "rdma");
	doca_dev *p1 = open_by_pci("03:00.1");
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(import(exported.blob, p1, &mmap), DOCA_SUCCESS);
	uint8_t bytes[8];
	EXPECT_EQ(mmap->remote()->read(exported.addr, bytes, 8), DOCA_SUCCESS);
	EXPECT_TRUE(check_pattern(bytes, 8, 1));
	EXPECT_EQ(mmap->remote()->write(exported.addr, bytes, 8), DOCA_ERROR_NOT_PERMITTED);
	{
		DmaRig rig(p1);
		LocalMemory local(p1, 4096);
		doca_buf *src = rig.buf(mmap, reinterpret_cast<void *>(exported.addr), 4096, 4096);
		doca_buf *dst = rig.buf(local.mmap, local.data.data(), 4096, 0);
		EXPECT_EQ(rig.copy(src, dst), DOCA_ERROR_NOT_PERMITTED);
		doca_buf_dec_refcount(src, nullptr);
		doca_buf_dec_refcount(dst, nullptr);
	}
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(p1);
}

TEST_F(XprocMmapTest, ImportedMmapIsNotConfigurable)
{
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", 4096, kReadWrite);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(import(exported.blob, p0, &mmap), DOCA_SUCCESS);
	std::vector<uint8_t> other(64);
	EXPECT_EQ(doca_mmap_set_memrange(mmap, other.data(), other.size()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_set_permissions(mmap, kReadWrite), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_add_dev(mmap, p0), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_rm_dev(mmap, p0), DOCA_ERROR_NOT_PERMITTED);
	const void *desc = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_mmap_export_pci(mmap, p0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, p0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_set_max_num_devices(mmap, 4), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_ERROR_NOT_PERMITTED);
	// The device is held by the imported mmap.
	EXPECT_EQ(doca_dev_close(p0), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(p0), DOCA_SUCCESS);
}

TEST_F(XprocMmapTest, ImportLeavesNoFileDescriptorOrShmBehind)
{
	const std::vector<std::string> shm_before = dev_shm_entries();
	auto host = start_peer("host");
	const Export exported = peer_export(*host, "0b:00.0", 4096, kReadWrite);
	doca_dev *p0 = open_by_pci("03:00.0");
	const size_t fds_before = open_fd_count();
	for (int i = 0; i < 20; ++i) {
		doca_mmap *mmap = nullptr;
		ASSERT_EQ(import(exported.blob, p0, &mmap), DOCA_SUCCESS);
		ASSERT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	}
	EXPECT_EQ(open_fd_count(), fds_before);
	host->send("exit");
	EXPECT_EQ(host->wait(), 0);
	EXPECT_EQ(dev_shm_entries(), shm_before);
	doca_dev_close(p0);
}

// ---- the exporter's side (this process is the host) ----

class XprocExporterTest : public ::testing::Test {
protected:
	SideGuard side_{Side::host};
};

TEST_F(XprocExporterTest, ExportRulesAndCapabilities)
{
	doca_dev *pf0 = open_by_pci("0b:00.0");
	ASSERT_NE(pf0, nullptr);
	uint8_t cap = 0;
	EXPECT_EQ(doca_mmap_cap_is_export_pci_supported(doca_dev_as_devinfo(pf0), &cap), DOCA_SUCCESS);
	EXPECT_EQ(cap, 1);
	EXPECT_EQ(doca_mmap_cap_is_create_from_export_pci_supported(doca_dev_as_devinfo(pf0), &cap), DOCA_SUCCESS);
	EXPECT_EQ(cap, 0);

	std::vector<uint8_t> memory(4096);
	doca_mmap *mmap = nullptr;
	ASSERT_EQ(doca_mmap_create(&mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_memrange(mmap, memory.data(), memory.size()), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_add_dev(mmap, pf0), DOCA_SUCCESS);
	const void *desc = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_ERROR_NOT_PERMITTED); // not started
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);  // no PCI access
	EXPECT_EQ(doca_mmap_export_rdma(mmap, pf0, &desc, &len), DOCA_ERROR_NOT_PERMITTED); // no RDMA access
	doca_dev *pf1 = open_by_pci("0b:00.1");
	EXPECT_EQ(doca_mmap_export_pci(mmap, pf1, &desc, &len), DOCA_ERROR_NOT_FOUND);
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_set_permissions(mmap, kReadWrite), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_start(mmap), DOCA_SUCCESS);
	uint8_t exported = 1;
	EXPECT_EQ(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 0);
	ASSERT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_SUCCESS);
	EXPECT_EQ(len, softdpu::xproc::kBlobSize);
	EXPECT_EQ(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 1);
	// The same device again: the same descriptor.
	const void *again = nullptr;
	size_t again_len = 0;
	EXPECT_EQ(doca_mmap_export_pci(mmap, pf0, &again, &again_len), DOCA_SUCCESS);
	EXPECT_EQ(again, desc);
	// Exported: its configuration is frozen, and it cannot be started again while exported.
	EXPECT_EQ(doca_mmap_set_permissions(mmap, kReadWrite), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_mmap_start(mmap), DOCA_ERROR_NOT_PERMITTED);
	// Host devices cannot import PCI exports (DOCA 2.5: the host reaches other memory over RDMA only).
	doca_mmap *imported = nullptr;
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, desc, len, pf0, &imported), DOCA_ERROR_NOT_SUPPORTED);
	// Stop revokes: exported flag cleared, descriptor no longer importable.
	ASSERT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	EXPECT_EQ(exported, 0);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(pf1);
	doca_dev_close(pf0);
}

TEST_F(XprocExporterTest, DpuImporterReadsWhileThisProcessRuns)
{
	std::vector<uint8_t> memory(1 << 16);
	fill_pattern(memory.data(), memory.size(), 77);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	doca_mmap *mmap = started_mmap(memory, pf0, kReadWrite);
	ASSERT_NE(mmap, nullptr);
	const void *desc = nullptr;
	size_t len = 0;
	ASSERT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_SUCCESS);
	auto dpu = start_peer("dpu");
	EXPECT_EQ(dpu->call("import 03:00.0 0 " + to_hex(desc, len)), "ok");
	// The DPU's side of the matching table is enforced in the DPU process too.
	auto dpu2 = start_peer("dpu");
	EXPECT_EQ(dpu2->call("import 03:00.1 0 " + to_hex(desc, len)), "err DOCA_ERROR_NOT_PERMITTED");
	dpu->send("exit");
	EXPECT_EQ(dpu->wait(), 0);
	EXPECT_EQ(doca_mmap_stop(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(pf0);
}

// A started mmap with PCI and RDMA access over `memory`, for exports through `dev`.
doca_mmap *exportable_mmap(std::vector<uint8_t> &memory, doca_dev *dev)
{
	return started_mmap(memory, dev, kReadWrite | DOCA_ACCESS_FLAG_RDMA_READ);
}

// An export beyond the registry's capacity fails with NO_MEMORY and loses nothing: the earlier
// exports stay valid and a freed entry is usable again.
TEST_F(XprocExporterTest, ExportsBeyondTheRegistryReportNoMemory)
{
	std::vector<uint8_t> memory(4096);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	ASSERT_NE(pf0, nullptr);
	std::vector<doca_mmap *> exported;
	const void *desc = nullptr;
	size_t len = 0;
	for (uint32_t i = 0; i < softdpu::xproc::kRegistryEntries; ++i) {
		doca_mmap *mmap = exportable_mmap(memory, pf0);
		ASSERT_NE(mmap, nullptr);
		exported.push_back(mmap);
		ASSERT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_SUCCESS) << "export " << i;
	}
	doca_mmap *one_more = exportable_mmap(memory, pf0);
	ASSERT_NE(one_more, nullptr);
	EXPECT_EQ(doca_mmap_export_pci(one_more, pf0, &desc, &len), DOCA_ERROR_NO_MEMORY);
	EXPECT_EQ(doca_mmap_export_rdma(one_more, pf0, &desc, &len), DOCA_ERROR_NO_MEMORY);
	uint8_t is_exported = 1;
	EXPECT_EQ(doca_mmap_get_exported(one_more, &is_exported), DOCA_SUCCESS);
	EXPECT_EQ(is_exported, 0);
	// Sync events are exported through the same registry.
	doca_sync_event *event = cpu_to_dpu_event(pf0);
	ASSERT_NE(event, nullptr);
	const uint8_t *event_desc = nullptr;
	size_t event_len = 0;
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, pf0, &event_desc, &event_len), DOCA_ERROR_NO_MEMORY);

	// The last export still imports in a DPU process.
	auto dpu = start_peer("dpu");
	ASSERT_EQ(doca_mmap_export_pci(exported.back(), pf0, &desc, &len), DOCA_SUCCESS);
	EXPECT_EQ(dpu->call("import 03:00.0 0 " + to_hex(desc, len)), "ok");
	// Stopping an exported mmap frees its entry.
	ASSERT_EQ(doca_mmap_stop(exported[0]), DOCA_SUCCESS);
	EXPECT_EQ(doca_mmap_export_rdma(one_more, pf0, &desc, &len), DOCA_SUCCESS);
	ASSERT_EQ(doca_mmap_stop(exported[1]), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, pf0, &event_desc, &event_len), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);

	dpu->send("exit");
	EXPECT_EQ(dpu->wait(), 0);
	EXPECT_EQ(doca_mmap_destroy(one_more), DOCA_SUCCESS);
	for (doca_mmap *mmap : exported)
		EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(pf0);
}

// Each export accepts a bounded number of importing processes; one more gets NO_MEMORY, and a
// slot freed by an importer that leaves is taken by the next.
TEST_F(XprocExporterTest, ImportersBeyondTheSlotsReportNoMemory)
{
	std::vector<uint8_t> memory(4096);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	ASSERT_NE(pf0, nullptr);
	doca_mmap *mmap = exportable_mmap(memory, pf0);
	ASSERT_NE(mmap, nullptr);
	const void *desc = nullptr;
	size_t len = 0;
	ASSERT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_SUCCESS);
	const std::string import_command = "import 03:00.0 0 " + to_hex(desc, len);
	std::vector<std::unique_ptr<Peer>> importers;
	for (uint32_t i = 0; i < softdpu::xproc::kAccessorSlots; ++i) {
		importers.push_back(start_peer("dpu"));
		ASSERT_EQ(importers.back()->call(import_command), "ok") << "importer " << i;
	}
	auto late = start_peer("dpu");
	EXPECT_EQ(late->call(import_command), "err DOCA_ERROR_NO_MEMORY");
	importers.front()->send("exit");
	EXPECT_EQ(importers.front()->wait(), 0);
	EXPECT_EQ(late->call(import_command), "ok");

	late->send("exit");
	EXPECT_EQ(late->wait(), 0);
	for (size_t i = 1; i < importers.size(); ++i) {
		importers[i]->send("exit");
		EXPECT_EQ(importers[i]->wait(), 0);
	}
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	doca_dev_close(pf0);
}

// Devices whose topology entry denies exports: both export calls report NOT_SUPPORTED.
TEST(XprocExportCapabilities, DeviceWithoutExportCapabilityIsNotSupported)
{
	auto topology = softdpu_test::default_topology_with_caps(
	    Side::host, "pf0", {{"mmap_export_pci", false}, {"mmap_export_rdma", false}});
	ASSERT_TRUE(topology);
	softdpu::device::testing::ScopedTopology scoped(topology);

	doca_dev *pf0 = open_by_pci("0b:00.0");
	ASSERT_NE(pf0, nullptr);
	uint8_t cap = 1;
	EXPECT_EQ(doca_mmap_cap_is_export_pci_supported(doca_dev_as_devinfo(pf0), &cap), DOCA_SUCCESS);
	EXPECT_EQ(cap, 0);
	std::vector<uint8_t> memory(4096);
	doca_mmap *mmap = exportable_mmap(memory, pf0);
	ASSERT_NE(mmap, nullptr);
	const void *desc = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_mmap_export_pci(mmap, pf0, &desc, &len), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_mmap_export_rdma(mmap, pf0, &desc, &len), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	EXPECT_EQ(doca_dev_close(pf0), DOCA_SUCCESS);
}

// Runs out of file descriptors exactly when the process would make its export registry (its first
// export), then tries again with the limit back: the mmap export reports DRIVER and the sync event
// export NO_MEMORY, as each documents, and neither failure is remembered. Prints the three codes.
[[noreturn]] void export_without_descriptors()
{
	SideGuard side(Side::host);
	doca_dev *pf0 = open_by_pci("0b:00.0");
	std::vector<uint8_t> memory(4096);
	doca_mmap *mmap = started_mmap(memory, pf0, kReadWrite);
	doca_sync_event *event = cpu_to_dpu_event(pf0);
	const void *desc = nullptr;
	size_t len = 0;
	const uint8_t *event_desc = nullptr;
	size_t event_len = 0;
	rlimit saved{};
	getrlimit(RLIMIT_NOFILE, &saved);
	const int lowest_free = dup(0);
	close(lowest_free);
	rlimit none_left = saved;
	none_left.rlim_cur = static_cast<rlim_t>(lowest_free); // the next descriptor is refused
	setrlimit(RLIMIT_NOFILE, &none_left);
	const doca_error_t mmap_result = doca_mmap_export_pci(mmap, pf0, &desc, &len);
	const doca_error_t event_result = doca_sync_event_export_to_dpu(event, pf0, &event_desc, &event_len);
	setrlimit(RLIMIT_NOFILE, &saved);
	const doca_error_t again = doca_mmap_export_pci(mmap, pf0, &desc, &len);
	std::fprintf(stderr, "codes: %s %s %s\n", doca_error_get_name(mmap_result), doca_error_get_name(event_result),
		     doca_error_get_name(again));
	std::exit(mmap != nullptr && event != nullptr ? 0 : 1);
}

// In a fresh process (the "threadsafe" death test style re-runs this test alone), where no
// registry has been made yet.
TEST(XprocRegistryFailure, ExportsReportTheirDocumentedCodes)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(export_without_descriptors(), ::testing::ExitedWithCode(0),
		    "codes: DOCA_ERROR_DRIVER DOCA_ERROR_NO_MEMORY DOCA_SUCCESS");
}

} // namespace
