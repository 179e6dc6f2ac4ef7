// pkg-config: doca-common doca-dma
/*
 * Graph: the DOCA Core guide's graph scenario.
 *
 *     +-------+   +-------+
 *     | DMA A |   | DMA B |      two context nodes, one task each per instance
 *     +---+---+   +---+---+
 *         +-----+-----+
 *               v
 *         +-----------+
 *         | user node |          checks both copies once both DMA nodes are done
 *         +-----------+
 *
 * Ten instances of the graph run at once on one PE. Task callbacks never run for tasks inside a
 * graph: each instance reports once, through the graph's completion callback.
 */
#include <stdlib.h>

#include <doca_graph.h>
#include <doca_log.h>

#include "sample_common.h"

DOCA_LOG_REGISTER(GRAPH::SAMPLE);

#define NUM_INSTANCES 10
#define NUM_DMA_NODES 2

struct instance_data {
	struct sample_pe_base *base;
	uint32_t first_pair; /* DMA node n copies pair first_pair + n */
	struct doca_graph_instance *instance;
	struct doca_dma_task_memcpy *tasks[NUM_DMA_NODES];
};

struct graph_state {
	struct sample_pe_base base;
	struct doca_dma *dma[NUM_DMA_NODES];
	struct doca_graph *graph;
	struct doca_graph_node *dma_node[NUM_DMA_NODES];
	struct doca_graph_node *check_node;
	struct instance_data instances[NUM_INSTANCES];
	uint32_t num_completed;
	uint32_t num_failed;
	uint32_t num_task_callbacks;
};

/* Required by doca_dma_task_memcpy_set_conf; must never run for tasks inside a graph. */
static void task_callback(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct graph_state *state = (struct graph_state *)ctx_user_data.ptr;

	(void)task;
	(void)task_user_data;
	state->num_task_callbacks++;
}

/* The user node: both destinations of this instance must hold their sources' bytes. */
static doca_error_t check_copies(void *cookie)
{
	struct instance_data *data = (struct instance_data *)cookie;
	doca_error_t result;
	uint32_t i;

	for (i = 0; i < NUM_DMA_NODES; i++) {
		result = sample_check_pair(data->base, data->first_pair + i);
		if (result != DOCA_SUCCESS)
			return result;
	}
	return DOCA_SUCCESS;
}

static void instance_completed(struct doca_graph_instance *instance, union doca_data instance_user_data,
			       union doca_data graph_user_data)
{
	struct graph_state *state = (struct graph_state *)graph_user_data.ptr;
	struct instance_data *data = (struct instance_data *)instance_user_data.ptr;

	(void)instance;
	DOCA_LOG_INFO("Instance for pairs %u-%u completed", data->first_pair, data->first_pair + NUM_DMA_NODES - 1);
	state->num_completed++;
}

static void instance_failed(struct doca_graph_instance *instance, union doca_data instance_user_data,
			    union doca_data graph_user_data)
{
	struct graph_state *state = (struct graph_state *)graph_user_data.ptr;
	struct instance_data *data = (struct instance_data *)instance_user_data.ptr;

	(void)instance;
	DOCA_LOG_ERR("Instance for pairs %u-%u failed", data->first_pair, data->first_pair + NUM_DMA_NODES - 1);
	state->num_failed++;
}

static doca_error_t build_graph(struct graph_state *state)
{
	union doca_data graph_user_data = {.ptr = state};
	doca_error_t result;
	uint32_t i;

	result = doca_graph_create(state->base.pe, &state->graph);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_graph_node_create_from_user(state->graph, check_copies, &state->check_node);
	if (result != DOCA_SUCCESS)
		return result;
	for (i = 0; i < NUM_DMA_NODES; i++) {
		result =
		    doca_graph_node_create_from_ctx(state->graph, doca_dma_as_ctx(state->dma[i]), &state->dma_node[i]);
		if (result != DOCA_SUCCESS)
			return result;
		result = doca_graph_add_dependency(state->graph, state->dma_node[i], state->check_node);
		if (result != DOCA_SUCCESS)
			return result;
	}
	result = doca_graph_set_conf(state->graph, instance_completed, instance_failed, NUM_INSTANCES);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_graph_set_user_data(state->graph, graph_user_data);
	if (result != DOCA_SUCCESS)
		return result;
	return doca_graph_start(state->graph);
}

static doca_error_t create_instance(struct graph_state *state, uint32_t index)
{
	struct instance_data *data = &state->instances[index];
	union doca_data instance_user_data = {.ptr = data};
	doca_error_t result;
	uint32_t i;

	data->base = &state->base;
	data->first_pair = index * NUM_DMA_NODES;
	result = doca_graph_instance_create(state->graph, &data->instance);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_graph_instance_set_user_data(data->instance, instance_user_data);
	if (result != DOCA_SUCCESS)
		return result;
	for (i = 0; i < NUM_DMA_NODES; i++) {
		result = sample_alloc_pair_task(&state->base, state->dma[i], data->first_pair + i, &data->tasks[i]);
		if (result != DOCA_SUCCESS)
			return result;
		result = doca_graph_instance_set_ctx_node_data(data->instance, state->dma_node[i],
							       doca_dma_task_memcpy_as_task(data->tasks[i]));
		if (result != DOCA_SUCCESS)
			return result;
	}
	return doca_graph_instance_set_user_node_data(data->instance, state->check_node, data);
}

static bool all_instances_done(void *arg)
{
	struct graph_state *state = (struct graph_state *)arg;

	return state->num_completed + state->num_failed == NUM_INSTANCES;
}

static doca_error_t run(struct graph_state *state)
{
	doca_error_t result;
	uint32_t i;

	/* As in DOCA: contexts are started before the graph's instances allocate their tasks. */
	for (i = 0; i < NUM_DMA_NODES; i++) {
		result = doca_ctx_start(doca_dma_as_ctx(state->dma[i]));
		if (result != DOCA_SUCCESS)
			return result;
	}
	result = build_graph(state);
	if (result != DOCA_SUCCESS)
		return result;
	for (i = 0; i < NUM_INSTANCES; i++) {
		result = create_instance(state, i);
		if (result != DOCA_SUCCESS)
			return result;
	}
	for (i = 0; i < NUM_INSTANCES; i++) {
		result = doca_graph_instance_submit(state->instances[i].instance);
		if (result != DOCA_SUCCESS)
			return result;
	}
	result = sample_progress_until(state->base.pe, all_instances_done, state);
	if (result != DOCA_SUCCESS)
		return result;
	if (state->num_failed != 0 || state->num_task_callbacks != 0) {
		DOCA_LOG_ERR("%u instances failed, %u task callbacks ran (expected none)", state->num_failed,
			     state->num_task_callbacks);
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("All %d graph instances completed and their copies were checked", NUM_INSTANCES);
	return DOCA_SUCCESS;
}

/* Instances (and their tasks) first, then the graph, then the contexts. */
static void cleanup(struct graph_state *state, doca_error_t *result)
{
	uint32_t i, n;

	for (i = 0; i < NUM_INSTANCES; i++) {
		struct instance_data *data = &state->instances[i];

		if (data->instance != NULL)
			sample_cleanup_step(result, doca_graph_instance_destroy(data->instance),
					    "doca_graph_instance_destroy");
		for (n = 0; n < NUM_DMA_NODES; n++)
			if (data->tasks[n] != NULL)
				doca_task_free(doca_dma_task_memcpy_as_task(data->tasks[n]));
	}
	if (state->graph != NULL) {
		sample_cleanup_step(result, doca_graph_stop(state->graph), "doca_graph_stop");
		sample_cleanup_step(result, doca_graph_destroy(state->graph), "doca_graph_destroy");
	}
	for (i = 0; i < NUM_DMA_NODES; i++)
		if (state->dma[i] != NULL)
			sample_cleanup_step(result, sample_dma_destroy(&state->base, state->dma[i]), "DMA destroy");
	sample_cleanup_step(result, sample_pe_base_cleanup(&state->base), "set-up clean-up");
}

int main(void)
{
	static struct graph_state state;
	doca_error_t result;
	uint32_t i;

	if (sample_log_init() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = sample_pe_base_init(&state.base, NUM_INSTANCES * NUM_DMA_NODES, SAMPLE_DEFAULT_BUFFER_SIZE);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	for (i = 0; i < NUM_DMA_NODES && result == DOCA_SUCCESS; i++)
		result = sample_dma_create(&state.base, task_callback, task_callback, NUM_INSTANCES,
					   (union doca_data){.ptr = &state}, NULL, &state.dma[i]);
	if (result == DOCA_SUCCESS)
		result = run(&state);
	cleanup(&state, &result);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample failed: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
