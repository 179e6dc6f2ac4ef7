// After start, the execution fast path (task alloc_init, submit, progress, completion callback,
// free, resubmit; graph instance submit and completion; PE notification) makes no heap
// allocation.
#include "support/alloc_counter.h"
#include "support/dma_fixture.h"

#include <doca_graph.h>

#include <gtest/gtest.h>

namespace {

int g_completed = 0;

void done_cb(doca_dma_task_memcpy *task, union doca_data, union doca_data)
{
	++g_completed;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

void keep_cb(doca_dma_task_memcpy *, union doca_data, union doca_data)
{
	++g_completed;
}

void graph_cb(doca_graph_instance *, union doca_data, union doca_data)
{
	++g_completed;
}

doca_error_t user_node(void *)
{
	return DOCA_SUCCESS;
}

TEST(ExecDataPath, DmaTasksSmallAndLargeAllocateNothingAfterStart)
{
	softdpu_test::DmaSetup setup(8 << 20);
	setup.make_dma(done_cb, done_cb, 64);
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	doca_buf *small_src = setup.buf(0, 64, 64);
	doca_buf *small_dst = setup.buf(4096, 64, 0);
	doca_buf *large_src = setup.buf(1 << 20, 1 << 20, 1 << 20);
	doca_buf *large_dst = setup.buf(4 << 20, 1 << 20, 0);
	g_completed = 0;

	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 100; ++round) {
		for (auto [src, dst] : {std::pair{small_src, small_dst}, std::pair{large_src, large_dst}}) {
			doca_buf_reset_data_len(dst);
			doca_dma_task_memcpy *task = nullptr;
			ASSERT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, {}, &task), DOCA_SUCCESS);
			ASSERT_EQ(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
			const int target = g_completed + 1;
			ASSERT_TRUE(softdpu_test::progress_until(setup.pe, [&] { return g_completed == target; }));
		}
	}
	EXPECT_EQ(scope.count(), 0u) << "allocations in the DMA fast path";
	for (doca_buf *b : {small_src, small_dst, large_src, large_dst})
		doca_buf_dec_refcount(b, nullptr);
}

TEST(ExecDataPath, EventModeAndGraphInstancesAllocateNothing)
{
	softdpu_test::DmaSetup setup(1 << 20);
	setup.make_dma(keep_cb, keep_cb, 4);
	ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
	doca_graph *graph = nullptr;
	doca_graph_node *dma_node = nullptr, *check = nullptr;
	ASSERT_EQ(doca_graph_create(setup.pe, &graph), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &dma_node), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &check), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, dma_node, check), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, graph_cb, graph_cb, 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);
	doca_graph_instance *instance = nullptr;
	ASSERT_EQ(doca_graph_instance_create(graph, &instance), DOCA_SUCCESS);
	doca_buf *src = setup.buf(0, 256, 256);
	doca_buf *dst = setup.buf(4096, 256, 0);
	doca_dma_task_memcpy *task = nullptr;
	ASSERT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, {}, &task), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma_node, doca_dma_task_memcpy_as_task(task)),
		  DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, check, nullptr), DOCA_SUCCESS);
	g_completed = 0;

	softdpu_test::AllocationScope scope;
	for (int round = 0; round < 100; ++round) {
		doca_buf_reset_data_len(dst);
		ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
		ASSERT_EQ(doca_pe_request_notification(setup.pe), DOCA_SUCCESS);
		ASSERT_EQ(doca_pe_clear_notification(setup.pe, 0), DOCA_SUCCESS);
		ASSERT_TRUE(softdpu_test::progress_until(setup.pe, [&] { return g_completed == round + 1; }));
	}
	EXPECT_EQ(scope.count(), 0u) << "allocations in graph submission or PE notification";

	EXPECT_EQ(doca_graph_instance_destroy(instance), DOCA_SUCCESS);
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	EXPECT_EQ(doca_graph_stop(graph), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_destroy(graph), DOCA_SUCCESS);
	doca_buf_dec_refcount(src, nullptr);
	doca_buf_dec_refcount(dst, nullptr);
}

} // namespace
