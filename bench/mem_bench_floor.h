/* The least two out-of-line calls can cost (bench/mem_bench_floor.c). */
#ifndef SOFTDPU_BENCH_MEM_BENCH_FLOOR_H
#define SOFTDPU_BENCH_MEM_BENCH_FLOOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills the free list of mem_floor_get_pop / mem_floor_release_push (1024 nodes). */
void mem_floor_init(void);
/* Only write the out-parameter / only return. */
int mem_floor_get_nothing(void *inventory, void *mmap, void *addr, size_t len, void **out);
int mem_floor_release_nothing(void *buf, size_t *refcount);
/* Pop from / push onto one free list, nothing else. */
int mem_floor_get_pop(void *inventory, void *mmap, void *addr, size_t len, void **out);
int mem_floor_release_push(void *buf, size_t *refcount);

#ifdef __cplusplus
}
#endif

#endif
