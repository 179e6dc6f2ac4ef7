/* The least two out-of-line calls can cost, for bench_mem: what a buffer get and a release would
 * cost with no argument checks, no descriptor to fill and no counts to keep. A separate translation
 * unit (and no LTO) keeps them real calls, as the library's are. See docs/performance.md. */
#include "mem_bench_floor.h"

#include <stddef.h>

struct floor_node {
	struct floor_node *next;
};

static struct floor_node floor_nodes[1024];
static struct floor_node *floor_free_head;

void mem_floor_init(void)
{
	floor_free_head = NULL;
	for (size_t i = 0; i < sizeof(floor_nodes) / sizeof(floor_nodes[0]); i++) {
		floor_nodes[i].next = floor_free_head;
		floor_free_head = &floor_nodes[i];
	}
}

int mem_floor_get_nothing(void *inventory, void *mmap, void *addr, size_t len, void **out)
{
	(void)inventory;
	(void)mmap;
	(void)len;
	*out = addr;
	return 0;
}

int mem_floor_release_nothing(void *buf, size_t *refcount)
{
	(void)buf;
	(void)refcount;
	return 0;
}

int mem_floor_get_pop(void *inventory, void *mmap, void *addr, size_t len, void **out)
{
	(void)inventory;
	(void)mmap;
	(void)addr;
	(void)len;
	struct floor_node *node = floor_free_head;
	floor_free_head = node->next;
	*out = node;
	return 0;
}

int mem_floor_release_push(void *buf, size_t *refcount)
{
	(void)refcount;
	struct floor_node *node = buf;
	node->next = floor_free_head;
	floor_free_head = node;
	return 0;
}
