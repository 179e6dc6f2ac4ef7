/*
 * softdpu: DOCA Graph (doca_graph.h, DOCA 2.5). All functions are experimental, as in DOCA.
 *
 * A graph runs a set of nodes in dependency order on a progress engine. A node is a task of a
 * context, a user callback, or an instance of another (started) graph. The graph is built and
 * started once; instances of it are created, given per-node data, and submitted many times.
 * Tasks that run inside a graph do not call their own callbacks: the instance completes through
 * the graph's completion callback, or through its error callback when any node failed.
 */
#ifndef DOCA_GRAPH_H_
#define DOCA_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_graph;
struct doca_graph_node;
struct doca_graph_instance;

typedef void (*doca_graph_completion_cb_t)(struct doca_graph_instance *instance, union doca_data instance_user_data,
					   union doca_data graph_user_data);

/* A user node's work. Returning an error fails the instance. */
typedef doca_error_t (*doca_graph_user_node_cb_t)(void *cookie);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_pe *pe, struct doca_graph **graph);

/* DOCA_ERROR_BAD_STATE unless the graph is stopped. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph);

/* Callbacks and how many instances the graph can have. Stopped graphs only. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_conf(struct doca_graph *graph, doca_graph_completion_cb_t graph_completion_cb,
				 doca_graph_completion_cb_t graph_error_cb, uint32_t num_instances);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_user_data(struct doca_graph *graph, union doca_data user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_get_user_data(const struct doca_graph *graph, union doca_data *user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_ctx(struct doca_graph *graph, const struct doca_ctx *ctx,
					     struct doca_graph_node **node);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_user(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					      struct doca_graph_node **node);

/* The sub-graph must be started. DOCA_ERROR_NOT_PERMITTED if it would nest a graph in itself. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_graph(struct doca_graph *graph, struct doca_graph *sub_graph,
					       struct doca_graph_node **node);

/* `to` runs after `from`. DOCA_ERROR_NOT_PERMITTED if the edge would close a cycle. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to);

/* Freezes the graph. DOCA_ERROR_BAD_STATE if it has no context node. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph);

/* DOCA_ERROR_IN_USE while instances exist. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance);

/* DOCA_ERROR_IN_USE while the instance is submitted. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_data(struct doca_graph_instance *graph_instance, union doca_data user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_user_data(const struct doca_graph_instance *graph_instance,
					       union doca_data *user_data);

/* The task a context node runs in this instance. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_task *task);

/* The cookie a user node's callback gets in this instance. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie);

/* The instance of the sub-graph a graph node runs in this instance. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance);

/* Runs the instance; completion arrives from doca_pe_progress. DOCA_ERROR_IN_USE if submitted. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_submit(struct doca_graph_instance *graph_instance);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GRAPH_H_ */
