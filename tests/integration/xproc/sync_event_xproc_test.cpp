// Sync events shared by two processes: doca_sync_event_export_to_dpu on the host,
// doca_sync_event_create_from_export on the DPU; either side updates, the other waits.
#include "xproc_fixture.hpp"

#include <doca_sync_event.h>

#include <signal.h>

#include <chrono>
#include <future>
#include <thread>

using namespace xproc_test;
using softdpu::device::Side;

namespace {

struct HostEvent {
	explicit HostEvent(const char *pci = "0b:00.0", bool context_mode = false)
	{
		dev = open_by_pci(pci);
		event = cpu_to_dpu_event(dev);
		EXPECT_NE(event, nullptr);
		if (!context_mode) {
			EXPECT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
		}
	}
	std::string export_hex()
	{
		const uint8_t *data = nullptr;
		size_t len = 0;
		EXPECT_EQ(doca_sync_event_export_to_dpu(event, dev, &data, &len), DOCA_SUCCESS);
		return to_hex(data, len);
	}
	~HostEvent()
	{
		if (event != nullptr) {
			doca_sync_event_stop(event);
			doca_sync_event_destroy(event);
		}
		doca_dev_close(dev);
	}
	doca_dev *dev = nullptr;
	doca_sync_event *event = nullptr;
};

TEST(XprocSyncEventTest, CapabilitiesFollowTheSides)
{
	{
		SideGuard host(Side::host);
		doca_dev *pf0 = open_by_pci("0b:00.0");
		EXPECT_EQ(doca_sync_event_cap_is_export_to_dpu_supported(doca_dev_as_devinfo(pf0)), DOCA_SUCCESS);
		EXPECT_EQ(doca_sync_event_cap_is_create_from_export_supported(doca_dev_as_devinfo(pf0)),
			  DOCA_ERROR_NOT_SUPPORTED);
		EXPECT_EQ(doca_sync_event_cap_is_export_to_dpu_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
		doca_dev_close(pf0);
	}
	SideGuard dpu(Side::dpu);
	doca_dev *p0 = open_by_pci("03:00.0");
	EXPECT_EQ(doca_sync_event_cap_is_export_to_dpu_supported(doca_dev_as_devinfo(p0)), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_sync_event_cap_is_create_from_export_supported(doca_dev_as_devinfo(p0)), DOCA_SUCCESS);
	// The DPU cannot export (DOCA: "A Sync Event can be exported from the Host CPU only").
	doca_sync_event *event = cpu_to_dpu_event(p0);
	ASSERT_NE(event, nullptr);
	const uint8_t *data = nullptr;
	size_t len = 0;
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, p0, &data, &len), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	doca_dev_close(p0);
}

TEST(XprocSyncEventTest, HostUpdatesDpuWaitsAndBack)
{
	SideGuard host(Side::host);
	HostEvent ev;
	uint64_t fetched = 0;
	ASSERT_EQ(doca_sync_event_update_set(ev.event, 7), DOCA_SUCCESS); // kept across the export
	const std::string blob = ev.export_hex();
	auto dpu = start_peer("dpu");
	ASSERT_EQ(dpu->call("se_import 03:00.0 0 " + blob), "ok 0");
	EXPECT_EQ(dpu->call("se_get 0"), "ok 7");
	// The DPU blocks in wait_gt until this process moves the value past 41.
	dpu->send("se_wait 0 41");
	EXPECT_EQ(dpu->read_line(50), "");
	ASSERT_EQ(doca_sync_event_update_set(ev.event, 42), DOCA_SUCCESS);
	EXPECT_EQ(dpu->read_line(), "ok 0");
	dpu->send("se_wait_yield 0 42");
	ASSERT_EQ(doca_sync_event_update_add(ev.event, 1, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(fetched, 42u);
	EXPECT_EQ(dpu->read_line(), "ok 0");
	// The other way: the DPU adds, this process waits.
	auto waiter = std::async(std::launch::async, [&] { return doca_sync_event_wait_gt(ev.event, 99, UINT64_MAX); });
	EXPECT_EQ(dpu->call("se_add 0 57"), "ok 43");
	EXPECT_EQ(waiter.get(), DOCA_SUCCESS);
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(ev.event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 100u);
	// Atomic adds from both processes at once lose nothing.
	dpu->send("se_addn 0 20000");
	for (int i = 0; i < 20000; ++i)
		ASSERT_EQ(doca_sync_event_update_add(ev.event, 1, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(words(dpu->read_line()).at(0), "ok");
	ASSERT_EQ(doca_sync_event_get(ev.event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 40100u);
}

TEST(XprocSyncEventTest, WaitGtTasksOnBothSides)
{
	SideGuard host(Side::host);
	HostEvent ev("0b:00.0", /*context_mode=*/true);
	doca_pe *pe = nullptr;
	ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
	doca_ctx *ctx = doca_sync_event_as_ctx(ev.event);
	ASSERT_NE(ctx, nullptr);
	ASSERT_EQ(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	static doca_error_t status;
	status = DOCA_ERROR_IN_PROGRESS;
	auto cb = [](doca_sync_event_task_wait_gt *task, union doca_data, union doca_data) {
		status = doca_task_get_status(doca_sync_event_task_wait_gt_as_doca_task(task));
		doca_task_free(doca_sync_event_task_wait_gt_as_doca_task(task));
	};
	ASSERT_EQ(doca_sync_event_task_wait_gt_set_conf(ev.event, cb, cb, 2), DOCA_SUCCESS);
	const std::string blob = ev.export_hex(); // exported before the context starts
	ASSERT_EQ(doca_ctx_start(ctx), DOCA_SUCCESS);
	auto dpu = start_peer("dpu");
	ASSERT_EQ(dpu->call("se_import 03:00.0 0 " + blob + " ctx"), "ok 0");
	// DPU: a wait-gt task on its PE, satisfied by this process.
	EXPECT_EQ(dpu->call("se_taskwait 0 4"), "ok submitted");
	EXPECT_EQ(dpu->read_line(50), "");
	doca_sync_event_task_wait_gt *task = nullptr;
	union doca_data data = {};
	ASSERT_EQ(doca_sync_event_task_wait_gt_alloc_init(ev.event, 9, 0xFF, data, &task), DOCA_SUCCESS);
	ASSERT_EQ(doca_task_submit(doca_sync_event_task_wait_gt_as_doca_task(task)), DOCA_SUCCESS);
	uint64_t fetched = 0;
	ASSERT_EQ(doca_sync_event_update_add(ev.event, 5, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(dpu->read_line(), "ok");
	// Host: its wait-gt task is satisfied by the DPU (which set the value with its own thread).
	auto dpu2 = start_peer("dpu");
	ASSERT_EQ(dpu2->call("se_import 03:00.0 0 " + blob), "ok 0");
	for (int i = 0; i < 1000; ++i)
		doca_pe_progress(pe);
	EXPECT_EQ(status, DOCA_ERROR_IN_PROGRESS);
	EXPECT_EQ(dpu2->call("se_set 0 10"), "ok 0");
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (status == DOCA_ERROR_IN_PROGRESS && std::chrono::steady_clock::now() < deadline)
		doca_pe_progress(pe);
	EXPECT_EQ(status, DOCA_SUCCESS);
	doca_ctx_stop(ctx);
	for (int i = 0; i < 100; ++i)
		doca_pe_progress(pe);
	EXPECT_EQ(doca_sync_event_destroy(ev.event), DOCA_SUCCESS);
	ev.event = nullptr;
	EXPECT_EQ(doca_pe_destroy(pe), DOCA_SUCCESS);
}

TEST(XprocSyncEventTest, DestroyRevokesAndBadDescriptorsAreRejected)
{
	SideGuard dpu_side(Side::dpu);
	auto host = start_peer("host");
	const std::vector<std::string> w = words(host->call("se_export 0b:00.1"));
	ASSERT_EQ(w.size(), 3u);
	const std::vector<uint8_t> blob = from_hex(w[2]);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_dev *p1 = open_by_pci("03:00.1");
	doca_dev *p1s0 = open_by_pci("03:00.1", 1);
	doca_sync_event *event = nullptr;
	EXPECT_EQ(doca_sync_event_create_from_export(p0, blob.data(), blob.size(), &event), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_create_from_export(p1, blob.data(), blob.size() - 1, &event),
		  DOCA_ERROR_INVALID_VALUE);
	std::vector<uint8_t> corrupted = blob;
	corrupted[100] ^= 1;
	EXPECT_EQ(doca_sync_event_create_from_export(p1, corrupted.data(), corrupted.size(), &event),
		  DOCA_ERROR_INVALID_VALUE);
	// An sync event descriptor is no mmap descriptor.
	doca_mmap *mmap = nullptr;
	EXPECT_EQ(doca_mmap_create_from_export(nullptr, blob.data(), blob.size(), p1, &mmap), DOCA_ERROR_INVALID_VALUE);
	// An SF of p1 reaches pf1's events too.
	ASSERT_EQ(doca_sync_event_create_from_export(p1s0, blob.data(), blob.size(), &event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_create_from_export(p1, blob.data(), blob.size(), &event), DOCA_SUCCESS);
	// Configuration belongs to the exporter.
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpu(event), DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_update_set(event, 3), DOCA_SUCCESS);
	EXPECT_EQ(host->call("se_get 0"), "ok 3");
	EXPECT_EQ(host->call("se_destroy 0"), "ok 0");
	uint64_t value = 0;
	EXPECT_EQ(doca_sync_event_update_set(event, 4), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_EQ(doca_sync_event_wait_gt(event, 10, UINT64_MAX), DOCA_ERROR_NOT_CONNECTED);
	doca_sync_event *replayed = nullptr;
	EXPECT_EQ(doca_sync_event_create_from_export(p1, blob.data(), blob.size(), &replayed),
		  DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	doca_dev_close(p1s0);
	doca_dev_close(p1);
	doca_dev_close(p0);
}

// Waiters whose peer dies return instead of hanging.
TEST(XprocSyncEventConcurrentTest, DpuWaiterSeesHostDie)
{
	SideGuard dpu_side(Side::dpu);
	auto host = start_peer("host");
	const std::vector<std::string> w = words(host->call("se_export 0b:00.0"));
	ASSERT_EQ(w.size(), 3u);
	const std::vector<uint8_t> blob = from_hex(w[2]);
	doca_dev *p0 = open_by_pci("03:00.0");
	doca_sync_event *event = nullptr;
	ASSERT_EQ(doca_sync_event_create_from_export(p0, blob.data(), blob.size(), &event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	auto waiter = std::async(std::launch::async, [&] { return doca_sync_event_wait_gt(event, 0, UINT64_MAX); });
	auto yielder =
	    std::async(std::launch::async, [&] { return doca_sync_event_wait_gt_yield(event, 0, UINT64_MAX); });
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	host->kill9();
	EXPECT_EQ(host->wait(), SIGKILL);
	ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
	EXPECT_EQ(waiter.get(), DOCA_ERROR_NOT_CONNECTED);
	ASSERT_EQ(yielder.wait_for(std::chrono::seconds(5)), std::future_status::ready);
	EXPECT_EQ(yielder.get(), DOCA_ERROR_NOT_CONNECTED);
	// The value page stays mapped here (the registry memfd lives while an importer maps it), so an
	// update after the exporter died lands in that orphaned page, harmlessly; waits report the loss.
	uint64_t fetched = 0;
	EXPECT_EQ(doca_sync_event_update_add(event, 1, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_wait_gt(event, 100, UINT64_MAX), DOCA_ERROR_NOT_CONNECTED);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	doca_dev_close(p0);
}

TEST(XprocSyncEventConcurrentTest, HostWaiterAndDpuTaskSeePeerDie)
{
	SideGuard host_side(Side::host);
	HostEvent ev;
	const std::string blob = ev.export_hex();
	{
		auto dpu = start_peer("dpu");
		ASSERT_EQ(dpu->call("se_import 03:00.0 0 " + blob), "ok 0");
		auto waiter =
		    std::async(std::launch::async, [&] { return doca_sync_event_wait_gt(ev.event, 0, UINT64_MAX); });
		std::this_thread::sleep_for(std::chrono::milliseconds(30));
		dpu->kill9();
		EXPECT_EQ(dpu->wait(), SIGKILL);
		ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
		EXPECT_EQ(waiter.get(), DOCA_ERROR_NOT_CONNECTED);
	}
	// A DPU wait-gt task whose host dies fails through the error callback.
	SideGuard dpu_side(Side::dpu);
	auto host = start_peer("host");
	const std::vector<std::string> w = words(host->call("se_export 0b:00.0"));
	ASSERT_EQ(w.size(), 3u);
	auto dpu = start_peer("dpu");
	ASSERT_EQ(dpu->call("se_import 03:00.0 0 " + w[2] + " ctx"), "ok 0");
	EXPECT_EQ(dpu->call("se_taskwait 0 5"), "ok submitted");
	host->kill9();
	EXPECT_EQ(dpu->read_line(), "err DOCA_ERROR_NOT_CONNECTED");
}

} // namespace
