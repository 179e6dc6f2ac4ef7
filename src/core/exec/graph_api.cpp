// doca_graph.h: argument checks over doca_graph and doca_graph_instance.
#include <doca_graph.h>

#include <new>

#include "core/exec/ctx.hpp"
#include "core/exec/graph.hpp"
#include "core/exec/pe.hpp"

extern "C" {

doca_error_t doca_graph_create(struct doca_pe *pe, struct doca_graph **graph)
{
	if (pe == nullptr || graph == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	auto *created = new (std::nothrow) doca_graph(pe);
	if (created == nullptr)
		return DOCA_ERROR_NO_MEMORY;
	const doca_error_t result = pe->attach(created);
	if (result != DOCA_SUCCESS) {
		delete created;
		return result;
	}
	*graph = created;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_destroy(struct doca_graph *graph)
{
	if (graph == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (graph->started())
		return DOCA_ERROR_BAD_STATE;
	delete graph;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_set_conf(struct doca_graph *graph, doca_graph_completion_cb_t graph_completion_cb,
				 doca_graph_completion_cb_t graph_error_cb, uint32_t num_instances)
{
	if (graph == nullptr || graph_completion_cb == nullptr || graph_error_cb == nullptr || num_instances == 0)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->set_conf(graph_completion_cb, graph_error_cb, num_instances);
}

doca_error_t doca_graph_set_user_data(struct doca_graph *graph, union doca_data user_data)
{
	if (graph == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (graph->started())
		return DOCA_ERROR_BAD_STATE;
	graph->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_get_user_data(const struct doca_graph *graph, union doca_data *user_data)
{
	if (graph == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = graph->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_node_create_from_ctx(struct doca_graph *graph, const struct doca_ctx *ctx,
					     struct doca_graph_node **node)
{
	if (graph == nullptr || ctx == nullptr || node == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->add_node(doca_graph_node::Kind::ctx, ctx, nullptr, nullptr, node);
}

doca_error_t doca_graph_node_create_from_user(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					      struct doca_graph_node **node)
{
	if (graph == nullptr || cb == nullptr || node == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->add_node(doca_graph_node::Kind::user, nullptr, cb, nullptr, node);
}

doca_error_t doca_graph_node_create_from_graph(struct doca_graph *graph, struct doca_graph *sub_graph,
					       struct doca_graph_node **node)
{
	if (graph == nullptr || sub_graph == nullptr || node == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->add_node(doca_graph_node::Kind::sub_graph, nullptr, nullptr, sub_graph, node);
}

doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to)
{
	if (graph == nullptr || from == nullptr || to == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->add_dependency(from, to);
}

doca_error_t doca_graph_start(struct doca_graph *graph)
{
	if (graph == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->start();
}

doca_error_t doca_graph_stop(struct doca_graph *graph)
{
	if (graph == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph->stop();
}

doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance)
{
	if (graph == nullptr || graph_instance == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	// Instances are bookkeeping of the graph, not part of what the const describes.
	return const_cast<doca_graph *>(graph)->create_instance(graph_instance);
}

doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance)
{
	if (graph_instance == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (graph_instance->submitted())
		return DOCA_ERROR_IN_USE;
	graph_instance->graph()->destroy_instance(graph_instance);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_set_user_data(struct doca_graph_instance *graph_instance, union doca_data user_data)
{
	if (graph_instance == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (graph_instance->submitted())
		return DOCA_ERROR_IN_USE;
	graph_instance->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_get_user_data(const struct doca_graph_instance *graph_instance,
					       union doca_data *user_data)
{
	if (graph_instance == nullptr || user_data == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = graph_instance->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_task *task)
{
	if (graph_instance == nullptr || node == nullptr || task == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph_instance->set_ctx_node_data(node, task);
}

doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie)
{
	if (graph_instance == nullptr || node == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph_instance->set_user_node_data(node, cookie);
}

doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance)
{
	if (graph_instance == nullptr || node == nullptr || sub_graph_instance == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph_instance->set_sub_graph_node_data(node, sub_graph_instance);
}

doca_error_t doca_graph_instance_submit(struct doca_graph_instance *graph_instance)
{
	if (graph_instance == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return graph_instance->submit();
}

} // extern "C"
