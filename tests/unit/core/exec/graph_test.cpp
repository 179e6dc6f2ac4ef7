// DOCA Graph: DMA nodes and user nodes in dependency order, sub-graphs, many instances, failures,
// cycle rejection and the documented error returns.
#include <gtest/gtest.h>

#include <doca_graph.h>

#include <cstring>
#include <vector>

#include "support/dma_fixture.h"

using softdpu_test::DmaSetup;
using softdpu_test::progress_until;

namespace {

int g_task_callbacks = 0;

void task_cb(doca_dma_task_memcpy *, union doca_data, union doca_data)
{
	++g_task_callbacks; // must never run for tasks inside a graph
}

struct InstanceResult {
	int completed = 0;
	int failed = 0;
	std::vector<int> order; // user nodes append their id
};

void instance_done(doca_graph_instance *, union doca_data data, union doca_data)
{
	static_cast<InstanceResult *>(data.ptr)->completed++;
}

void instance_failed(doca_graph_instance *, union doca_data data, union doca_data)
{
	static_cast<InstanceResult *>(data.ptr)->failed++;
}

// Cookie of a user node: which instance result to write, and what to record.
struct UserNode {
	InstanceResult *result;
	int id;
	doca_error_t returns = DOCA_SUCCESS;
	const uint8_t *a = nullptr; // when set, checks a == b over len bytes
	const uint8_t *b = nullptr;
	size_t len = 0;
};

doca_error_t user_node(void *cookie)
{
	auto *node = static_cast<UserNode *>(cookie);
	node->result->order.push_back(node->id);
	if (node->a != nullptr && std::memcmp(node->a, node->b, node->len) != 0)
		return DOCA_ERROR_UNEXPECTED;
	return node->returns;
}

class GraphTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		g_task_callbacks = 0;
		setup.make_dma(task_cb, task_cb, 64);
		// As DOCA's graph sample does: contexts start before the graph is built.
		ASSERT_EQ(doca_ctx_start(setup.ctx()), DOCA_SUCCESS);
		ASSERT_EQ(doca_graph_create(setup.pe, &graph), DOCA_SUCCESS);
	}

	void TearDown() override
	{
		for (doca_graph_instance *instance : instances)
			EXPECT_EQ(doca_graph_instance_destroy(instance), DOCA_SUCCESS);
		for (doca_task *task : tasks)
			doca_task_free(task);
		for (doca_buf *buf : bufs)
			doca_buf_dec_refcount(buf, nullptr);
		EXPECT_EQ(doca_graph_stop(graph), DOCA_SUCCESS);
		EXPECT_EQ(doca_graph_destroy(graph), DOCA_SUCCESS);
	}

	doca_task *copy_task(size_t src_off, size_t dst_off, size_t len)
	{
		doca_buf *src = setup.buf(src_off, len, len);
		doca_buf *dst = setup.buf(dst_off, len, 0);
		bufs.push_back(src);
		bufs.push_back(dst);
		doca_dma_task_memcpy *task = nullptr;
		EXPECT_EQ(doca_dma_task_memcpy_alloc_init(setup.dma, src, dst, {}, &task), DOCA_SUCCESS);
		tasks.push_back(doca_dma_task_memcpy_as_task(task));
		return tasks.back();
	}

	doca_graph_instance *instance_for(InstanceResult *result, doca_graph *of = nullptr)
	{
		doca_graph_instance *instance = nullptr;
		EXPECT_EQ(doca_graph_instance_create(of != nullptr ? of : graph, &instance), DOCA_SUCCESS);
		union doca_data data;
		data.ptr = result;
		EXPECT_EQ(doca_graph_instance_set_user_data(instance, data), DOCA_SUCCESS);
		instances.push_back(instance);
		return instance;
	}

	DmaSetup setup{1 << 20, 2048};
	doca_graph *graph = nullptr;
	std::vector<doca_graph_instance *> instances;
	std::vector<doca_task *> tasks;
	std::vector<doca_buf *> bufs;
};

TEST_F(GraphTest, TwoCopiesThenACheckAcrossManyInstancesInFlight)
{
	doca_graph_node *copy1, *copy2, *check;
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &copy1), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &copy2), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &check), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, copy1, check), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, copy2, check), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 10), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);

	constexpr size_t kLen = 4096;
	uint8_t *arena = setup.arena.data();
	std::vector<InstanceResult> results(10);
	std::vector<UserNode> checks(10);
	for (int i = 0; i < 10; ++i) {
		const size_t base = i * 3 * kLen;
		for (size_t j = 0; j < kLen; ++j)
			arena[base + j] = static_cast<uint8_t>(i * 31 + j);
		doca_graph_instance *instance = instance_for(&results[i]);
		ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, copy1, copy_task(base, base + kLen, kLen)),
			  DOCA_SUCCESS);
		ASSERT_EQ(
		    doca_graph_instance_set_ctx_node_data(instance, copy2, copy_task(base, base + 2 * kLen, kLen)),
		    DOCA_SUCCESS);
		checks[i] = UserNode{&results[i], i, DOCA_SUCCESS, arena + base + kLen, arena + base + 2 * kLen, kLen};
		ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, check, &checks[i]), DOCA_SUCCESS);
	}
	for (doca_graph_instance *instance : instances)
		ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_instance_submit(instances[0]), DOCA_ERROR_IN_USE);
	ASSERT_TRUE(progress_until(setup.pe, [&] {
		int done = 0;
		for (auto &r : results)
			done += r.completed + r.failed;
		return done == 10;
	}));
	for (int i = 0; i < 10; ++i) {
		EXPECT_EQ(results[i].completed, 1);
		EXPECT_EQ(results[i].failed, 0);
		EXPECT_EQ(std::memcmp(arena + i * 3 * kLen, arena + i * 3 * kLen + kLen, kLen), 0);
	}
	EXPECT_EQ(g_task_callbacks, 0) << "task callbacks do not run for tasks inside a graph";

	// A completed instance can be submitted again (destination data is appended, so reset it).
	for (doca_task *task : tasks)
		doca_buf_reset_data_len(doca_dma_task_memcpy_get_dst(reinterpret_cast<doca_dma_task_memcpy *>(task)));
	ASSERT_EQ(doca_graph_instance_submit(instances[3]), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return results[3].completed == 2; }));
}

TEST_F(GraphTest, DependenciesOrderUserNodes)
{
	doca_graph_node *dma, *a, *b, *c;
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &a), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &dma), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &b), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &c), DOCA_SUCCESS);
	// a -> dma -> b -> c
	ASSERT_EQ(doca_graph_add_dependency(graph, a, dma), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, dma, b), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, b, c), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_add_dependency(graph, c, a), DOCA_ERROR_NOT_PERMITTED) << "cycle";
	EXPECT_EQ(doca_graph_add_dependency(graph, b, b), DOCA_ERROR_NOT_PERMITTED) << "self loop";
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);
	InstanceResult result;
	UserNode na{&result, 1}, nb{&result, 2}, nc{&result, 3};
	doca_graph_instance *instance = instance_for(&result);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, a, &na), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, b, &nb), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, c, &nc), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma, copy_task(0, 8192, 1024)), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return result.completed == 1; }));
	EXPECT_EQ(result.order, (std::vector<int>{1, 2, 3}));
}

TEST_F(GraphTest, FailingUserNodeFailsTheInstanceAndStopsLaunching)
{
	doca_graph_node *dma, *bad, *after;
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &dma), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &bad), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &after), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, bad, after), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 2), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);
	InstanceResult result;
	UserNode nbad{&result, 1, DOCA_ERROR_IO_FAILED}, nafter{&result, 2};
	doca_graph_instance *instance = instance_for(&result);
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma, copy_task(0, 8192, 1024)), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, bad, &nbad), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, after, &nafter), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return result.failed == 1; }));
	EXPECT_EQ(result.completed, 0);
	EXPECT_EQ(result.order, (std::vector<int>{1})) << "nothing after the failed node runs";
	// The DMA node still ran to completion before the instance was reported.
	EXPECT_EQ(std::memcmp(setup.arena.data(), setup.arena.data() + 8192, 1024), 0);
}

TEST_F(GraphTest, FailingTaskFailsTheInstance)
{
	doca_graph_node *dma;
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &dma), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);
	InstanceResult result;
	doca_graph_instance *instance = instance_for(&result);
	doca_task *task = copy_task(0, 8192, 1024);
	doca_buf_reset_data_len(const_cast<doca_buf *>(
	    doca_dma_task_memcpy_get_src(reinterpret_cast<doca_dma_task_memcpy *>(task)))); // empty source
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma, task), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return result.failed == 1; }));
	EXPECT_EQ(g_task_callbacks, 0);
}

TEST_F(GraphTest, SubGraphNodesRunAnotherGraphsInstance)
{
	doca_graph *sub = nullptr;
	ASSERT_EQ(doca_graph_create(setup.pe, &sub), DOCA_SUCCESS);
	doca_graph_node *sub_dma;
	ASSERT_EQ(doca_graph_node_create_from_ctx(sub, setup.ctx(), &sub_dma), DOCA_SUCCESS);
	InstanceResult sub_result; // the sub-graph's own callbacks must not run for nested instances
	ASSERT_EQ(doca_graph_set_conf(sub, instance_done, instance_failed, 1), DOCA_SUCCESS);

	doca_graph_node *nested;
	EXPECT_EQ(doca_graph_node_create_from_graph(graph, sub, &nested), DOCA_ERROR_BAD_STATE) << "sub not started";
	ASSERT_EQ(doca_graph_start(sub), DOCA_SUCCESS);
	doca_graph_node *before, *after;
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &before), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_graph(graph, sub, &nested), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &after), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, before, nested), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_add_dependency(graph, nested, after), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 1), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);

	InstanceResult result;
	UserNode nb{&result, 1}, na{&result, 2, DOCA_SUCCESS, setup.arena.data(), setup.arena.data() + 8192, 2048};
	std::memset(setup.arena.data(), 0x5A, 2048);
	doca_graph_instance *sub_instance = instance_for(&sub_result, sub);
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(sub_instance, sub_dma, copy_task(0, 8192, 2048)), DOCA_SUCCESS);
	doca_graph_instance *instance = instance_for(&result);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, before, &nb), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, after, &na), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_instance_set_sub_graph_node_data(instance, before, sub_instance),
		  DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_graph_instance_set_sub_graph_node_data(instance, nested, sub_instance), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return result.completed + result.failed == 1; }));
	EXPECT_EQ(result.completed, 1);
	EXPECT_EQ(result.order, (std::vector<int>{1, 2}));
	EXPECT_EQ(sub_result.completed + sub_result.failed, 0);

	// A graph cannot end up nested in itself: with `sub` stopped and reconfigurable, adding
	// `graph` (which contains `sub`) to it is refused.
	EXPECT_EQ(doca_graph_instance_destroy(sub_instance), DOCA_SUCCESS);
	instances.erase(std::find(instances.begin(), instances.end(), sub_instance));
	ASSERT_EQ(doca_graph_stop(sub), DOCA_SUCCESS);
	doca_graph_node *loop;
	EXPECT_EQ(doca_graph_node_create_from_graph(sub, graph, &loop), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_graph_instance_destroy(instance), DOCA_SUCCESS);
	instances.erase(std::find(instances.begin(), instances.end(), instance));
	ASSERT_EQ(doca_graph_stop(graph), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_destroy(sub), DOCA_SUCCESS);
}

TEST_F(GraphTest, DocumentedErrors)
{
	doca_graph_node *dma, *user;
	doca_graph_instance *instance = nullptr;
	EXPECT_EQ(doca_graph_create(nullptr, &graph), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_create(setup.pe, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_instance_create(graph, &instance), DOCA_ERROR_BAD_STATE) << "not started";
	ASSERT_EQ(doca_graph_node_create_from_user(graph, user_node, &user), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 1), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_start(graph), DOCA_ERROR_BAD_STATE) << "no context node";
	ASSERT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &dma), DOCA_SUCCESS);
	union doca_data data;
	data.u64 = 7;
	ASSERT_EQ(doca_graph_set_user_data(graph, data), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_start(graph), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_start(graph), DOCA_SUCCESS) << "starting a started graph is harmless";
	EXPECT_EQ(doca_graph_get_user_data(graph, &data), DOCA_SUCCESS);
	EXPECT_EQ(data.u64, 7u);
	EXPECT_EQ(doca_graph_get_user_data(graph, nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_set_user_data(graph, data), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_graph_set_conf(graph, instance_done, instance_failed, 4), DOCA_ERROR_BAD_STATE);
	doca_graph_node *late;
	EXPECT_EQ(doca_graph_node_create_from_user(graph, user_node, &late), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_graph_node_create_from_ctx(graph, setup.ctx(), &late), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_graph_add_dependency(graph, user, dma), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_graph_destroy(graph), DOCA_ERROR_BAD_STATE) << "started";

	InstanceResult result;
	instance = instance_for(&result);
	doca_graph_instance *second = nullptr;
	EXPECT_EQ(doca_graph_instance_create(graph, &second), DOCA_ERROR_NO_MEMORY) << "configured for one";
	EXPECT_EQ(doca_graph_stop(graph), DOCA_ERROR_IN_USE) << "an instance exists";
	EXPECT_EQ(doca_graph_instance_submit(instance), DOCA_ERROR_INVALID_VALUE) << "node data missing";
	EXPECT_EQ(doca_graph_instance_set_ctx_node_data(instance, user, copy_task(0, 4096, 64)),
		  DOCA_ERROR_NOT_PERMITTED);
	ASSERT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma, tasks.back()), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_instance_set_user_node_data(instance, dma, nullptr), DOCA_ERROR_NOT_PERMITTED);
	UserNode node{&result, 1};
	ASSERT_EQ(doca_graph_instance_set_user_node_data(instance, user, &node), DOCA_SUCCESS);
	ASSERT_EQ(doca_graph_instance_submit(instance), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_instance_destroy(instance), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_graph_instance_set_user_data(instance, data), DOCA_ERROR_IN_USE);
	EXPECT_EQ(doca_graph_instance_set_ctx_node_data(instance, dma, tasks.back()), DOCA_ERROR_BAD_STATE);
	EXPECT_EQ(doca_graph_instance_set_user_node_data(instance, user, &node), DOCA_ERROR_BAD_STATE);
	ASSERT_TRUE(progress_until(setup.pe, [&] { return result.completed == 1; }));
	EXPECT_EQ(doca_graph_instance_get_user_data(instance, &data), DOCA_SUCCESS);
	EXPECT_EQ(data.ptr, &result);
	EXPECT_EQ(doca_graph_instance_get_user_data(nullptr, &data), DOCA_ERROR_INVALID_VALUE);

	// A node of another graph is refused.
	doca_graph *other = nullptr;
	ASSERT_EQ(doca_graph_create(setup.pe, &other), DOCA_SUCCESS);
	doca_graph_node *foreign;
	ASSERT_EQ(doca_graph_node_create_from_ctx(other, setup.ctx(), &foreign), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_instance_set_ctx_node_data(instance, foreign, tasks.back()), DOCA_ERROR_NOT_PERMITTED);
	EXPECT_EQ(doca_graph_add_dependency(other, foreign, dma), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_destroy(other), DOCA_SUCCESS);
	EXPECT_EQ(doca_graph_set_conf(nullptr, instance_done, instance_failed, 1), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_node_create_from_user(nullptr, user_node, &late), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_graph_instance_submit(nullptr), DOCA_ERROR_INVALID_VALUE);
	EXPECT_EQ(doca_pe_destroy(setup.pe), DOCA_ERROR_IN_USE) << "the graph holds the PE";
}

} // namespace
