// doca_sync_event.h outside tasks: every documented (and every softdpu-chosen) error return,
// configuration states, stand-alone start/stop, internal vs user storage, and the synchronous
// get/update/wait calls on one thread.
#include <gtest/gtest.h>

#include <cstdint>

#include "sync_event_support.hpp"

using sync_event_test::SyncEventBase;

namespace {

// Stand-ins for handles softdpu never creates; they are only compared with NULL.
uint64_t placeholder_storage[4];
doca_dpa *const kSomeDpa = reinterpret_cast<doca_dpa *>(&placeholder_storage[0]);
doca_gpu *const kSomeGpu = reinterpret_cast<doca_gpu *>(&placeholder_storage[1]);
doca_sync_event_remote_net *const kSomeRemote = reinterpret_cast<doca_sync_event_remote_net *>(&placeholder_storage[2]);

class SyncEventApiTest : public SyncEventBase {};

TEST_F(SyncEventApiTest, CreateAndDestroyRejectNull)
{
	EXPECT_EQ(doca_sync_event_create(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(SyncEventApiTest, LocationsRejectNull)
{
	EXPECT_EQ(doca_sync_event_add_publisher_location_cpu(nullptr, dev), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_cpu(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_cpu(nullptr, dev), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_cpu(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpu(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpu(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_remote_net(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpa(nullptr, kSomeDpa), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpa(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpa(nullptr, kSomeDpa), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpa(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_gpu(nullptr, kSomeGpu), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_gpu(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_gpu(nullptr, kSomeGpu), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_gpu(event, nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(SyncEventApiTest, GpuAndDpaLocationsAreNotSupported)
{
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpa(event, kSomeDpa), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpa(event, kSomeDpa), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_sync_event_add_publisher_location_gpu(event, kSomeGpu), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_gpu(event, kSomeGpu), DOCA_ERROR_NOT_SUPPORTED);
	// A rejected location declares nothing: the event still cannot start.
	EXPECT_EQ(doca_sync_event_start(event), DOCA_ERROR_BAD_STATE);
}

TEST_F(SyncEventApiTest, StartNeedsPublisherAndSubscriber)
{
	EXPECT_EQ(doca_sync_event_start(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_start(event), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_add_publisher_location_cpu(event, dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_start(event), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_add_subscriber_location_dpu(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
}

TEST_F(SyncEventApiTest, DpuLocationsSuffice)
{
	ASSERT_EQ(doca_sync_event_add_publisher_location_dpu(event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_add_subscriber_location_dpu(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
}

TEST_F(SyncEventApiTest, StartTwiceAndStopWhenNotStartedAreBadState)
{
	declare_cpu_locations();
	EXPECT_EQ(doca_sync_event_stop(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_start(event), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_ERROR_BAD_STATE);
	// Restartable after a stop.
	EXPECT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
}

TEST_F(SyncEventApiTest, ConfigurationAfterStartIsBadState)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	uint64_t word = 0;
	EXPECT_EQ(doca_sync_event_add_publisher_location_cpu(event, dev), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_cpu(event, dev), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_dpu(event), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpu(event), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_add_publisher_location_remote_net(event), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_set_addr(event, &word), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_set_addr(event, &word), DOCA_SUCCESS);
}

TEST_F(SyncEventApiTest, ConfigurationOfARunningContextIsBadState)
{
	start_context();
	uint64_t word = 0;
	EXPECT_EQ(doca_sync_event_add_publisher_location_cpu(event, dev), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_add_subscriber_location_dpu(event), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_set_addr(event, &word), DOCA_ERROR_BAD_STATE);
}

TEST_F(SyncEventApiTest, SetAddrErrors)
{
	uint64_t words[2] = {0, 0};
	EXPECT_EQ(doca_sync_event_set_addr(nullptr, &words[0]), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_set_addr(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	auto *misaligned = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(&words[0]) + 4);
	EXPECT_EQ(doca_sync_event_set_addr(event, misaligned), DOCA_ERROR_INVALID_VALUE);
	// External storage is for CPU/DPU events only.
	ASSERT_EQ(doca_sync_event_add_publisher_location_remote_net(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_set_addr(event, &words[0]), DOCA_ERROR_NOT_SUPPORTED);
}

TEST_F(SyncEventApiTest, RemoteNetPublisherAfterSetAddrIsNotSupported)
{
	uint64_t word = 0;
	ASSERT_EQ(doca_sync_event_set_addr(event, &word), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_add_publisher_location_remote_net(event), DOCA_ERROR_NOT_SUPPORTED);
}

TEST_F(SyncEventApiTest, RemoteNetPublisherWorksLocally)
{
	ASSERT_EQ(doca_sync_event_add_publisher_location_remote_net(event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_add_subscriber_location_cpu(event, dev), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	uint64_t value = 1;
	EXPECT_EQ(doca_sync_event_update_set(event, 9), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 9u);
}

TEST_F(SyncEventApiTest, SynchronousCallsRejectNull)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	uint64_t value = 0;
	EXPECT_EQ(doca_sync_event_get(nullptr, &value), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_get(event, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_update_set(nullptr, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_update_add(nullptr, 1, &value), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_update_add(event, 1, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_wait_gt(nullptr, 0, ~0ull), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_wait_gt_yield(nullptr, 0, ~0ull), DOCA_ERROR_INVALID_VALUE);
	// None of the rejected calls changed the value.
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 0u);
}

TEST_F(SyncEventApiTest, SynchronousCallsNeedAStartedEvent)
{
	declare_cpu_locations();
	uint64_t value = 0;
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_update_set(event, 1), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_update_add(event, 1, &value), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_wait_gt(event, 0, ~0ull), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_wait_gt_yield(event, 0, ~0ull), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_sync_event_update_set(event, 1), DOCA_ERROR_BAD_STATE);
}

TEST_F(SyncEventApiTest, InternalValueStartsAtZeroAndUpdates)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	uint64_t value = 99;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 0u);
	ASSERT_EQ(doca_sync_event_update_set(event, 40), DOCA_SUCCESS);
	uint64_t fetched = 0;
	ASSERT_EQ(doca_sync_event_update_add(event, 2, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(fetched, 40u); // the value before the addition
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 42u);
	// Additions wrap modulo 2^64 like the hardware's atomic add.
	ASSERT_EQ(doca_sync_event_update_set(event, UINT64_MAX), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_update_add(event, 3, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(fetched, UINT64_MAX);
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 2u);
}

TEST_F(SyncEventApiTest, UserStorageHoldsTheValue)
{
	uint64_t word = 7; // its content at start is the initial value
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_set_addr(event, &word), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	uint64_t value = 0;
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 7u);
	ASSERT_EQ(doca_sync_event_update_set(event, 11), DOCA_SUCCESS);
	EXPECT_EQ(word, 11u);
	uint64_t fetched = 0;
	ASSERT_EQ(doca_sync_event_update_add(event, 5, &fetched), DOCA_SUCCESS);
	EXPECT_EQ(fetched, 11u);
	EXPECT_EQ(word, 16u);
	word = 100; // a plain store by the owner of the storage is what the event reads
	ASSERT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 100u);
}

TEST_F(SyncEventApiTest, WaitReturnsAtOnceWhenTheMaskedValueIsGreater)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	ASSERT_EQ(doca_sync_event_update_set(event, 0x0105), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_wait_gt(event, 4, 0xFF), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_wait_gt_yield(event, 0xFF, 0xFF00), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_wait_gt(event, 0x104, UINT64_MAX), DOCA_SUCCESS);
}

TEST_F(SyncEventApiTest, AsCtxAndStandaloneModesExcludeEachOther)
{
	EXPECT_EQ(doca_sync_event_as_ctx(nullptr), nullptr);
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_as_ctx(event), nullptr);
	ASSERT_EQ(doca_sync_event_stop(event), DOCA_SUCCESS);
	doca_ctx *as_context = doca_sync_event_as_ctx(event);
	EXPECT_NE(as_context, nullptr);
	// Once converted, the event operates as a context only.
	EXPECT_EQ(doca_sync_event_start(event), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_sync_event_as_ctx(event), as_context);
}

TEST_F(SyncEventApiTest, ContextStartNeedsAPeAndLocations)
{
	ASSERT_EQ(doca_pe_create(&pe), DOCA_SUCCESS);
	ctx = doca_sync_event_as_ctx(event);
	ASSERT_NE(ctx, nullptr);
	EXPECT_EQ(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	ASSERT_EQ(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(ctx), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_add_publisher_location_cpu(event, dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(ctx), DOCA_ERROR_BAD_STATE);
	ASSERT_EQ(doca_sync_event_add_subscriber_location_cpu(event, dev), DOCA_SUCCESS);
	EXPECT_EQ(doca_ctx_start(ctx), DOCA_SUCCESS);
	doca_ctx_states state;
	ASSERT_EQ(doca_ctx_get_state(ctx, &state), DOCA_SUCCESS);
	EXPECT_EQ(state, DOCA_CTX_STATE_RUNNING);
	// A running context serves the synchronous calls too.
	uint64_t value = 1;
	EXPECT_EQ(doca_sync_event_update_set(event, 3), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_get(event, &value), DOCA_SUCCESS);
	EXPECT_EQ(value, 3u);
	EXPECT_EQ(doca_sync_event_stop(event), DOCA_ERROR_BAD_STATE); // not started stand-alone
}

TEST_F(SyncEventApiTest, DestroyRefusesARunningContext)
{
	start_context();
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_ERROR_IN_USE);
	stop_ctx();
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	event = nullptr;
}

TEST_F(SyncEventApiTest, DestroyStopsAStandaloneEvent)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	event = nullptr;
}

TEST_F(SyncEventApiTest, CpuLocationHoldsTheDeviceOpen)
{
	declare_cpu_locations();
	EXPECT_EQ(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	ASSERT_EQ(doca_sync_event_destroy(event), DOCA_SUCCESS);
	event = nullptr;
}

TEST_F(SyncEventApiTest, TaskCapabilitiesAreSupported)
{
	const doca_devinfo *devinfo = doca_dev_as_devinfo(dev);
	EXPECT_EQ(doca_sync_event_cap_task_get_is_supported(devinfo), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_cap_task_notify_set_is_supported(devinfo), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_cap_task_notify_add_is_supported(devinfo), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_cap_task_wait_gt_is_supported(devinfo), DOCA_SUCCESS);
	EXPECT_EQ(doca_sync_event_cap_task_get_is_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_cap_task_notify_set_is_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_cap_task_notify_add_is_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_cap_task_wait_gt_is_supported(nullptr), DOCA_ERROR_INVALID_VALUE);
}

TEST_F(SyncEventApiTest, ExportCapabilitiesFollowTheDevice)
{
	const doca_devinfo *devinfo = doca_dev_as_devinfo(dev);
	using Capability = doca_error_t (*)(const doca_devinfo *);
	const Capability capabilities[] = {
	    doca_sync_event_cap_is_create_from_export_supported,
	    doca_sync_event_cap_is_export_to_dpa_supported,
	    doca_sync_event_cap_is_export_to_dpu_supported,
	    doca_sync_event_cap_is_export_to_gpu_supported,
	    doca_sync_event_cap_is_export_to_remote_net_supported,
	    doca_sync_event_cap_remote_net_is_create_from_export_supported,
	    doca_sync_event_cap_remote_net_is_export_to_dpa_supported,
	    doca_sync_event_cap_remote_net_is_export_to_gpu_supported,
	};
	for (Capability capability : capabilities) {
		EXPECT_EQ(capability(nullptr), DOCA_ERROR_INVALID_VALUE);
		// A host function exports to the DPU (tests/integration/xproc/); nothing else is emulated.
		EXPECT_EQ(capability(devinfo), capability == doca_sync_event_cap_is_export_to_dpu_supported
						   ? DOCA_SUCCESS
						   : DOCA_ERROR_NOT_SUPPORTED);
	}
}

TEST_F(SyncEventApiTest, ExportsCheckInputAndOnlyDpuExportWorks)
{
	declare_cpu_locations();
	ASSERT_EQ(doca_sync_event_start(event), DOCA_SUCCESS);
	const uint8_t *data = nullptr;
	size_t size = 0;
	doca_dpa_dev_sync_event_t dpa_handle = 0;
	doca_gpu_dev_sync_event_t *gpu_handle = nullptr;

	EXPECT_EQ(doca_sync_event_export_to_dpu(nullptr, dev, &data, &size), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, nullptr, &data, &size), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, dev, nullptr, &size), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, dev, &data, nullptr), DOCA_ERROR_INVALID_VALUE);

	EXPECT_EQ(doca_sync_event_export_to_remote_net(nullptr, &data, &size), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_remote_net(event, nullptr, &size), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_remote_net(event, &data, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_remote_net(event, &data, &size), DOCA_ERROR_NOT_SUPPORTED);

	EXPECT_EQ(doca_sync_event_export_to_dpa(nullptr, kSomeDpa, &dpa_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpa(event, nullptr, &dpa_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpa(event, kSomeDpa, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_dpa(event, kSomeDpa, &dpa_handle), DOCA_ERROR_NOT_SUPPORTED);

	EXPECT_EQ(doca_sync_event_export_to_gpu(nullptr, kSomeGpu, &gpu_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_gpu(event, nullptr, &gpu_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_gpu(event, kSomeGpu, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_export_to_gpu(event, kSomeGpu, &gpu_handle), DOCA_ERROR_NOT_SUPPORTED);

	EXPECT_EQ(data, nullptr);
	EXPECT_EQ(size, 0u);
	// The host's export to the DPU works (cross-process use: tests/integration/xproc/).
	EXPECT_EQ(doca_sync_event_export_to_dpu(event, dev, &data, &size), DOCA_SUCCESS);
	EXPECT_NE(data, nullptr);
	EXPECT_GT(size, 0u);
}

TEST_F(SyncEventApiTest, ImportsAreNotSupportedYet)
{
	const uint8_t blob[16] = {};
	doca_sync_event *imported = nullptr;
	EXPECT_EQ(doca_sync_event_create_from_export(nullptr, blob, sizeof(blob), &imported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_create_from_export(dev, nullptr, sizeof(blob), &imported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_create_from_export(dev, blob, 0, &imported), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_create_from_export(dev, blob, sizeof(blob), nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_create_from_export(dev, blob, sizeof(blob), &imported), DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(imported, nullptr);

	doca_sync_event_remote_net *remote = nullptr;
	EXPECT_EQ(doca_sync_event_remote_net_create_from_export(nullptr, blob, sizeof(blob), &remote),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_create_from_export(dev, nullptr, sizeof(blob), &remote),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_create_from_export(dev, blob, 0, &remote), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_create_from_export(dev, blob, sizeof(blob), nullptr),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_create_from_export(dev, blob, sizeof(blob), &remote),
		  DOCA_ERROR_NOT_SUPPORTED);
	EXPECT_EQ(remote, nullptr);
}

TEST_F(SyncEventApiTest, RemoteHandlesAreNotSupportedYet)
{
	doca_dpa_dev_sync_event_remote_net_t dpa_handle = 0;
	doca_gpu_dev_sync_event_remote_net_t gpu_handle = 0;
	EXPECT_EQ(doca_sync_event_remote_net_destroy(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_destroy(kSomeRemote), DOCA_ERROR_NOT_SUPPORTED);

	EXPECT_EQ(doca_sync_event_remote_net_export_to_dpa(nullptr, kSomeDpa, &dpa_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_dpa(kSomeRemote, nullptr, &dpa_handle),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_dpa(kSomeRemote, kSomeDpa, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_dpa(kSomeRemote, kSomeDpa, &dpa_handle),
		  DOCA_ERROR_NOT_SUPPORTED);

	EXPECT_EQ(doca_sync_event_remote_net_export_to_gpu(nullptr, kSomeGpu, &gpu_handle), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_gpu(kSomeRemote, nullptr, &gpu_handle),
		  DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_gpu(kSomeRemote, kSomeGpu, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_sync_event_remote_net_export_to_gpu(kSomeRemote, kSomeGpu, &gpu_handle),
		  DOCA_ERROR_NOT_SUPPORTED);
}

} // namespace
