/*
 * Includes doca_graph.h only; in DOCA 2.5 it includes <stdbool.h>, <stddef.h>, <stdint.h>,
 * doca_ctx.h and doca_pe.h. Compiled as C11 and, through a generated wrapper, as C++20.
 */
#include <doca_graph.h>

bool headers_graph_use(const struct doca_ctx *ctx);

bool headers_graph_use(const struct doca_ctx *ctx)
{
	struct doca_pe *pe = NULL;
	struct doca_graph *graph = NULL;
	size_t inflight = 0;
	bool ok = doca_pe_create(&pe) == DOCA_SUCCESS;

	ok = ok && doca_graph_create(pe, &graph) == DOCA_SUCCESS;
	ok = ok && doca_ctx_get_num_inflight_tasks(ctx, &inflight) == DOCA_SUCCESS;
	if (graph != NULL)
		doca_graph_destroy(graph);
	if (pe != NULL)
		doca_pe_destroy(pe);
	return ok;
}
