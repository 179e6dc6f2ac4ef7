// Out of memory: every allocation a creating or starting call makes is failed in turn. Each failed
// run must report DOCA_ERROR_NO_MEMORY, free whatever it had taken and leave the object usable.
#include "support/alloc_counter.h"
#include "unit/apsh/api_fixture.hpp"
#include "unit/core/mem/mem_fixture.hpp"
#include "unit/sync_event/sync_event_support.hpp"

#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sync_event.h>
#include <softdpu/apsh.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace {

using softdpu_test::clear_allocation_failure;
using softdpu_test::fail_allocation;
using softdpu_test::thread_live_blocks;

// Runs `call` with its first allocation failed, then its second, ... until a run makes fewer
// allocations than the one being failed (that run must succeed; `undo` reverts it). Returns how
// many allocations were failed. A successful run comes first and the failing runs are done twice,
// blocks left behind being checked the second time only: that takes one-time allocations (glibc's
// time zone, the topology, state kept for an error message's call site) out of the count.
template <typename Call, typename Undo> size_t fail_each_allocation(Call call, Undo undo)
{
	constexpr size_t kMostAllocations = 256;
	EXPECT_EQ(call(), DOCA_SUCCESS) << "first run, no allocation failed";
	undo();
	size_t failed = 0;
	for (const bool check_blocks : {false, true}) {
		for (failed = 0; failed < kMostAllocations; ++failed) {
			const std::ptrdiff_t live_before = thread_live_blocks();
			fail_allocation(failed);
			const doca_error_t result = call();
			if (clear_allocation_failure()) { // never reached: the call made `failed` allocations
				EXPECT_EQ(result, DOCA_SUCCESS);
				undo();
				break;
			}
			EXPECT_EQ(result, DOCA_ERROR_NO_MEMORY) << "allocation " << failed << " failed";
			if (check_blocks) {
				EXPECT_LE(thread_live_blocks(), live_before)
				    << "blocks left behind after allocation " << failed << " failed";
			}
		}
		EXPECT_LT(failed, kMostAllocations);
	}
	return failed;
}

constexpr auto kNothingToUndo = [] {};

// Runs a creating call with its output cleared first: a failed call must leave it cleared.
template <typename T, typename Call> doca_error_t creating(T *&out, Call call)
{
	out = nullptr;
	const doca_error_t result = call();
	if (result != DOCA_SUCCESS) {
		EXPECT_EQ(out, nullptr) << "a failed call set its output";
	}
	return result;
}

class NoMemory : public mem_test::StartedMmap {};

TEST_F(NoMemory, MmapCreate)
{
	doca_mmap *created = nullptr;
	const size_t failed =
	    fail_each_allocation([&] { return creating(created, [&] { return doca_mmap_create(&created); }); },
				 [&] { EXPECT_EQ(doca_mmap_destroy(created), DOCA_SUCCESS); });
	EXPECT_GE(failed, 1u);
}

TEST_F(NoMemory, InventoryCreate)
{
	doca_buf_inventory *inventory = nullptr;
	const size_t failed = fail_each_allocation(
	    [&] { return creating(inventory, [&] { return doca_buf_inventory_create(16, &inventory); }); },
	    [&] { EXPECT_EQ(doca_buf_inventory_destroy(inventory), DOCA_SUCCESS); });
	EXPECT_GE(failed, 2u) << "the inventory and its descriptors";
}

TEST_F(NoMemory, PoolCreate)
{
	doca_buf_pool *pool = nullptr;
	const size_t failed = fail_each_allocation(
	    [&] { return creating(pool, [&] { return doca_buf_pool_create(16, 64, mmap, &pool); }); },
	    [&] { EXPECT_EQ(doca_buf_pool_destroy(pool), DOCA_SUCCESS); });
	EXPECT_GE(failed, 1u);
}

TEST_F(NoMemory, BufArrCreateAndStart)
{
	doca_buf_arr *arr = nullptr;
	EXPECT_GE(fail_each_allocation([&] { return creating(arr, [&] { return doca_buf_arr_create(mmap, &arr); }); },
				       [&] { EXPECT_EQ(doca_buf_arr_destroy(arr), DOCA_SUCCESS); }),
		  1u);
	ASSERT_EQ(doca_buf_arr_create(mmap, &arr), DOCA_SUCCESS);
	ASSERT_EQ(doca_buf_arr_set_params(arr, 64, 16, 0), DOCA_SUCCESS);
	EXPECT_GE(fail_each_allocation([&] { return doca_buf_arr_start(arr); },
				       [&] { EXPECT_EQ(doca_buf_arr_stop(arr), DOCA_SUCCESS); }),
		  1u);
	EXPECT_EQ(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
}

TEST_F(NoMemory, DeviceListAndOpen)
{
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	EXPECT_GE(fail_each_allocation(
		      [&] { return creating(list, [&] { return doca_devinfo_create_list(&list, &count); }); },
		      [&] { EXPECT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS); }),
		  1u);
	ASSERT_EQ(doca_devinfo_create_list(&list, &count), DOCA_SUCCESS);
	ASSERT_GT(count, 0u);
	doca_dev *dev = nullptr;
	EXPECT_GE(fail_each_allocation([&] { return creating(dev, [&] { return doca_dev_open(list[0], &dev); }); },
				       [&] { EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS); }),
		  1u);
	EXPECT_EQ(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
}

TEST_F(NoMemory, ProgressEngineAndDmaCreate)
{
	doca_pe *pe = nullptr;
	EXPECT_GE(fail_each_allocation([&] { return creating(pe, [&] { return doca_pe_create(&pe); }); },
				       [&] { EXPECT_EQ(doca_pe_destroy(pe), DOCA_SUCCESS); }),
		  1u);
	doca_dev *dev = sync_event_test::open_any_device();
	ASSERT_NE(dev, nullptr);
	doca_dma *dma = nullptr;
	EXPECT_GE(fail_each_allocation([&] { return creating(dma, [&] { return doca_dma_create(dev, &dma); }); },
				       [&] { EXPECT_EQ(doca_dma_destroy(dma), DOCA_SUCCESS); }),
		  1u);
	EXPECT_EQ(doca_dev_close(dev), DOCA_SUCCESS);
}

TEST(NoMemoryLog, BackendCreationAndLogging)
{
	FILE *sink = std::fopen("/dev/null", "w");
	ASSERT_NE(sink, nullptr);
	// Unbuffered: stdio would otherwise allocate a buffer on the first write, and absorb its failure.
	ASSERT_EQ(std::setvbuf(sink, nullptr, _IONBF, 0), 0);
	doca_log_backend *backend = nullptr;
	// Backends cannot be destroyed (as in DOCA): each successful run keeps one writing to /dev/null.
	EXPECT_GE(
	    fail_each_allocation(
		[&] { return creating(backend, [&] { return doca_log_backend_create_with_file(sink, &backend); }); },
		kNothingToUndo),
	    1u);
	int source = 0;
	ASSERT_EQ(doca_log_register_source("NO_MEMORY_TEST", &source), DOCA_SUCCESS);
	EXPECT_GE(fail_each_allocation(
		      [&] {
			      return doca_log(DOCA_LOG_LEVEL_ERROR, source, __FILE__, __LINE__,
					      "BackendCreationAndLogging",
					      "a record long enough not to fit in a short string: %d", 42);
		      },
		      kNothingToUndo),
		  1u);
	EXPECT_EQ(doca_log_unregister_source(source), DOCA_SUCCESS);
}

class NoMemorySyncEvent : public sync_event_test::SyncEventBase {};

TEST_F(NoMemorySyncEvent, CreateAndContextStart)
{
	doca_sync_event *created = nullptr;
	EXPECT_GE(
	    fail_each_allocation([&] { return creating(created, [&] { return doca_sync_event_create(&created); }); },
				 [&] { EXPECT_EQ(doca_sync_event_destroy(created), DOCA_SUCCESS); }),
	    1u);
	make_context();
	EXPECT_GE(fail_each_allocation(
		      [&] {
			      const doca_error_t result = doca_ctx_start(ctx);
			      EXPECT_EQ(ctx_started(), result == DOCA_SUCCESS);
			      return result;
		      },
		      [&] { stop_ctx(); }),
		  1u);
}

// softdpu_apsh_watch_*: each allocation of creating a watch and of setting what it compares with.
class NoMemoryApshWatch : public apsh_test::ApshApi {};

TEST_F(NoMemoryApshWatch, CreateAndSetUp)
{
	start();
	softdpu_apsh_watch *watch = nullptr;
	EXPECT_GE(fail_each_allocation(
		      [&] {
			      return creating(watch, [&] {
				      return softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_ALL, &watch);
			      });
		      },
		      [&] { softdpu_apsh_watch_destroy(std::exchange(watch, nullptr)); }),
		  1u);
	ASSERT_EQ(softdpu_apsh_watch_create(system_, SOFTDPU_APSH_WATCH_KIND_ALL, &watch), DOCA_SUCCESS);
	apsh_test::TempFile map(R"({"format": "softdpu-exec-hash-map", "version": 1, "page_size": 4096,
		"hash": "sha256", "files": [{"path": "/bin/marker_app", "size": 4096, "elf": false,
		"pages": [{"offset": 0, "sha256": "ad7facb2586fc6e966c004d7d1d16b024f5805ff7cb47c7a85dabd8b48892ca7"}]}]})");
	EXPECT_GE(
	    fail_each_allocation([&] { return softdpu_apsh_watch_set_hash_map(watch, map.path()); }, kNothingToUndo),
	    1u);
	const doca_apsh_yara_rule rule = DOCA_APSH_YARA_RULE_HELLO_WORLD;
	EXPECT_GE(fail_each_allocation(
		      [&] { return softdpu_apsh_watch_set_yara_rules(watch, &rule, 1, DOCA_APSH_YARA_SCAN_VMA); },
		      kNothingToUndo),
		  1u);
	doca_apsh_user_yara_rules *rules = nullptr;
	ASSERT_EQ(doca_apsh_user_yara_rules_create_from_string("rule r { condition: true }", &rules), DOCA_SUCCESS);
	// The watch shares the compiled rules: nothing is allocated, so nothing can run out.
	EXPECT_EQ(fail_each_allocation(
		      [&] { return softdpu_apsh_watch_set_user_yara_rules(watch, rules, DOCA_APSH_YARA_SCAN_VMA); },
		      kNothingToUndo),
		  0u);
	doca_apsh_user_yara_rules_destroy(rules);
	softdpu_apsh_watch_destroy(watch);
}

} // namespace

namespace {

// Open file descriptors of this process.
size_t open_descriptors()
{
	size_t count = 0;
	for ([[maybe_unused]] const auto &entry : std::filesystem::directory_iterator("/proc/self/fd"))
		++count;
	return count;
}

// In a fresh process, fails each allocation of the first topology load in turn (the load is made
// by the first device call): every failure must be reported as NO_MEMORY, said on stderr, and not
// remembered, so that the next call loads again; the process must neither end nor keep a file open.
// Prints what happened and exits 0 if all of that held.
[[noreturn]] void load_topology_failing_each_allocation()
{
	const size_t descriptors_before = open_descriptors();
	doca_devinfo **list = nullptr;
	uint32_t count = 0;
	size_t failed = 0;
	doca_error_t result = DOCA_SUCCESS;
	for (;; ++failed) {
		fail_allocation(failed);
		result = doca_devinfo_create_list(&list, &count);
		if (clear_allocation_failure() || result != DOCA_ERROR_NO_MEMORY)
			break; // loaded (the call made fewer allocations than `failed`), or a wrong code
	}
	const size_t descriptors_after = open_descriptors();
	std::fprintf(stderr, "after %zu failed allocations: %s, %u devices, %zu -> %zu descriptors\n", failed,
		     doca_error_get_name(result), count, descriptors_before, descriptors_after);
	const bool ok = result == DOCA_SUCCESS && count > 0 && failed > 1 && descriptors_after == descriptors_before;
	if (result == DOCA_SUCCESS)
		doca_devinfo_destroy_list(list);
	std::exit(ok ? 0 : 1);
}

// The "threadsafe" death test style re-runs a test alone in a new process, where nothing has
// loaded the topology yet.
TEST(NoMemoryTopology, BuiltInLoadSurvivesEachFailedAllocation)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(load_topology_failing_each_allocation(), ::testing::ExitedWithCode(0),
		    "out of memory \\(will try again\\)(.|\n)*DOCA_SUCCESS");
}

TEST(NoMemoryTopology, FileLoadSurvivesEachFailedAllocation)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(
	    {
		    setenv("SOFTDPU_TOPOLOGY", SOFTDPU_SOURCE_DIR "/tests/data/topology/rich.json", 1);
		    load_topology_failing_each_allocation();
	    },
	    ::testing::ExitedWithCode(0), "out of memory \\(will try again\\)(.|\n)*DOCA_SUCCESS");
}

} // namespace
